"""The rules of Gomoku (n in a row) in pure Python.

Vocabulary (on top of :mod:`zero9.games.game`, which defines colours, points and vertices):

- **move**: a point; every empty point is legal. Gomoku has no pass, so the number of actions
  is ``size*size``.
- **line** / **run**: the stones of one colour that lie next to each other along one of the four
  directions (horizontal, vertical, two diagonals) through a point.
- **connect**: the number in a row that wins (5 by default).
- **variant**: ``freestyle`` (a run of ``connect`` *or more* wins), ``standard`` (a run of
  *exactly* ``connect`` wins; a longer run, an **overline**, does not, but is still legal) or
  ``renju`` (connect 5; black wins with exactly five and may not play the forbidden points of
  :mod:`zero9.games.renju`: overline, double four, double three; white wins with five or more).
- **position**: immutable; ``play`` returns a new :class:`GomokuPosition`. The board is a
  ``bytes`` of ``size*size`` colours. The win test only looks at the runs through the last move.
- **result**: the side that made a winning run wins; a full board without one is a draw (``0``);
  resignation loses (``B+R`` / ``W+R``).
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from zero9.games.display import board_to_text
from zero9.games.game import (
    BLACK,
    EMPTY,
    WHITE,
    IllegalMove,
    actions_played,
    play_moves,
    point_to_vertex,
    replay,
    vertex_to_point,
)
from zero9.games.renju import DIRECTIONS, forbidden

MIN_SIZE, MAX_SIZE = 5, 25  # 20x20 is Gomocup's board; 25 columns is what GTP's letters reach
VARIANTS = ("freestyle", "standard", "renju")


@functools.cache
def _zobrist(size: int) -> tuple[list[int], list[int], int]:
    """Zobrist keys per size (fixed seed, so hashes agree across processes)."""
    rng = random.Random(0x60C0000 + size)
    nn = size * size
    black = [rng.getrandbits(64) for _ in range(nn)]
    white = [rng.getrandbits(64) for _ in range(nn)]
    return black, white, rng.getrandbits(64)


def _is_int(x: object) -> bool:
    """An int (numpy ints too), but not a bool."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


@dataclass(frozen=True)
class Gomoku:
    """Gomoku on a ``size`` x ``size`` board: ``connect`` in a row wins."""

    size: int = 15
    connect: int = 5
    variant: str = "freestyle"

    name = "gomoku"
    pass_action = None

    def __post_init__(self) -> None:
        if not _is_int(self.size) or not MIN_SIZE <= self.size <= MAX_SIZE:
            raise ValueError(f"bad Gomoku board size {self.size!r}: expected an int from {MIN_SIZE} "
                             f"to {MAX_SIZE}")
        if not _is_int(self.connect) or not 3 <= self.connect <= self.size:
            raise ValueError(f"bad connect {self.connect!r}: expected an int from 3 "
                             f"to the board size {self.size}")
        variant = str(self.variant).strip().lower()
        if variant not in VARIANTS:
            raise ValueError(f"bad Gomoku variant {self.variant!r}: expected one of {', '.join(VARIANTS)}")
        if variant == "renju" and self.connect != 5:
            raise ValueError(f"renju is five in a row: connect must be 5, got {self.connect}")
        object.__setattr__(self, "variant", variant)

    @property
    def num_actions(self) -> int:
        return self.size * self.size

    def new_position(self) -> GomokuPosition:
        """The empty board, black to move."""
        return GomokuPosition._initial(self)

    def action_to_vertex(self, action: int) -> str:
        if not _is_int(action) or not 0 <= action < self.num_actions:
            raise ValueError(f"bad action {action!r}: expected 0..{self.num_actions - 1} "
                             f"on {self.size}x{self.size}")
        return point_to_vertex(int(action), self.size)

    def vertex_to_action(self, text: str) -> int:
        if text.strip().lower() == "pass":
            raise ValueError("Gomoku has no pass")
        return vertex_to_point(text, self.size)

    def to_dict(self) -> dict[str, Any]:
        return {"game": "gomoku", "size": self.size, "connect": self.connect, "variant": self.variant}

    def play_moves(self, moves: list[int | str]) -> GomokuPosition:
        """The position after playing ``moves`` (actions or vertices) from the empty board."""
        return cast(GomokuPosition, play_moves(self, moves))


