"""The inference server (zero9.nn.inference) on the CPU: same answers as the net, real processes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import random_planes, randomise_bn

from zero9.games import make_game
from zero9.learn.selfplay.pool import play_selfplay
from zero9.nn.checkpoint import load_net, save_checkpoint
from zero9.nn.chunks import read_chunk
from zero9.nn.inference import InferenceServer
from zero9.nn.net import make_net
from zero9.settings import SelfPlayConfig

torch.set_num_threads(1)


def saved_net(tmp_path, game):
    torch.manual_seed(0)
    net = make_net(game, blocks=1, filters=8)
    randomise_bn(net)
    save_checkpoint(tmp_path / "net.pt", net, {"game": game.to_dict()})
    return tmp_path / "net.pt"


def test_remote_predictions_equal_the_nets_own(tmp_path):
    game = make_game("go", 7)
    path = saved_net(tmp_path, game)
    net, _ = load_net(path, device="cpu")
    planes = random_planes(40, 18, 7, seed=3)
    want_probs, want_value = net.predict(planes)
    with InferenceServer(str(path), "cpu", workers=2, max_batch=16) as server:
        for worker in (0, 1):
            probs, value = server.client(worker).predict(planes)  # 40 > 16: sent in three parts
            np.testing.assert_allclose(probs, want_probs, atol=1e-5)
            np.testing.assert_allclose(value, want_value, atol=1e-5)
        assert server.stats()["positions"] == 80


def test_selfplay_through_the_server_writes_every_game(tmp_path):
    game = make_game("gomoku", 6, connect=4)
    path = saved_net(tmp_path, game)
    cfg = SelfPlayConfig(visits=8, parallel_games=2, leaves_per_tree=4, seed=1)
    stats = play_selfplay(path, 4, cfg, tmp_path / "chunks", None, workers=2, progress=False, threads=1,
                          device="cpu", inference_server=True)
    files = sorted((tmp_path / "chunks").glob("*.npz"))
    assert stats.games == 4 and len(files) == 4
    assert stats.moves == sum(len(read_chunk(f)) for f in files) and stats.evals > 0


def test_the_server_turns_each_position_by_its_symmetry_as_the_worker_would(tmp_path):
    """The evaluator's random symmetries applied (and the policies turned back) by the server equal the
    worker's own turning, for positions (the Python search) and for the fast path's encoded leaves."""
    from zero9.search import fastpath
    from zero9.search.evaluator import NetEvaluator

    game = make_game("go", 7)
    path = saved_net(tmp_path, game)
    net, _ = load_net(path, device="cpu")
    rng = np.random.default_rng(5)
    positions, p = [], game.new_position()
    for _ in range(24):
        p = p.play(int(rng.choice(p.legal_actions())))
        positions.append(p)
    with InferenceServer(str(path), "cpu", workers=1, max_batch=64) as server:
        remote = server.client(0)
        here, there = (NetEvaluator(n, cache_size=0, rng=np.random.default_rng(9)) for n in (net, remote))
        want, got = here.evaluate(positions), there.evaluate(positions)
        other = NetEvaluator(remote, cache_size=0, rng=np.random.default_rng(9))
        asked = other.submit(positions)
        assert asked.turned_by_net and len(set(asked.syms.tolist())) > 4  # the server did turn them
        np.testing.assert_allclose(other.collect(asked)[0], want[0], atol=1e-5)
        np.testing.assert_allclose(got[0], want[0], atol=1e-5)
        np.testing.assert_allclose(got[1], want[1], atol=1e-5)
        if fastpath.numba_available():
            from zero9.search import native
            from zero9.settings import SearchConfig

            forest = native.Forest(game, SearchConfig(), 4)
            for g in range(4):
                forest.plant(g, positions[5 * g], SearchConfig(), np.random.default_rng(g))
            batch = forest.select(range(4), 1)
            want, got = here.evaluate_encoded(batch), there.evaluate_encoded(batch)
            np.testing.assert_allclose(got[0], want[0], atol=1e-5)
            np.testing.assert_allclose(got[1], want[1], atol=1e-5)


def test_a_batch_runs_in_the_smallest_bucket_that_holds_it():
    """The CUDA forward's buckets (the GPU is not here; scripts/device/check_server.py runs the server
    there against the CPU net)."""
    from zero9.nn.graphed import bucket_for

    assert [bucket_for(n, (4, 8, 16)) for n in (1, 4, 5, 8, 9, 16)] == [4, 4, 8, 8, 16, 16]
    with pytest.raises(ValueError, match="above the largest bucket"):
        bucket_for(17, (4, 8, 16))
