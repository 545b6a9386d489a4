"""The search's fast path: G PUCT trees as arrays, stepped together by numba (mctx's layout).

Read :mod:`zero9.search.mcts` first: this is the same search, node for node and bit for bit
(``tests/test_native_twins.py`` holds it to :mod:`zero9.search.mcts` and
:mod:`zero9.search.puct`), with every tree of a self-play worker in a few flat arrays and each
step of the batched driver (select every tree's leaves; expand and back up their evaluations)
one compiled call. :mod:`zero9.search.native` is its Python side (the arrays' owner, tree
reuse, root noise, the move) and :mod:`zero9.search.fastpath` decides when it runs.

Vocabulary (shapes: ``M`` nodes, ``E`` edges, ``G`` trees, ``A`` actions, ``NN`` points):

- **nodes** (:class:`Nodes`): one row per position of any tree. ``parent`` / ``pedge``: the node
  above and the edge that leads here (-1 at a root: a root forgets its parent, the game's
  earlier positions are the tree's **history**). ``first`` / ``count``: its edges (-1 / 0 until
  expanded). ``flags``: ``EVALUATED`` (its evaluation is in: ``value`` and ``priors [M, A]``),
  ``EXPANDED`` (its edges exist: made from its priors when a simulation first goes through it,
  as :mod:`zero9.search.puct` does, so the leaves never visited again never pay for them),
  ``PENDING`` (its evaluation is on the way), ``TERMINAL``. ``value``: the evaluation, or the
  rules' result, from its side to move's view. ``total`` = ΣN over its edges, virtual losses
  included; ``tried`` = Σ P of its tried edges; ``fpu`` its first-play value; ``sqsum`` Σ value²
  backed up through it. The position itself: ``stones [M, NN]``, ``to_play``, ``passes``,
  ``move_number``, ``last`` (-1: none), ``bhash`` (the stones' Zobrist hash: superko) and
  ``phash`` (the position's hash, side to move in: the evaluator's keys).
- **edges** (:class:`Edges`): one row per legal move of an expanded node, a node's in one
  block, actions ascending. ``p`` the prior (root noise mixed in, float64), ``raw`` the
  evaluator's prior renormalised over the legal moves (float32, as :mod:`zero9.search.puct`
  keeps it), ``n`` visits and ``w`` total value (virtual losses included), ``child`` (-1: never
  tried).
- **trees** (:class:`Trees`): per tree ``root``, its budget (``visit_limit``,
  ``playout_limit``: -1 none), ``playouts`` (``start``: at the search's start),
  ``collisions``, ``noise`` (root noise on), ``active``; the history: ``hist_hash [G, H]``
  (sorted stone hashes of the game's positions up to the root: superko), ``hist_boards
  [G, 7, NN]`` and ``hist_keys [G, 7]`` (the 7 positions before the root, newest first: the
  net's input planes and the cache keys), ``nback`` how many of those exist.
- **PUCT**, **FPU**, **virtual loss**, **expansion**, **backup**: :mod:`zero9.search.puct`'s,
  written per element with the same IEEE operations in the same order (no fused multiply-add:
  numba never contracts ``q + c * u``), so equal on every CPU.
- **leaf** output of :func:`select_batch`: ``out_tree``/``out_node`` per leaf, its input planes
  (uint8 ``[B, C, NN]``, symmetry 0) and cache key (``keys [B, 8]``, ``key_len``: the hashes of
  the position and up to 7 before it, newest first: :func:`zero9.search.evaluator.history_key`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from zero9.games import go_native, gomoku_native
from zero9.games.go_native import go_area_score, go_legal, go_play
from zero9.games.gomoku_native import gomoku_legal, gomoku_wins
from zero9.search import forest_gumbel, numba_cache
from zero9.search.forest_gumbel import (
    gumbel_inner_edge,
    gumbel_root_edge,
    pairwise_sum,
)
from zero9.search.numba_cache import KERNEL

GO, GOMOKU = 0, 1
EVALUATED, PENDING, TERMINAL, EXPANDED = 1, 2, 4, 8
HISTORY = 8  # positions in the planes and in a cache key: this one and 7 before it
BACK = HISTORY - 1


class Nodes(NamedTuple):
    parent: np.ndarray
    pedge: np.ndarray
    first: np.ndarray
    count: np.ndarray  # type: ignore[assignment]  # hides tuple.count(), as a namedtuple may
    flags: np.ndarray
    value: np.ndarray
    total: np.ndarray
    tried: np.ndarray
    fpu: np.ndarray
    sqsum: np.ndarray
    stones: np.ndarray
    to_play: np.ndarray
    passes: np.ndarray
    move_number: np.ndarray
    last: np.ndarray
    bhash: np.ndarray
    phash: np.ndarray
    priors: np.ndarray  # float32 [M, A]: the evaluator's priors until the node is expanded
    used: np.ndarray  # [1]: rows in use
    unexpanded: np.ndarray  # [1]: nodes evaluated and not expanded yet (the edges they will need)


class Edges(NamedTuple):
    action: np.ndarray
    p: np.ndarray
    raw: np.ndarray
    n: np.ndarray
    w: np.ndarray
    child: np.ndarray
    q: np.ndarray  # w / n, kept as puct.py keeps it (set whenever n or w changes)
    u: np.ndarray  # p / (1 + n), likewise: PUCT's scan is then one multiply-add per child, no division
    logit: np.ndarray  # Gumbel: log P (at least 1e-30), made at expansion
    gbase: np.ndarray  # Gumbel, a root's edges: g + logit, set for each search
    used: np.ndarray  # [1]


class Trees(NamedTuple):
    root: np.ndarray
    visit_limit: np.ndarray
    playout_limit: np.ndarray
    playouts: np.ndarray
    start: np.ndarray
    collisions: np.ndarray
    noise: np.ndarray
    active: np.ndarray
    hist_hash: np.ndarray
    nhist: np.ndarray
    hist_boards: np.ndarray
    hist_keys: np.ndarray
    nback: np.ndarray
    table: np.ndarray  # Gumbel: [G, T] the considered visits of each simulation of the search
    ntable: np.ndarray  # its length (0: the root is not prepared yet)


class Rules(NamedTuple):
    kind: int  # GO or GOMOKU
    size: int
    nn: int
    num_actions: int
    planes: int  # input planes: 18 (Go), 5 (Gomoku)
    nbrs: np.ndarray  # int32 [NN, 4] (Go)
    zobrist: np.ndarray  # uint64 [3, NN]
    side_key: np.uint64  # Go: white to move; Gomoku: toggled at every move
    komi: float
    move_cap: int  # Go: the move that ends the game (0: none)
    connect: int
    exact: bool


class Knobs(NamedTuple):
    """:class:`zero9.settings.SearchConfig`'s numbers; NaN stands for None."""

    c_puct: float
    fpu_reduction: float
    fpu_root_reduction: float
    fpu_value: float
    virtual_loss: float
    gumbel: bool  # Gumbel root search (zero9.search.gumbel) instead of PUCT