class GomokuPosition:
    """A Gomoku position: stones, side to move, history (via ``parent``). Immutable."""

    __slots__ = ("game", "board", "to_play", "move_number", "last_move", "parent", "hash", "_winner",
                 "_resigned", "_legal")
    # the slots' types (annotations only: no class attributes beside the slots)
    game: Gomoku
    board: bytes
    to_play: int
    move_number: int
    last_move: int | None
    parent: GomokuPosition | None
    hash: int
    _winner: int | None  # None while the game goes on; BLACK / WHITE / EMPTY (draw) once over
    _resigned: int
    _legal: list[int] | None

    @classmethod
    def _initial(cls, game: Gomoku) -> GomokuPosition:
        pos = object.__new__(cls)
        pos.game = game
        pos.board = bytes(game.size * game.size)
        pos.to_play, pos.move_number, pos.last_move, pos.parent = BLACK, 0, None, None
        pos.hash = 0
        pos._winner = None  # None while the game goes on; BLACK / WHITE / EMPTY (draw) once over
        pos._resigned = EMPTY
        pos._legal = None
        return pos

    def __reduce__(self):
        return (replay, (self.game, actions_played(self), self._resigned))

    def __repr__(self) -> str:
        n = self.game.size
        return f"<GomokuPosition {n}x{n} move {self.move_number}, to play {'BW'[self.to_play - 1]}>"

    def __str__(self) -> str:
        return board_to_text(self)

    def board_array(self) -> np.ndarray:
        return np.frombuffer(self.board, dtype=np.int8).copy()

    def is_terminal(self) -> bool:
        return self._winner is not None

    def legal_moves(self) -> list[int]:
        """The empty points (less renju's forbidden ones for black), ascending; [] once the game is over."""
        if self._legal is None:
            self._legal = self.legal_actions().tolist()
        return self._legal.copy()

    def legal_actions(self) -> np.ndarray:
        """``legal_moves()`` as an intp array, read from the board's bytes by numpy (for the search)."""
        if self._winner is not None:
            return np.zeros(0, np.intp)
        empty = (np.frombuffer(self.board, np.uint8) == EMPTY).nonzero()[0]
        if self._renju_black():  # reading the four lines of every point is slow: keep the answer
            if self._legal is None:
                n = self.game.size
                self._legal = [p for p in empty.tolist() if forbidden(self.board, n, p) is None]
            return np.array(self._legal, np.intp)
        return empty

    def _renju_black(self) -> bool:
        return self.game.variant == "renju" and self.to_play == BLACK

    def _reason(self, action: int) -> str | None:
        """Why ``action`` is illegal, or None if it is legal."""
        if self._winner is not None:
            return "game over"
        if not _is_int(action) or not 0 <= action < len(self.board):
            return f"not a point on the {self.game.size}x{self.game.size} board"
        if self.board[action]:
            return "occupied"
        if self._renju_black():
            why = forbidden(self.board, self.game.size, action)
            if why is not None:
                return f"forbidden for black in renju ({why})"
        return None

    def is_legal(self, action: int) -> bool:
        return self._reason(action) is None

    def play(self, action: int) -> GomokuPosition:
        """The position after the side to move plays ``action``. Raises IllegalMove."""
        reason = self._reason(action)
        if reason is not None:
            try:
                text = self.game.action_to_vertex(action)
            except ValueError:
                text = repr(action)
            raise IllegalMove(text, reason)
        action = int(action)
        c = self.to_play
        board = bytearray(self.board)
        board[action] = c
        pos = object.__new__(GomokuPosition)
        pos.game = self.game
        pos.board = bytes(board)
        pos.to_play = 3 - c
        pos.move_number = self.move_number + 1
        pos.last_move, pos.parent = action, self
        zb, zw, zside = _zobrist(self.game.size)
        pos.hash = self.hash ^ (zb[action] if c == BLACK else zw[action]) ^ zside
        pos._resigned = EMPTY
        pos._legal = None
        if self._wins(pos.board, action, c):
            pos._winner = c
        elif pos.move_number >= len(board) or EMPTY not in pos.board:
            pos._winner = EMPTY
        else:
            pos._winner = None
        return pos

    def _wins(self, board: bytes, point: int, c: int) -> bool:
        """Does the stone just played on ``point`` make a winning run? Looks only along its four lines."""
        n = self.game.size
        need = self.game.connect
        exact = self.game.variant == "standard" or (self.game.variant == "renju" and c == BLACK)
        y0, x0 = divmod(point, n)
        for dx, dy in DIRECTIONS:
            run = 1
            for sign in (1, -1):
                x, y = x0 + sign * dx, y0 + sign * dy
                while 0 <= x < n and 0 <= y < n and board[y * n + x] == c:
                    run += 1
                    x += sign * dx
                    y += sign * dy
            if run == need or (run > need and not exact):
                return True
        return False

    def wins_at(self, point: int, colour: int) -> bool:
        """Would a stone of ``colour`` on the empty ``point`` make a winning run (this variant's rule)?"""
        return self._wins(self.board[:point] + bytes([colour]) + self.board[point + 1:], point, colour)

    def passed(self) -> GomokuPosition:
        """The same stones with the other side to move. Gomoku has no pass; threat search needs one."""
        pos = object.__new__(GomokuPosition)
        for name in GomokuPosition.__slots__:
            setattr(pos, name, getattr(self, name))
        pos.to_play = 3 - self.to_play
        pos.hash = self.hash ^ _zobrist(self.game.size)[2]  # the side-to-move key, as play() applies it
        pos._legal = None
        return pos

    def resign(self) -> GomokuPosition:
        """A terminal copy of this position in which the side to move has resigned."""
        if self._winner is not None:
            raise IllegalMove("resign", "game over")
        pos = object.__new__(GomokuPosition)
        for name in GomokuPosition.__slots__:
            setattr(pos, name, getattr(self, name))
        pos._resigned = self.to_play
        pos._winner = 3 - self.to_play
        pos._legal = []
        return pos

    def winner(self) -> int:
        if self._winner is None:
            raise ValueError("the game is not over: no result yet")
        return self._winner

    def result_value(self, colour: int) -> float:
        w = self.winner()
        return 0.0 if w == EMPTY else 1.0 if w == colour else -1.0

    def result_string(self) -> str:
        w = self.winner()
        if w == EMPTY:
            return "0"
        return ("B+R" if w == BLACK else "W+R") if self._resigned else ("B+" if w == BLACK else "W+")


__all__ = ["Gomoku", "GomokuPosition", "BLACK", "WHITE", "EMPTY"]


def point_from_xy(x: int, y: int, size: int) -> int:
    """Gomocup / piskvork coordinates (x from the left, y from the top) -> zero9 point."""
    if not (0 <= x < size and 0 <= y < size):
        raise ValueError(f"{x},{y} is off the {size}x{size} board")
    return (size - 1 - y) * size + x


def xy_from_point(point: int, size: int) -> str:
    """zero9 point -> Gomocup / piskvork ``x,y``."""
    row, x = divmod(point, size)
    return f"{x},{size - 1 - row}"
