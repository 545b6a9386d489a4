"""The rules of Go in pure Python: captures, positional superko, Tromp-Taylor scoring.

Vocabulary (on top of :mod:`zero9.game`, which defines colours, points and vertices):

- **bitboard**: a Python int with bit ``p`` set for each point ``p`` in a set of points.
  Python ints are arbitrary-precision, so one int holds a whole 19x19 board and set
  operations on points are single ``&``, ``|``, ``~`` expressions.
- **group** (a chain): a maximal set of same-coloured stones connected along the lines.
  It is stored as a tuple ``(colour, stones, liberties, zhash)``: two bitboards and the
  XOR of the stones' Zobrist keys. Every group has an id, ``1 + the point of one of its
  stones``, and ``gid_at[p]`` (a bytearray, cheap to copy and unseen by the garbage
  collector) holds the id of the group on point ``p`` (0 if empty).
- **liberty**: an empty point next to a group. A group with no liberty is captured; a
  group with one is **in atari** (a bitmask of group ids per colour tracks those). Liberties
  are kept up to date *incrementally* on each move instead of being found again by flood
  fill; this is what makes play and the legal-move list cheap.
- **move**: a point or ``pass`` (action ``size*size``). A move that leaves its own group
  without liberties and captures nothing is **suicide** and illegal.
- **positional superko**: a move may not recreate the stones of any earlier position in
  the game (whoever is to move), as in Leela Zero and leelaz-ninenine. Passing is always
  legal. Whole boards are compared by **board hash**, the XOR of the Zobrist keys of all
  stones; ``position.hash`` also folds in the side to move (for evaluation caches).
- **position**: immutable; ``play`` returns a new :class:`GoPosition` that shares the
  unchanged group tuples with its parent (copy-on-write).
- **end of game**: two passes in a row, a resignation, or the move cap (``2 * size**2``
  moves, passes included, by default as leelaz-ninenine; 0 turns the cap off).
- **score** (Tromp-Taylor area scoring): black stones plus empty regions that reach only
  black, minus the same for white, minus komi. The **result** is a GTP string (``B+3.5``,
  ``W+R``, ``0`` for a draw) and a value +1/-1/0 from one colour's view.
"""

from __future__ import annotations

import functools
import math
import random
from array import array
from dataclasses import dataclass
from typing import Any

import numpy as np

from zero9.game import BLACK, EMPTY, WHITE, IllegalMove, point_to_vertex, vertex_to_point

MIN_SIZE, MAX_SIZE = 5, 19


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

    def points(self, b: int) -> list[int]:
        """The points of bitboard ``b``, ascending."""
        out: list[int] = []
        if not b:
            return out
        table = self.byte_points
        for i, v in enumerate(b.to_bytes(self.nbytes, "little")):
            if v:
                out += table[i][v]
        return out


@functools.cache
def geometry(size: int) -> Geometry:
    """The shared tables for one board size (cached: a cache keyed by size, not a size global)."""
    return Geometry(size)


def _is_int(x: object) -> bool:
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

    @property
    def num_actions(self) -> int:
        return self.size * self.size + 1

    @property
    def pass_action(self) -> int:
        return self.size * self.size

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
        pos = self.new_position()
        for m in moves:
            pos = pos.play(self.vertex_to_action(m) if isinstance(m, str) else m)
        return pos


def _replay(game: Go, actions: tuple[int, ...], resigned: int) -> GoPosition:
    """Unpickle: rebuild a position (and its history) by replaying its moves."""
    pos = game.play_moves(list(actions))
    return pos.resign() if resigned else pos


