"""Gomoku's rules over numpy arrays, compiled by numba: the native twin of :mod:`zero9.games.gomoku`.

The search's fast path (:mod:`zero9.search.forest`) keeps every position of its trees as a row
of colours and plays moves on it millions of times a second; this module is the one piece of
Gomoku it needs. :mod:`zero9.games.gomoku` is the twin a student reads, and
``tests/test_gomoku_native.py`` holds the two equal.

Vocabulary (:mod:`zero9.games.gomoku`'s, on arrays):

- **stones**: int8 ``[N*N]``, a colour per point (``EMPTY`` 0, ``BLACK`` 1, ``WHITE`` 2),
  point ``p = row * N + col``.
- **exact**: the ``standard`` variant (a run of exactly ``connect`` wins, an overline does not);
  ``freestyle`` wins with ``connect`` or more. Renju (black's forbidden points) has no native
  twin: :mod:`zero9.search.fastpath` sends its searches down the Python path.
- **keys**: :func:`gomoku_tables` gives the Zobrist keys of :mod:`zero9.games.gomoku`
  (``uint64 [3, N*N]``, row 0 zeros) and its side-to-move key, so hashes agree with its positions.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numba
import numpy as np

from zero9.games.gomoku import _zobrist


class GomokuTables(NamedTuple):
    zobrist: np.ndarray  # uint64 [3, N*N]: row 0 zeros, then BLACK's and WHITE's keys
    side_key: int  # XORed into a position's hash at every move (the side to move changes)


@functools.cache
def gomoku_tables(size: int) -> GomokuTables:
    black, white, side = _zobrist(size)
    keys = np.zeros((3, size * size), np.uint64)
    keys[1], keys[2] = np.array(black, np.uint64), np.array(white, np.uint64)
    keys.flags.writeable = False
    return GomokuTables(keys, side)


@numba.njit(cache=True, nogil=True)
def gomoku_wins(stones, point, colour, size, connect, exact) -> bool:
    """Does the stone of ``colour`` on ``point`` make a winning run along one of its four lines?"""
    y0, x0 = point // size, point % size
    for d in range(4):  # (dx, dy) as zero9.games.renju.DIRECTIONS: (1, 0), (0, 1), (1, 1), (1, -1)
        dx = 1 if d != 1 else 0
        dy = 0 if d == 0 else (1 if d != 3 else -1)
        run = 1
        for sign in (1, -1):
            x, y = x0 + sign * dx, y0 + sign * dy
            while 0 <= x < size and 0 <= y < size and stones[y * size + x] == colour:
                run += 1
                x += sign * dx
                y += sign * dy
        if run == connect or (run > connect and not exact):
            return True
    return False


@numba.njit(cache=True, nogil=True)
def gomoku_legal(stones, out) -> int:
    """The empty points, ascending, into ``out`` (int32 ``[N*N]``); returns how many."""
    n = 0
    for p in range(stones.shape[0]):
        if stones[p] == 0:
            out[n] = p
            n += 1
    return n
