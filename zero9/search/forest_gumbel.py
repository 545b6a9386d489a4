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

from zero9.search.numba_cache import KERNEL

# ---------------------------------------------------------------------------------------------
# sums in numpy's order (the readable twins sum priors with numpy)


@numba.njit(**KERNEL)
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


# numpy's rule above a block: halves, the first cut down to a multiple of 8, each summed by the same
# rule. A half of up to B is at most B/2 + 8, so each level below takes sums of up to 2 * (B - 8), one
# level a function (no recursion: numba's cache cannot hold it; no stack array: these steps allocate
# nothing, see zero9.search.numba_cache.KERNEL).
PAIRWISE_MOST = 1808  # the longest sum (actions of a node): 128 -> 240 -> 464 -> 912 -> 1808


@numba.njit(**KERNEL)
def _sum_240(x, start, n, zero):
    if n <= 128:
        return _block_sum(x, start, n, zero)
    half = n // 2
    half -= half % 8
    return _block_sum(x, start, half, zero) + _block_sum(x, start + half, n - half, zero)


@numba.njit(**KERNEL)
def _sum_464(x, start, n, zero):
    if n <= 240:
        return _sum_240(x, start, n, zero)
    half = n // 2
    half -= half % 8
    return _sum_240(x, start, half, zero) + _sum_240(x, start + half, n - half, zero)


@numba.njit(**KERNEL)
def _sum_912(x, start, n, zero):
    if n <= 464:
        return _sum_464(x, start, n, zero)
    half = n // 2
    half -= half % 8
    return _sum_464(x, start, half, zero) + _sum_464(x, start + half, n - half, zero)


@numba.njit(**KERNEL)
def pairwise_sum(x, start, n, zero):
    """``np.add.reduce`` of ``x[start:start+n]`` (float32 or float64, ``zero`` of that type; ``n`` at most
    :data:`PAIRWISE_MOST`), bit for bit: numpy's pairwise summation, 8 running sums per block of up to
    128, halves above that."""
    if n <= 912:
        return _sum_912(x, start, n, zero)
    half = n // 2
    half -= half % 8
    return _sum_912(x, start, half, zero) + _sum_912(x, start + half, n - half, zero)


# ---------------------------------------------------------------------------------------------
# Gumbel search (zero9.search.gumbel's formulas, in its order of operations)

C_VISIT = 50.0
C_SCALE = 0.1


@numba.njit(**KERNEL)
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


@numba.njit(**KERNEL)
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


@numba.njit(**KERNEL)
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


@numba.njit(**KERNEL)
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


@numba.njit(**KERNEL)
def gumbel_root_edge(nodes, edges, trees, g, node, work, work32) -> int:
    """Sequential halving at the root (:meth:`zero9.search.gumbel.GumbelTree.select_child`)."""
    k = int(round(nodes.total[node]))
    if k < trees.ntable[g]:
        best = gumbel_best_root(nodes, edges, node, trees.table[g, k], work, work32)
        if best >= 0:
            return best
    return gumbel_best_root(nodes, edges, node, -1, work, work32)
