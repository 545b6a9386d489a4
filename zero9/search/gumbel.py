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
"""

from __future__ import annotations

import math

import numpy as np

from zero9.games import Position
from zero9.search.puct import Node, Tree
from zero9.settings import SearchConfig

C_VISIT = 50.0
C_SCALE = 0.1


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


def completed_q(node: Node, N: np.ndarray | None = None) -> np.ndarray:
    """Q of visited children; the mixed value for the others (node's side to move's view)."""
    N = node.N if N is None else N  # (node.N builds the array: callers that have it pass it)
    visited = N > 0
    total = N.sum()
    if visited.any():
        weighted = float((node.P[visited] * node.q[visited]).sum() / max(node.P[visited].sum(), 1e-12))
        mixed = (node.value + total * weighted) / (total + 1)
    else:
        mixed = node.value
    return np.where(visited, node.q, mixed)  # (q: Q of the tried children)


def sigma(node: Node, q: np.ndarray, N: np.ndarray | None = None) -> np.ndarray:
    """σ(q̂): completed Q rescaled to [0, 1], times (c_visit + max N) · c_scale."""
    N = node.N if N is None else N
    lo, hi = q.min(), q.max()
    q_hat = (q - lo) / max(hi - lo, 1e-8)
    return (C_VISIT + N.max()) * C_SCALE * q_hat


def improved_policy(node: Node, N: np.ndarray | None = None) -> np.ndarray:
    """softmax(logits + σ(completed Q)) over the node's children."""
    N = node.N if N is None else N
    z = np.log(np.maximum(node.P, 1e-30)) + sigma(node, completed_q(node, N), N)
    z = np.exp(z - z.max())
    return z / z.sum()


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

    def begin_search(self, visits: int | None = None, playouts: int | None = None) -> None:
        """Start a move's search, budget and halving schedule (fresh Gumbel noise once the root is ready)."""
        super().begin_search(visits, playouts)
        self.budget = visits if visits is not None else playouts or 0  # (a fresh root: visits = playouts)
        self.gumbel = None

    def _prepare_root(self) -> None:
        root = self.root
        self.gumbel = self.rng.gumbel(size=len(root.actions))
        self.table = considered_visits(min(self.m, len(root.actions)), max(self.budget, 1))

    def select_child(self, node: Node) -> int:
        if node is not self.root:
            N = node.N
            pi = improved_policy(node, N)
            return int((pi - N / (1.0 + N.sum())).argmax())
        if self.gumbel is None or len(self.gumbel) != len(node.actions):
            self._prepare_root()
        k = int(round(node.total))
        N = node.N
        score = self._root_score(N)
        if k < len(self.table):
            score = np.where(N == self.table[k], score, -np.inf)
            if not np.isfinite(score).any():
                score = self._root_score(N)
        return int(score.argmax())

    def _root_score(self, N: np.ndarray) -> np.ndarray:
        root = self.root
        logits = np.log(np.maximum(root.P, 1e-30))
        return self.gumbel + logits + sigma(root, completed_q(root, N), N)

    def choose_action(self, proportional: bool = False) -> int:
        """Among the most visited root actions, the best by g + logits + σ(q̂)."""
        root = self.root
        if not root.expanded or root.total <= 0:
            raise ValueError("choose_action: the root has not been searched")
        if self.gumbel is None or len(self.gumbel) != len(root.actions):
            self._prepare_root()
        N = root.N
        score = np.where(N == N.max(), self._root_score(N), -np.inf)
        return int(root.actions[score.argmax()])

    def policy_target(self, num_actions: int) -> np.ndarray:
        """The completed-Q improved policy at the root, float32 ``[A]``."""
        pi = np.zeros(num_actions, dtype=np.float32)
        if self.root.expanded:
            pi[self.root.actions] = improved_policy(self.root)
        return pi

    def advance(self, action: int) -> None:
        self.root = Node(self.root.position.play(action))
        self.gumbel = None