def new_nodes(capacity: int, nn: int, actions: int) -> Nodes:
    z = np.zeros
    return Nodes(z(capacity, np.int32), z(capacity, np.int32), z(capacity, np.int32), z(capacity, np.int32),
                 z(capacity, np.int8), z(capacity), z(capacity), z(capacity), z(capacity), z(capacity),
                 z((capacity, nn), np.int8), z(capacity, np.int8), z(capacity, np.int16),
                 z(capacity, np.int32), z(capacity, np.int32), z(capacity, np.uint64), z(capacity, np.uint64),
                 np.empty((capacity, actions), np.float32), z(1, np.int64), z(1, np.int64))


def new_edges(capacity: int) -> Edges:
    z = np.zeros
    return Edges(z(capacity, np.int32), z(capacity), z(capacity, np.float32), z(capacity), z(capacity),
                 z(capacity, np.int32), z(capacity), z(capacity), z(capacity), z(capacity), z(1, np.int64))


def new_trees(count: int, history: int, nn: int) -> Trees:
    z = np.zeros
    return Trees(z(count, np.int32), np.full(count, -1, np.int64), np.full(count, -1, np.int64),
                 z(count, np.int64), z(count, np.int64), z(count, np.int64), z(count, np.int8),
                 z(count, np.int8), z((count, history), np.uint64), z(count, np.int32),
                 z((count, BACK, nn), np.int8), z((count, BACK), np.uint64), z(count, np.int32),
                 z((count, 64), np.int32), z(count, np.int32))


