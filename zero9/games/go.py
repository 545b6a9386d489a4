"""The rules of Go in pure Python: captures, positional superko, Tromp-Taylor scoring.

Vocabulary (on top of :mod:`zero9.games.game`, which defines colours, points and vertices):

- **bitboard**: a Python int with bit ``p`` set for each point ``p`` in a set of points.
  Python ints are arbitrary-precision, so one int holds a whole 19x19 board and set
  operations on points are single ``&``, ``|``, ``~`` expressions.
- **group** (a chain): a maximal set of same-coloured stones connected along the lines.
  It is stored as a tuple ``(stones, liberties)`` of two bitboards (its colour is that of
  its stones). Every group has an id, ``1 + the point of one of its stones``, and
  ``gid_at[p]`` (a bytearray, cheap to copy and unseen by the garbage collector) holds the
  id of the group on point ``p`` (0 if empty). ``groups[id]`` is the group's tuple (None for
  an unused id: a list, not a dict, as list indexing is the cheapest lookup). A move copies
  the id table and the group list and replaces only the tuples of the groups it touches.
- **liberty**: an empty point next to a group. A group with no liberty is captured; a
  group with one is **in atari**, and its stones are **weak** (one bitboard per colour holds
  them; groups never share stones, so a group leaves it with one ``& ~stones``). Liberties
  are kept up to date *incrementally* on each move instead of being found again by flood
  fill; this is what makes play and the legal-move list cheap: the legal points come from a
  few whole-board shifts (see :meth:`GoPosition._legal_points`), with no loop over points.
- **move**: a point or ``pass`` (action ``size*size``). A move that leaves its own group
  without liberties and captures nothing is **suicide** and illegal.
- **positional superko**: a move may not recreate the stones of any earlier position in
  the game (whoever is to move), as in Leela Zero and leelaz-ninenine. Passing is always
  legal. Whole boards are compared by **board hash**, the XOR of the Zobrist keys of all
  stones; ``position.hash`` also folds in the side to move (for evaluation caches).
- **segment** (of the history): the positions since the last capture. Within one, every move
  adds a stone, so a board can only repeat one from an earlier segment with as many stones
  (or, for a capturing move, one of this segment, found by counting). The segment's hashes
  sit in a tuple (one per stone count), the earlier segments' in a list indexed by stone
  count, shared by the whole segment. A capture does not build that list at once: the new
  segment holds the position it was captured from, and the list is made (copying 82 or
  more entries) the first time a superko check asks for it, which most never do.
- **position**: immutable; ``play`` returns a new :class:`GoPosition` that shares the
  unchanged group tuples with its parent (copy-on-write). Its legal points are computed
  on the first ``legal_moves()`` call and kept as a bitboard.
- **recent boards**: the stones of the last :data:`RECENT_BOARDS` positions (this one first) as
  bytes, each board the little-endian bitboard of its side to move's stones then the other
  side's (a net's input planes read them). A position keeps its own: a child's are its
  parent's with one board more, so a search never packs a board twice.
- **end of game**: two passes in a row, a resignation, or the move cap (``2 * size**2``
  moves, passes included, by default as leelaz-ninenine; 0 turns the cap off).
- **score** (Tromp-Taylor area scoring): black stones plus empty regions that reach only
  black, minus the same for white, minus komi. The **result** is a GTP string (``B+3.5``,
  ``W+R``, ``0`` for a draw) and a value +1/-1/0 from one colour's view.

Why one module, over the ~600 lines a module may have: the fast board is one idea, and its parts
are not separable. Playing a move, listing the legal points, checking superko and scoring all read
and write the same private fields of :class:`GoPosition` (the id table and group tuples, the weak
stones, the segment hashes, the lost points), whose invariants hold only together; split into
modules, those fields would become an interface each part must keep. To read the rules in small
pieces, read the readable twin, :mod:`zero9.games.go_simple`.
"""

from __future__ import annotations

import functools
import math
import operator
import random
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeGuard, cast

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

MIN_SIZE, MAX_SIZE = 5, 19


