"""Self-play on Ray: a local two-CPU cluster runs the tiny autotrain, survives a killed actor,
and the same run directory then continues in local mode."""

from __future__ import annotations

import argparse
import os
import threading
import time
from pathlib import Path

import pytest
import ray  # CI installs zero9[test], which includes ray: a missing ray must fail here, never skip

from zero9.cli import autotrain
from zero9.games import make_game
from zero9.games.sgf import read_sgf
from zero9.learn.cluster.actor import TMP_PREFIX, ShippedFile, land_files, ship_files, sweep_dead_folders
from zero9.learn.cluster.pool import RayPool, plan_actors
from zero9.learn.rundir import RunDir
from zero9.nn.checkpoint import save_checkpoint
from zero9.nn.chunks import read_npz_shard
from zero9.nn.net import make_net
from zero9.settings import SelfPlayConfig
from zero9.util.files import read_jsonl

TINY = ["--game", "gomoku", "--size", "6", "--connect", "4", "--blocks", "1", "--filters", "16",
        "--games-per-gen", "8", "--visits", "16", "--steps", "20", "--device", "cpu", "--no-plots",
        "--eval-games", "2", "--anchors", "random"]


def run_autotrain(run_dir: Path, *extra: str) -> int:
    parser = argparse.ArgumentParser()
    autotrain.add_arguments(parser)
    return autotrain.run(parser.parse_args([*TINY, "--dir", str(run_dir), *extra]))


def worker_of(path: Path) -> int:
    return int(path.name.split("-")[1][1:])  # {time_ns}-w{worker}-{seq}-{P}p.npz


@pytest.fixture
def ray_cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def kill_an_actor_mid_round(run_dir: Path, done: threading.Event, killed: list) -> None:
    """Once round 0 has a finished game, kill the actor with the fewest games so far (still playing)."""
    rd = RunDir(run_dir)
    while not done.is_set():
        files = rd.chunk_files(0)
        names = sorted(n for n in ray.util.list_named_actors() if n.startswith("zero9-"))
        if files and len(names) == 2:
            finished = {n: sum(worker_of(f) == int(n.rsplit("-w", 1)[1]) for f in files) for n in names}
            victim = min(names, key=lambda n: finished[n])
            ray.kill(ray.get_actor(victim))
            killed.append((victim, len(files)))
            return
        time.sleep(0.02)


@pytest.mark.timeout(240)
def test_ray_autotrain_loses_no_game_to_a_killed_actor_then_resumes_locally(ray_cluster, tmp_path):
    run_dir = tmp_path / "run"
    rd = RunDir(run_dir)
    done, killed = threading.Event(), []
    killer = threading.Thread(target=kill_an_actor_mid_round, args=(run_dir, done, killed), daemon=True)
    killer.start()
    try:
        # one game at a time per actor, so the killed actor still has games to play
        assert run_autotrain(run_dir, "--generations", "2", "--ray", "auto", "--games-parallel", "1") == 0
    finally:
        done.set()
        killer.join()
    assert killed and killed[0][1] < 8, f"the kill came too late to test anything: {killed}"

    status = rd.status()
    files = rd.chunk_files()
    assert status["generation"] == 2 and status["games"] == 16 == len(files)
    assert rd.count_games(0) == rd.count_games(1) == 8
    # the replacement (worker 2 or later) played the killed actor's unfinished games in round 0
    assert any(worker_of(f) >= 2 for f in rd.chunk_files(0)), [f.name for f in rd.chunk_files(0)]
    rows = read_jsonl(rd.selfplay_log)
    assert rows[0]["ray_lost"] >= 1 and rows[0]["games"] == 8
    # every game is a different game (a replacement replaying a dead actor's seed would repeat them)
    sgfs = sorted(rd.sgf_dir.rglob("*.sgf"))
    assert len(sgfs) == 16
    assert len({tuple(read_sgf(p).actions) for p in sgfs}) == 16
    # each shard names the net that played it: round g's best net
    for row in rows:
        for f in rd.chunk_files(row["generation"]):
            assert read_npz_shard(f).meta["net"] == row["net"]
    assert rows[0]["net"] != rows[1]["net"]
    assert len(read_jsonl(rd.rating_games)) == 2 + 4  # gen 1: vs random; gen 2: vs gen 1 and random
    assert not list(run_dir.rglob(".tmp-*"))

    # Mixed mode: the same run continues without Ray, in this process.
    best = status["best"]
    assert run_autotrain(run_dir, "--generations", "3", "--workers", "1") == 0
    status = rd.status()
    assert status["generation"] == 3 and status["games"] == 24 == rd.count_games()
    assert {read_npz_shard(f).meta["net"] for f in rd.chunk_files(2)} == {best}
    assert "ray_lost" not in read_jsonl(rd.selfplay_log)[-1]