# ---------------------------------------------------------------------------------------------
# nodes: a child's position, first-play values


@numba.njit(**KERNEL)
def _copy_row(dst, i, src, j) -> None:
    """``dst[i] = src[j]`` of two 2-D arrays, element by element (a slice assignment needs numba's
    allocator, which these steps go without: see :data:`zero9.search.numba_cache.KERNEL`)."""
    for p in range(src.shape[1]):
        dst[i, p] = src[j, p]


@numba.njit(**KERNEL)
def new_child(nodes, rules, parent, pedge, action, scratch) -> int:
    """A node for the position after ``action`` at ``parent``; its terminal value from the rules."""
    i = nodes.used[0]
    nodes.used[0] = i + 1
    nodes.parent[i] = parent
    nodes.pedge[i] = pedge
    nodes.first[i] = -1
    nodes.count[i] = 0
    nodes.value[i] = 0.0
    nodes.total[i] = 0.0
    nodes.tried[i] = 0.0
    nodes.fpu[i] = 0.0
    nodes.sqsum[i] = 0.0
    _copy_row(nodes.stones, i, nodes.stones, parent)
    stones = nodes.stones[i]
    c = nodes.to_play[parent]
    to_play = 3 - c
    move_number = nodes.move_number[parent] + 1
    nodes.to_play[i] = to_play
    nodes.move_number[i] = move_number
    nodes.last[i] = action
    terminal = False
    winner = 0
    if rules.kind == GO:
        if action == rules.nn:
            passes = nodes.passes[parent] + 1
            bhash = nodes.bhash[parent]
        else:
            passes = 0
            xor, _ = go_play(stones, action, c, rules.nbrs, rules.zobrist, scratch)
            bhash = nodes.bhash[parent] ^ xor
        nodes.passes[i] = passes
        nodes.bhash[i] = bhash
        nodes.phash[i] = bhash ^ rules.side_key if to_play == 2 else bhash
        if passes >= 2 or (rules.move_cap > 0 and move_number >= rules.move_cap):
            terminal = True
            score = go_area_score(stones, rules.nbrs, rules.komi, scratch)
            winner = 1 if score > 0 else (2 if score < 0 else 0)
    else:
        stones[action] = c
        nodes.passes[i] = 0
        h = nodes.phash[parent] ^ rules.zobrist[c, action] ^ rules.side_key
        nodes.bhash[i] = h
        nodes.phash[i] = h
        if gomoku_wins(stones, action, c, rules.size, rules.connect, rules.exact):
            terminal, winner = True, c
        elif move_number >= rules.nn:
            terminal = True
        else:
            terminal = True
            for p in range(rules.nn):
                if stones[p] == 0:
                    terminal = False
                    break
    if terminal:
        nodes.flags[i] = TERMINAL
        nodes.value[i] = 0.0 if winner == 0 else (1.0 if winner == to_play else -1.0)
    else:
        nodes.flags[i] = 0
    return i


