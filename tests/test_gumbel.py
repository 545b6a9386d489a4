"""Gumbel root search (zero9.search.gumbel): the halving schedule, the targets, and a known answer."""

from __future__ import annotations

import numpy as np
import pytest

from zero9.games import make_game
from zero9.learn.selfplay.lockstep import play_games
from zero9.search.evaluator import UniformEvaluator
from zero9.search.gumbel import GumbelTree, considered_visits, improved_policy
from zero9.search.puct import run_simulations
from zero9.settings import SelfPlayConfig


def test_considered_visits_is_sequential_halving():
    assert considered_visits(4, 8) == [0, 0, 0, 0, 1, 1, 2, 2]
    assert considered_visits(1, 3) == [0, 1, 2]
    seq = considered_visits(16, 64)
    assert len(seq) == 64 and seq[:16] == [0] * 16


def test_root_visits_follow_the_schedule_and_targets_are_distributions():
    game = make_game("go", 9)
    tree = GumbelTree(game.new_position(), rng=np.random.default_rng(0), num_actions=4)
    tree.begin_search(8)
    run_simulations(tree, UniformEvaluator(game), 8)
    assert sorted(tree.root.N.tolist(), reverse=True)[:4] == [3, 3, 1, 1]
    assert tree.root.N.sum() == 8
    pi = tree.policy_target(game.num_actions)
    assert pi.dtype == np.float32 and pi.sum() == pytest.approx(1.0)
    assert np.all(pi[np.setdiff1d(np.arange(game.num_actions), tree.root.actions)] == 0)
    action = tree.choose_action()
    assert tree.root.N[np.flatnonzero(tree.root.actions == action)[0]] == 3
    assert improved_policy(tree.root).sum() == pytest.approx(1.0)


def test_gumbel_finds_the_winning_move():
    game = make_game("gomoku", 8, connect=5)
    pos = game.play_moves([25, 50, 26, 53, 27, 9, 28, 62])  # black B4..E4: A4 or F4 wins
    tree = GumbelTree(pos, rng=np.random.default_rng(1), num_actions=64)
    tree.begin_search(200)
    run_simulations(tree, UniformEvaluator(game), 200)
    assert tree.choose_action() in (24, 29)
    pi = tree.policy_target(game.num_actions)
    assert pi[24] + pi[29] > 0.5  # the improved policy moves mass onto the win


def test_gumbel_self_play_records():
    game = make_game("gomoku", 7, connect=4)
    config = SelfPlayConfig(visits=8, parallel_games=2, leaves_per_tree=1, gumbel=True, gumbel_actions=4,
                            seed=2)
    records = list(play_games(game, UniformEvaluator(game), 2, config))
    assert len(records) == 2
    for r in records:
        assert r.final.is_terminal()
        for m in r.moves:
            assert m.policy.sum() == pytest.approx(1.0) and m.visits == 8


def test_bad_m_is_refused():
    game = make_game("go", 5)
    with pytest.raises(ValueError, match="num_actions"):
        GumbelTree(game.new_position(), num_actions=0)