def _points_function(byte_points: list[list[tuple[int, ...]]], *last: int) -> Callable[[int], list[int]]:
    """``points(b)``: the points of bitboard ``b``, ascending (then ``last``), a table lookup per byte.

    Generated once per board size with the loop over the bytes unrolled into one list display:
    the legal-move list is built on every move, and this is a third faster than the loop.
    """
    # def points(b):  # (tables t0 = byte_points[0], ... are globals of its own namespace)
    #     x0, x1, ... = b.to_bytes(nbytes, "little")
    #     return [*t0[x0], *t1[x1], ..., *last]
    nbytes = len(byte_points)
    names = ", ".join(f"x{i}" for i in range(nbytes))
    items = ", ".join([f"*t{i}[x{i}]" for i in range(nbytes)] + [str(p) for p in last])
    code = f"def points(b):\n    {names}, = b.to_bytes({nbytes}, 'little')\n    return [{items}]\n"
    namespace: dict[str, Any] = {f"t{i}": table for i, table in enumerate(byte_points)}
    exec(code, namespace)
    return namespace["points"]


def _actions_function(nbits: int) -> Callable[[int], np.ndarray]:
    """``actions(b)``: the points of bitboard ``b`` (``nbits`` bits) as an ascending intp array.

    The search wants the legal moves as a numpy index array; converting a list of Python ints
    costs several times more than building the list. Here each byte of the bitboard looks up
    the machine bytes of its points, and the joined bytes are the array (loop unrolled as above).
    """
    # def actions(b):  # (tables t0 = chunks[0], ... are globals of its own namespace)
    #     x0, x1, ... = b.to_bytes(nbytes, "little")
    #     return frombuffer(b"".join((t0[x0], t1[x1], ...)), intp)
    nbytes = (nbits + 7) // 8
    chunks = [tuple(np.array([i * 8 + b for b in range(8) if v >> b & 1], np.intp).tobytes()
                    for v in range(256)) for i in range(nbytes)]
    names = ", ".join(f"x{i}" for i in range(nbytes))
    items = ", ".join(f"t{i}[x{i}]" for i in range(nbytes))
    code = (f"def actions(b):\n    {names}, = b.to_bytes({nbytes}, 'little')\n"
            f"    return frombuffer(b''.join(({items},)), intp)\n")
    namespace: dict[str, Any] = {f"t{i}": table for i, table in enumerate(chunks)}
    namespace.update(frombuffer=np.frombuffer, intp=np.intp)
    exec(code, namespace)
    return namespace["actions"]


class Geometry:
    """Per-size tables (neighbours, masks, Zobrist keys), built once per board size and shared."""

    def __init__(self, size: int):
        n = size
        self.size = n
        self.nn = nn = n * n
        self.full = (1 << nn) - 1
        col0 = sum(1 << (y * n) for y in range(n))
        self.not_col0 = self.full & ~col0
        self.not_col_last = self.full & ~(col0 << (n - 1))
        self.nbrs: list[tuple[int, ...]] = []
        self.nbr_bb: list[int] = []
        self.diag_bb: list[int] = []
        self.on_edge: list[bool] = []
        for p in range(nn):
            y, x = divmod(p, n)
            near = [(y + dy) * n + x + dx for dy, dx in ((-1, 0), (0, -1), (0, 1), (1, 0))
                     if 0 <= y + dy < n and 0 <= x + dx < n]
            diag = [(y + dy) * n + x + dx for dy, dx in ((-1, -1), (-1, 1), (1, -1), (1, 1))
                    if 0 <= y + dy < n and 0 <= x + dx < n]
            self.nbrs.append(tuple(near))
            self.nbr_bb.append(sum(1 << q for q in near))
            self.diag_bb.append(sum(1 << q for q in diag))
            self.on_edge.append(len(near) < 4)
        # Bitboard -> sorted point list, a byte at a time (much faster than a bit at a time).
        self.nbytes = (nn + 7) // 8
        self.byte_points = [[tuple(i * 8 + b for b in range(8) if v >> b & 1) for v in range(256)]
                            for i in range(self.nbytes)]
        self.points = _points_function(self.byte_points)
        self.points_and_pass = _points_function(self.byte_points, nn)  # a legal-move list
        self.pass_bit = 1 << nn  # pass as bit nn, so that one bitboard holds every legal action
        self.actions = _actions_function(nn + 1)  # a legal-action array: actions(legal | pass_bit)
        rng = random.Random(0x5EED0000 + n)  # fixed seed: hashes agree across processes and runs
        self.zobrist = {BLACK: [rng.getrandbits(64) for _ in range(nn)],
                        WHITE: [rng.getrandbits(64) for _ in range(nn)]}
        self.zobrist_white_to_move = rng.getrandbits(64)
        # Zobrist key -> point, so "which move would recreate board h?" is one dict lookup.
        self.zobrist_point = {c: {k: p for p, k in enumerate(keys)} for c, keys in self.zobrist.items()}

    def neighbours(self, b: int) -> int:
        """The points next to any point of bitboard ``b`` (may include points of ``b``)."""
        n = self.size
        return (((b << 1) & self.not_col0) | ((b >> 1) & self.not_col_last) | (b << n) | (b >> n)) & self.full

    def flood(self, seed: int, within: int) -> int:
        """The connected part of bitboard ``within`` that contains ``seed``."""
        region = seed
        while True:
            grown = (region | self.neighbours(region)) & within
            if grown == region:
                return region
            region = grown

    @staticmethod
    def few_points(b: int) -> list[int]:
        """The points of bitboard ``b``, ascending; faster than ``points`` for a handful of points."""
        out = []
        while b:
            low = b & -b
            out.append(low.bit_length() - 1)
            b ^= low
        return out


