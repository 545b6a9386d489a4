"""The readable PUCT (zero9.search.puct): known answers and the tree's invariants, with real rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

from zero9.games import BLACK, make_game
from zero9.search.evaluator import UniformEvaluator
from zero9.search.puct import Node, Tree, collect_leaves, run_simulations
from zero9.settings import SearchConfig


class ScoreEvaluator:
    """Uniform priors; value = tanh of the Tromp-Taylor score from the side to move's view."""

    def __init__(self, game, scale: float = 3.0):
        self.game, self.scale = game, scale

    def evaluate(self, positions):
        priors = np.full((len(positions), self.game.num_actions), 1.0 / self.game.num_actions, np.float32)
        values = [math.tanh(p.score() / self.scale) * (1 if p.to_play == BLACK else -1) for p in positions]
        return priors, np.array(values, np.float32)


def gomoku_position(moves):
    game = make_game("gomoku", 8, connect=5)
    pos = game.new_position()
    for m in moves:
        pos = pos.play(m)
    return pos


def search(position, evaluator, playouts, **config):
    tree = Tree(position, SearchConfig(**config), np.random.default_rng(0))
    run_simulations(tree, evaluator, playouts)
    return tree


def walk(node: Node):
    yield node
    for child in node.children.values():
        yield from walk(child)


# --- known answers ----------------------------------------------------------------------------


def test_gomoku_completes_own_four():
    # Black B4..E4 (points 25..28), white scattered; black wins at A4 (24) or F4 (29).
    pos = gomoku_position([25, 50, 26, 53, 27, 9, 28, 62])
    tree = search(pos, UniformEvaluator(pos.game), 800)
    assert tree.choose_action() in (24, 29)
    assert tree.root.q_value() > 0.5  # the win is found, not guessed


def test_gomoku_blocks_the_opponents_four():
    # White B6..E6 (41..44), its left end A6 (40) blocked by black: black must take F6 (45).
    # A uniform prior says nothing, so no first-play reduction: with one, a node keeps revisiting its
    # few tried replies (all valued 0) and the refutation of a non-blocking move is found far later.
    pos = gomoku_position([40, 41, 3, 42, 14, 43, 0, 44])
    tree = search(pos, UniformEvaluator(pos.game), 3000, fpu_reduction=0.0)
    assert tree.choose_action() == 45


def test_go_captures_the_stones_in_atari_that_decide_the_game():
    # 5x5: white A2 B2 B1 has one liberty, A1; komi makes black lose unless it captures.
    game = make_game("go", 5, komi=2.5)  # black loses by 3.5 unless it captures, then wins by 4.5
    b = [game.vertex_to_action(v) for v in ("A3", "B3", "C3", "C2", "C1")]
    w = [game.vertex_to_action(v) for v in ("A2", "B2", "B1", "E5", "D5")]
    pos = game.new_position()
    for x, y in zip(b, w, strict=True):
        pos = pos.play(x).play(y)
    tree = search(pos, ScoreEvaluator(game), 600)
    assert game.action_to_vertex(tree.choose_action()) == "A1"


def test_go_does_not_fill_its_own_eye():
    # 5x5 all black but two single-point eyes A1 and C1: filling either lets white capture everything.
    game = make_game("go", 5, komi=7.5)
    eyes = {game.vertex_to_action("A1"), game.vertex_to_action("C1")}
    pos = game.new_position()
    for p in range(25):
        if p not in eyes:
            pos = pos.play(p).play(game.pass_action)
    assert pos.to_play == BLACK
    tree = search(pos, ScoreEvaluator(game), 400)
    assert tree.choose_action() not in eyes


# --- invariants --------------------------------------------------------------------------------


@pytest.fixture
def go9():
    return make_game("go", 9)


def test_visits_sum_to_simulations_and_q_in_range(go9):
    pos = go9.play_moves(["E5", "D4", "C3"])
    tree = Tree(pos, SearchConfig(), np.random.default_rng(1))
    done = run_simulations(tree, ScoreEvaluator(go9), 500, batch_size=8)
    assert done == 500 == tree.visits() == tree.root.N.sum()
    for node in walk(tree.root):
        if node.expanded:
            assert np.all(node.Q >= -1.0) and np.all(node.Q <= 1.0)
            assert node.N.sum() == pytest.approx(node.total)


def test_virtual_loss_never_leaks(go9):
    pos = go9.play_moves(["E5", "D4"])
    tree = Tree(pos, SearchConfig(virtual_loss=3.0), np.random.default_rng(2))
    run_simulations(tree, ScoreEvaluator(go9), 700, batch_size=16)
    assert tree.collisions >= 0
    for node in walk(tree.root):
        assert not node.pending
        if not node.expanded:
            continue
        assert np.all(node.N == np.round(node.N)) and np.all(node.N >= 0)
        for i, child in node.children.items():
            if child.evaluated and not child.terminal:
                # every visit of the edge evaluated the child once or went through it
                assert node.N[i] == 1 + child.total
                below = child.W.sum() if child.expanded else 0.0  # arrays only once gone through
                assert node.W[i] == pytest.approx(-(child.value + below))
            else:
                assert node.N[i] == (0 if not child.terminal else node.N[i])