class GoPosition:
    """A Go position: stones, side to move, history (via ``parent``). Immutable."""

    __slots__ = ("game", "_geo", "black", "white", "_gid_at", "_groups", "to_play", "move_number",
                 "last_move", "parent", "passes", "board_hash", "hash", "_caps", "_nstones",
                 "_max_stones", "_seen", "_legal", "_resigned", "_lost", "_atari", "_done")

    @classmethod
    def _initial(cls, game: Go) -> GoPosition:
        geo = geometry(game.size)
        pos = object.__new__(cls)
        pos.game, pos._geo = game, geo
        pos.black = pos.white = 0
        # bytes, not a list: copied per move, and invisible to the garbage collector
        pos._gid_at = bytearray(geo.nn) if geo.nn < 255 else array("H", bytes(2 * geo.nn))
        pos._groups = {}
        pos.to_play, pos.move_number, pos.last_move, pos.parent, pos.passes = BLACK, 0, None, None, 0
        pos.board_hash = pos.hash = 0
        pos._caps = (0, 0)
        pos._nstones = pos._max_stones = 0
        pos._seen = None
        pos._legal = None
        pos._resigned = EMPTY
        pos._done = False  # terminal: two passes, resignation or the move cap
        pos._lost = (0, 0)  # bitboards of points where black / white stones have been captured
        pos._atari = (0, 0)  # bit g set: black's / white's group g has a single liberty
        return pos

    def __reduce__(self):
        # Replaying keeps pickles small (no tables, no deep parent recursion); self-play ships positions.
        actions = []
        p: GoPosition | None = self
        while p is not None and p.last_move is not None:
            actions.append(p.last_move)
            p = p.parent
        return (_replay, (self.game, tuple(reversed(actions)), self._resigned))

    def __repr__(self) -> str:
        n = self.game.size
        return f"<GoPosition {n}x{n} move {self.move_number}, to play {'BW'[self.to_play - 1]}>"

    def __str__(self) -> str:
        from zero9.display import board_to_text

        return board_to_text(self)

    # ---- state ---------------------------------------------------------------------------------------

    @property
    def captures(self) -> dict[int, int]:
        """Stones captured *by* each colour so far."""
        return {BLACK: self._caps[0], WHITE: self._caps[1]}

    def is_terminal(self) -> bool:
        return self._done

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
        own, opp = (self.black, self.white) if colour == BLACK else (self.white, self.black)
        if (own | opp) >> point & 1 or geo.nbr_bb[point] & ~own:
            return False
        bad = (geo.diag_bb[point] & opp).bit_count()
        return bad == 0 if geo.on_edge[point] else bad < 2

    # ---- moves ---------------------------------------------------------------------------------------

    def _vertex(self, action: int) -> str:
        try:
            return self.game.action_to_vertex(action)
        except ValueError:
            return repr(action)

    def _history_by_count(self) -> dict[int, tuple[int, ...]]:
        """Board hashes of this position and all earlier ones, keyed by stone count.

        Built lazily and shared along the game: a board can only repeat one with as many
        stones, so the superko check looks at a handful of hashes, not the whole history.
        """
        if self._seen is None:
            chain = []
            p: GoPosition | None = self
            while p is not None and p._seen is None:
                chain.append(p)
                p = p.parent
            seen = p._seen if p is not None else {}
            for q in reversed(chain):
                if q.parent is None or q.board_hash != q.parent.board_hash:
                    seen = dict(seen)
                    seen[q._nstones] = seen.get(q._nstones, ()) + (q.board_hash,)
                q._seen = seen
        return self._seen

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
        pos._legal = []
        return pos

    def _copy(self) -> GoPosition:
        pos = object.__new__(GoPosition)
        for name in GoPosition.__slots__:
            setattr(pos, name, getattr(self, name))
        return pos

    def play(self, action: int) -> GoPosition:
        """The position after the side to move plays ``action``. Raises IllegalMove; ``self`` is unchanged."""
        geo = self._geo
        if self._done:
            raise IllegalMove(self._vertex(action), "game over")
        if type(action) is not int:  # the hot path gets plain ints; check anything else once
            if not _is_int(action):
                raise IllegalMove(repr(action), f"not a point or pass on the {geo.size}x{geo.size} board")
            action = int(action)
        pos = object.__new__(GoPosition)
        pos.game, pos._geo = self.game, geo
        pos.to_play = 3 - self.to_play
        pos.move_number = move_number = self.move_number + 1
        pos.last_move, pos.parent = action, self
        pos._legal = None
        pos._resigned = EMPTY
        cap = self.game.move_cap
        pos._done = cap > 0 and move_number >= cap
        if action == geo.nn:
            pos.black, pos.white = self.black, self.white
            pos._gid_at, pos._groups = self._gid_at, self._groups
            pos.passes = self.passes + 1
            if pos.passes >= 2:
                pos._done = True
            pos.board_hash = self.board_hash
            pos.hash = self.hash ^ geo.zobrist_white_to_move
            pos._caps, pos._nstones, pos._max_stones = self._caps, self._nstones, self._max_stones
            pos._seen = self._seen
            pos._lost, pos._atari = self._lost, self._atari
            return pos
        if not 0 <= action < geo.nn:
            raise IllegalMove(repr(action), f"not a point or pass on the {geo.size}x{geo.size} board")
        bit = 1 << action
        c = self.to_play
        own, opp = (self.black, self.white) if c == BLACK else (self.white, self.black)
        if (own | opp) & bit:
            raise IllegalMove(self._vertex(action), "occupied")

        gid_at, groups = self._gid_at, self._groups
        new_stones = bit
        new_libs = geo.nbr_bb[action] & ~(own | opp)
        zkey = geo.zobrist[c][action]
        new_z = zkey
        touched = set(map(gid_at.__getitem__, geo.nbrs[action]))  # the neighbour groups' ids
        touched.discard(0)
        merged: list[int] = []
        changed = None
        captured = cap_z = merged_ids = 0
        for g in touched:
            col, st, lb, zh = groups[g]
            if col == c:
                merged.append(g)
                merged_ids |= 1 << g
                new_stones |= st
                new_libs |= lb
                new_z ^= zh
            elif lb == bit:
                captured |= st
                cap_z ^= zh
            else:
                if changed is None:
                    changed = []
                changed.append((g, (col, st, lb ^ bit, zh)))
        new_libs &= ~bit
        if not captured and not new_libs:
            raise IllegalMove(self._vertex(action), "suicide")
        nstones = self._nstones + 1
        board_hash = self.board_hash ^ zkey
        if captured:
            nstones -= captured.bit_count()
            board_hash ^= cap_z
        # A board can only repeat one with as many stones that had a stone of ours on this point.
        if (nstones <= self._max_stones and self._lost[c - 1] >> action & 1
                and board_hash in self._history_by_count().get(nstones, ())):
            raise IllegalMove(self._vertex(action), "superko (repeats an earlier position)")

        gid_at = gid_at[:]
        groups = groups.copy()
        if changed is not None:
            for g, t in changed:
                groups[g] = t
        if merged:
            keep = merged[0]
            if len(merged) > 1:  # relabel the smaller groups into the biggest
                most = -1
                for g in merged:
                    k = groups[g][1].bit_count()
                    if k > most:
                        keep, most = g, k
                for g in merged:
                    if g != keep:
                        for p in geo.few_points(groups[g][1]):
                            gid_at[p] = keep
                        del groups[g]
        else:
            keep = action + 1
        gid_at[action] = keep
        groups[keep] = (c, new_stones, new_libs, new_z)
        # Groups with one liberty: only the groups next to the move (and own groups next to
        # captured stones, which gain liberties) can enter or leave that state.
        atari_own = self._atari[c - 1] & ~merged_ids
        if not new_libs & (new_libs - 1):
            atari_own |= 1 << keep
        atari_opp = self._atari[2 - c]
        if atari_opp:
            for g in touched:
                atari_opp &= ~(1 << g)
        if changed is not None:
            for g, t in changed:
                if not t[2] & (t[2] - 1):
                    atari_opp |= 1 << g
        if captured:
            for g in touched:
                if g in groups and groups[g][1] & captured:
                    del groups[g]
            for p in geo.few_points(captured):
                gid_at[p] = 0
            # The captured points become liberties of every own group that touches them.
            near = geo.neighbours(captured)
            for g, (col, st, lb, zh) in list(groups.items()):
                if col == c and st & near:
                    lb |= geo.neighbours(st) & captured
                    groups[g] = (col, st, lb, zh)
                    atari_own &= ~(1 << g)
                    if not lb & (lb - 1):  # the new group may have had no liberty before the capture
                        atari_own |= 1 << g
            lb_, lw_ = self._lost
            pos._lost = (lb_, lw_ | captured) if c == BLACK else (lb_ | captured, lw_)
            b, w = self._caps
            ncap = self._nstones + 1 - nstones
            pos._caps = (b + ncap, w) if c == BLACK else (b, w + ncap)
        else:
            pos._lost = self._lost
            pos._caps = self._caps
        own |= bit
        opp &= ~captured
        if c == BLACK:
            pos.black, pos.white = own, opp
            pos.hash = board_hash ^ geo.zobrist_white_to_move
        else:
            pos.black, pos.white = opp, own
            pos.hash = board_hash
        pos._gid_at, pos._groups = gid_at, groups
        pos._atari = (atari_own, atari_opp) if c == BLACK else (atari_opp, atari_own)
        pos.passes = 0
        pos.board_hash = board_hash
        pos._nstones = nstones
        pos._max_stones = nstones if nstones > self._max_stones else self._max_stones
        pos._seen = None
        return pos

    def legal_moves(self) -> list[int]:
        """All legal actions for the side to move, ascending, pass last; [] when the game is over."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal.copy()

    def _compute_legal(self) -> list[int]:
        if self._done:
            return []
        geo = self._geo
        c = self.to_play
        own, opp = (self.black, self.white) if c == BLACK else (self.white, self.black)
        empty = geo.full ^ (own | opp)
        n = geo.size
        # A point with an empty neighbour is never suicide.
        legal = empty & (((empty << 1) & geo.not_col0) | ((empty >> 1) & geo.not_col_last)
                         | (empty << n) | (empty >> n))
        groups = self._groups
        # Last liberties: of opponent groups (playing there captures) and of own groups.
        opp_last = own_last = 0
        atari_own, atari_opp = self._atari if c == BLACK else self._atari[::-1]
        if atari_own:
            for g in geo.few_points(atari_own):
                own_last |= groups[g][2]
        if atari_opp:
            for g in geo.few_points(atari_opp):
                opp_last |= groups[g][2]
        surrounded = empty ^ legal
        if surrounded:
            # Legal when it captures, or joins only own groups that keep another liberty.
            own_near = ((own << 1) & geo.not_col0) | ((own >> 1) & geo.not_col_last) | (own << n) | (own >> n)
            legal |= surrounded & (opp_last | (own_near & ~own_last))
            unsure = surrounded & own_near & own_last & ~opp_last
            if unsure:
                gid_at = self._gid_at
                for p in geo.few_points(unsure):
                    bit = 1 << p
                    for q in geo.nbrs[p]:
                        col, _, lb, _ = groups[gid_at[q]]
                        if col == c and lb != bit:
                            legal |= bit
                            break
        lost = self._lost[c - 1]
        if lost & empty and (self._nstones < self._max_stones or opp_last & lost):
            legal = self._drop_superko(legal, c, opp_last)
        out = geo.points(legal)
        out.append(geo.nn)
        return out

    def _drop_superko(self, legal: int, c: int, captures: int) -> int:
        """``legal`` without the moves that would recreate an earlier board.

        ``captures`` holds the moves that capture. A move can only recreate a board that had
        the same number of stones, and had a ``c`` stone where it is played; so only points
        where ``c`` has lost stones before need the full check after a capture.
        """
        geo = self._geo
        nstones = self._nstones + 1
        seen = None
        if nstones <= self._max_stones:
            # Map each earlier hash with that stone count back to the move that would recreate it.
            seen = self._history_by_count()
            who = geo.zobrist_point[c]
            for h in seen.get(nstones, ()):
                p = who.get(h ^ self.board_hash)
                if p is not None and not captures >> p & 1:
                    legal &= ~(1 << p)
        captures &= self._lost[c - 1]
        if captures:
            seen = seen or self._history_by_count()
            groups, gid_at, zkey = self._groups, self._gid_at, geo.zobrist[c]
            for p in geo.few_points(captures):
                bit = 1 << p
                cap_z, ncap, done = 0, 0, []
                for q in geo.nbrs[p]:
                    g = gid_at[q]
                    if g and g not in done:
                        done.append(g)
                        col, st, lb, zh = groups[g]
                        if col != c and lb == bit:
                            cap_z ^= zh
                            ncap += st.bit_count()
                if (self.board_hash ^ zkey[p] ^ cap_z) in seen.get(nstones - ncap, ()):
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
