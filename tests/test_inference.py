"""The inference server (zero9.nn.inference) on the CPU: same answers as the net, real processes."""

from __future__ import annotations

import numpy as np
import torch
from helpers import random_planes, randomise_bn

from zero9.games import make_game
from zero9.learn.selfplay import play_selfplay
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
