"""Gumbel search's selection is the textbook numpy formulas, bit for bit.

:mod:`zero9.search.gumbel` computes σ(q̂) in Python over the visited children and takes
shortcuts (the best unvisited root action without σ, an unvisited inner node's argmax
straight from its logits). Here every selection, move and policy target of seeded
searches is checked against the plain vectorised formulas (mctx's, as the module
docstring writes them) on full arrays, with priors, values and Gumbel noise rounded to a
coarse grid so that exact ties are common, and some of them nudged by one unit in the
last place so that near ties are too (which rounding may or may not merge).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from zero9.games import make_game
from zero9.search import gumbel
from zero9.search.gumbel import C_SCALE, C_VISIT, GumbelTree
from zero9.search.puct import run_simulations
from zero9.settings import SearchConfig


def log(p: np.ndarray) -> np.ndarray:
    """log P (at least 1e-30), element by element by the C library (numpy's vectorised log rounds
    differently on different CPUs; the search takes the C library's, as its native twin does)."""
    return np.array([math.log(max(x, 1e-30)) for x in p.tolist()])


def exp(z: np.ndarray) -> np.ndarray:
    return np.array([math.exp(x) for x in z.tolist()])


def reference_improved_policy(node) -> np.ndarray:
    N = np.array(node.n)
    visited = N > 0
    total = N.sum()
    if visited.any():
        weighted = float((node.P[visited] * node.q[visited]).sum() / max(node.P[visited].sum(), 1e-12))
        mixed = (node.value + total * weighted) / (total + 1)
    else:
        mixed = node.value
    q = np.where(visited, node.q, mixed)  # completed Q
    q_hat = (q - q.min()) / max(q.max() - q.min(), 1e-8)
    sigma = (C_VISIT + N.max()) * C_SCALE * q_hat
    z = log(node.P) + sigma
    z = exp(z - z.max())
    return z / z.sum()


def reference_root_score(tree) -> np.ndarray:
    root = tree.root
    N = np.array(root.n)
    pi_parts = log(root.P)
    visited = N > 0
    total = N.sum()
    if visited.any():
        weighted = float((root.P[visited] * root.q[visited]).sum() / max(root.P[visited].sum(), 1e-12))
        mixed = (root.value + total * weighted) / (total + 1)
    else:
        mixed = root.value
    q = np.where(visited, root.q, mixed)
    q_hat = (q - q.min()) / max(q.max() - q.min(), 1e-8)
    return tree.gumbel + pi_parts + (C_VISIT + N.max()) * C_SCALE * q_hat


def reference_select(tree, node) -> int:
    N = np.array(node.n)
    if node is not tree.root:
        return int((reference_improved_policy(node) - N / (1.0 + N.sum())).argmax())
    k = int(round(node.total))
    score = reference_root_score(tree)
    if k < len(tree.table):
        masked = np.where(N == tree.table[k], score, -np.inf)
        if np.isfinite(masked).any():
            score = masked
    return int(score.argmax())


class CoarseEvaluator:
    """Priors and values on a coarse grid (exact ties), every third prior one unit in the last place
    higher (near ties), from a position's hash; float32 or float64."""

    def __init__(self, game, dtype):
        self.game, self.dtype = game, dtype

    def evaluate(self, positions):
        priors = np.empty((len(positions), self.game.num_actions), self.dtype)
        values = np.empty(len(positions), np.float32)
        for b, pos in enumerate(positions):
            weights = 1.0 + (np.arange(self.game.num_actions) * (pos.hash % 7 + 1)) % 5
            priors[b] = weights / weights.sum()
            priors[b, ::3] = np.nextafter(priors[b, ::3], self.dtype(1))
            values[b] = (pos.hash % 5 - 2) / 4
        return priors, values


class CoarseGumbel:
    """A generator whose Gumbel draws are rounded to whole numbers (ties in g + logits), every other
    one nudged one unit in the last place down (near ties)."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def gumbel(self, size):
        g = np.round(self.rng.gumbel(size=size))
        g[1::2] = np.nextafter(g[1::2], -np.inf)
        return g


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("virtual_loss,batch", [(1.0, 4), (0.0, 1), (3.0, 8)])
def test_selection_matches_the_numpy_formulas(monkeypatch, dtype, virtual_loss, batch):
    checked = {"root": 0, "inner": 0}
    select = GumbelTree.select_child

    def checked_select(tree, node):
        expected = reference_select(tree, node) if tree.gumbel is not None or node is not tree.root else None
        chosen = select(tree, node)
        if expected is None:  # the root's first selection draws the noise
            expected = reference_select(tree, node)
        assert chosen == expected
        checked["root" if node is tree.root else "inner"] += 1
        return chosen

    monkeypatch.setattr(GumbelTree, "select_child", checked_select)
    monkeypatch.setattr(gumbel, "_ULPS", 2.0**-50 if virtual_loss else 1.0)  # 1.0: σ always needed
    for game, m, visits in ((make_game("go", 9), 16, 48), (make_game("gomoku", 7, connect=4), 64, 120)):
        evaluator = CoarseEvaluator(game, dtype)
        position = game.new_position()
        for move in range(6):
            rng = CoarseGumbel(move) if move % 2 else np.random.default_rng(move)
            tree = GumbelTree(position, SearchConfig(virtual_loss=virtual_loss), rng, num_actions=m)
            tree.begin_search(visits)
            run_simulations(tree, evaluator, visits, batch_size=batch)
            N = np.array(tree.root.n)
            expected = int(np.where(N == N.max(), reference_root_score(tree), -np.inf).argmax())
            action = tree.choose_action()
            assert action == tree.root.actions[expected]
            target = tree.policy_target(game.num_actions)
            reference = np.zeros(game.num_actions, np.float32)
            reference[tree.root.actions] = reference_improved_policy(tree.root)
            assert target.tobytes() == reference.tobytes()
            position = position.play(action)
    assert checked["root"] > 500 and checked["inner"] > 200
