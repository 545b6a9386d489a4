"""The evaluator's cache on the fast path: the net's answers by leaf key, an LRU in arrays.

:class:`zero9.search.evaluator.NetEvaluator` keeps the net's answers in an ``OrderedDict`` keyed by
:func:`~zero9.search.evaluator.history_key`'s bytes. Its Python loop over a batch's keys (a look-up
each, a move to the end, an insert and an eviction per miss) was a fifth of a Go recipe worker's
time (py-spy, ``scripts/bench_search.py --per-core --gumbel --core-shape 96x4 --in-flight 2``), so
the fast path's leaves, whose keys :func:`zero9.search.forest.select_batch` writes as words, go
through this cache instead: the same rules in compiled loops, one call a batch. The rules are the
``OrderedDict``'s, so a worker asks its net for the same positions on either path (and draws the
same random symmetries for them; ``tests/test_leafcache.py`` holds the two to each other):

- **look-up**, a batch's rows in order: a key in the cache is a **hit** (its answer copied out, the
  entry moved to the newest end); a key an earlier row of the same batch missed is a **repeat** of
  that row; any other is a **miss**, to be asked of the net.
- **insert**, once the net answered: the batch's misses in the order they were first asked; a key
  that came in meanwhile (another batch in flight missed it too) takes the new answer and keeps its
  place (``OrderedDict.update``); then the oldest entries go until ``capacity`` remain.

Vocabulary (``E`` entries: the capacity and room for one batch's misses above it; ``H`` = 8 words a
key; ``A`` actions):

- **key**: a leaf's ``words [H]`` (the hashes of its position and up to 7 before it, newest first)
  and ``length``; two keys are equal when both are.
- **entry**: a row of :class:`Entries`: a key, its ``priors [A]`` and ``value``, its neighbours in
  the LRU order (``older``, ``newer``) and the next entry of its bucket (``chain``; a free entry's
  ``chain`` is the next free one).
- **bucket**: ``head[words[0] & mask]``, the first entry of a chain (-1: none).
- ``meta``: ``[count, oldest, newest, first free]`` (-1: none).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from zero9.search.numba_cache import KERNEL, Direct

COUNT, OLDEST, NEWEST, FREE = 0, 1, 2, 3
SLACK = 4096  # entries above the capacity: one batch's misses go in before the oldest go out


class Entries(NamedTuple):
    head: np.ndarray  # int32 [T]: a power of two at least 2E
    chain: np.ndarray  # int32 [E]
    words: np.ndarray  # uint64 [E, H]
    length: np.ndarray  # int32 [E]
    priors: np.ndarray  # float32 [E, A]
    value: np.ndarray  # float32 [E]
    older: np.ndarray  # int32 [E]
    newer: np.ndarray  # int32 [E]
    meta: np.ndarray  # int64 [4]


def new_entries(room: int, words: int, actions: int) -> Entries:
    buckets = 1 << max(4, (2 * room - 1).bit_length())
    chain = np.arange(1, room + 1, dtype=np.int32)  # every entry free, each pointing to the next
    chain[-1] = -1
    z = np.zeros  # (calloc: the priors' pages are taken as entries fill them)
    return Entries(np.full(buckets, -1, np.int32), chain, z((room, words), np.uint64), z(room, np.int32),
                   z((room, actions), np.float32), z(room, np.float32), np.full(room, -1, np.int32),
                   np.full(room, -1, np.int32), np.array([0, -1, -1, 0], np.int64))


# ---------------------------------------------------------------------------------------------
# the compiled steps


@numba.njit(**KERNEL)
def _bucket(c, word) -> int:
    return int(word & np.uint64(len(c.head) - 1))


@numba.njit(**KERNEL)
def _same(words, length, b, other_words, other_length, e) -> bool:
    if length[b] != other_length[e]:
        return False
    for t in range(length[b]):
        if words[b, t] != other_words[e, t]:
            return False
    return True


@numba.njit(**KERNEL)
def _find(c, words, length, b) -> int:
    """The entry holding key ``b`` of ``words``/``length`` (-1: none)."""
    e = c.head[_bucket(c, words[b, 0])]
    while e >= 0:
        if _same(words, length, b, c.words, c.length, e):
            return e
        e = c.chain[e]
    return -1


@numba.njit(**KERNEL)
def _unlink(c, e) -> None:
    """Entry ``e`` out of the LRU order."""
    older, newer = c.older[e], c.newer[e]
    if older >= 0:
        c.newer[older] = newer
    else:
        c.meta[OLDEST] = newer
    if newer >= 0:
        c.older[newer] = older
    else:
        c.meta[NEWEST] = older


@numba.njit(**KERNEL)
def _append(c, e) -> None:
    """Entry ``e`` at the newest end of the LRU order."""
    newest = c.meta[NEWEST]
    c.older[e], c.newer[e] = newest, -1
    if newest >= 0:
        c.newer[newest] = e
    else:
        c.meta[OLDEST] = e
    c.meta[NEWEST] = e


@numba.njit(**KERNEL)
def look_up(c, words, length, count, priors, values, first_of, batch_head, batch_chain) -> int:
    """Rows ``0..count-1`` through the cache: a hit's priors and value into ``priors``/``values`` (its
    entry made the newest) and ``first_of[b] = -1``; a miss's ``first_of[b] = b``; a repeat's the row
    that first missed its key. ``batch_head`` (a power of two, at least ``2 * count``) and
    ``batch_chain [count]``: the batch's own table of misses. Returns the hits."""
    mask = np.uint64(len(batch_head) - 1)
    for i in range(len(batch_head)):
        batch_head[i] = -1
    hits = 0
    for b in range(count):
        e = _find(c, words, length, b)
        if e >= 0:
            for a in range(priors.shape[1]):
                priors[b, a] = c.priors[e, a]
            values[b] = c.value[e]
            _unlink(c, e)
            _append(c, e)
            first_of[b] = -1
            hits += 1
            continue
        slot = int(words[b, 0] & mask)
        r = batch_head[slot]
        while r >= 0 and not _same(words, length, b, words, length, r):
            r = batch_chain[r]
        if r >= 0:
            first_of[b] = r
        else:
            first_of[b] = b
            batch_chain[b] = batch_head[slot]
            batch_head[slot] = b
    return hits