@pytest.mark.slow  # a second cluster of two nodes: ~25 s more on 2 cores
@pytest.mark.timeout(180)
def test_a_node_that_leaves_loses_no_game_and_a_node_that_joins_gets_actors(tmp_path):
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    leaving = cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        game = make_game("gomoku", 6, connect=4)
        save_checkpoint(tmp_path / "net.pt", make_net(game, 1, 16), {"game": game.to_dict()})
        net, config = tmp_path / "net.pt", SelfPlayConfig(visits=16, parallel_games=1)
        chunks, sgfs = tmp_path / "round1", tmp_path / "sgf1"
        with RayPool("auto") as pool:
            assert pool.size == 2

            def remove_node_after_two_games() -> None:
                while len(list(chunks.glob("*.npz"))) < 2:
                    time.sleep(0.02)
                cluster.remove_node(leaving)

            remover = threading.Thread(target=remove_node_after_two_games, daemon=True)
            remover.start()
            stats = pool.play_round(net, 20, config, chunks, sgfs, progress=False)
            remover.join()
            assert stats.games == 20 == len(list(chunks.glob("*.npz"))) == len(list(sgfs.iterdir()))
            assert pool.lost == 1 and pool.size == 1
            cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes()
            stats = pool.play_round(net, 4, config, tmp_path / "round2", None, progress=False)
            assert stats.games == 4 == len(list((tmp_path / "round2").glob("*.npz")))
            assert pool.size == 2
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_actors_are_sized_to_each_node():
    nodes = [{"NodeID": "cpu8", "Alive": True, "Resources": {"CPU": 8.0}},
             {"NodeID": "gpu16", "Alive": True, "Resources": {"CPU": 16.0, "GPU": 1.0}},
             {"NodeID": "gone", "Alive": False, "Resources": {"CPU": 4.0}},
             {"NodeID": "head0", "Alive": True, "Resources": {"CPU": 0.0}}]
    plans = plan_actors(nodes)
    assert [p.node_id for p in plans].count("cpu8") == 8
    gpu = [p for p in plans if p.node_id == "gpu16"]
    assert len(gpu) == 16 and all(p.num_cpus == 1 and p.num_gpus == 0.0625 for p in gpu)
    assert sum(p.num_gpus for p in plans) <= 1.0
    assert len(plans) == 24  # nothing on the dead node nor on a head without CPUs for Ray
    two = plan_actors(nodes, per_node=2)
    assert [p.node_id for p in two] == ["cpu8", "cpu8", "gpu16", "gpu16"]
    assert two[2].num_gpus == 0.5
    over = plan_actors([{"NodeID": "small", "Alive": True, "Resources": {"CPU": 2.0}}], per_node=3)
    assert len(over) == 3 and sum(p.num_cpus for p in over) <= 2.0
    with pytest.raises(ValueError, match="--workers"):
        plan_actors(nodes, per_node=-1)


def test_file_arguments_travel_as_bytes_and_devices_become_the_actors(tmp_path):
    net = tmp_path / "abc123.pt"
    net.write_bytes(b"net bytes")
    store: list[bytes] = []

    def put(data: bytes) -> int:
        store.append(data)
        return len(store) - 1

    kwargs = {"spec_a": {"kind": "net", "path": str(net), "device": "cpu"}, "spec_b": {"kind": "random"},
              "games": 2, "device": "cpu", "pair": [{"path": str(net)}]}
    shipped = ship_files(kwargs, put, {})
    assert isinstance(shipped["spec_a"]["path"], ShippedFile) and len(store) == 1  # sent once
    landed = land_files(shipped, tmp_path / "actor", lambda ref: store[ref], "cuda")
    path = Path(landed["spec_a"]["path"])
    assert path.read_bytes() == b"net bytes" and path.name == "abc123.pt" and path.parent != tmp_path
    assert landed["pair"][0]["path"] == str(path)
    assert landed["device"] == "cuda" and landed["spec_a"]["device"] == "cuda"
    assert landed["spec_b"] == {"kind": "random"} and landed["games"] == 2


def test_scratch_folders_of_dead_actors_are_swept(tmp_path):
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / f"{TMP_PREFIX}{dead.pid}-abc" / "files").mkdir(parents=True)
    alive = tmp_path / f"{TMP_PREFIX}{os.getpid()}-def"
    alive.mkdir()
    other = tmp_path / "zero9-something-else"
    other.mkdir()
    assert sweep_dead_folders(tmp_path) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, other.name])
