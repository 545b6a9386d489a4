"""Pure MCTS with random rollouts (zero9.search.mcts_pure): the yardstick player, with real rules."""

from __future__ import annotations

import random

import numpy as np

from zero9.games import make_game
from zero9.search.mcts_pure import RolloutEvaluator, random_rollout, rollout_player


def test_rollout_values_are_results():
    rng = random.Random(0)
    for game in (make_game("go", 5), make_game("gomoku", 7, connect=4)):
        values = {random_rollout(game.new_position(), rng) for _ in range(20)}
        assert values <= {-1.0, 0.0, 1.0} and len(values) >= 1


def test_rollout_evaluator_shapes():
    game = make_game("go", 5)
    priors, values = RolloutEvaluator(game, seed=1).evaluate([game.new_position()] * 3)
    assert priors.shape == (3, game.num_actions) and np.allclose(priors.sum(axis=1), 1.0)
    assert values.shape == (3,) and values.dtype == np.float32


def test_pure_mcts_completes_its_four():
    game = make_game("gomoku", 8, connect=5)
    pos = game.play_moves([25, 50, 26, 53, 27, 9, 28, 62])  # black B4..E4
    player = rollout_player(
        game, playouts=1500, seed=3
    )  # random rollouts are noisy: the ladder starts at 1000
    assert player.genmove(pos) in (24, 29)


def test_pure_mcts_beats_random_play_at_gomoku():
    game = make_game("gomoku", 6, connect=4)
    player = rollout_player(game, playouts=150, seed=4)
    rng = random.Random(5)
    wins = 0
    for g in range(2):
        pos = game.new_position()
        mcts_colour = 1 + g % 2
        while not pos.is_terminal():
            move = player.genmove(pos) if pos.to_play == mcts_colour else rng.choice(pos.legal_moves())
            pos = pos.play(move)
        wins += pos.winner() == mcts_colour
    assert wins == 2
