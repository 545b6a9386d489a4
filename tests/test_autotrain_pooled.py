"""``zero9 autotrain --heads pooled``: a run whose nets play every board size, and a self-play job
(:class:`zero9.learn.selfplay.worker.WorkerJob`'s ``game``) that plays a pooled net on another board."""

from __future__ import annotations

import argparse
import logging
import queue
import threading

import pytest

from zero9.learn.rundir import RunDir

TINY = ["--game", "gomoku", "--size", "6", "--connect", "4", "--blocks", "1", "--filters", "16",
        "--games-per-gen", "4", "--games-parallel", "4", "--visits", "8", "--steps", "4", "--eval-games", "0",
        "--workers", "1", "--no-plots", "--no-sgf", "--device", "cpu", "--seed", "1"]


def loop_for(*options: str):
    """The loop ``zero9 autotrain`` would run with ``options``."""
    from zero9.cli.autotrain import add_arguments, make_loop

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return make_loop(parser.parse_args(list(options)))


def make_loop(run_dir, *extra: str):
    return loop_for("--dir", str(run_dir), *TINY, *extra)


@pytest.mark.timeout(120)
def test_a_pooled_run_trains_pooled_nets_and_keeps_its_heads(tmp_path):
    from zero9.learn.loop.autotrain import run_loop
    from zero9.nn.checkpoint import load_net

    run_dir = tmp_path / "run"
    assert run_loop(make_loop(run_dir, "--heads", "pooled", "--generations", "2")) == 0
    rd = RunDir(run_dir)
    status = rd.status()
    assert status["generation"] == 2
    assert rd.config()["net"]["heads"] == "pooled"
    nets = sorted(rd.nets_dir.glob("*.pt"))
    assert len(nets) == 3  # generation 0 and the two candidates
    for path in nets:
        net, meta = load_net(path, "cpu")
        assert meta["heads"] == "pooled" and net.serves_size(9), path

    # The shape is the run's for life: --heads fixed (or leaving it out) on a rerun names the option.
    for extra in (["--heads", "fixed"], []):
        with pytest.raises(ValueError, match=r"--heads: the run's \"pooled\", this command's \"fixed\""):
            make_loop(run_dir, *extra, "--generations", "3")


def test_a_fixed_run_keeps_its_config_and_init_from_a_fixed_net_copies_the_tower_only(tmp_path, caplog):
    import torch

    from zero9.learn.loop.nets import check_config
    from zero9.nn.checkpoint import load_net

    fixed = make_loop(tmp_path / "fixed")
    assert "heads" not in fixed.config["net"]  # fixed-head runs' configs are as before the option
    fixed.prepare()
    source = RunDir(tmp_path / "fixed").net_path(RunDir(tmp_path / "fixed").status()["best"])
    with pytest.raises(ValueError, match=r"--heads: the run's \"fixed\", this command's \"pooled\""):
        make_loop(tmp_path / "fixed", "--heads", "pooled")
    with pytest.raises(ValueError, match=r"--blocks: the run's 1, this command's 2"):
        check_config({"net": {"blocks": 1}}, {"net": {"blocks": 2}}, tmp_path)

    pooled = make_loop(tmp_path / "pooled", "--heads", "pooled", "--init-from", str(source))
    caplog.set_level(logging.INFO, logger="zero9")
    pooled.prepare()
    assert "heads start fresh" in caplog.text
    made = RunDir(tmp_path / "pooled")
    net, _ = load_net(made.net_path(made.status()["best"]), "cpu")
    src, _ = load_net(source, "cpu")
    assert net.size_independent and not src.size_independent
    for key, value in src.state_dict().items():
        if key.startswith(("input_block.", "tower.")):
            assert torch.equal(net.state_dict()[key], value), key

    # Go: a pooled net has no Leela Zero weights beside it (that format has no pooled heads).
    go = loop_for("--dir", str(tmp_path / "go"), "--game", "go", "--size", "7", "--blocks", "1",
                  "--filters", "8", "--heads", "pooled", "--device", "cpu", "--no-plots")
    go.prepare()
    go_nets = RunDir(tmp_path / "go").nets_dir
    assert len(list(go_nets.glob("*.pt"))) == 1 and not list(go_nets.glob("*.txt.gz"))


