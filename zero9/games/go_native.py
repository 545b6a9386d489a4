"""Go's rules over numpy arrays, compiled by numba: the native twin of :mod:`zero9.games.go`.

The search's fast path (:mod:`zero9.search.forest`) keeps every position of its trees as a row
of colours and plays moves, lists legal moves and scores finished games on it millions of times
a second; this module is the part of Go it needs. It is the same game as :mod:`zero9.games.go`
(captures, suicide illegal, positional superko, Tromp-Taylor area score), written the plain way
of :mod:`zero9.games.go_simple` (flood fills over the board) but with no Python objects and no
allocation in the hot functions: the caller owns every buffer. :mod:`zero9.games.go` is the twin
it is held equal to, move by move, by ``tests/test_go_native.py``.

Vocabulary (:mod:`zero9.games.go`'s, on arrays; ``NN = size * size``):

- **stones**: int8 ``[NN]``, a colour per point (``EMPTY`` 0, ``BLACK`` 1, ``WHITE`` 2), point
  ``p = row * size + col``. Actions are the points and the pass, ``NN``.
- **nbrs**: int32 ``[NN, 4]``, the neighbours of each point in :class:`zero9.games.go.Geometry`'s
  order (up, left, right, down: ``(dy, dx)`` = (-1, 0), (0, -1), (0, 1), (1, 0)), padded with -1.
- **zobrist**: uint64 ``[3, NN]``, row 0 zeros, rows ``BLACK`` and ``WHITE`` exactly the keys of
  :func:`zero9.games.go.geometry`, so a **board hash** (the XOR of the keys of the stones) here is
  ``position.board_hash`` there. ``white_to_move`` is the key ``position.hash`` adds when white
  is to move. :func:`go_tables` builds these three per board size.
- **scratch**: int32 ``[2 * NN]``, workspace for flood fills: ``scratch[:NN]`` marks the points
  a fill has reached, ``scratch[NN:]`` is its stack (kept whole: it is also the list of marked
  points). The marks must be all zeros before the first call (make the buffer with ``np.zeros``);
  every function here clears exactly the marks it set, so they are zeros again after each call
  (the stack half is left as it was used), and one buffer can serve them all.
- **seen** and **path**: the superko history, uint64 board hashes. ``seen`` (sorted ascending,
  binary-searched) holds the game's earlier positions, ``path[:npath]`` (unsorted, searched one by
  one) the few positions a search has played since, down to the one being expanded.
- **Bloom filter**: one uint64 with bit ``h >> 58`` set for each hash ``h`` of the history, built
  at the start of :func:`go_legal`. A candidate's hash whose bit is clear is not in the history,
  and most are cleared so without a search.

How :func:`go_legal` stays cheap (about a microsecond for a 9x9 board in the middle of a game):
a point with an empty neighbour is never suicide, and an opponent stone next to it with another
empty neighbour is in a group it cannot capture, so most points need no flood fill at all. Only
the rest fill their neighbour groups: to find the stones a move captures (their keys leave the
hash that superko checks) and, for a point with no empty neighbour, an own group with a liberty
left. Scoring (:func:`go_area_score`) runs once per finished game.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numba
import numpy as np

from zero9.games.game import BLACK, EMPTY, WHITE
from zero9.games.go import geometry


class GoTables(NamedTuple):
    size: int
    nn: int  # size * size; the pass action is nn
    nbrs: np.ndarray  # int32 [nn, 4]: each point's neighbours (go.Geometry's order), padded with -1
    zobrist: np.ndarray  # uint64 [3, nn]: row 0 zeros, then BLACK's and WHITE's keys
    white_to_move: int  # position.hash = board_hash ^ this when white is to move


@functools.cache
def go_tables(size: int) -> GoTables:
    """The read-only tables for one board size, from :func:`zero9.games.go.geometry` (cached)."""
    geo = geometry(size)
    nn = geo.nn
    nbrs = np.full((nn, 4), -1, np.int32)
    for p, near in enumerate(geo.nbrs):
        nbrs[p, :len(near)] = near
    keys = np.zeros((3, nn), np.uint64)
    keys[BLACK] = np.array(geo.zobrist[BLACK], np.uint64)
    keys[WHITE] = np.array(geo.zobrist[WHITE], np.uint64)
    nbrs.flags.writeable = keys.flags.writeable = False
    return GoTables(size, nn, nbrs, keys, geo.zobrist_white_to_move)


def board_hash_of(stones: np.ndarray, tables: GoTables) -> int:
    """The board hash of ``stones``: the XOR of the Zobrist keys of its stones (for setup and tests)."""
    h = 0
    for p, c in enumerate(np.asarray(stones).tolist()):
        if c != EMPTY:
            h ^= int(tables.zobrist[c, p])
    return h


@numba.njit(cache=True, nogil=True, inline="always")
def _fill(stones, start, colour, skip, gid, nbrs, scratch, top, nn) -> tuple[int, bool]:
    """Flood the group of ``colour`` on ``start`` onto the stack from ``top``, marking its stones ``gid``.

    Stops at its first liberty other than ``skip`` (a point about to be played, or -1). Returns
    the new stack top and whether a liberty was found; without one, ``scratch[nn + top_before:
    nn + new top]`` is the whole group. A stone of the group already marked by an earlier fill
    (another ``gid``) means that fill stopped at a liberty of this same group: a liberty too.
    """
    scratch[start] = gid
    scratch[nn + top] = start
    i, top = top, top + 1
    while i < top:
        r = scratch[nn + i]
        i += 1
        for k in range(4):
            t = nbrs[r, k]
            if t < 0:
                break
            s = stones[t]
            if s == EMPTY:
                if t != skip:
                    return top, True
            elif s == colour:
                m = scratch[t]
                if m == 0:
                    scratch[t] = gid
                    scratch[nn + top] = t
                    top += 1
                elif m != gid:
                    return top, True
    return top, False


@numba.njit(cache=True, nogil=True, inline="always")
def _liberty_beside(stones, q, skip, nbrs) -> bool:
    """Has the stone on ``q`` an empty neighbour other than ``skip``? (Its group is then not captured:
    the common case, found without a flood fill.)"""
    for k in range(4):
        t = nbrs[q, k]
        if t < 0:
            break
        if stones[t] == EMPTY and t != skip:
            return True
    return False


@numba.njit(cache=True, nogil=True, inline="always")
def _unmark(scratch, top, nn) -> None:
    """Clear the marks of the points on the stack's first ``top`` entries."""
    for j in range(top):
        scratch[scratch[nn + j]] = 0


