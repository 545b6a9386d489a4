"""The rules of Go written to be read: a tuple of points, flood fill, superko by hash, area score.

This is the game of :mod:`zero9.games.go` written as plainly as we can. That one (the default
engine) keeps bitboards and liberties up to date move by move, which makes it about ten times
faster and much harder to read; this one finds everything again by looking at the board. They
must agree on everything: ``tests/test_go_simple.py`` plays a thousand random games on both and
compares them after every move. Use it with ``make_game('go', 9, engine='simple')``.

Vocabulary (on top of :mod:`zero9.games.game`: colours, points, actions, vertices, positions):

- **board**: a tuple of ``size*size`` colours, ``board[p]`` the colour on point ``p``
  (``EMPTY``, ``BLACK`` or ``WHITE``).
- **neighbours**: the two to four points next to a point along the lines.
- **flood fill**: from one point, keep adding neighbours of the same colour until none is left.
  The points found are a **region**; the other points next to it are its **border**.
- **group** (chain): the region of a stone. Its **liberties** are the empty points of its border.
  A group with no liberty is **captured**: its stones are taken off the board.
- **move**: a point or ``pass`` (action ``size*size``, always legal). A move on an empty point
  first captures the opponent groups it takes the last liberty of; if its own group then has no
  liberty it is **suicide**, and illegal.
- **board hash** (Zobrist): the XOR of one random 64-bit key per (colour, point) for the stones
  on the board. Equal boards have equal hashes, and a move updates the hash by XOR-ing the keys
  of the stones it adds and removes. ``hash`` also XORs in one more key when white is to move.
  The keys are drawn as :mod:`zero9.games.go` draws them, so both boards give a position the same hashes.
- **positional superko**: a move may not recreate the board of any earlier position of the game
  (whoever was to move then). A position keeps the board hashes of the game so far in ``seen``.
- **end of game**: two passes in a row, a resignation, or the move cap (``game.move_cap`` moves,
  passes included; 0: no cap).
- **score** (Tromp-Taylor area scoring): each colour counts its stones and the empty regions
  whose border holds only its stones; the score is black's count minus white's minus komi.
"""

from __future__ import annotations

import copy
import functools
import math
import random
from dataclasses import dataclass
from typing import cast

import numpy as np

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


@dataclass(frozen=True)
class SimpleGo:
    """Go on a ``size`` x ``size`` board (5 to 19); ``move_cap`` None: ``2 * size**2``, 0: no cap."""

    size: int = 9
    komi: float = 7.5
    move_cap: int | None = None
    name = "go"

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not isinstance(self.size, int) or not 5 <= self.size <= 19:
            raise ValueError(f"bad Go board size {self.size!r}: expected an int from 5 to 19")
        if not isinstance(self.komi, (int, float)) or not math.isfinite(self.komi) or abs(self.komi) > 1000:
            raise ValueError(f"bad komi {self.komi!r}: expected a finite number")
        cap = 2 * self.size * self.size if self.move_cap is None else self.move_cap
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 0:
            raise ValueError(f"bad move cap {self.move_cap!r}: expected None, 0 (no cap) or a positive int")
        object.__setattr__(self, "komi", float(self.komi))
        object.__setattr__(self, "move_cap", cap)

    @property
    def num_actions(self) -> int:
        return self.size * self.size + 1  # the points, and pass

    @property
    def pass_action(self) -> int:
        return self.size * self.size

    def new_position(self) -> SimpleGoPosition:
        """The empty board, black to move."""
        return SimpleGoPosition(self)

    def action_to_vertex(self, action: int) -> str:
        return "pass" if action == self.pass_action else point_to_vertex(int(action), self.size)

    def vertex_to_action(self, text: str) -> int:
        return self.pass_action if text.strip().lower() == "pass" else vertex_to_point(text, self.size)

    def play_moves(self, moves: list[int | str]) -> SimpleGoPosition:
        return cast(SimpleGoPosition, play_moves(self, moves))

    def to_dict(self) -> dict:
        return {"game": "go", "size": self.size, "komi": self.komi, "move_cap": self.move_cap,
                "engine": "simple"}


@functools.cache
def zobrist_keys(size: int) -> tuple[dict[int, list[int]], int]:
    """One random 64-bit key per (colour, point), and the key of white to move. Drawn from the seed the
    fast board uses, so that both boards give a position the same hashes."""
    rng, points = random.Random(0x5EED0000 + size), size * size
    keys = {colour: [rng.getrandbits(64) for _ in range(points)] for colour in (BLACK, WHITE)}
    return keys, rng.getrandbits(64)