@numba.njit(**KERNEL)
def refresh_fpu(nodes, trees, knobs, g, node) -> None:
    """:meth:`zero9.search.puct.Tree._refresh_fpu`: untried children's value after a child is tried."""
    if not math.isnan(knobs.fpu_value):
        nodes.fpu[node] = knobs.fpu_value
        return
    reduction = knobs.fpu_reduction
    if node == trees.root[g]:
        if not math.isnan(knobs.fpu_root_reduction):
            reduction = knobs.fpu_root_reduction
        elif trees.noise[g]:
            reduction = 0.0
    x = nodes.value[node] - reduction * math.sqrt(nodes.tried[node])
    nodes.fpu[node] = x if x >= -1.0 else -1.0


@numba.njit(**KERNEL)
def tried(nodes, edges, trees, knobs, g, node, e, now_tried) -> None:
    """Edge ``e`` of ``node`` was just tried for the first time (or un-tried by a revert)."""
    if now_tried:
        nodes.tried[node] += edges.p[e]
    else:
        nodes.tried[node] -= edges.p[e]
    refresh_fpu(nodes, trees, knobs, g, node)


# ---------------------------------------------------------------------------------------------
# one simulation: select (with virtual loss), and expand and back up


@numba.njit(**KERNEL)
def puct_edge(nodes, edges, knobs, node) -> int:
    """PUCT: the edge maximising Q + c_puct · P · sqrt(ΣN) / (1 + N); ties: the first."""
    total = nodes.total[node]
    c = knobs.c_puct * math.sqrt(total if total > 1.0 else 1.0)
    fpu = nodes.fpu[node]
    best, best_score = -1, -math.inf
    for e in range(nodes.first[node], nodes.first[node] + nodes.count[node]):
        q = edges.q[e] if edges.n[e] != 0.0 else fpu
        score = q + c * edges.u[e]
        if score > best_score:
            best, best_score = e, score
    return best


@numba.njit(**KERNEL)
def leaves_wanted(nodes, trees, g, k) -> int:
    """:meth:`zero9.search.puct.Tree.leaves_wanted` of tree ``g``."""
    root = trees.root[g]
    if nodes.flags[root] & TERMINAL:
        return 0
    if not nodes.flags[root] & EXPANDED:
        return 1
    if trees.visit_limit[g] >= 0:
        k = min(k, trees.visit_limit[g] - int(round(nodes.total[root])))
    if trees.playout_limit[g] >= 0:
        k = min(k, trees.playout_limit[g] - (trees.playouts[g] - trees.start[g]))
    return max(k, 0)


@numba.njit(**KERNEL)
def revert(nodes, edges, trees, knobs, g, node) -> None:
    """Take back the virtual losses on the path to ``node`` (its leaf was in flight already)."""
    vl = knobs.virtual_loss
    root = trees.root[g]
    while node != root:
        e, up = nodes.pedge[node], nodes.parent[node]
        n = edges.n[e] - vl
        w = edges.w[e] + vl
        edges.n[e] = n
        edges.w[e] = w
        edges.q[e] = w / n if n else 0.0
        edges.u[e] = edges.p[e] / (1.0 + n)
        nodes.total[up] -= vl
        if not n:
            tried(nodes, edges, trees, knobs, g, up, e, False)
        node = up