@functools.cache
def geometry(size: int) -> Geometry:
    """The shared tables for one board size (cached: a cache keyed by size, not a size global)."""
    return Geometry(size)


def _is_int(x: object) -> TypeGuard[int | np.integer]:
    """An int (numpy ints too), but not a bool."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


@dataclass(frozen=True)
class Go:
    """Go on a ``size`` x ``size`` board with area scoring and positional superko."""

    size: int = 9
    komi: float = 7.5
    move_cap: int | None = None  # None -> 2*size*size; 0 -> no cap

    name = "go"

    def __post_init__(self) -> None:
        if not _is_int(self.size) or not MIN_SIZE <= self.size <= MAX_SIZE:
            raise ValueError(f"bad Go board size {self.size!r}: expected an int from {MIN_SIZE} "
                             f"to {MAX_SIZE}")
        try:
            komi = float(self.komi)
        except (TypeError, ValueError):
            raise ValueError(f"bad komi {self.komi!r}: expected a number") from None
        if not math.isfinite(komi) or abs(komi) > 1000:
            raise ValueError(f"bad komi {self.komi!r}: expected a finite number")
        object.__setattr__(self, "komi", komi)
        cap = 2 * self.size * self.size if self.move_cap is None else self.move_cap
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 0:
            raise ValueError(f"bad move cap {self.move_cap!r}: expected None, 0 (no cap) or a positive int")
        object.__setattr__(self, "move_cap", cap)

    # Cached: search and self-play read these on every move (a frozen dataclass still allows it).
    @functools.cached_property
    def num_actions(self) -> int:
        return self.size * self.size + 1

    @functools.cached_property
    def pass_action(self) -> int:
        return self.size * self.size

    @functools.cached_property
    def _end_move(self) -> float:
        """The move number at which the move cap ends the game (infinite without a cap)."""
        cap = cast(int, self.move_cap)  # an int after __post_init__
        return cap if cap > 0 else math.inf

    def new_position(self) -> GoPosition:
        """The empty board, black to move."""
        return GoPosition._initial(self)

    def action_to_vertex(self, action: int) -> str:
        if action == self.size * self.size:
            return "pass"
        if not isinstance(action, (int, np.integer)) or not 0 <= action < self.size * self.size:
            raise ValueError(f"bad action {action!r}: expected 0..{self.size * self.size} "
                             f"on {self.size}x{self.size}")
        return point_to_vertex(int(action), self.size)

    def vertex_to_action(self, text: str) -> int:
        if text.strip().lower() == "pass":
            return self.size * self.size
        return vertex_to_point(text, self.size)

    def to_dict(self) -> dict[str, Any]:
        return {"game": "go", "size": self.size, "komi": self.komi, "move_cap": self.move_cap}

    def play_moves(self, moves: list[int | str]) -> GoPosition:
        """The position after playing ``moves`` (actions or vertices) from the empty board."""
        return cast(GoPosition, play_moves(self, moves))


RECENT_BOARDS = 8  # boards recent_boards() keeps: a position and the 7 before it (the net's history)


class GoPosition:
    """A Go position: stones, side to move, history (via ``parent``). Immutable."""

    __slots__ = ("game", "_geo", "_mine", "_theirs", "_gid_at", "_groups", "to_play", "move_number",
                 "last_move", "parent", "passes", "board_hash", "hash", "_caps", "_nstones",
                 "_seg_hashes", "_seen", "_through", "_legal", "_resigned", "_lost", "_weak", "_done",
                 "_recent")
    # the slots' types (annotations only: no class attributes beside the slots)
    game: Go
    _geo: Geometry
    _mine: int  # bitboard of the side to move's stones
    _theirs: int
    _gid_at: bytearray | array[int]  # point -> group id
    _groups: list[Any]  # group id -> (stones, liberties) bitboards; None for an id not in use
    to_play: int
    move_number: int
    last_move: int | None
    parent: GoPosition | None
    passes: int
    board_hash: int
    hash: int
    _caps: tuple[int, int]
    _nstones: int
    _seg_hashes: tuple[int, ...]
    _seen: list[tuple[int, ...]] | GoPosition  # a position: pending (see _history)
    _through: list[tuple[int, ...]] | None
    _legal: int | None  # bitboard of the legal points, once asked for
    _resigned: int
    _lost: tuple[int, int]
    _weak: tuple[int, int]
    _done: bool
    _recent: bytes | None

    @classmethod
    def _initial(cls, game: Go) -> GoPosition:
        geo = geometry(game.size)
        pos = object.__new__(cls)
        pos.game, pos._geo = game, geo
        pos._mine = pos._theirs = 0  # stones of the side to move, of the other side (bitboards)
        # bytes, not a list: copied per move, and invisible to the garbage collector
        pos._gid_at = bytearray(geo.nn) if geo.nn < 255 else array("H", bytes(2 * geo.nn))
        pos._groups = [None] * (geo.nn + 1)  # group id (1 + a point) -> (stones, liberties)
        pos.to_play, pos.move_number, pos.last_move, pos.parent, pos.passes = BLACK, 0, None, None, 0
        pos.board_hash = pos.hash = 0
        pos._caps = (0, 0)
        pos._nstones = 0
        # The superko history, by segment (see the module docstring).
        pos._seg_hashes = (0,)  # board hashes of this segment, oldest first: one per stone count
        pos._seen = [()] * (geo.nn + 1)  # earlier segments' board hashes, by stone count (see _history)
        pos._through = None  # _seen with this segment added, once a capture has asked for it
        pos._legal = None
        pos._resigned = EMPTY
        pos._done = False  # terminal: two passes, resignation or the move cap
        pos._lost = (0, 0)  # bitboards of points where black / white stones have been captured
        pos._weak = (0, 0)  # stones in groups in atari: the side to move's, the other side's
        pos._recent = None  # recent_boards(), once asked for
        return pos

    def __reduce__(self):
        # Replaying keeps pickles small (no tables, no deep parent recursion); self-play ships positions.
        return (replay, (self.game, actions_played(self), self._resigned))

    def __repr__(self) -> str:
        n = self.game.size
        return f"<GoPosition {n}x{n} move {self.move_number}, to play {'BW'[self.to_play - 1]}>"

    def __str__(self) -> str:
        return board_to_text(self)

    # ---- state ---------------------------------------------------------------------------------------

    @property
    def captures(self) -> dict[int, int]:
        """Stones captured *by* each colour so far."""
        return {BLACK: self._caps[0], WHITE: self._caps[1]}

    def is_terminal(self) -> bool:
        return self._done

    def recent_boards(self) -> bytes:
        """This position's and its ancestors' stones, newest first (see "recent boards" above);
        boards before the game's start are empty."""
        todo: list[GoPosition] = []
        p: GoPosition | None = self  # back to a position that has them kept (or RECENT_BOARDS back)
        while p is not None and len(todo) < RECENT_BOARDS and p._recent is None:
            todo.append(p)
            p = p.parent
        nbytes = (self._geo.nn + 7) // 8
        base = None if p is None else p._recent
        # The walk ended at the game's start or at kept boards: every result built on it is whole.
        # Cut off RECENT_BOARDS back instead, the older positions' would lack earlier boards: keep none.
        whole = p is None or base is not None
        boards = base if base is not None else bytes(2 * RECENT_BOARDS * nbytes)
        for p in reversed(todo):
            own, other = p._mine.to_bytes(nbytes, "little"), p._theirs.to_bytes(nbytes, "little")
            boards = own + other + boards[: -2 * nbytes]
            if whole or p is self:
                p._recent = boards
        return boards

    @property
    def black(self) -> int:
        """Bitboard of black's stones."""
        return self._mine if self.to_play == BLACK else self._theirs

    @property
    def white(self) -> int:
        """Bitboard of white's stones."""
        return self._theirs if self.to_play == BLACK else self._mine

    def stones(self, colour: int) -> int:
        """Bitboard of ``colour``'s stones."""
        return self.black if colour == BLACK else self.white

    def board_array(self) -> np.ndarray:
        geo = self._geo
        nb = geo.nbytes
        raw = self.black.to_bytes(nb, "little") + self.white.to_bytes(nb, "little")
        bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little").reshape(2, -1)[:, :geo.nn]
        return (bits[0] + 2 * bits[1]).astype(np.int8)

    def is_eye(self, point: int, colour: int) -> bool:
        """True if ``point`` is an empty single-point eye of ``colour`` (Leela Zero's test).

        All neighbours are ``colour``'s stones, and the opponent holds fewer than two diagonal
        points (none at all on the edge), so that a false eye does not count.
        """
        geo = self._geo
        if colour == self.to_play:
            own, opp = self._mine, self._theirs
        else:
            own, opp = self._theirs, self._mine
        if geo.nbr_bb[point] & ~own:  # first: most points have a neighbour that is not ours
            return False
        if (own | opp) >> point & 1:
            return False
        bad = (geo.diag_bb[point] & opp).bit_count()
        return bad == 0 if geo.on_edge[point] else bad < 2

    # ---- moves ---------------------------------------------------------------------------------------

    def _vertex(self, action: object) -> str:
        """The vertex of an action, or the repr of something that is none (for the error message)."""
        try:
            return self.game.action_to_vertex(action)  # type: ignore[arg-type]  # anything: see except
        except ValueError:
            return repr(action)

    def _history_through_here(self) -> list[tuple[int, ...]]:
        """Board hashes of this position, its segment and all earlier ones, by stone count.

        What a capture from here starts its new segment with: built once per position (sibling
        captures in a search tree share it) from this segment's hashes, without walking up.
        """
        if self._through is None:
            seen = self._history().copy()
            seg = self._seg_hashes  # one board per stone count, up to this position's
            low, high = self._nstones + 1 - len(seg), self._nstones + 1
            # seen[k] += (h,) for each (k, h) of the segment, as one C loop: zip makes the 1-tuples.
            seen[low:high] = map(operator.add, seen[low:high], zip(seg))
            self._through = seen
        return self._through

    def _history(self) -> list[tuple[int, ...]]:
        """The earlier segments' board hashes, by stone count (made now if a capture left them pending)."""
        if not isinstance(self._seen, GoPosition):  # (isinstance rather than type(): mypy narrows it)
            return self._seen
        # Pending: _seen is the position this segment's capture was played from, whose own history
        # may be pending too. Climb to one that can be made at once, then make them on the way down
        # (a loop, not recursion: a long game can hold many pending captures).
        climb: list[GoPosition] = []
        pos = self
        while isinstance(pos._seen, GoPosition) and pos._seen._through is None:
            climb.append(pos)
            pos = pos._seen
        if isinstance(pos._seen, GoPosition):
            pos._seen = cast(list, pos._seen._through)  # not None: the loop above stopped at it
        for q in reversed(climb):
            assert isinstance(q._seen, GoPosition)  # each climbed position was pending
            q._seen = q._seen._history_through_here()
        assert not isinstance(self._seen, GoPosition)  # made on the way down
        return self._seen

    def _repeats(self, board_hash: int, nstones: int) -> bool:
        """True if a board with this hash and ``nstones`` stones occurred in this game (here included)."""
        if board_hash in self._history()[nstones]:
            return True
        # In the open segment every move adds a stone: the board with nstones stones is found by counting.
        i = nstones - self._nstones - 1
        return -len(self._seg_hashes) <= i < 0 and self._seg_hashes[i] == board_hash

    def is_legal(self, action: int) -> bool:
        if self._done:
            return False
        try:
            self.play(action)
        except IllegalMove:
            return False
        return True

    def resign(self) -> GoPosition:
        """A terminal copy of this position in which the side to move has resigned."""
        if self._done:
            raise IllegalMove("resign", "game over")
        pos = self._copy()
        pos._resigned = self.to_play
        pos._done = True
        return pos

    def resume(self) -> GoPosition:
        """A copy of a game ended by two passes in which play goes on (a GUI resumes; Leela Zero's GTP).

        The passes count restarts, so the next two passes end the game again.
        """
        if self._resigned or self.passes < 2:
            raise IllegalMove("resume", "only a game ended by two passes can be resumed")
        pos = self._copy()
        pos.passes = 0
        cap = cast(int, self.game.move_cap)  # an int after Go.__post_init__
        pos._done = cap > 0 and pos.move_number >= cap
        return pos

    def _copy(self) -> GoPosition:
        pos = object.__new__(GoPosition)
        for name in GoPosition.__slots__:
            setattr(pos, name, getattr(self, name))
        return pos

    def _pass(self) -> GoPosition:
        pos = object.__new__(GoPosition)
        pos.game, pos._geo = self.game, self._geo
        pos._mine, pos._theirs = self._theirs, self._mine  # the other side moves next
        pos._gid_at, pos._groups = self._gid_at, self._groups
        pos._weak = self._weak[::-1]
        pos.to_play = 3 - self.to_play
        pos.move_number = self.move_number + 1
        pos.last_move, pos.parent = self._geo.nn, self
        pos.passes = self.passes + 1
        pos.board_hash = self.board_hash
        pos.hash = self.hash ^ self._geo.zobrist_white_to_move
        pos._caps, pos._lost = self._caps, self._lost
        pos._nstones = self._nstones
        pos._seg_hashes, pos._seen, pos._through = self._seg_hashes, self._seen, self._through
        pos._legal = pos._recent = None
        pos._resigned = EMPTY
        cap = cast(int, self.game.move_cap)  # an int after Go.__post_init__
        pos._done = pos.passes >= 2 or (cap > 0 and pos.move_number >= cap)
        return pos

    def _play_unusual(self, action: object) -> GoPosition:
        """``play`` for everything but a point on an unfinished game: pass, numpy ints, bad input."""
        if self._done:
            raise IllegalMove(self._vertex(action), "game over")
        nn = self._geo.nn
        if not _is_int(action) or not 0 <= action <= nn:
            n = self._geo.size
            raise IllegalMove(repr(action), f"not a point or pass on the {n}x{n} board")
        return self._pass() if action == nn else self.play(int(action))

    def play(self, action: int) -> GoPosition:
        """The position after the side to move plays ``action``. Raises IllegalMove; ``self`` is unchanged.

        One long function (over the ~80 lines a function may have) on purpose: this is the board's hot
        path (every move of every search and self-play game), and in Python each call costs. Written as
        four helpers (the neighbour groups, the merge, the captured stones, the new position), the same
        code made ``scripts/bench_board.py`` about 3-5% slower (zero9 moves/s 122k against 126k; 10.2x
        against 10.7x the readable board, 3 alternating runs on a 2-core CPU). Its comments say what
        each part does; :meth:`zero9.games.go_simple.SimpleGoPosition.play` is the same move written to
        be read.
        """
        geo = self._geo
        if type(action) is not int or not 0 <= action < geo.nn or self._done:
            return self._play_unusual(action)
        bit = 1 << action
        c = self.to_play
        own, opp = self._mine, self._theirs
        occupied = own | opp
        if occupied & bit:
            raise IllegalMove(self._vertex(action), "occupied")

        # Update copies of the group tables in one pass over the neighbour groups: own groups merge
        # with the stone, opponent groups lose a liberty or are captured. ``self`` is left as it was,
        # so an illegal move found below just drops the copies.
        gid_at, groups = self._gid_at[:], self._groups[:]
        weak_own, weak_opp = self._weak
        new_stones = bit
        new_libs = geo.nbr_bb[action] & ~occupied
        merged: list[int] = []  # ids of the own groups joined by the move
        captured = 0
        for q in geo.nbrs[action]:
            g = gid_at[q]
            t = groups[g]
            if t is None:  # an empty point, or a group already merged or captured from another side
                continue
            st, lb = t
            if st & own:
                merged.append(g)
                new_stones |= st
                new_libs |= lb
                groups[g] = None
            elif lb == bit:
                captured |= st
                groups[g] = None
            elif lb & bit:  # not yet seen from another side
                lb ^= bit
                groups[g] = (st, lb)
                if lb.bit_count() == 1:  # (popcount: no new big int, unlike lb & (lb - 1))
                    weak_opp |= st
        new_libs &= ~bit
        if not new_libs and not captured:
            raise IllegalMove(self._vertex(action), "suicide")

        if not merged:
            keep = action + 1
        elif len(merged) == 1:
            keep = merged[0]
        else:  # the merged group keeps the id of the biggest; relabel the others' stones
            old = self._groups
            keep = most = 0
            for g in merged:
                k = old[g][0].bit_count()
                if k > most:
                    keep, most = g, k
            for g in merged:
                if g != keep:
                    for p in geo.few_points(old[g][0]):
                        gid_at[p] = keep
        gid_at[action] = keep
        groups[keep] = (new_stones, new_libs)
        # Stones of groups in atari: the new group's stones enter or leave together.
        if new_libs.bit_count() > 1:
            weak_own &= ~new_stones
        else:
            weak_own |= new_stones
        nstones = self._nstones + 1
        board_hash = self.board_hash ^ geo.zobrist[c][action]
        if captured:
            weak_opp &= ~captured
            opp ^= captured
            zkey_opp = geo.zobrist[3 - c]
            # The captured points become liberties of the own groups next to them (the new one too);
            # every other neighbour of a captured stone was captured with it.
            rest = captured
            while rest:
                free = rest & -rest
                rest ^= free
                p = free.bit_length() - 1
                gid_at[p] = 0
                board_hash ^= zkey_opp[p]
                nstones -= 1
                for q in geo.nbrs[p]:
                    g = gid_at[q]
                    t = groups[g]
                    if t is not None:
                        st, lb = t
                        lb |= free
                        groups[g] = (st, lb)
                        weak_own = weak_own & ~st if lb.bit_count() > 1 else weak_own | st
        # Only a board with a stone of ours on this point, and as many stones, can repeat.
        if self._lost[c - 1] >> action & 1 and self._repeats(board_hash, nstones):
            raise IllegalMove(self._vertex(action), "superko (repeats an earlier position)")

        pos = object.__new__(GoPosition)
        if captured:
            lb_, lw_ = self._lost
            pos._lost = (lb_, lw_ | captured) if c == BLACK else (lb_ | captured, lw_)
            b, w = self._caps
            ncap = self._nstones + 1 - nstones
            pos._caps = (b + ncap, w) if c == BLACK else (b, w + ncap)
            # A capture starts a new segment of the history; the ended one's boards join the list.
            pos._seg_hashes, pos._seen = (board_hash,), self  # its history: ours through here, when asked
        else:
            pos._lost, pos._caps = self._lost, self._caps
            pos._seg_hashes, pos._seen = self._seg_hashes + (board_hash,), self._seen
        pos._through = None
        pos._mine, pos._theirs = opp, own | bit  # the opponent moves next
        pos._weak = (weak_opp, weak_own)
        pos.hash = board_hash ^ geo.zobrist_white_to_move if c == BLACK else board_hash
        pos.game, pos._geo = self.game, geo
        pos.to_play = 3 - c
        pos.move_number = move_number = self.move_number + 1
        pos.last_move, pos.parent = action, self
        pos.passes = 0
        pos.board_hash = board_hash
        pos._gid_at, pos._groups = gid_at, groups
        pos._nstones = nstones
        pos._legal = pos._recent = None
        pos._resigned = EMPTY
        pos._done = move_number >= self.game._end_move
        return pos

    def legal_moves(self) -> list[int]:
        """All legal actions for the side to move, ascending, pass last; [] when the game is over."""
        if self._done:
            return []
        legal = self._legal
        if legal is None:  # cached as a bitboard: the list is built fresh for each caller
            legal = self._legal = self._legal_points()
        return self._geo.points_and_pass(legal)

    def legal_actions(self) -> np.ndarray:
        """``legal_moves()`` as an intp array (read-only), built without the list: what the search expands."""
        if self._done:
            return np.zeros(0, np.intp)
        legal = self._legal
        if legal is None:
            legal = self._legal = self._legal_points()
        return self._geo.actions(legal | self._geo.pass_bit)

    def _legal_points(self) -> int:
        """Bitboard of the points the side to move may play."""
        geo = self._geo
        c = self.to_play
        own, opp = self._mine, self._theirs
        empty = geo.full ^ (own | opp)
        n, not_col0, not_col_last = geo.size, geo.not_col0, geo.not_col_last
        # A point with an empty neighbour is never suicide.
        legal = empty & (((empty << 1) & not_col0) | ((empty >> 1) & not_col_last)
                         | (empty << n) | (empty >> n))
        surrounded = empty ^ legal
        lost = self._lost[c - 1] & empty
        if surrounded or lost:
            # Playing next to an opponent group in atari (on its last liberty) captures it.
            weak_own, w = self._weak
            opp_last = w and empty & (((w << 1) & not_col0) | ((w >> 1) & not_col_last) | (w << n) | (w >> n))
            if surrounded:
                # A point without empty neighbours is legal if it captures, or if it joins an own group
                # with another liberty: one not in atari (a group in atari next to it has it as last liberty).
                s = own & ~weak_own
                legal |= surrounded & (opp_last | ((s << 1) & not_col0) | ((s >> 1) & not_col_last)
                                       | (s << n) | (s >> n))
            if lost:
                a = self.last_move
                if a is None or a == geo.nn or self._lost[2 - c] >> a & 1:
                    if self._history()[self._nstones + 1] or opp_last & lost:
                        legal = self._drop_superko(legal, c, opp_last)
                else:
                    # The opponent's last stone stands where that side never lost one, so an earlier
                    # board (it would hold that stone too) can only come back by capturing it.
                    libs = self._groups[self._gid_at[a]][1]
                    if libs.bit_count() == 1 and libs & lost:
                        legal = self._drop_superko(legal, c, libs, quiet=False)
        return legal

    def _drop_superko(self, legal: int, c: int, captures: int, quiet: bool = True) -> int:
        """``legal`` without the moves that would recreate an earlier board.

        ``captures`` holds the moves that capture (the ones to check); ``quiet``: check the moves
        that capture nothing too. A move can only recreate a board with the same number of
        stones that had a ``c`` stone where it is played. A move that captures nothing adds a
        stone: only boards before the last capture have that many, and one dict lookup maps
        each of them back to the move that would recreate it.
        """
        geo = self._geo
        nstones = self._nstones + 1
        own_stones = self._mine
        who = geo.zobrist_point[c]
        for h in self._history()[nstones] if quiet else ():
            p = who.get(h ^ self.board_hash)
            if p is not None and not captures >> p & 1:
                legal &= ~(1 << p)
        captures &= self._lost[c - 1] & legal
        if captures:
            groups, gid_at = self._groups, self._gid_at
            zkey, zkey_opp = geo.zobrist[c], geo.zobrist[3 - c]
            for p in geo.few_points(captures):
                bit = 1 << p
                board_hash, count, dead = self.board_hash ^ zkey[p], nstones, 0
                for q in geo.nbrs[p]:
                    st, lb = groups[gid_at[q]] or (0, 0)
                    if lb == bit and st & ~own_stones:
                        dead |= st
                for q in geo.few_points(dead):
                    board_hash ^= zkey_opp[q]
                    count -= 1
                if self._repeats(board_hash, count):
                    legal &= ~bit
        return legal

    # ---- scoring -------------------------------------------------------------------------------------

    def _areas(self) -> tuple[int, int, int]:
        """(black area, white area, bitboard of empty points that count for black | white<<nn)."""
        geo = self._geo
        black, white = self.black, self.white
        empty = geo.full & ~(black | white)
        b_area, w_area = black.bit_count(), white.bit_count()
        b_terr = w_terr = 0
        rest = empty
        while rest:
            region = geo.flood(rest & -rest, empty)
            rest &= ~region
            border = geo.neighbours(region)
            if border & black and not border & white:
                b_terr |= region
            elif border & white and not border & black:
                w_terr |= region
        return b_area + b_terr.bit_count(), w_area + w_terr.bit_count(), b_terr | (w_terr << geo.nn)

    def score(self) -> float:
        """Tromp-Taylor score: black area minus white area minus komi (positive: black ahead)."""
        b, w, _ = self._areas()
        return b - w - self.game.komi

    def ownership(self) -> np.ndarray:
        """int8 per point: BLACK / WHITE for stones and the empty regions that reach only that colour."""
        geo = self._geo
        _, _, terr = self._areas()
        b_terr, w_terr = terr & geo.full, terr >> geo.nn
        own = np.zeros(geo.nn, dtype=np.int8)
        own[geo.points(self.black | b_terr)] = BLACK
        own[geo.points(self.white | w_terr)] = WHITE
        return own

    def _need_terminal(self) -> None:
        if not self.is_terminal():
            raise ValueError("the game is not over: no result yet")

    def winner(self) -> int:
        self._need_terminal()
        if self._resigned:
            return 3 - self._resigned
        s = self.score()
        return BLACK if s > 0 else WHITE if s < 0 else EMPTY

    def result_value(self, colour: int) -> float:
        w = self.winner()
        return 0.0 if w == EMPTY else 1.0 if w == colour else -1.0

    def result_string(self) -> str:
        self._need_terminal()
        if self._resigned:
            return "W+R" if self._resigned == BLACK else "B+R"
        s = self.score()
        if s == 0:
            return "0"
        return f"{'B' if s > 0 else 'W'}+{abs(s):g}"