@numba.njit(cache=True, nogil=True, inline="always")
def _history_filter(seen, path, npath) -> np.uint64:
    """A 64-bit Bloom filter of the history: bit ``h >> 58`` set for each board hash ``h``."""
    bloom = np.uint64(0)
    for j in range(seen.shape[0]):
        bloom |= np.uint64(1) << (seen[j] >> np.uint64(58))
    for j in range(npath):
        bloom |= np.uint64(1) << (path[j] >> np.uint64(58))
    return bloom


@numba.njit(cache=True, nogil=True, inline="always")
def _repeats(h, seen, path, npath) -> bool:
    """Is board hash ``h`` in ``seen`` (sorted: binary search) or in ``path[:npath]``?"""
    lo, hi = 0, seen.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if seen[mid] < h:
            lo = mid + 1
        else:
            hi = mid
    if lo < seen.shape[0] and seen[lo] == h:
        return True
    for j in range(npath):
        if path[j] == h:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def go_play(stones, action, colour, nbrs, zobrist, scratch):
    """Play point ``action`` (never pass; a legal point) for ``colour`` on ``stones`` (in place).

    Opponent groups left without a liberty are taken off. Returns (the XOR of the Zobrist keys of
    every stone added and removed, so the new board hash is the old one ^ this (``np.uint64``),
    the number of stones captured). ``scratch``: int32 ``[2 * NN]``, its marks (first half) zeros, left so.
    """
    nn = stones.shape[0]
    opp = 3 - colour
    stones[action] = colour
    xor = zobrist[colour, action]
    captured = 0
    top = 0
    for k in range(4):
        q = nbrs[action, k]
        if q < 0:
            break
        if stones[q] != opp or scratch[q] != 0 or _liberty_beside(stones, q, -1, nbrs):
            continue  # not an opponent, its group already looked at, or a liberty right there
        start = top
        top, free = _fill(stones, q, opp, -1, k + 1, nbrs, scratch, top, nn)
        if not free:
            for j in range(start, top):
                r = scratch[nn + j]
                stones[r] = EMPTY
                xor ^= zobrist[opp, r]
            captured += top - start
    _unmark(scratch, top, nn)
    return xor, captured