def play_one_job(job) -> list[tuple]:
    """Run ``job`` on this thread as a worker would; the messages it sent."""
    from zero9.learn.selfplay.worker import JobQueue, play_job

    out: queue.Queue = queue.Queue()
    play_job(job, JobQueue(queue.Queue(), threading.Event(), None), out, None, None)
    return [out.get_nowait() for _ in range(out.qsize())]


def test_a_pooled_net_made_for_6x6_plays_a_selfplay_job_on_7x7(tmp_path):
    import dataclasses

    from zero9.games import make_game
    from zero9.learn.selfplay.worker import WorkerJob
    from zero9.learn.training.window import read_chunk
    from zero9.nn.checkpoint import save_checkpoint
    from zero9.nn.heads import make_net
    from zero9.settings import SelfPlayConfig

    six, seven = make_game("gomoku", 6, connect=4), make_game("gomoku", 7, connect=4)
    path = tmp_path / "pooled6.pt"
    save_checkpoint(path, make_net(six, 1, 16, heads="pooled"), {"game": six.to_dict()})
    config = SelfPlayConfig(visits=8, parallel_games=2, seed=3)
    job = WorkerJob(0, str(path), "cpu", 2, config, str(tmp_path / "chunks"), None, None, 1, game=seven)
    messages = play_one_job(job)
    assert [m[0] for m in messages if m[0] != "tick"] == ["game", "game", "done"], messages
    chunks = sorted((tmp_path / "chunks").glob("*.npz"))
    assert len(chunks) == 2
    for chunk in chunks:
        data = read_chunk(chunk, seven)
        assert data.game["size"] == 7 and data.planes.shape[-2:] == (7, 7) and data.policy.shape[1] == 49

    # Without a game the job plays the net's own board; a fixed-head net refuses another one.
    assert play_one_job(dataclasses.replace(job, chunk_dir=str(tmp_path / "own"), game=None))[-1][0] == "done"
    assert read_chunk(next((tmp_path / "own").glob("*.npz")), six).policy.shape[1] == 36
    fixed = tmp_path / "fixed6.pt"
    save_checkpoint(fixed, make_net(six, 1, 16), {"game": six.to_dict()})
    error = play_one_job(dataclasses.replace(job, net_path=str(fixed)))[-1]
    assert error[0] == "error" and "7x7 board" in error[2] and "serves a 6x6 board" in error[2], error
    go = dataclasses.replace(job, game=make_game("go", 7))
    error = play_one_job(go)[-1]
    assert error[0] == "error" and "asks for go" in error[2], error


def test_init_from_a_pooled_net_into_a_pooled_net_of_another_board_copies_the_whole_net(tmp_path, caplog):
    import torch

    from zero9.games import make_game
    from zero9.learn.loop.nets import transplant_tower
    from zero9.nn.checkpoint import save_checkpoint
    from zero9.nn.heads import make_net

    torch.manual_seed(0)
    six = make_game("gomoku", 6, connect=4)
    source = make_net(six, 1, 8, heads="pooled")
    path = tmp_path / "pooled6.pt"
    save_checkpoint(path, source, {"game": six.to_dict()})
    seven = make_net(make_game("gomoku", 7, connect=4), 1, 8, heads="pooled")
    caplog.set_level(logging.INFO, logger="zero9")
    transplant_tower(seven, str(path))
    assert "the whole net" in caplog.messages[-1]
    assert seven.state_dict().keys() == source.state_dict().keys()
    for key, value in source.state_dict().items():
        assert torch.equal(seven.state_dict()[key], value), key