def test_batches_without_virtual_loss_collide_but_keep_exact_counts(go9):
    # K > 1 and no virtual loss: the second selection finds the first leaf in flight (a collision).
    tree = Tree(go9.play_moves(["E5"]), SearchConfig(virtual_loss=0.0), np.random.default_rng(6))
    done = run_simulations(tree, ScoreEvaluator(go9), 200, batch_size=4)
    assert done == 200 == tree.visits() and tree.collisions > 0
    for node in walk(tree.root):
        assert not node.pending
        if node.expanded:
            assert node.N.sum() == pytest.approx(node.total)
            tried = node.P[node.N > 0].sum()
            assert node.tried_prior == pytest.approx(tried)


def test_tree_reuse_keeps_the_subtree(go9):
    tree = Tree(go9.new_position(), SearchConfig(), np.random.default_rng(3))
    run_simulations(tree, UniformEvaluator(go9), 400)
    action = tree.choose_action()
    i = int(np.flatnonzero(tree.root.actions == action)[0])
    child, visits = tree.root.children[i], tree.root.N[i]
    counts = child.N.copy()
    tree.advance(action)
    assert tree.root is child
    assert tree.visits() == visits - 1  # the edge's first visit expanded the child itself
    assert np.array_equal(tree.root.N, counts)
    run_simulations(tree, UniformEvaluator(go9), 50)
    assert tree.visits() == visits - 1 + 50


def test_noise_only_when_asked(go9):
    pos = go9.new_position()
    quiet = Tree(pos, SearchConfig(noise=False), np.random.default_rng(4))
    run_simulations(quiet, UniformEvaluator(go9), 10)
    assert np.allclose(quiet.root.P, 1.0 / 82)
    noisy = Tree(pos, SearchConfig(noise=True), np.random.default_rng(4))
    run_simulations(noisy, UniformEvaluator(go9), 10)
    assert not np.allclose(noisy.root.P, 1.0 / 82)
    assert noisy.root.P.sum() == pytest.approx(1.0)
    # re-noised when the tree is reused: the new root's priors were plain before advance
    action = noisy.choose_action()
    noisy.advance(action)
    if noisy.root.expanded:
        assert noisy.root.raw_prior is not None and not np.allclose(noisy.root.P, noisy.root.raw_prior)


def test_terminal_leaves_are_scored_by_the_rules_not_the_evaluator():
    class Liar:
        def evaluate(self, positions):
            raise AssertionError("terminal positions must not reach the evaluator")

    pos = gomoku_position([25, 50, 26, 53, 27, 9, 28, 62]).play(24)  # black has five
    tree = Tree(pos)
    leaves = collect_leaves(tree, 4)
    assert leaves == [] and tree.root.terminal and tree.root.value == -1.0  # white to move has lost
    run_simulations(tree, Liar(), 5)


def test_proportional_choice(go9):
    tree = Tree(go9.new_position(), SearchConfig(), np.random.default_rng(5))
    run_simulations(tree, ScoreEvaluator(go9), 300)
    legal = set(go9.new_position().legal_moves())
    picks = {tree.choose_action(proportional=True) for _ in range(50)}
    assert picks <= legal and len(picks) > 1


def puct_argmax(tree: Tree, node: Node) -> int:
    """The PUCT formula written out in full, lowest index on ties (numpy's argmax)."""
    c_sqrt = tree.config.c_puct * math.sqrt(max(node.total, 1.0))
    return int(np.argmax(node.Q + c_sqrt * node.P / (1.0 + node.N)))


@pytest.mark.parametrize("fpu_value", [None, 0.0])
def test_select_child_is_the_full_puct_argmax_at_every_node(go9, fpu_value):
    # Non-uniform priors with exact ties: the full formula with numpy's lowest-index tie-break at every
    # node, untried ones included (a guard for shortcuts such as taking argmax P there).
    rng = np.random.default_rng(3)
    prior = np.round(rng.random(go9.num_actions), 1).astype(np.float32) + np.float32(0.01)

    class Lumpy(ScoreEvaluator):
        def evaluate(self, positions):
            _, values = super().evaluate(positions)
            return np.tile(prior, (len(positions), 1)), values

    tree = Tree(go9.play_moves(["E5", "D4"]), SearchConfig(fpu_value=fpu_value), np.random.default_rng(4))
    run_simulations(tree, Lumpy(go9), 300, batch_size=4)
    checked = untried = 0
    for node in walk(tree.root):
        if node.evaluated and not node.expanded:
            node.expand(tree.config.fpu_value)  # a leaf's arrays, as the next simulation through builds them
        if node.expanded and len(node.actions) and not node.terminal:
            assert tree.select_child(node) == puct_argmax(tree, node)
            assert node.P.dtype == np.float32 and np.array_equal(node.U0, node.P / (1.0 + node.N))
            checked += 1
            untried += node.total == 0
    assert checked > 50 and untried > 10