@numba.njit(**KERNEL)
def select_leaf(nodes, edges, trees, rules, knobs, g, scratch, work, work32, path, actions) -> int:
    """Walk down tree ``g`` by PUCT adding virtual loss: the leaf, or -1 when it is already in flight."""
    node = trees.root[g]
    vl = knobs.virtual_loss
    while not nodes.flags[node] & TERMINAL and nodes.flags[node] & EVALUATED:
        if not nodes.flags[node] & EXPANDED:  # the first simulation through it
            expand(nodes, edges, trees, rules, knobs, g, node, path, scratch, actions)
        if not knobs.gumbel:
            e = puct_edge(nodes, edges, knobs, node)
        elif node == trees.root[g]:
            e = gumbel_root_edge(nodes, edges, trees, g, node, work, work32)
        else:
            e = gumbel_inner_edge(nodes, edges, node, work, work32)
        child = edges.child[e]
        if child < 0:  # first try: only now is the child's position made
            child = new_child(nodes, rules, node, e, edges.action[e], scratch)
            edges.child[e] = child
        if vl != 0.0:
            n = edges.n[e] + vl
            w = edges.w[e] - vl
            edges.n[e] = n
            edges.w[e] = w
            edges.q[e] = w / n
            edges.u[e] = edges.p[e] / (1.0 + n)
            nodes.total[node] += vl
            if n == vl:
                tried(nodes, edges, trees, knobs, g, node, e, True)
        node = child
    if nodes.flags[node] & PENDING:
        trees.collisions[g] += 1
        if vl != 0.0:
            revert(nodes, edges, trees, knobs, g, node)
        return -1
    if not nodes.flags[node] & TERMINAL:
        nodes.flags[node] |= PENDING
    return node


@numba.njit(**KERNEL)
def backup(nodes, edges, trees, knobs, g, node, value) -> None:
    """Add ``value`` (``node``'s side to move's view) along the path, undoing the virtual loss."""
    vl = knobs.virtual_loss
    dn = 1.0 - vl
    root = trees.root[g]
    child = node
    while child != root:
        value = -value
        nodes.sqsum[child] += value * value
        e, up = nodes.pedge[child], nodes.parent[child]
        w = edges.w[e] + value + vl
        edges.w[e] = w
        if dn != 0.0:
            n = edges.n[e] + dn
            edges.n[e] = n
            edges.u[e] = edges.p[e] / (1.0 + n)
            nodes.total[up] += dn
            if n == dn:
                tried(nodes, edges, trees, knobs, g, up, e, True)
        else:
            n = edges.n[e]
        edges.q[e] = w / n
        child = up
    if node != root:
        trees.playouts[g] += 1


@numba.njit(**KERNEL)
def expand(nodes, edges, trees, rules, knobs, g, node, path, scratch, actions) -> None:
    """The edges of ``node`` over its legal moves, with its priors (float32 ``[A]``) renormalised over
    them as :meth:`zero9.search.puct.Node.expand` does (a float32 sum in numpy's order)."""
    priors = nodes.priors[node]
    if rules.kind == GO:
        npath = 0
        x, root = node, trees.root[g]
        while x != root:  # the stones of the positions between the root (in the history) and here
            path[npath] = nodes.bhash[x]
            npath += 1
            x = nodes.parent[x]
        seen = trees.hist_hash[g, :trees.nhist[g]]
        count = go_legal(nodes.stones[node], nodes.to_play[node], nodes.bhash[node], rules.nbrs,
                         rules.zobrist, seen, path, npath, scratch, actions)
    else:
        count = gomoku_legal(nodes.stones[node], actions)
    first = edges.used[0]
    edges.used[0] = first + count
    raw = edges.raw
    for j in range(count):
        a = actions[j]
        e = first + j
        edges.action[e] = a
        raw[e] = priors[a]
        edges.n[e] = 0.0
        edges.w[e] = 0.0
        edges.child[e] = -1
    s = np.float64(pairwise_sum(raw, first, count, np.float32(0.0)))
    if s > 0:
        scale = np.float32(1.0 / s)
        for e in range(first, first + count):
            raw[e] = np.float32(raw[e] * scale)
    else:
        fill = np.float32(1.0 / max(count, 1))
        for e in range(first, first + count):
            raw[e] = fill
    for e in range(first, first + count):
        edges.p[e] = np.float64(raw[e])
        edges.u[e] = edges.p[e]  # p / (1 + 0)
        edges.q[e] = 0.0
        if knobs.gumbel:
            p = edges.p[e]
            edges.logit[e] = math.log(p if p >= 1e-30 else 1e-30)
    nodes.first[node] = first
    nodes.count[node] = count
    nodes.fpu[node] = nodes.value[node] if math.isnan(knobs.fpu_value) else knobs.fpu_value
    nodes.flags[node] |= EXPANDED
    nodes.unexpanded[0] -= 1



