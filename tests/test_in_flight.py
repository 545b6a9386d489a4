"""Two batches in flight (zero9.search.batched.search_in_flight, RemoteNet.submit/collect): every tree
searches exactly as with one batch, and self-play plays exactly the same games.

Exact equality needs an evaluator whose answer for a position does not depend on when it
is asked: the probe net of tests/test_search_fingerprint.py without random symmetries, and
a cache that never drops an entry. (With random symmetries the draws are split between
the two halves' batches, so the games differ: same search, other noise.) The net here
answers later, like the inference server's RemoteNet: ``submit`` keeps the planes and
``collect`` computes them, so a batch really is in flight while the other half searches.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from helpers import random_planes
from test_inference import saved_net
from test_search_fingerprint import ProbeNet, digest, selfplay_items, tree_items

from zero9.games import make_game
from zero9.learn.selfplay.lockstep import play_games
from zero9.learn.selfplay.pool import WorkerPool, play_selfplay
from zero9.nn.checkpoint import load_net
from zero9.nn.chunks import read_chunk
from zero9.nn.inference import InferenceServer
from zero9.search.batched import search_in_flight, search_trees
from zero9.search.evaluator import NetEvaluator
from zero9.search.puct import Tree
from zero9.settings import SearchConfig, SelfPlayConfig

torch.set_num_threads(1)


class LaterNet(ProbeNet):
    """The probe net with a ticket API: the answer is computed at ``collect``, not at ``submit``."""

    def __init__(self, num_actions: int):
        super().__init__(num_actions)
        self.waiting: dict[int, np.ndarray] = {}
        self.tickets = 0
        self.most_in_flight = 0

    def submit(self, planes: np.ndarray) -> int:
        self.tickets += 1
        self.waiting[self.tickets] = planes.copy()
        self.most_in_flight = max(self.most_in_flight, len(self.waiting))
        return self.tickets

    def collect(self, ticket: int):
        return self.predict(self.waiting.pop(ticket))


def exact_evaluator(game) -> NetEvaluator:
    return NetEvaluator(LaterNet(game.num_actions), cache_size=10**6, random_symmetry=False)


def test_each_tree_searches_as_with_one_batch():
    game = make_game("go", 9)
    starts = [game.play_moves(moves) for moves in (["E5"], ["E5", "C3"], ["D4", "F6", "E5"], [], ["C7"])]

    def trees():
        return [Tree(p, SearchConfig(noise=True), np.random.default_rng(i)) for i, p in enumerate(starts)]

    one, two = trees(), trees()
    for i, tree in enumerate(one + two):
        tree.begin_search(visits=120 + 7 * (i % len(starts)))  # budgets differ: halves end at other steps
    search_trees(one, exact_evaluator(game), leaves_per_tree=4)
    evaluator = exact_evaluator(game)
    assert list(search_in_flight(lambda: two, evaluator, 4, on_step=lambda half: False)) == []
    assert evaluator.net.most_in_flight == 2 and not evaluator.net.waiting
    for a, b in zip(one, two, strict=True):
        assert digest(tree_items(a)) == digest(tree_items(b))


@pytest.mark.parametrize("game_name", ["go", "gomoku", "go-gumbel"])
def test_selfplay_plays_the_same_games_with_two_batches_in_flight(game_name):
    game = make_game("gomoku", 7, connect=4) if game_name == "gomoku" else make_game("go", 9)
    cfg = SelfPlayConfig(visits=24, parallel_games=5, leaves_per_tree=4, seed=5, randomcnt=6,
                         resign_threshold=0.3, resign_min_moves=10, no_resign_share=0.5,
                         full_search_share=0.5, fast_visits=8, opening_moves=4, opening_visits=6,
                         move_cap=60, gumbel=game_name == "go-gumbel", gumbel_actions=8)
    runs = {}
    for in_flight in (1, 2):
        evaluator = exact_evaluator(game)
        records = list(play_games(game, evaluator, 9, dataclasses.replace(cfg, in_flight=in_flight)))
        runs[in_flight] = records
        assert evaluator.net.most_in_flight == (2 if in_flight == 2 else 0)  # one batch: net.predict
    assert [r.index for r in runs[1]] == [r.index for r in runs[2]]  # also the order games end in
    assert digest(selfplay_items(runs[1])) == digest(selfplay_items(runs[2]))
    assert len(runs[2]) == 9


def test_in_flight_must_be_one_or_two():
    with pytest.raises(ValueError, match="in_flight must be 1 or 2, got 3"):
        SelfPlayConfig(in_flight=3)


def test_two_tickets_get_their_own_answers(tmp_path):
    game = make_game("go", 7)
    path = saved_net(tmp_path, game)
    net, _ = load_net(path, device="cpu")
    a, b = random_planes(12, 18, 7, seed=1), random_planes(9, 18, 7, seed=2)
    with InferenceServer(str(path), "cpu", workers=1, max_batch=16) as server:
        remote = server.client(0)
        for order in ((0, 1), (1, 0)):  # collected in the order sent, and the other way round
            tickets = [remote.submit(a), remote.submit(b)]
            with pytest.raises(RuntimeError, match="in flight"):
                remote.submit(a)  # both slots busy
            answers = {i: remote.collect(tickets[i]) for i in order}
            for i, planes in enumerate((a, b)):
                want_probs, want_value = net.predict(planes)
                np.testing.assert_allclose(answers[i][0], want_probs, atol=1e-5)
                np.testing.assert_allclose(answers[i][1], want_value, atol=1e-5)
        with pytest.raises(ValueError, match="above the slot"):
            remote.submit(random_planes(17, 18, 7, seed=3))


def test_selfplay_through_the_server_with_two_batches_in_flight(tmp_path):
    game = make_game("go", 7)
    path = saved_net(tmp_path, game)
    cfg = SelfPlayConfig(visits=12, parallel_games=3, leaves_per_tree=4, seed=2, move_cap=30, in_flight=2)
    stats = play_selfplay(path, 5, cfg, tmp_path / "chunks", None, workers=2, progress=False, threads=1,
                          device="cpu", inference_server=True)
    files = sorted((tmp_path / "chunks").glob("*.npz"))
    assert stats.games == 5 and len(files) == 5
    assert stats.moves == sum(len(read_chunk(f)) for f in files) and stats.evals > 0


def test_a_pool_stopped_mid_search_serves_the_next_round(tmp_path):
    # A round stopped by time leaves one half's batch in flight: the worker collects it before its
    # next job, so the reused pool (autotrain's) starts the next round with both slots free.
    game = make_game("go", 7)
    path = saved_net(tmp_path, game)
    cfg = SelfPlayConfig(visits=12, parallel_games=3, leaves_per_tree=4, seed=2, move_cap=30, in_flight=2)
    server = InferenceServer(str(path), "cpu", workers=2, max_batch=cfg.parallel_games * cfg.leaves_per_tree)
    with WorkerPool(2, 1, inference=server) as pool:
        play_selfplay(path, 2, cfg, tmp_path / "a", None, progress=False, pool=pool)  # workers up
        stopped = play_selfplay(path, 10**6, cfg, tmp_path / "a", None, progress=False, seconds=3, pool=pool)
        assert stopped.evals > 0
        stats = play_selfplay(path, 4, cfg, tmp_path / "b", None, progress=False, pool=pool)
    files = sorted((tmp_path / "b").glob("*.npz"))
    assert stats.games == 4 and len(files) == 4
    assert stats.moves == sum(len(read_chunk(f)) for f in files)
