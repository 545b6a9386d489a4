"""The batched driver (zero9.search.batched): exactness against the single tree; self-play games on it
(zero9.learn.selfplay.lockstep): their records, resignation and bad options."""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_search import ScoreEvaluator, walk
from zero9.games import BLACK, WHITE, make_game
from zero9.learn.selfplay.lockstep import GameRecord, play_games
from zero9.search.batched import search_trees
from zero9.search.evaluator import UniformEvaluator
from zero9.search.puct import Tree, run_simulations
from zero9.settings import SearchConfig, SelfPlayConfig


def starts(game):
    return [game.play_moves(m) for m in (["E5"], ["C3", "G7"], ["D4", "E5", "F6"], [])]


@pytest.mark.parametrize(
    "config", [SearchConfig(), SearchConfig(noise=True), SearchConfig(fpu_reduction=0.0)]
)
def test_k1_gives_exactly_the_single_tree_visit_counts(config):
    game = make_game("go", 9)
    evaluator = ScoreEvaluator(game)  # deterministic: no symmetry randomness
    singles = []
    for j, pos in enumerate(starts(game)):
        tree = Tree(pos, config, np.random.default_rng(j))
        run_simulations(tree, evaluator, 150)
        singles.append(tree)
    trees = [Tree(pos, config, np.random.default_rng(j)) for j, pos in enumerate(starts(game))]
    for tree in trees:
        tree.begin_search(playouts=150)
    done = search_trees(trees, evaluator, leaves_per_tree=1)
    assert done == 150 * len(trees)
    for a, b in zip(singles, trees, strict=True):
        assert np.array_equal(a.root.actions, b.root.actions)
        assert np.array_equal(a.root.N, b.root.N)
        assert np.allclose(a.root.W, b.root.W)


def test_many_trees_many_leaves_leave_consistent_counts():
    game = make_game("go", 9)
    trees = [Tree(pos, SearchConfig(), np.random.default_rng(7)) for pos in starts(game)]
    calls = []

    class Counting(ScoreEvaluator):
        def evaluate(self, positions):
            calls.append(len(positions))
            return super().evaluate(positions)

    for tree in trees:
        tree.begin_search(visits=200)
    search_trees(trees, Counting(game), leaves_per_tree=8)
    assert max(calls) > 8  # leaves of several trees share a call
    for tree in trees:
        assert tree.visits() == 200
        for node in walk(tree.root):
            assert not node.pending
            if node.expanded:
                assert node.N.sum() == pytest.approx(node.total)
                for i, child in node.children.items():
                    if child.evaluated and not child.terminal:
                        assert node.N[i] == 1 + child.total


def test_each_tree_searches_to_its_own_budget_and_on_step_can_end_the_search():
    game = make_game("go", 9)
    trees = [Tree(pos, SearchConfig(), np.random.default_rng(j)) for j, pos in enumerate(starts(game))]
    for tree, visits in zip(trees, (5, 40, 120, 17), strict=True):
        tree.begin_search(visits=visits)
    steps = []
    search_trees(trees, ScoreEvaluator(game), leaves_per_tree=4, on_step=lambda: steps.append(1))
    assert [tree.visits() for tree in trees] == [5, 40, 120, 17]
    assert len(steps) >= 120 // 4  # the largest budget sets the number of evaluator calls
    for tree in trees:
        tree.begin_search(playouts=50)
    done = search_trees(trees, ScoreEvaluator(game), leaves_per_tree=4, on_step=lambda: True)
    assert done == 4 * len(trees)  # one step, then on_step ended the search


def test_self_play_records():
    game = make_game("gomoku", 7, connect=4)
    config = SelfPlayConfig(
        visits=24,
        parallel_games=3,
        leaves_per_tree=4,
        randomcnt=4,
        seed=1,
        full_search_share=0.5,
        fast_visits=6,
        opening_moves=3,
        no_resign_share=0.5,
    )
    records = list(play_games(game, UniformEvaluator(game), 5, config))
    assert sorted(r.index for r in records) == list(range(5))
    for r in records:
        assert isinstance(r, GameRecord) and r.final.is_terminal()
        assert r.result == r.final.result_string()
        pos = game.new_position()
        for m in r.moves:
            assert m.position.hash == pos.hash
            assert m.policy.dtype == np.float32 and m.policy.shape == (game.num_actions,)
            assert m.policy.sum() == pytest.approx(1.0) and m.policy[m.action] > 0
            assert -1.0 <= m.value <= 1.0
            pos = pos.play(m.action)
        assert any(m.recorded for m in r.moves) or len(r.moves) < 4
        assert any(not m.recorded for m in r.moves)  # fast moves exist at share 0.5


def test_resignation_and_no_resign_games():
    game = make_game("go", 5)

    class Pessimist(UniformEvaluator):  # black always looks lost
        def evaluate(self, positions):
            priors, _ = super().evaluate(positions)
            return priors, np.array([-0.95 if p.to_play == BLACK else 0.95 for p in positions], np.float32)

    config = SelfPlayConfig(
        visits=8,
        parallel_games=4,
        leaves_per_tree=2,
        seed=3,
        resign_threshold=0.1,
        resign_min_moves=2,
        no_resign_share=0.5,
    )
    records = list(play_games(game, Pessimist(game), 8, config))
    resigned = [r for r in records if r.resigned]
    played_out = [r for r in records if r.no_resign]
    assert resigned and played_out
    assert all(r.result.endswith("+R") for r in resigned)
    assert all(r.winner == WHITE for r in resigned)
    assert all(not r.resigned and BLACK in r.would_resign for r in played_out)
    assert all(r.false_resignation in (True, False) for r in played_out)


def test_bad_config_is_refused():
    game = make_game("go", 5)
    with pytest.raises(ValueError, match="visits"):
        list(play_games(game, UniformEvaluator(game), 1, SelfPlayConfig(visits=0)))