# ---------------------------------------------------------------------------------------------
# a leaf's input planes and cache key


@numba.njit(**KERNEL)
def _stone_planes(boards, x, me, planes, b, t, nn) -> None:
    """Planes ``t`` (own stones) and ``HISTORY + t`` (the other side's) of leaf ``b`` from ``boards[x]``.
    (Whole arrays and indices, never a row's view: each view numba makes costs two atomic reference
    counts, and in this loop they were a third of a simulation's time.)"""
    for p in range(nn):
        s = boards[x, p]
        planes[b, t, p] = s == me
        planes[b, HISTORY + t, p] = (s != 0) & (s != me)


@numba.njit(**KERNEL)
def turn_planes(planes, rows, syms, maps, out) -> None:
    """``out[i]`` = the planes of leaf ``rows[i]`` under symmetry ``syms[i]`` (``maps[s][p]``: the point
    the turned planes read at ``p``: :func:`zero9.nn.features.point_maps`)."""
    for i in range(len(rows)):
        src, m = planes[rows[i]], maps[syms[i]]
        dst = out[i]
        for c in range(src.shape[0]):
            for p in range(src.shape[1]):
                dst[c, p] = src[c, m[p]]


@numba.njit(**KERNEL)
def wanted_all(nodes, trees, k, out) -> None:
    """:func:`leaves_wanted` of every tree (-1 for an empty slot)."""
    for g in range(len(out)):
        out[g] = leaves_wanted(nodes, trees, g, k) if trees.active[g] else -1


@numba.njit(**KERNEL)
def write_leaf(nodes, trees, rules, g, node, planes, keys, b) -> int:
    """Leaf ``b``'s planes (``planes[b]``: uint8 ``[C, NN]``, :mod:`zero9.nn.features`' layout, symmetry
    0) and its cache key's hashes (``keys[b]``: ``[8]``, newest first); returns the key's length."""
    nn = rules.nn
    me = nodes.to_play[node]
    root = trees.root[g]
    if rules.kind == GOMOKU:
        last = nodes.last[node]
        for p in range(nn):
            s = nodes.stones[node, p]
            planes[b, 0, p] = s == me
            planes[b, 1, p] = (s != 0) & (s != me)
            planes[b, 2, p] = p == last
            planes[b, 3, p] = me == 1
            planes[b, 4, p] = 1
    else:
        # Go: every stone plane written whole (own, then the other side's), no branches per point
        x, t = node, 0
        while t < HISTORY:  # the tree's positions from the leaf up to the root
            _stone_planes(nodes.stones, x, me, planes, b, t, nn)
            t += 1
            if x == root:
                break
            x = nodes.parent[x]
        j = 0
        while t < HISTORY and j < trees.nback[g]:  # then the game's positions before the root
            for p in range(nn):
                s = trees.hist_boards[g, j, p]
                planes[b, t, p] = s == me
                planes[b, HISTORY + t, p] = (s != 0) & (s != me)
            t += 1
            j += 1
        while t < HISTORY:  # before the start of the game: empty boards
            for p in range(nn):
                planes[b, t, p] = 0
                planes[b, HISTORY + t, p] = 0
            t += 1
        for p in range(nn):
            planes[b, 2 * HISTORY, p] = me == 1
            planes[b, 2 * HISTORY + 1, p] = me != 1
    x, t = node, 0
    while t < HISTORY:
        keys[b, t] = nodes.phash[x]
        t += 1
        if x == root:
            break
        x = nodes.parent[x]
    j = 0
    while t < HISTORY and j < trees.nback[g]:
        keys[b, t] = trees.hist_keys[g, j]
        t += 1
        j += 1
    return t


