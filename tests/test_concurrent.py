"""The pieces of the concurrent autotrain and of the score head, each on the CPU in seconds.

The whole loop's faults are in tests/test_durability_concurrent.py; here: the score head's
target and its logged errors, a score head added to a trained net by ``--init-from``, one
inference server per device with the workers in blocks, and a concurrent run whose records,
nets and logs add up.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from helpers import random_planes, randomise_bn
from test_durability import ENV, TINY

from zero9.games import make_game
from zero9.learn.loop.nets import transplant_tower
from zero9.learn.rundir import RunDir
from zero9.learn.training.losses import compute_losses, score_target
from zero9.nn.checkpoint import load_net, save_checkpoint
from zero9.nn.heads import make_net
from zero9.nn.inference import ServerGroup
from zero9.settings import TrainOptions
from zero9.util.files import read_jsonl

torch.set_num_threads(1)


def test_score_target_is_the_ownership_sum_with_komi_from_the_side_to_moves_view():
    own = torch.zeros(2, 81)
    own[:, :44] = 1.0  # the side to move owns 44 points, the opponent 37
    own[:, 44:] = -1.0
    komi = torch.tensor([-7.5, 7.5])  # Black to move gives komi; White to move receives it
    lead = score_target(own, komi) * 81
    assert lead.tolist() == pytest.approx([44 - 37 - 7.5, 44 - 37 + 7.5])


def test_a_score_head_learns_beside_ownership_and_logs_both_estimates():
    game = make_game("go", 7)
    torch.manual_seed(0)
    net = make_net(game, blocks=1, filters=8, ownership=True, score=True)
    planes = torch.from_numpy(random_planes(16, 18, 7, seed=1))
    out = net(planes)
    assert len(out) == 4 and out[3].shape == (16,)
    policy = torch.softmax(torch.randn(16, 50), 1)
    value, own = torch.randn(16).clamp(-1, 1), torch.randint(-1, 2, (16, 49)).float()
    komi = torch.where(torch.arange(16) % 2 == 0, -7.5, 7.5)
    terms = compute_losses(net, planes, policy, value, own, TrainOptions(), komi)
    assert {"score_loss", "score_error", "ownership_sum_error"} <= set(terms)
    want = (out[3] - score_target(own, komi)).abs().mean() * 49
    assert float(terms["score_error"]) == pytest.approx(float(want), rel=1e-5)
    with pytest.raises(ValueError, match="ownership"):
        make_net(game, blocks=1, filters=8, score=True)


def test_init_from_a_net_without_a_score_head_copies_everything_else(tmp_path, caplog):
    game = make_game("go", 7)
    torch.manual_seed(0)
    source = make_net(game, blocks=1, filters=8, ownership=True)
    randomise_bn(source)
    save_checkpoint(tmp_path / "src.pt", source, {"game": game.to_dict()})
    net = make_net(game, blocks=1, filters=8, ownership=True, score=True)
    with caplog.at_level("INFO", logger="zero9"):
        transplant_tower(net, str(tmp_path / "src.pt"))
    assert "new: score_fc" in caplog.text
    for key, value in source.state_dict().items():
        assert torch.equal(net.state_dict()[key], value), key
    save_checkpoint(tmp_path / "scored.pt", net, {"game": game.to_dict()})
    loaded, _ = load_net(tmp_path / "scored.pt", device="cpu")
    assert loaded.config["score"] and loaded.score_fc is not None


def test_a_server_group_puts_the_workers_in_blocks_and_answers_as_the_net(tmp_path):
    game = make_game("go", 7)
    torch.manual_seed(0)
    net = make_net(game, blocks=1, filters=8)
    randomise_bn(net)
    save_checkpoint(tmp_path / "net.pt", net, {"game": game.to_dict()})
    net, _ = load_net(tmp_path / "net.pt", device="cpu")
    planes = random_planes(12, 18, 7, seed=2)
    want_probs, want_value = net.predict(planes)
    with ServerGroup(str(tmp_path / "net.pt"), ["cpu", "cpu"], workers=5, max_batch=16) as group:
        assert group.owner == [0, 0, 0, 1, 1] and group.index == [0, 1, 2, 0, 1]
        for worker in range(5):
            probs, value = group.client(worker).predict(planes)
            np.testing.assert_allclose(probs, want_probs, atol=1e-5)
            np.testing.assert_allclose(value, want_value, atol=1e-5)
        assert [s["positions"] for s in group.stats()] == [36, 24]


@pytest.mark.timeout(300)
def test_a_concurrent_run_publishes_nets_while_its_rounds_go_on(tmp_path):
    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "zero9", "autotrain", *TINY, "--dir", str(run_dir), "--concurrent",
           "--games-per-gen", "8", "--generations", "4", "--steps", "30", "--workers", "1"]
    result = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=280)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    rd = RunDir(run_dir)
    status = rd.status()
    assert status["generation"] == 4 and [rd.count_games(g) for g in range(4)] == [8] * 4
    assert status["nets_trained"] >= 1 and status["best"] == status["trainer"] and status["training"] is None
    events = read_jsonl(rd.events_log)
    published = [e for e in events if e["event"] == "promoted"]
    assert [e["generation"] for e in published] == list(range(1, status["nets_trained"] + 1))
    assert all(rd.net_path(e["net"]).exists() for e in published)
    rounds = [e for e in events if e["event"] == "round"]
    assert [e["generation"] for e in rounds] == [1, 2, 3, 4] and any(e["training"] for e in rounds)
    shares = [e for e in events if e["event"] == "shares"][-1]
    assert 0 < shares["selfplay_share"] <= 1 and 0 < shares["train_share"] <= 1
    nets = {row["net"] for row in read_jsonl(rd.selfplay_log)}
    assert nets <= {e["net"] for e in published} | {read_jsonl(rd.events_log)[0]["net"]}


def _connected_client(address: str, planes, out) -> None:
    """A process the server's owner did not start (as Ray's actors are): it connects by address."""
    from zero9.nn.inference import connect

    probs, value = connect(address).predict(planes)
    out.put((probs, value))


def test_a_listening_server_answers_processes_that_connect_by_address(tmp_path):
    import multiprocessing as mp

    from zero9.nn.inference import InferenceServer

    game = make_game("go", 7)
    torch.manual_seed(0)
    net = make_net(game, blocks=1, filters=8)
    randomise_bn(net)
    save_checkpoint(tmp_path / "net.pt", net, {"game": game.to_dict()})
    net, _ = load_net(tmp_path / "net.pt", device="cpu")
    planes = random_planes(20, 18, 7, seed=4)
    want_probs, want_value = net.predict(planes)
    address = str(tmp_path / "node.sock")
    ctx = mp.get_context("spawn")
    with InferenceServer(str(tmp_path / "net.pt"), "cpu", workers=2, max_batch=16, listen=address) as server:
        with pytest.raises(ValueError, match="connect"):
            server.client(0)
        out = ctx.Queue()
        procs = [ctx.Process(target=_connected_client, args=(address, planes, out)) for _ in range(3)]
        for p in procs:  # three clients one after another on two client numbers: a number is freed
            p.start()
            probs, value = out.get(timeout=60)
            p.join(30)
            np.testing.assert_allclose(probs, want_probs, atol=1e-5)
            np.testing.assert_allclose(value, want_value, atol=1e-5)
        assert server.stats()["positions"] == 60