@numba.njit(**KERNEL)
def insert(c, words, length, rows, priors, values, capacity) -> None:
    """The answers of rows ``rows`` (in order) into the cache, then the oldest out down to ``capacity``.
    The caller leaves room: at least ``len(rows)`` free entries."""
    for i in range(len(rows)):
        b = rows[i]
        e = _find(c, words, length, b)
        if e < 0:
            e = c.meta[FREE]
            c.meta[FREE] = c.chain[e]
            for t in range(length[b]):
                c.words[e, t] = words[b, t]
            c.length[e] = length[b]
            slot = _bucket(c, words[b, 0])
            c.chain[e] = c.head[slot]
            c.head[slot] = e
            _append(c, e)
            c.meta[COUNT] += 1
        for a in range(priors.shape[1]):
            c.priors[e, a] = priors[b, a]
        c.value[e] = values[b]
    while c.meta[COUNT] > capacity:
        e = c.meta[OLDEST]
        _unlink(c, e)
        slot = _bucket(c, c.words[e, 0])
        if c.head[slot] == e:
            c.head[slot] = c.chain[e]
        else:
            p = c.head[slot]
            while c.chain[p] != e:
                p = c.chain[p]
            c.chain[p] = c.chain[e]
        c.chain[e] = c.meta[FREE]
        c.meta[FREE] = e
        c.meta[COUNT] -= 1


@numba.njit(**KERNEL)
def move_all(c, to) -> None:
    """Every entry of ``c`` into the empty ``to``, oldest first (the same order)."""
    e = c.meta[OLDEST]
    while e >= 0:
        f = to.meta[FREE]
        to.meta[FREE] = to.chain[f]
        for t in range(c.length[e]):
            to.words[f, t] = c.words[e, t]
        to.length[f] = c.length[e]
        for a in range(c.priors.shape[1]):
            to.priors[f, a] = c.priors[e, a]
        to.value[f] = c.value[e]
        slot = _bucket(to, c.words[e, 0])
        to.chain[f] = to.head[slot]
        to.head[slot] = f
        _append(to, f)
        to.meta[COUNT] += 1
        e = c.newer[e]


# ---------------------------------------------------------------------------------------------
# the Python side

_look_up, _insert, _move_all = Direct(look_up), Direct(insert), Direct(move_all)  # (see numba_cache.Direct)


class LeafCache:
    """Up to ``capacity`` answers of the net (priors over ``actions``, value) by key of ``words`` words."""

    def __init__(self, capacity: int, words: int, actions: int):
        if capacity <= 0:
            raise ValueError(f"a leaf cache holds at least one entry, not {capacity}")
        self.capacity, self.words, self.actions = capacity, words, actions
        self.entries = new_entries(capacity + SLACK, words, actions)
        self._batch_head = np.empty(16, np.int32)
        self._batch_chain = np.empty(0, np.int32)

    def __len__(self) -> int:
        return int(self.entries.meta[COUNT])

    def look_up(self, words: np.ndarray, length: np.ndarray, priors: np.ndarray, values: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, int]:
        """``(misses, repeats, hits)`` of a batch of keys (``words [B, H]`` uint64, ``length [B]``): the
        rows to ask the net (in order), ``repeats [R, 2]`` (a row, the earlier row it repeats), and how
        many rows the cache answered (their priors and values written into ``priors``/``values``)."""
        count = len(length)
        if len(self._batch_chain) < count:
            self._batch_chain = np.empty(count, np.int32)
            self._batch_head = np.empty(1 << max(4, (2 * count - 1).bit_length()), np.int32)
        first_of = np.empty(count, np.int64)
        words, length = np.ascontiguousarray(words), np.ascontiguousarray(length, np.int64)
        hits = _look_up(self.entries, words, length, count, priors, values, first_of, self._batch_head,
                       self._batch_chain)
        rows = np.arange(count)
        misses = np.flatnonzero(first_of == rows)
        repeated = np.flatnonzero((first_of >= 0) & (first_of != rows))
        return misses, np.stack([repeated, first_of[repeated]], axis=1), hits

    def insert(self, words: np.ndarray, length: np.ndarray, rows: np.ndarray, priors: np.ndarray,
               values: np.ndarray) -> None:
        """The net's answers for rows ``rows`` of a batch (see the module docstring's insert)."""
        entries = self.entries
        room = len(entries.length)
        if room - int(entries.meta[COUNT]) < len(rows):  # a batch of more misses than the slack
            bigger = new_entries(int(entries.meta[COUNT]) + len(rows) + SLACK, self.words, self.actions)
            _move_all(entries, bigger)
            self.entries = entries = bigger
        _insert(entries, np.ascontiguousarray(words), np.ascontiguousarray(length, np.int64),
               np.ascontiguousarray(rows, np.int64), np.ascontiguousarray(priors, np.float32),
               np.ascontiguousarray(values, np.float32), self.capacity)