# ---------------------------------------------------------------------------------------------
# the two halves of a step of the batched driver


@numba.njit(**KERNEL)
def select_batch(nodes, edges, trees, rules, knobs, slots, k, out_tree, out_node, planes, keys, key_len,
                 scratch, work, work32, path, actions, wanted) -> int:
    """One step's leaves, tree by tree in ``slots`` order (:func:`zero9.search.batched.select_leaves` with
    :func:`zero9.search.puct.collect_leaves`): up to ``k`` a tree, stopping at its first collision;
    terminal leaves are backed up at once. Returns how many leaves; -1 when no tree wants any."""
    any_wanted = False
    for j in range(len(slots)):
        wanted[j] = leaves_wanted(nodes, trees, slots[j], k)
        any_wanted = any_wanted or wanted[j] > 0
    if not any_wanted:
        return -1
    b = 0
    for j in range(len(slots)):
        g = slots[j]
        for _ in range(wanted[j]):
            node = select_leaf(nodes, edges, trees, rules, knobs, g, scratch, work, work32, path, actions)
            if node < 0:
                break
            if nodes.flags[node] & TERMINAL:
                backup(nodes, edges, trees, knobs, g, node, nodes.value[node])
                if nodes.flags[trees.root[g]] & TERMINAL:
                    break
                continue
            out_tree[b] = g
            out_node[b] = node
            key_len[b] = write_leaf(nodes, trees, rules, g, node, planes, keys, b)
            b += 1
    return b


@numba.njit(**KERNEL)
def backup_batch(nodes, edges, trees, rules, knobs, out_tree, out_node, count, priors, values, path, scratch,
                 actions, expanded_roots) -> int:
    """Expand each leaf with its evaluation and back it up, in order; returns how many of them were
    roots (their trees' ids in ``expanded_roots``: the caller adds their root noise)."""
    roots = 0
    for b in range(count):
        g, node = out_tree[b], out_node[b]
        nodes.value[node] = np.float64(values[b])
        _copy_row(nodes.priors, node, priors, b)
        nodes.flags[node] = (nodes.flags[node] | EVALUATED) & ~PENDING
        nodes.unexpanded[0] += 1
        if node == trees.root[g]:  # the root is expanded at once (its noise, its statistics)
            expand(nodes, edges, trees, rules, knobs, g, node, path, scratch, actions)
            expanded_roots[roots] = g
            roots += 1
        backup(nodes, edges, trees, knobs, g, node, nodes.value[node])
    return roots


@numba.njit(**KERNEL)
def advance_root(nodes, edges, trees, rules, knobs, g, action, reuse, scratch, path, actions) -> int:
    """Play ``action`` at tree ``g``'s root: the played child (with its subtree if ``reuse``, else a fresh
    node of its position) becomes the root, the old root joins the history. Returns the new root."""
    old = trees.root[g]
    child = -1
    if reuse and nodes.flags[old] & EXPANDED:
        for e in range(nodes.first[old], nodes.first[old] + nodes.count[old]):
            if edges.action[e] == action:
                child = edges.child[e]
                break
    back = trees.nback[g]
    for j in range(min(back, BACK - 1), 0, -1):
        for p in range(rules.nn):
            trees.hist_boards[g, j, p] = trees.hist_boards[g, j - 1, p]
        trees.hist_keys[g, j] = trees.hist_keys[g, j - 1]
    for p in range(rules.nn):
        trees.hist_boards[g, 0, p] = nodes.stones[old, p]
    trees.hist_keys[g, 0] = nodes.phash[old]
    trees.nback[g] = min(back + 1, BACK)
    if child < 0 or nodes.flags[child] & PENDING:
        child = new_child(nodes, rules, old, -1, action, scratch)
    trees.root[g] = child
    nodes.parent[child] = -1
    count, h = trees.nhist[g], nodes.bhash[child]  # (the caller made room for one more)
    row = trees.hist_hash[g]
    at = count
    while at > 0 and row[at - 1] > h:
        row[at] = row[at - 1]
        at -= 1
    row[at] = h
    trees.nhist[g] = count + 1
    if nodes.flags[child] & EVALUATED and not nodes.flags[child] & EXPANDED:
        expand(nodes, edges, trees, rules, knobs, g, child, path, scratch, actions)
    return child


