"""Gumbel root search (Danihelka et al., ICLR 2022, "Policy improvement by planning with Gumbel").

Follows DeepMind's mctx (``gumbel_muzero_policy``); same tree, same batching as
:mod:`zero9.search.puct`, only the two selection rules and the outputs differ.

Vocabulary (arrays over the root's legal actions, shape ``[n]``):

- **logits**: ``log P``, the net's policy logits (up to a constant).
- **g**: Gumbel(0, 1) noise, drawn once per search. ``argmax(g + logits)`` is a
  sample from the policy; the top ``m`` of ``g + logits`` is a sample of ``m``
  actions without replacement (**Gumbel-top-k**).
- **completed Q**: a child's Q where visited; elsewhere the **mixed value**
  ``(v + ΣN · Σ_visited π·Q / Σ_visited π) / (1 + ΣN)`` (``v`` the node's raw value).
- **σ(q̂)**: ``(c_visit + max N) · c_scale · q̂`` with ``q̂`` the completed Q min-max
  rescaled to [0, 1] over the node's children (mctx: ``c_visit = 50``, ``c_scale = 0.1``).
- **sequential halving**: the budget of ``n`` simulations is spread over
  ``ceil(log2 m)`` phases; each phase gives every remaining action the same number
  of visits, then keeps the better half by ``g + logits + σ(q̂)``. We follow mctx's
  table of "considered visits": simulation ``k`` goes to the best action whose
  visit count equals ``table[k]``.
- **improved policy** (the training target): ``softmax(logits + σ(completed Q))``.
- **interior selection** (deterministic): ``argmax(improved policy − N / (1 + ΣN))``,
  which makes visit counts track the improved policy.
- The move played is the action with the most visits that maximises ``g + logits + σ(q̂)``.

There is no Dirichlet noise and no temperature: the Gumbel sample explores.

What it costs (as in :mod:`zero9.search.puct`, a numpy call costs more than a short Python
loop): only the visited children (a handful) have their own completed Q, every unvisited
one has the mixed value, so σ is computed in Python over the visited children plus one
number for all the others (:func:`sigma_terms`). Selection must stay the same to the last
bit, so these numbers are rounded as numpy rounds them: each element-wise operation is the
same IEEE double operation, and sums are added in numpy's order (:func:`pairwise_sum`;
``P`` is float32, so its sums are float32). ``ΣN`` is ``node.total``: visit counts
(virtual losses included) are whole numbers, exact in any order. What depends only on the
root's priors and noise (logits, ``g + logits`` and the actions ranked by it) is computed
once per search.
"""

from __future__ import annotations

import math
from operator import add, mul
from typing import cast

import numpy as np

from zero9.games import Position
from zero9.search.puct import Node, Tree
from zero9.settings import SearchConfig

C_VISIT = 50.0
C_SCALE = 0.1
_F32_ZERO = np.float32(0.0)
_ULPS = 2.0**-50  # four units in the last place of a double, relative: a bound on one rounding


