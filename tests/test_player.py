"""SearchPlayer (zero9.search.player) and the evaluators (zero9.search.evaluator), on a real tiny net."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import torch

from tests.test_search import ScoreEvaluator
from zero9.games import BLACK, make_game
from zero9.nn import features
from zero9.nn.net import ZeroNet
from zero9.search.evaluator import NetEvaluator, UniformEvaluator, history_key
from zero9.search.player import Decision, MoveStats, SearchPlayer, lcb_choice
from zero9.search.puct import Tree, run_simulations
from zero9.settings import PlayConfig, SearchConfig


@pytest.fixture
def go9():
    return make_game("go", 9)


def tiny_net(game):
    torch.manual_seed(0)
    return ZeroNet(features.num_planes(game), game.size, game.num_actions, 1, 8)


def test_choose_gives_a_decision_with_stats(go9):
    player = SearchPlayer(go9, UniformEvaluator(go9), PlayConfig(visits=120), seed=1)
    pos = go9.play_moves(["E5"])
    d = player.choose(pos)
    assert isinstance(d, Decision) and d.action in pos.legal_moves() and not d.resign
    assert d.visits == 120 and 0.0 <= d.winrate <= 1.0
    assert all(isinstance(s, MoveStats) for s in d.stats)
    visits = [s.visits for s in d.stats]
    assert visits == sorted(visits, reverse=True) and sum(visits) == 120
    assert d.stats[0].pv[0] == d.stats[0].action and d.stats[0].vertex == go9.action_to_vertex(
        d.stats[0].action
    )
    text = player.text_stats(5)
    assert text.splitlines()[0].split()[:7] == ["move", "N", "P", "Q", "U", "Q+U", "V"]
    assert len(text.splitlines()) == 6


def test_tree_reuse_across_moves_and_rebuilt_positions(go9):
    player = SearchPlayer(go9, UniformEvaluator(go9), PlayConfig(visits=200), seed=2)
    pos = go9.new_position()
    d = player.choose(pos)
    reply = next(a for a in pos.play(d.action).legal_moves() if a != d.action)
    child_visits = player.trees[0].root.children  # subtree below the played move
    assert child_visits
    rebuilt = go9.play_moves([d.action, reply])  # a GTP-style replay: new objects, same history
    before = player.trees[0].root
    player._sync(rebuilt)
    assert player.trees[0].root is not before
    assert player.trees[0].root.position is rebuilt
    d2 = player.choose(rebuilt)
    assert d2.visits == 200


def test_noise_is_off_unless_asked(go9):
    player = SearchPlayer(go9, UniformEvaluator(go9), PlayConfig(visits=30), seed=3)
    player.choose(go9.new_position())
    assert np.allclose(player.trees[0].root.P, 1 / 82)
    player.set_option("noise", "on")
    player.reset()
    player.choose(go9.new_position())
    assert not np.allclose(player.trees[0].root.P, 1 / 82)


def test_resigns_when_lost_and_only_after_enough_moves():
    game = make_game("go", 5)

    class BlackLoses(UniformEvaluator):
        def evaluate(self, positions):
            priors, _ = super().evaluate(positions)
            return priors, np.array([-0.9 if p.to_play == BLACK else 0.9 for p in positions], np.float32)

    play = PlayConfig(visits=60, resign_threshold=0.1, resign_min_visits=10)
    player = SearchPlayer(game, BlackLoses(game), play)
    early = game.new_position()
    assert player.choose(early).resign is False  # before a quarter of the board is played
    late = game.play_moves(["A1", "E5", "B1", "D5", "C1", "C5", "D1", "B5"])
    assert player.genmove(late) is None
    player.set_option("resign", -1)
    assert player.genmove(late) in late.legal_moves()


def test_stop_returns_promptly_with_a_move(go9):
    player = SearchPlayer(go9, UniformEvaluator(go9), PlayConfig(visits=None, time_per_move=60.0), seed=4)
    threading.Timer(0.3, player.stop).start()
    start = time.monotonic()
    d = player.choose(go9.new_position())
    assert time.monotonic() - start < 30 and d.action in go9.new_position().legal_moves() and d.visits > 0


def test_analyze_reports_until_max_visits_or_stop(go9):
    player = SearchPlayer(go9, UniformEvaluator(go9), seed=5)
    seen: list[list[MoveStats]] = []
    player.analyze(go9.new_position(), seen.append, 0.0, threading.Event(), max_visits=150)
    assert seen and sum(s.visits for s in seen[-1]) == 150
    stop = threading.Event()
    runner = threading.Thread(target=player.analyze, args=(go9.new_position(), seen.append, 0.05, stop))
    runner.start()
    time.sleep(0.3)
    stop.set()
    runner.join(10)
    assert not runner.is_alive()


def test_set_option_and_bad_values(go9):
    player = SearchPlayer(go9, UniformEvaluator(go9))
    player.set_option("visits", 50)
    player.set_option("time", 2.5)
    player.set_option("randomcnt", 3)
    assert (player.play.visits, player.play.time_per_move, player.play.randomcnt) == (50, 2.5, 3)
    with pytest.raises(ValueError, match="unknown option"):
        player.set_option("bogus", 1)
    with pytest.raises(ValueError, match="visits"):
        SearchPlayer(go9, UniformEvaluator(go9), PlayConfig(visits=0))
    with pytest.raises(ValueError, match="game is over"):
        player.choose(go9.play_moves(["pass", "pass"]))


def test_lcb_choice_is_a_well_visited_legal_move(go9):
    tree = Tree(go9.new_position(), SearchConfig(), np.random.default_rng(5))
    run_simulations(tree, ScoreEvaluator(go9), 300)
    move = lcb_choice(tree.root)
    assert move in set(go9.new_position().legal_moves())
    N = tree.root.N
    assert N[np.flatnonzero(tree.root.actions == move)[0]] >= max(2.0, 0.1 * N.max())


def test_root_parallel_votes_a_legal_move(go9):
    play = PlayConfig(visits=60, root_parallel=3, batch_size=2)
    player = SearchPlayer(go9, UniformEvaluator(go9), play, seed=6)
    d = player.choose(go9.play_moves(["E5"]))
    assert len(player.trees) == 3 and d.visits == 180
    assert d.action in go9.play_moves(["E5"]).legal_moves()


def test_net_evaluator_symmetry_cache_and_history_key(go9):
    net = tiny_net(go9)
    pos = go9.play_moves(["C3", "E5", "G7"])
    plain = NetEvaluator(net, random_symmetry=False)
    p0, v0 = plain.evaluate([pos])
    assert p0.shape == (1, 82) and p0.sum() == pytest.approx(1.0, abs=1e-5) and -1 <= v0[0] <= 1
    sym = NetEvaluator(net, cache_size=0, rng=np.random.default_rng(0))
    p1, v1 = sym.evaluate([pos] * 4)  # repeated leaves in one batch: one net row
    assert p1.shape == (4, 82) and np.allclose(p1.sum(axis=1), 1.0, atol=1e-5)
    assert sym.calls == 1 and (p1 == p1[0]).all() and (v1 == v1[0]).all()
    plain.evaluate([pos])
    assert plain.cache_hits == 1 and plain.calls == 1
    # same stones, different history: different keys
    a = go9.play_moves(["C3", "E5", "G7", "D4"])
    b = go9.play_moves(["G7", "E5", "C3", "D4"])
    assert a.hash == b.hash and history_key(a) != history_key(b)
    small = NetEvaluator(net, cache_size=2, random_symmetry=False)
    small.evaluate([go9.play_moves([m]) for m in ("A1", "B1", "C1")])
    assert list(small._cache) == [history_key(go9.play_moves([m])) for m in ("B1", "C1")]  # the newest two


def test_net_player_plays_with_batches(go9):
    player = SearchPlayer(go9, NetEvaluator(tiny_net(go9)), PlayConfig(visits=40, batch_size=8), seed=7)
    assert player.genmove(go9.new_position()) in go9.new_position().legal_moves()
    pol = player.policy(go9.new_position())
    assert pol.shape == (82,) and pol.sum() == pytest.approx(1.0, abs=1e-5)
    assert -1 <= player.value(go9.new_position()) <= 1