# ---------------------------------------------------------------------------------------------
# memory: the live trees copied to the front of fresh arrays


@numba.njit(**KERNEL)
def compact(nodes, edges, trees, slots, to_nodes, to_edges, old_of) -> None:
    """Copy the trees of ``slots`` (their roots' subtrees) into ``to_nodes``/``to_edges``, breadth
    first, and point the roots there: what no root reaches (played-out branches) is left behind."""
    used_nodes = 0
    used_edges = 0
    unexpanded = 0
    for j in range(len(slots)):
        g = slots[j]
        head = used_nodes
        old_of[used_nodes] = trees.root[g]
        used_nodes += 1
        trees.root[g] = head
        while head < used_nodes:
            old = old_of[head]
            to_nodes.parent[head] = -1 if head == trees.root[g] else to_nodes.parent[head]
            to_nodes.flags[head] = nodes.flags[old]
            to_nodes.value[head] = nodes.value[old]
            to_nodes.total[head] = nodes.total[old]
            to_nodes.tried[head] = nodes.tried[old]
            to_nodes.fpu[head] = nodes.fpu[old]
            to_nodes.sqsum[head] = nodes.sqsum[old]
            _copy_row(to_nodes.stones, head, nodes.stones, old)
            to_nodes.to_play[head] = nodes.to_play[old]
            to_nodes.passes[head] = nodes.passes[old]
            to_nodes.move_number[head] = nodes.move_number[old]
            to_nodes.last[head] = nodes.last[old]
            to_nodes.bhash[head] = nodes.bhash[old]
            to_nodes.phash[head] = nodes.phash[old]
            if nodes.flags[old] & EVALUATED and not nodes.flags[old] & EXPANDED:
                _copy_row(to_nodes.priors, head, nodes.priors, old)
                unexpanded += 1
            count = nodes.count[old]
            to_nodes.count[head] = count
            if not nodes.flags[old] & EXPANDED:
                to_nodes.first[head] = -1
            else:
                to_nodes.first[head] = used_edges
                src = nodes.first[old]
                for d in range(count):
                    e, f = src + d, used_edges + d
                    to_edges.action[f] = edges.action[e]
                    to_edges.p[f] = edges.p[e]
                    to_edges.raw[f] = edges.raw[e]
                    to_edges.n[f] = edges.n[e]
                    to_edges.w[f] = edges.w[e]
                    to_edges.q[f] = edges.q[e]
                    to_edges.u[f] = edges.u[e]
                    to_edges.logit[f] = edges.logit[e]
                    to_edges.gbase[f] = edges.gbase[e]
                    child = edges.child[e]
                    if child >= 0:
                        old_of[used_nodes] = child
                        to_nodes.parent[used_nodes] = head
                        to_nodes.pedge[used_nodes] = f
                        to_edges.child[f] = used_nodes
                        used_nodes += 1
                    else:
                        to_edges.child[f] = -1
                used_edges += count
            head += 1
    to_nodes.used[0] = used_nodes
    to_edges.used[0] = used_edges
    to_nodes.unexpanded[0] = unexpanded


# numba's cache knows each function's own file only: it is stamped with the sources compiled into
# these steps (the rules, Gumbel's selection) and emptied when they change (zero9/search/numba_cache.py)
numba_cache.stamp(globals(), __name__, "forest", (go_native, gomoku_native, forest_gumbel, numba_cache))
