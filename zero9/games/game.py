"""The one game interface that search, self-play, training, GTP and the window use.

Vocabulary (shared by every game module):

- **colour**: ``BLACK`` (1) or ``WHITE`` (2); ``EMPTY`` (0) for an empty point.
  ``opponent(c) == 3 - c``. Black moves first in both games.
- **point**: an intersection, numbered ``y * size + x`` where ``x`` is the column
  (0 = column ``A``) and ``y`` the row counted from the *bottom* (0 = GTP row 1).
  This is Leela Zero's vertex numbering, so its weights and training chunks need
  no re-indexing.
- **action** (or move): an int in ``range(game.num_actions)``. Points are actions
  ``0 .. size*size-1``; Go adds ``pass`` as action ``size*size`` (last, as in Leela
  Zero's policy vector). Gomoku has no pass.
- **vertex**: the GTP text of an action: a column letter (``I`` skipped) then the
  row number, e.g. ``D4``; or ``pass``. Parsing is case-insensitive.
- **position**: an immutable game state (stones, side to move, history). Playing
  an action returns a *new* position; the old one is untouched. Each position keeps
  a link to its ``parent`` so history (for network inputs and undo) is a walk up.
- **result**: for a finished game, the winner (``BLACK``, ``WHITE`` or ``EMPTY`` for
  a draw), a value +1/-1/0 from one player's view, and a GTP-style string
  (``B+3.5``, ``W+R``, ``0``).

A :class:`Game` is the rule set with its parameters (size, komi, connect, ...);
a game object is cheap, immutable and picklable. Board size is always a
property of the game instance, never of a module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np

EMPTY, BLACK, WHITE = 0, 1, 2
COLOUR_NAMES = {BLACK: "black", WHITE: "white"}
COLUMN_LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # GTP skips I


def opponent(colour: int) -> int:
    """The other colour."""
    return 3 - colour


class IllegalMove(ValueError):
    """A move that the rules forbid. ``str()`` names the move and the reason."""

    def __init__(self, move: str, reason: str):
        super().__init__(f"illegal move {move}: {reason}")
        self.move = move
        self.reason = reason


def parse_colour(text: str) -> int:
    """'b', 'black', 'w', 'white' (any case) -> BLACK / WHITE; ValueError otherwise."""
    t = text.strip().lower()
    if t in ("b", "black"):
        return BLACK
    if t in ("w", "white"):
        return WHITE
    raise ValueError(f"bad colour {text!r}: expected b, black, w or white")


def point_to_vertex(point: int, size: int) -> str:
    """Point number -> GTP vertex text ('D4')."""
    y, x = divmod(point, size)
    return f"{COLUMN_LETTERS[x]}{y + 1}"


def vertex_to_point(text: str, size: int) -> int:
    """GTP vertex text ('d4', 'D4') -> point number. ValueError if off the board or malformed.

    'pass' is not a point: games that have a pass handle it before calling this.
    """
    t = text.strip().upper()
    if len(t) < 2 or t[0] not in COLUMN_LETTERS or not t[1:].isdigit():
        raise ValueError(f"bad vertex {text!r}")
    x = COLUMN_LETTERS.index(t[0])
    y = int(t[1:]) - 1
    if not (0 <= x < size and 0 <= y < size):
        raise ValueError(f"vertex {text!r} is off the {size}x{size} board")
    return y * size + x


@runtime_checkable
class Position(Protocol):
    """A game state. Immutable: ``play`` returns a new position. (Its data are read-only here,
    so that a board's own class may narrow them: a Go position's ``parent`` is a Go position.)"""

    @property
    def game(self) -> Game: ...
    @property
    def to_play(self) -> int: ...  # BLACK or WHITE: the side to move
    @property
    def move_number(self) -> int: ...  # moves played so far, passes included
    @property
    def last_move(self) -> int | None: ...  # the action that led here; None at the start
    @property
    def parent(self) -> Position | None: ...  # the position before ``last_move``; None at the start
    @property
    def hash(self) -> int: ...  # Zobrist hash of the stones *and* the side to move

    def legal_moves(self) -> list[int]:
        """All legal actions for the side to move (empty list when terminal)."""
        ...

    def is_legal(self, action: int) -> bool: ...

    def play(self, action: int) -> Position:
        """The position after ``to_play`` plays ``action``. Raises IllegalMove."""
        ...

    def resign(self) -> Position:
        """A terminal position in which ``to_play`` has resigned."""
        ...

    def is_terminal(self) -> bool: ...

    def winner(self) -> int:
        """BLACK, WHITE or EMPTY (draw). Only meaningful when terminal."""
        ...

    def result_value(self, colour: int) -> float:
        """+1 if ``colour`` won, -1 if it lost, 0 for a draw (terminal positions only)."""
        ...

    def result_string(self) -> str:
        """'B+3.5', 'W+R', '0', ... (terminal positions only)."""
        ...

    def board_array(self) -> np.ndarray:
        """int8 array of shape (size*size,): EMPTY / BLACK / WHITE per point."""
        ...


@runtime_checkable
class Game(Protocol):
    """A rule set with its parameters. Cheap, immutable, picklable (so its data are read-only)."""

    @property
    def name(self) -> str: ...  # 'go' or 'gomoku'
    @property
    def size(self) -> int: ...
    @property
    def num_actions(self) -> int: ...  # size*size (+1 for Go's pass)
    @property
    def pass_action(self) -> int | None: ...  # size*size for Go, None for Gomoku

    def new_position(self) -> Position: ...

    def action_to_vertex(self, action: int) -> str: ...

    def vertex_to_action(self, text: str) -> int:
        """GTP vertex (or 'pass' where the game has one) -> action. ValueError if bad."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """Parameters that rebuild this game through ``make_game(**d)``."""
        ...


def line_of_play(position: Position) -> list[Position]:
    """The positions from the start of the game to ``position`` (both included), following ``parent``."""
    line = []
    p: Position | None = position
    while p is not None:
        line.append(p)
        p = p.parent
    return line[::-1]


def actions_played(position: Position) -> tuple[int, ...]:
    """The actions that led from the start of the game to ``position``."""
    # every position after the first came from a move: its last_move is an action
    return tuple(cast(int, p.last_move) for p in line_of_play(position)[1:])


def play_moves(game: Game, moves: Sequence[int | str]) -> Position:
    """The position after playing ``moves`` (actions or vertices) from the start of ``game``."""
    position = game.new_position()
    for move in moves:
        position = position.play(game.vertex_to_action(move) if isinstance(move, str) else move)
    return position


def replay(game: Game, actions: tuple[int, ...], resigned: int) -> Position:
    """Rebuild a position, history included, by replaying its moves (how positions unpickle)."""
    position = play_moves(game, list(actions))
    return position.resign() if resigned else position
