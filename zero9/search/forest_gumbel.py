"""Gumbel search's selection over the forest's arrays, and numpy's pairwise sums: a part of the fast path.

:mod:`zero9.search.forest` (read its vocabulary first) selects a Gumbel tree's children with these
functions; they compute :mod:`zero9.search.gumbel`'s numbers with its operations in its order (σ of
the completed Q, the improved policy, sequential halving at the root), so that the native Gumbel
search is the Python one to the bit (``tests/test_native_twins.py``). The sums of priors and values
are numpy's pairwise sums, written out (:func:`pairwise_sum`), as the Python twins sum with numpy.

Vocabulary (shapes as :mod:`zero9.search.forest`'s; ``count`` a node's edges):

- **work** / **work32**: float64 / float32 scratch of at least ``2 * count`` / ``count``.
- **gbase** (an edge array): a root action's ``g + logits``, set once a search by
  :meth:`zero9.search.native.GumbelNativeTree.prepare`.
- **table**: the search's considered visits (:func:`zero9.search.gumbel.considered_visits`).
"""

from __future__ import annotations

import math

import numba
import numpy as np

# ---------------------------------------------------------------------------------------------
# sums in numpy's order (the readable twins sum priors with numpy)


@numba.njit(cache=True, nogil=True)
def _block_sum(x, start, n, zero):
    """numpy's pairwise sum of a block of at most 128: 8 running sums, then the rest (in ``x``'s type)."""
    if n < 8:
        res = zero
        for i in range(start, start + n):
            res = res + x[i]
        return res
    r0, r1, r2, r3 = x[start], x[start + 1], x[start + 2], x[start + 3]
    r4, r5, r6, r7 = x[start + 4], x[start + 5], x[start + 6], x[start + 7]
    stop = start + n - n % 8
    i = start + 8
    while i < stop:
        r0 = r0 + x[i]
        r1 = r1 + x[i + 1]
        r2 = r2 + x[i + 2]
        r3 = r3 + x[i + 3]
        r4 = r4 + x[i + 4]
        r5 = r5 + x[i + 5]
        r6 = r6 + x[i + 6]
        r7 = r7 + x[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < start + n:
        res = res + x[i]
        i += 1
    return res


@numba.njit(cache=True, nogil=True)
def pairwise_sum(x, start, n, zero):
    """``np.add.reduce`` of ``x[start:start+n]`` (float32 or float64, ``zero`` of that type), bit for bit:
    numpy's pairwise summation, 8 running sums per block of up to 128, halves above that. An explicit
    stack of (start, n, the left half's sum) instead of recursion: numba's cache cannot hold recursive
    functions (loading one from it crashed)."""
    if n <= 128:
        return _block_sum(x, start, n, zero)
    fs = np.empty(64, np.int64)
    fn = np.empty(64, np.int64)
    fl = np.empty(64, x.dtype)
    phase = np.zeros(64, np.int8)
    top = 1
    fs[0], fn[0], phase[0] = start, n, 0
    result = zero
    while top > 0:
        f = top - 1
        if fn[f] <= 128:
            result = _block_sum(x, fs[f], fn[f], zero)
            top -= 1
        elif phase[f] == 2:
            result = fl[f] + result
            top -= 1
        else:  # descend into the left half (phase 0), then the right one (phase 1)
            half = fn[f] // 2
            half -= half % 8
            if phase[f] == 1:
                fl[f] = result
            fs[top] = fs[f] + (half if phase[f] == 1 else 0)
            fn[top] = fn[f] - half if phase[f] == 1 else half
            phase[top] = 0
            phase[f] += 1
            top += 1
    return result



# ---------------------------------------------------------------------------------------------
# Gumbel search (zero9.search.gumbel's formulas, in its order of operations)

C_VISIT = 50.0
C_SCALE = 0.1


@numba.njit(cache=True, nogil=True)
def sigma_terms(nodes, edges, node, work, work32):
    """:func:`zero9.search.gumbel.sigma_terms`: ``(scale, lo, span, unvisited)``. ``work``/``work32``:
    float64/float32 scratch of at least the node's edges."""
    first, count = nodes.first[node], nodes.count[node]
    value = nodes.value[node]
    visited = 0
    lo, hi = math.inf, -math.inf
    most = 0.0
    for e in range(first, first + count):
        n = edges.n[e]
        if n != 0.0:
            q = edges.w[e] / n
            work[visited] = edges.p[e] * q
            work32[visited] = edges.raw[e]
            visited += 1
            lo = q if q < lo else lo
            hi = q if q > hi else hi
            most = n if n > most else most
    if visited == 0:
        return (C_VISIT + 0.0) * C_SCALE, value, 1e-8, 0.0
    prior_sum = pairwise_sum(work32, 0, visited, np.float32(0.0))
    den = 1e-12 if 1e-12 > prior_sum else np.float64(prior_sum)
    weighted = pairwise_sum(work, 0, visited, 0.0) / den
    total = nodes.total[node]
    mixed = (value + total * weighted) / (total + 1)
    if visited < count:
        lo = mixed if mixed < lo else lo
        hi = mixed if mixed > hi else hi
    scale = (C_VISIT + most) * C_SCALE
    span = hi - lo
    span = 1e-8 if 1e-8 > span else span
    return scale, lo, span, scale * ((mixed - lo) / span)


@numba.njit(cache=True, nogil=True)
def improved_policy(nodes, edges, node, z, work, work32) -> None:
    """:func:`zero9.search.gumbel.improved_policy` into ``z[:count]``: softmax(logits + σ(completed Q))."""
    first, count = nodes.first[node], nodes.count[node]
    scale, lo, span, unvisited = sigma_terms(nodes, edges, node, work, work32)
    for j in range(count):
        e = first + j
        n = edges.n[e]
        if n != 0.0:
            z[j] = edges.logit[e] + scale * ((edges.w[e] / n - lo) / span)
        else:
            z[j] = edges.logit[e] + unvisited
    top = -math.inf
    for j in range(count):
        top = z[j] if z[j] > top else top
    for j in range(count):
        z[j] = math.exp(z[j] - top)
    s = pairwise_sum(z, 0, count, 0.0)
    for j in range(count):
        z[j] = z[j] / s


@numba.njit(cache=True, nogil=True)
def gumbel_inner_edge(nodes, edges, node, work, work32) -> int:
    """argmax(π − N / (1 + ΣN)), π the improved policy (:meth:`.gumbel.GumbelTree._select_inner`)."""
    first, count = nodes.first[node], nodes.count[node]
    if nodes.total[node] == 0.0:  # π = softmax(logits): the first of the largest logits
        best, top = first, edges.logit[first]
        for e in range(first + 1, first + count):
            if edges.logit[e] > top:
                best, top = e, edges.logit[e]
        return best
    z = work[count:2 * count]
    improved_policy(nodes, edges, node, z, work, work32)
    share = 1.0 + nodes.total[node]
    best, top = first, -math.inf
    for j in range(count):
        n = edges.n[first + j]
        x = z[j] - n / share if n != 0.0 else z[j]
        if x > top:
            best, top = first + j, x
    return best


@numba.njit(cache=True, nogil=True)
def gumbel_best_root(nodes, edges, node, visits, work, work32) -> int:
    """The first root edge maximising g + logits + σ(q̂) among those with ``visits`` visits (-1: all);
    -1 when no edge has that many (:meth:`zero9.search.gumbel.GumbelTree._best_root_action`)."""
    first, count = nodes.first[node], nodes.count[node]
    scale, lo, span, unvisited = sigma_terms(nodes, edges, node, work, work32)
    best, top = -1, -math.inf
    for e in range(first, first + count):
        n = edges.n[e]
        if visits >= 0 and n != visits:
            continue
        if n != 0.0:
            score = edges.gbase[e] + scale * ((edges.w[e] / n - lo) / span)
        else:
            score = edges.gbase[e] + unvisited
        if score > top:
            best, top = e, score
    return best


@numba.njit(cache=True, nogil=True)
def gumbel_root_edge(nodes, edges, trees, g, node, work, work32) -> int:
    """Sequential halving at the root (:meth:`zero9.search.gumbel.GumbelTree.select_child`)."""
    k = int(round(nodes.total[node]))
    if k < trees.ntable[g]:
        best = gumbel_best_root(nodes, edges, node, trees.table[g, k], work, work32)
        if best >= 0:
            return best
    return gumbel_best_root(nodes, edges, node, -1, work, work32)