@functools.cache
def neighbours(size: int) -> tuple[tuple[int, ...], ...]:
    """For each point of a ``size`` x ``size`` board, the points next to it (below, left, right, above)."""
    near = []
    for p in range(size * size):
        y, x = divmod(p, size)
        near.append(tuple((y + dy) * size + x + dx for dy, dx in ((-1, 0), (0, -1), (0, 1), (1, 0))
                          if 0 <= y + dy < size and 0 <= x + dx < size))
    return tuple(near)


def flood_fill(board: list | tuple, start: int, near: tuple) -> tuple[set[int], set[int]]:
    """The region of ``start`` (points joined to it through points of its colour) and its border."""
    colour = board[start]
    region, border, todo = {start}, set(), [start]
    while todo:
        for q in near[todo.pop()]:
            if board[q] != colour:
                border.add(q)
            elif q not in region:
                region.add(q)
                todo.append(q)
    return region, border


def has_liberty(board: list | tuple, point: int, near: tuple) -> bool:
    """Whether the group on ``point`` has a liberty: a flood fill of it that stops at the first one."""
    colour = board[point]
    group, todo = {point}, [point]
    while todo:
        for q in near[todo.pop()]:
            if board[q] == EMPTY:
                return True
            if board[q] == colour and q not in group:
                group.add(q)
                todo.append(q)
    return False