def considered_visits(m: int, n: int) -> list[int]:
    """mctx's sequence: for simulation ``k`` the visit count an action must have to be chosen."""
    if m <= 1:
        return list(range(n))
    phases = math.ceil(math.log2(m))
    sequence: list[int] = []
    visits = [0] * m
    considered = m
    while len(sequence) < n:
        extra = max(1, int(n / (phases * considered)))
        for _ in range(extra):
            sequence.extend(visits[:considered])
            for i in range(considered):
                visits[i] += 1
        considered = max(2, considered // 2)
    return sequence[:n]


def pairwise_sum(values: list, zero=0.0):
    """``np.sum`` of ``values`` in numpy's order: pairwise, 8 running sums per block of up to 128.

    The arithmetic follows the items: ``np.float32`` items (and ``zero``) give numpy's float32 sum.
    """
    n = len(values)
    if n < 8:
        total = zero
        for x in values:
            total = total + x
        return total
    if n > 128:
        half = n // 2
        half -= half % 8
        return pairwise_sum(values[:half], zero) + pairwise_sum(values[half:], zero)
    stop = n - n % 8
    r = values[:8]
    for i in range(8, stop, 8):
        r = list(map(add, r, values[i:i + 8]))
    total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for x in values[stop:]:
        total = total + x
    return total


def visited_children(node: Node) -> list[int]:
    """The children with N > 0, in index order (every child ever tried has a Node: ``Tree.select_leaf``)."""
    n = node.n
    assert n is not None  # expanded: its children are being selected from
    return sorted([i for i in node.children if n[i]])


def visited_priors(node: Node, visited: list[int]) -> tuple[list[float], np.float32]:
    """The visited children's priors (Python floats) and their sum (float32, as numpy sums ``P``)."""
    P = node.P
    return list(map(P.item, visited)), pairwise_sum(list(map(P.__getitem__, visited)), _F32_ZERO)


def sigma_terms(node: Node, visited: list[int], qv: list[float],
                priors: tuple[list[float], np.float32] | None = None) -> tuple[float, float, float, float]:
    """σ(q̂) of the completed Q in four numbers ``(scale, lo, span, unvisited)``: a visited child of
    Q ``x`` has ``σ = scale · ((x − lo) / span)``; every unvisited child has ``unvisited``.

    ``qv``: the visited children's Q; ``priors``: their :func:`visited_priors` if the caller has them.
    """
    n = node.n
    assert n is not None  # expanded: its children are being scored
    value = node.value
    if not visited:
        return (C_VISIT + 0.0) * C_SCALE, value, 1e-8, 0.0  # every completed Q is v: q̂ = 0
    pv, prior_sum = priors or visited_priors(node, visited)
    # (ignore: typeshed's max() of a float32 and a float is a bare comparable, which float() does not take)
    weighted = pairwise_sum(list(map(mul, pv, qv))) / float(max(prior_sum, 1e-12))  # type: ignore[arg-type]
    total = node.total
    mixed = (value + total * weighted) / (total + 1)
    lo, hi = min(qv), max(qv)
    if len(visited) < len(n):  # the mixed value is some child's completed Q too
        lo, hi = min(lo, mixed), max(hi, mixed)
    scale = (C_VISIT + max(map(n.__getitem__, visited))) * C_SCALE
    span = max(hi - lo, 1e-8)
    return scale, lo, span, scale * ((mixed - lo) / span)


def node_logits(node: Node) -> np.ndarray:
    """``log P`` (at least 1e-30) over the node's children, float64, by the C library's ``log``: numpy's
    vectorised log rounds differently on different CPUs (AVX-512 or not), this one is what the native
    twin (:mod:`zero9.search.forest`) computes too."""
    log = math.log
    return np.array([log(p if p >= 1e-30 else 1e-30) for p in node.P.tolist()])


def improved_policy(node: Node, logits: np.ndarray | None = None) -> np.ndarray:
    """softmax(logits + σ(completed Q)) over the node's children, float64 ``[n]``; ``logits``: the
    node's :func:`node_logits` if the caller has them."""
    if logits is None:
        logits = node_logits(node)
    visited = visited_children(node)
    qv = list(map(node.q.item, visited))
    scale, lo, span, unvisited = sigma_terms(node, visited, qv)
    z = logits + unvisited
    for i, x in zip(visited, qv, strict=True):
        z[i] = logits.item(i) + scale * ((x - lo) / span)
    z -= np.maximum.reduce(z)
    z = np.array(list(map(math.exp, z.tolist())))  # (the C library's exp: see node_logits)
    z /= np.add.reduce(z)
    return z


class GumbelTree(Tree):
    """A search tree whose root runs sequential halving and whose inner nodes select deterministically.

    Each move's search begins with :meth:`begin_search` and its budget (``run_simulations``
    calls it); the root is fresh every move (the halving schedule counts from zero).
    """

    def __init__(self, position: Position, config: SearchConfig | None = None,
                 rng: np.random.Generator | None = None, num_actions: int = 16):
        if num_actions < 1:
            raise ValueError(f"num_actions (m) must be >= 1, got {num_actions}")
        super().__init__(position, config, rng)
        self.m = num_actions
        self.budget = 0
        self.gumbel: np.ndarray | None = None
        self.table: list[int] = []
        # The root's part of the score fixed for a search (see _root_terms).
        self._priors_seen: np.ndarray | None = None
        self._logits: np.ndarray | None = None
        self._inner_logits: dict[Node, np.ndarray] = {}  # node_logits of the inner nodes selected from
        self._base: list[float] = []
        self._ranked: list[int] = []
        self._visited_priors: dict[tuple[int, ...], tuple[list[float], np.float32]] = {}

    def begin_search(self, visits: int | None = None, playouts: int | None = None) -> None:
        """Start a move's search, budget and halving schedule (fresh Gumbel noise once the root is ready)."""
        super().begin_search(visits, playouts)
        self.budget = visits if visits is not None else playouts or 0  # (a fresh root: visits = playouts)
        self.gumbel = None

    def _prepare_root(self) -> None:
        root = self.root
        assert root.actions is not None  # prepared once the root is expanded
        self.gumbel = self.rng.gumbel(size=len(root.actions))
        self.table = considered_visits(min(self.m, len(root.actions)), max(self.budget, 1))
        self._priors_seen = None

    def _root_terms(self) -> None:
        """The root's logits, ``g + logits`` (a list), the actions ranked by it (best first, ties in
        index order) and a memo of :func:`visited_priors` per visited set; rebuilt for new noise or priors."""
        root = self.root
        if self._priors_seen is root.P:
            return
        self._priors_seen = root.P
        self._logits = node_logits(root)
        base = self.gumbel + self._logits
        self._base = base.tolist()
        self._ranked = np.argsort(-base, kind="stable").tolist()
        self._visited_priors = {}

    def select_child(self, node: Node) -> int:
        if node is not self.root:
            return self._select_inner(node)
        assert node.actions is not None  # expanded: its children are being selected from
        if self.gumbel is None or len(self.gumbel) != len(node.actions):
            self._prepare_root()
        self._root_terms()
        k = int(round(node.total))
        if k < len(self.table):
            visits = self.table[k]
            best = self._first_unvisited() if visits == 0 else None
            if best is None:
                best = self._best_root_action(visits)
            if best is not None:
                return best
        best = self._best_root_action(None)
        assert best is not None  # every action is a candidate: one of them is the best
        return best

    def _select_inner(self, node: Node) -> int:
        """argmax(π − N / (1 + ΣN)), π the improved policy."""
        logits = self._inner_logits.get(node)
        if logits is None:
            logits = self._inner_logits[node] = node_logits(node)
        if not node.total and node.P.dtype == np.float32:
            # Nothing visited: π = softmax(logits), N = 0. Distinct logits of float32 priors are at
            # least 5.9e-8 apart (float32's relative spacing, 2^-24, taken by a float64 log), far more than
            # exp and the division can round away: the first of the largest logits is the first
            # of the largest π.
            return int(logits.argmax())
        n = node.n
        assert n is not None  # expanded: its children are being selected from
        pi = improved_policy(node, logits)
        share = 1.0 + node.total
        for i in visited_children(node):  # (the others have N = 0: π − 0 is π)
            pi[i] -= n[i] / share
        return int(pi.argmax())

    def _first_unvisited(self) -> int | None:
        """The best unvisited root action, when that needs no σ: unvisited actions share one σ
        (the mixed value's), which moves all their scores together, so the first unvisited one by
        ``g + logits`` is the best unless the next one is close enough to round to the same score
        (None then: :meth:`_best_root_action` decides; and None when none is unvisited)."""
        n, base = self.root.n, self._base
        assert n is not None  # the root is expanded (select_child)
        ranked = iter(self._ranked)
        for i in ranked:
            if not n[i]:
                break
        else:
            return None
        for j in ranked:
            if not n[j]:
                # σ of an unvisited action is in [0, (c_visit + max N) · c_scale], max N <= ΣN.
                bound = (abs(base[i]) + abs(base[j]) + (C_VISIT + self.root.total) * C_SCALE) * _ULPS
                return i if base[i] - base[j] > bound else None
        return i

    def _best_root_action(self, visits: float | None) -> int | None:
        """The first root action maximising g + logits + σ(q̂) among those with ``visits`` visits
        (None: all); None when no action has that many.

        The unvisited ones share one σ: the first by ``g + logits`` is their best, and those
        after it whose score rounds to the same number tie with it (the lowest index wins, as
        argmax's); the first that rounds lower ends the walk.
        """
        root = self.root
        n, base = root.n, self._base
        assert n is not None  # the root is expanded (select_child, choose_action)
        visited = visited_children(root)
        key = tuple(visited)
        priors = self._visited_priors.get(key)
        if priors is None:
            priors = self._visited_priors[key] = visited_priors(root, visited)
        qv = list(map(root.q.item, visited))
        scale, lo, span, unvisited = sigma_terms(root, visited, qv, priors)
        best_score, best = -math.inf, None
        if not visits:  # (0 or None) the unvisited actions are candidates
            ranked = iter(self._ranked)
            for i in ranked:
                if not n[i]:
                    best_score, best = base[i] + unvisited, i
                    for j in ranked:
                        if not n[j]:
                            if base[j] + unvisited < best_score:
                                break
                            best = min(best, j)
                    break
        if visits != 0:  # (a count or None) the visited actions with that count are candidates
            for i, x in zip(visited, qv, strict=True):
                if visits is None or n[i] == visits:
                    score = base[i] + scale * ((x - lo) / span)
                    # (scores are finite: a tie is with a best already found)
                    if score > best_score or (score == best_score and i < cast(int, best)):
                        best_score, best = score, i
        return best

    def choose_action(self, proportional: bool = False) -> int:
        """Among the most visited root actions, the best by g + logits + σ(q̂)."""
        root = self.root
        if not root.expanded or root.total <= 0:
            raise ValueError("choose_action: the root has not been searched")
        assert root.actions is not None and root.n is not None  # expanded
        if self.gumbel is None or len(self.gumbel) != len(root.actions):
            self._prepare_root()
        self._root_terms()
        return int(root.actions[self._best_root_action(max(root.n))])

    def policy_target(self, num_actions: int) -> np.ndarray:
        """The completed-Q improved policy at the root, float32 ``[A]``."""
        root = self.root
        pi = np.zeros(num_actions, dtype=np.float32)
        if root.expanded:
            pi[root.actions] = improved_policy(root, self._logits if self._priors_seen is root.P else None)
        return pi

    def advance(self, action: int) -> None:
        """A fresh root for the next move (its position: the child's, if the search built it)."""
        root = self.root
        child = None
        if root.expanded:
            hits = np.flatnonzero(root.actions == action)
            child = root.children.get(int(hits[0])) if len(hits) else None
        self.root = Node(child.position if child is not None else root.position.play(action))
        self.gumbel = None
        self._inner_logits = {}
