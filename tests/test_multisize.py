"""One size-independent net self-played and trained on 15x15 and 20x20 Gomoku
(zero9/learn/loop/multisize.py)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import randomise_bn

from zero9.games import make_game
from zero9.learn.loop.multisize import (
    LOG_FILE,
    NET_FILE,
    MultiSizeOptions,
    check_sizes,
    distill_heads,
    play_size,
    run_multisize,
    start_or_resume,
)
from zero9.learn.rundir import sorted_chunk_files
from zero9.nn.checkpoint import EXAMPLE_DATA, load_checkpoint, load_net, read_meta, save_checkpoint
from zero9.nn.chunks import load_chunks, read_chunk
from zero9.nn.heads import make_net, net_from_config
from zero9.nn.net import ZeroNet
from zero9.search.player import NetSource
from zero9.settings import SelfPlayConfig, TrainOptions
from zero9.util.files import read_jsonl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import train_multisize  # noqa: E402

GAME = make_game("gomoku", 15)
torch.set_num_threads(1)  # tiny nets: threads only fight (the machine runs several test suites)


def tiny_options(**kw) -> MultiSizeOptions:
    selfplay = SelfPlayConfig(visits=4, parallel_games=2, leaves_per_tree=2, seed=5)
    train = TrainOptions(batch_size=32, optimizer="adam", lr=1e-2, seed=5, test_positions=256,
                         window_min=10**6)
    return MultiSizeOptions(sizes=(15, 20), rounds=1, games=3, steps=80, selfplay=selfplay, train=train,
                            progress=False, **kw)


def test_a_round_plays_both_sizes_lowers_both_losses_and_resumes(tmp_path):
    rows = run_multisize(tmp_path, GAME, tiny_options(), blocks=1, filters=8)
    assert [r["size"] for r in rows] == [15, 20]
    for row in rows:
        size = row["size"]
        shards = sorted_chunk_files(tmp_path / "data" / f"size{size}" / "r0000")
        assert len(shards) == 3 and row["selfplay"]["games"] == 3
        data = read_chunk(shards[0])
        assert data.game["size"] == size and data.planes.shape[-1] == size
        assert data.policy.shape[1] == size * size
        # 80 steps (40 a size) on the round's own positions: the loss on them falls on both sizes (by 0.14
        # to 1.5 in runs of the same seeds: the round is not bit-reproducible, so no margin is asked)
        before, after = row["before"]["fit"], row["after"]["fit"]
        assert after["total"] < before["total"] and after["policy_loss"] < before["policy_loss"], row
        assert row["train"]["policy_loss"] > 0
    meta = read_meta(tmp_path / NET_FILE)
    assert meta["heads"] == "pooled" and meta["sizes"] == [15, 20] and meta["game"]["size"] == 15
    assert (tmp_path / "nets" / f"{meta['hash']}.pt").exists()
    source = NetSource(tmp_path / NET_FILE, device="cpu")
    for size in (15, 20):
        source.check(make_game("gomoku", size))
    # resumed: the round is done, so nothing is played or trained again
    assert run_multisize(tmp_path, GAME, tiny_options(), blocks=1, filters=8) == []
    assert len(read_jsonl(tmp_path / LOG_FILE)) == 2
    # the script goes on to round 2, from the saved net and optimizer
    argv = ["--dir", str(tmp_path), "--rounds", "2", "--games", "1", "--visits", "8", "--steps", "4",
            "--batch-size", "16", "--games-parallel", "2", "--leaves", "4", "--seed", "1", "--quiet",
            "--workers", "1"]
    assert train_multisize.main(argv) == 0
    rows = read_jsonl(tmp_path / LOG_FILE)
    assert [(r["round"], r["size"]) for r in rows] == [(0, 15), (0, 20), (1, 15), (1, 20)]
    assert load_checkpoint(tmp_path / NET_FILE).extra == {"round": 2, "global_step": 84, "optimizer": "sgd"}
    assert len(sorted_chunk_files(tmp_path / "data" / "size20" / "r0001")) == 1


def test_a_fixed_size_net_gives_its_tower_to_a_pooled_one(tmp_path):
    shipped, _ = load_net(EXAMPLE_DATA / "gomoku_15x15_best.pt", device="cpu")
    with pytest.raises(ValueError, match=r"15x15 board, so it cannot learn size\(s\) 20.*pooled"):
        check_sizes(shipped, (15, 20))
    net, _, first, step, game = start_or_resume(tmp_path, GAME, 1, 8, tiny_options(), torch.device("cpu"),
                                                init=str(EXAMPLE_DATA / "gomoku_15x15_best.pt"))
    assert net.size_independent and (first, step) == (0, 0) and game["size"] == 15
    theirs, ours = shipped.state_dict(), net.state_dict()
    tower = [k for k in theirs if k.startswith(("input_block.", "tower."))]
    assert len(tower) == 5 + 6 * 2 * 5 and all(torch.equal(theirs[k], ours[k]) for k in tower)  # 6 blocks
    assert read_meta(tmp_path / NET_FILE)["heads"] == "pooled"


def test_sizes_argument():
    assert train_multisize.parse_args(["--dir", "x", "--sizes", "15,20,9"]).sizes == (15, 20, 9)
    with pytest.raises(SystemExit):
        train_multisize.parse_args(["--dir", "x", "--sizes", "15;20"])


@pytest.mark.slow
def test_worker_processes_play_the_round(tmp_path):
    opts = dataclasses.replace(tiny_options(workers=2), games=3, steps=4)
    rows = run_multisize(tmp_path, GAME, opts, blocks=1, filters=8)
    for size in (15, 20):
        assert len(sorted_chunk_files(tmp_path / "data" / f"size{size}" / "r0000")) == 3
    assert {r["selfplay"]["games"] for r in rows} == {3}


def test_distilled_heads_learn_a_teachers_policy_on_held_out_positions(tmp_path):
    """A teacher with pooled heads (random weights, non-trivial batch norm), a student with its tower and
    fresh heads: after distillation the student's policy is far closer to the teacher's."""
    teacher = random_net(seed=1, heads="pooled")
    with torch.no_grad():
        teacher.policy_head.logit_conv.weight.mul_(30)  # a sharp policy: a fresh head's is near uniform
    student = net_from_config(teacher.config)
    student.load_state_dict({**student.state_dict(), **{k: v for k, v in teacher.state_dict().items()
                                                          if k.startswith(("input_block.", "tower."))}})
    play_size(teacher, GAME, 4, tiny_options().selfplay, tmp_path / "games", None)
    positions = load_chunks(sorted_chunk_files(tmp_path / "games"), GAME)
    row = distill_heads(student, teacher, positions, tiny_options().train, 200, np.random.default_rng(1))
    # a dozen held-out positions: top-1 agreement and the value's error are too coarse to test here
    assert row["kl_after"] < 0.3 * row["kl_before"], row


def test_a_fixed_size_teacher_distils_into_the_new_heads_before_round_0(tmp_path):
    teacher = random_net(seed=2)
    save_checkpoint(tmp_path / "teacher.pt", teacher, {"game": GAME.to_dict()})
    opts = dataclasses.replace(tiny_options(), distill_games=3, distill_steps=60)
    net, *_ = start_or_resume(tmp_path / "run", GAME, 1, 8, opts, torch.device("cpu"),
                              init=str(tmp_path / "teacher.pt"))
    [row] = read_jsonl(tmp_path / "run" / LOG_FILE)
    assert row["kind"] == "distill" and row["selfplay"]["games"] == 3 and row["positions"] > 50
    assert len(sorted_chunk_files(tmp_path / "run" / "distill")) == 3
    assert row["kl_after"] < row["kl_before"], row  # a random FC policy is not local: only some of it fits
    assert net.size_independent and read_meta(tmp_path / "run" / NET_FILE)["heads"] == "pooled"
    theirs = teacher.state_dict()
    assert all(torch.equal(theirs[k], v) for k, v in net.state_dict().items() if k.startswith("tower."))


def random_net(seed: int, heads: str = "fixed") -> ZeroNet:
    torch.manual_seed(seed)
    net = make_net(GAME, 1, 8, heads=heads)
    randomise_bn(net, seed)
    return net.eval()