class SimpleGoPosition:
    """A Go position: the board, the side to move and the way here (``parent``). Immutable."""

    def __init__(self, game: SimpleGo):
        """The empty board, black to move."""
        self.game = game
        self.board = (EMPTY,) * game.size ** 2
        self.board_hash = 0  # no stones: no keys
        self.seen = frozenset([self.board_hash])  # the board hashes of this game so far
        self.to_play = BLACK
        self.move_number = 0  # moves played so far, passes included
        self.passes = 0  # passes in a row just before this position
        self.captures = {BLACK: 0, WHITE: 0}  # stones captured *by* each colour so far
        self.parent: SimpleGoPosition | None = None  # the position before,
        self.last_move: int | None = None  # and the move from it to here
        self._resigned = EMPTY  # the colour that resigned, if one did

    def _next(self, move: int, board: tuple[int, ...] | None = None, board_hash: int = 0,
              captured: int = 0) -> SimpleGoPosition:
        """The position after ``move``. A pass leaves the board as it is; a stone brings the new
        ``board``, its ``board_hash`` and how many stones it ``captured`` (see :meth:`_place`)."""
        pos = copy.copy(self)
        pos.parent, pos.last_move = self, move
        pos.to_play = 3 - self.to_play
        pos.move_number = self.move_number + 1
        if board is None:
            pos.passes = self.passes + 1
        else:
            pos.board, pos.board_hash, pos.seen = board, board_hash, self.seen | {board_hash}
            pos.passes = 0
            pos.captures = {**self.captures, self.to_play: self.captures[self.to_play] + captured}
        return pos

    # ---- what the position shows ------------------------------------------------------------------

    @property
    def hash(self) -> int:
        """The board hash, with one more key XOR-ed in when white is to move."""
        white_key = zobrist_keys(self.game.size)[1]
        return self.board_hash ^ white_key if self.to_play == WHITE else self.board_hash

    def stones(self, colour: int) -> int:
        """The points of ``colour``'s stones as one int with bit ``p`` set for point ``p`` (a bitboard)."""
        return sum(1 << p for p, c in enumerate(self.board) if c == colour)

    @property
    def black(self) -> int:
        """Black's stones as a bitboard (the network's input planes read them so)."""
        return self.stones(BLACK)

    @property
    def white(self) -> int:
        """White's stones as a bitboard."""
        return self.stones(WHITE)

    def board_array(self) -> np.ndarray:
        return np.array(self.board, dtype=np.int8)

    def is_eye(self, point: int, colour: int) -> bool:
        """True if ``point`` is an empty single-point eye of ``colour`` (Leela Zero's test).

        All its neighbours are ``colour``'s stones, and the opponent holds fewer than two of its
        diagonal points (none at all on the edge), so that a false eye does not count.
        """
        n, board = self.game.size, self.board
        near = neighbours(n)[point]
        if board[point] != EMPTY or any(board[q] != colour for q in near):
            return False
        y, x = divmod(point, n)
        diagonals = [(y + dy) * n + x + dx for dy in (-1, 1) for dx in (-1, 1)
                     if 0 <= y + dy < n and 0 <= x + dx < n]
        bad = sum(1 for q in diagonals if board[q] == 3 - colour)
        return bad == 0 if len(near) < 4 else bad < 2

    def __repr__(self) -> str:
        n = self.game.size
        return f"<SimpleGoPosition {n}x{n} move {self.move_number}, to play {'BW'[self.to_play - 1]}>"

    def __copy__(self) -> SimpleGoPosition:  # (else copy.copy would use __reduce__: replay the game)
        pos = object.__new__(SimpleGoPosition)
        pos.__dict__.update(self.__dict__)
        return pos

    def __reduce__(self):
        # Pickled as its moves, replayed on unpickling (as the fast board is).
        return (replay, (self.game, actions_played(self), self._resigned))

    # ---- moves ------------------------------------------------------------------------------------

    def is_terminal(self) -> bool:
        cap = cast(int, self.game.move_cap)  # an int after SimpleGo.__post_init__
        return bool(self._resigned) or self.passes >= 2 or 0 < cap <= self.move_number

    def play(self, action: int) -> SimpleGoPosition:
        """The position after the side to move plays ``action``. Raises IllegalMove; ``self`` is unchanged."""
        game = self.game
        n = game.size
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or not 0 <= action <= n * n:
            raise IllegalMove(repr(action), f"not a point or pass on the {n}x{n} board")
        if self.is_terminal():
            raise IllegalMove(game.action_to_vertex(action), "game over")
        if action == game.pass_action:
            return self._next(game.pass_action)
        return self._next(int(action), *self._place(int(action)))

    def _place(self, point: int) -> tuple[tuple[int, ...], int, int]:
        """The board after the side to move puts a stone on ``point``, its hash and the stones captured.

        Raises IllegalMove if the point is occupied, or the move is suicide or repeats a board.
        """
        if self.board[point] != EMPTY:
            raise IllegalMove(self.game.action_to_vertex(point), "occupied")
        me, them = self.to_play, 3 - self.to_play
        near, keys = neighbours(self.game.size), zobrist_keys(self.game.size)[0]
        board = list(self.board)
        board[point] = me
        board_hash = self.board_hash ^ keys[me][point]
        captured = 0
        for q in near[point]:
            if board[q] == them and not has_liberty(board, q, near):
                for s in flood_fill(board, q, near)[0]:
                    board[s] = EMPTY
                    board_hash ^= keys[them][s]
                    captured += 1
        if not has_liberty(board, point, near):
            raise IllegalMove(self.game.action_to_vertex(point), "suicide")
        if board_hash in self.seen:
            raise IllegalMove(self.game.action_to_vertex(point), "superko (repeats an earlier position)")
        return tuple(board), board_hash, captured

    def is_legal(self, action: int) -> bool:
        try:
            self.play(action)
        except IllegalMove:
            return False
        return True

    def legal_moves(self) -> list[int]:
        """All legal actions for the side to move, ascending, pass last; [] when the game is over."""
        if self.is_terminal():
            return []
        legal = []
        for p, colour in enumerate(self.board):
            if colour == EMPTY:
                try:
                    self._place(p)
                except IllegalMove:
                    continue
                legal.append(p)
        return legal + [self.game.pass_action]

    def resign(self) -> SimpleGoPosition:
        """A terminal copy of this position in which the side to move has resigned."""
        if self.is_terminal():
            raise IllegalMove("resign", "game over")
        pos = copy.copy(self)
        pos._resigned = self.to_play
        return pos

    # ---- the score --------------------------------------------------------------------------------

    def ownership(self) -> np.ndarray:
        """int8 per point: BLACK / WHITE for stones and for the empty regions that border only that colour."""
        near = neighbours(self.game.size)
        owner, counted = list(self.board), set()
        for p, colour in enumerate(self.board):
            if colour == EMPTY and p not in counted:
                region, border = flood_fill(self.board, p, near)
                counted |= region
                colours = {self.board[q] for q in border}
                if len(colours) == 1:  # only black or only white (an empty board has no border at all)
                    (only,) = colours
                    for q in region:
                        owner[q] = only
        return np.array(owner, dtype=np.int8)

    def score(self) -> float:
        """Tromp-Taylor score: black area minus white area minus komi (positive: black ahead)."""
        owner = self.ownership()
        return int((owner == BLACK).sum()) - int((owner == WHITE).sum()) - self.game.komi

    def winner(self) -> int:
        """BLACK, WHITE, or EMPTY for a draw (a score of 0), once the game is over."""
        if not self.is_terminal():
            raise ValueError("the game is not over: no result yet")
        if self._resigned:
            return 3 - self._resigned
        s = self.score()
        return BLACK if s > 0 else WHITE if s < 0 else EMPTY

    def result_value(self, colour: int) -> float:
        """+1 if ``colour`` won, -1 if it lost, 0 for a draw."""
        w = self.winner()
        return 0.0 if w == EMPTY else 1.0 if w == colour else -1.0

    def result_string(self) -> str:
        """The result as GTP writes it: ``B+3.5``, ``W+R`` (resignation), ``0`` (a draw)."""
        w = self.winner()
        if self._resigned:
            return "B+R" if w == BLACK else "W+R"
        return "0" if w == EMPTY else f"{'B' if w == BLACK else 'W'}+{abs(self.score()):g}"