@numba.njit(cache=True, nogil=True)
def go_legal(stones, colour, board_hash, nbrs, zobrist, seen, path, npath, scratch, out) -> int:
    """The legal actions of ``colour`` to move into ``out[:n]`` (int32 ``[NN + 1]``); returns ``n``.

    Exactly ``GoPosition.legal_actions()`` of an unfinished game: the legal points ascending, then
    the pass. A point is illegal when occupied, when suicide (no liberty after the move and no
    capture), or when the board it makes (``board_hash`` ^ the key of its stone ^ the keys of the
    stones it captures) is in ``seen`` or ``path[:npath]`` (positional superko). ``scratch``:
    int32 ``[2 * NN]``, its marks (first half) zeros, left so (it may be go_play's).
    """
    nn = stones.shape[0]
    opp = 3 - colour
    check = seen.shape[0] + npath > 0  # any history at all to repeat?
    # Most candidates' hashes miss the history's Bloom filter, and skip the search (a third faster early on).
    bloom = _history_filter(seen, path, npath)
    one, top6 = np.uint64(1), np.uint64(58)
    base = np.uint64(board_hash)
    n = 0
    for p in range(nn):
        if stones[p] != EMPTY:
            continue
        seen_colours = 0  # bit c set for each colour c next to p (EMPTY included)
        for k in range(4):
            q = nbrs[p, k]
            if q < 0:
                break
            seen_colours |= 1 << stones[q]
        has_empty = seen_colours & 1 != 0
        has_own = seen_colours & (1 << colour) != 0
        has_opp = seen_colours & (1 << opp) != 0
        h = base ^ zobrist[colour, p]
        if has_empty and not (check and has_opp):
            # A liberty of its own, and no capture that the superko hash would need to know of.
            if not ((bloom >> (h >> top6)) & one and _repeats(h, seen, path, npath)):
                out[n] = p
                n += 1
            continue
        # The opponent groups whose last liberty is p are captured: their stones leave the hash.
        top = 0
        legal = has_empty
        for k in range(4):
            q = nbrs[p, k]
            if q < 0:
                break
            if stones[q] != opp or scratch[q] != 0 or _liberty_beside(stones, q, p, nbrs):
                continue
            start = top
            top, free = _fill(stones, q, opp, p, k + 1, nbrs, scratch, top, nn)
            if not free:
                legal = True
                for j in range(start, top):
                    h ^= zobrist[opp, scratch[nn + j]]
        if not legal and has_own:
            # No liberty and no capture: legal only if it joins an own group with another liberty.
            for k in range(4):
                q = nbrs[p, k]
                if q < 0:
                    break
                if stones[q] != colour or scratch[q] != 0:
                    continue
                top, free = _fill(stones, q, colour, p, k + 5, nbrs, scratch, top, nn)
                if free:
                    legal = True
                    break
        _unmark(scratch, top, nn)
        if legal and not ((bloom >> (h >> top6)) & one and _repeats(h, seen, path, npath)):
            out[n] = p
            n += 1
    out[n] = nn  # passing is always legal
    return n + 1


@numba.njit(cache=True, nogil=True)
def go_area_score(stones, nbrs, komi, scratch) -> float:
    """Tromp-Taylor: black stones and the empty regions that reach only black, minus the same for
    white, minus ``komi`` (exactly ``GoPosition.score()``). ``scratch``: see the vocabulary (the
    search's steps allocate nothing, so neither does this)."""
    nn = stones.shape[0]
    buf = scratch
    score = 0
    for p in range(nn):
        s = stones[p]
        if s == BLACK:
            score += 1
        elif s == WHITE:
            score -= 1
        elif buf[p] == 0:  # an empty region not yet counted: fill it, noting whose stones it reaches
            buf[p] = 1
            buf[nn] = p
            i, top = 0, 1
            reach = 0  # bit BLACK, bit WHITE
            while i < top:
                r = buf[nn + i]
                i += 1
                for k in range(4):
                    t = nbrs[r, k]
                    if t < 0:
                        break
                    c = stones[t]
                    if c == EMPTY:
                        if buf[t] == 0:
                            buf[t] = 1
                            buf[nn + top] = t
                            top += 1
                    else:
                        reach |= c
            if reach == BLACK:
                score += top
            elif reach == WHITE:
                score -= top
    for p in range(nn):
        if stones[p] == EMPTY:
            buf[p] = 0
    return score - komi
