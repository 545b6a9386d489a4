"""Ray's node servers (zero9/learn/cluster/node.py): one process per node holds the net and the node's
actors hold none; the games are the games an actor plays with its own net; a new net is loaded once
per node; a killed node server is replaced without losing a game; closing leaves nothing behind.

A real local Ray instance with 3 CPUs (one for the node server, two actors of half a CPU each)
and real tiny Gomoku nets."""

from __future__ import annotations

import argparse
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import ray  # CI installs zero9[test], which includes ray: a missing ray must fail here, never skip
import torch
from helpers import randomise_bn

from zero9.cli import autotrain
from zero9.games import make_game
from zero9.games.sgf import read_sgf
from zero9.learn.cluster.node import plan_server, served_address
from zero9.learn.cluster.pool import RayPool, plan_actors
from zero9.learn.rundir import RunDir
from zero9.nn.checkpoint import read_meta, save_checkpoint
from zero9.nn.chunks import read_npz_shard
from zero9.nn.net import make_net
from zero9.settings import SelfPlayConfig
from zero9.util.files import read_jsonl

GAME = make_game("gomoku", 6, connect=4)


def save_net(path: Path, seed: int) -> str:
    """A tiny net with non-trivial weights (so that two nets play differently); returns its hash."""
    torch.manual_seed(seed)
    net = make_net(GAME, 1, 16)
    randomise_bn(net, seed)
    save_checkpoint(path, net, {"game": GAME.to_dict()})
    return read_meta(path)["hash"]


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def games_of(folder: Path) -> list[tuple]:
    return sorted(tuple(read_sgf(p).actions) for p in folder.glob("*.sgf"))


def shared_memory_of(pid: int) -> list[str]:
    """The shared-memory segments an inference server made in process ``pid`` (its slots)."""
    return [n for n in os.listdir("/dev/shm") if n.startswith(f"z9-{pid:x}-")]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_node_servers_are_planned_per_node_and_take_the_gpus():
    gpu = {"NodeID": "gpu16", "Alive": True, "Resources": {"CPU": 16.0, "GPU": 2.0}}
    cpu = {"NodeID": "cpu8", "Alive": True, "Resources": {"CPU": 8.0}}
    small = {"NodeID": "cpu1", "Alive": True, "Resources": {"CPU": 1.0}}
    gone = {"NodeID": "gone", "Alive": False, "Resources": {"CPU": 4.0, "GPU": 1.0}}
    assert plan_server(gpu, "auto") == plan_server(gpu, "on")
    server = plan_server(gpu, "auto")
    assert (server.num_cpus, server.num_gpus) == (1.0, 2)
    assert plan_server(cpu, "auto") is plan_server(gpu, "off") is plan_server(gone, "on") is None
    assert plan_server(small, "on").num_cpus == 0  # a one-CPU node's server shares its CPU with its actor
    plans = plan_actors([gpu, cpu, small], sharing="auto")
    on_gpu = [p for p in plans if p.node_id == "gpu16"]
    # 15 actors beside the server's CPU, no GPU share: the GPUs are the server's (matches still see them)
    assert len(on_gpu) == 15 and all(p.num_cpus == 1 and p.num_gpus == 0 and p.gpu_node for p in on_gpu)
    assert [p.node_id for p in plans].count("cpu8") == 8 and not any(p.gpu_node for p in plans[15:])
    off = [p for p in plan_actors([gpu], sharing="off")]
    assert len(off) == 16 and all(p.num_gpus == 0.125 for p in off)  # each its own net on a GPU share
    two = plan_actors([{"NodeID": "n", "Alive": True, "Resources": {"CPU": 2.0}}], per_node=2, sharing="on")
    assert [p.num_cpus for p in two] == [0.5, 0.5]
    served = {"addresses": ["/a/0.sock", "/a/1.sock"], "meta": {"hash": "h"}}
    assert [served_address(served, k)["address"] for k in range(3)] == ["/a/0.sock", "/a/1.sock", "/a/0.sock"]
    with pytest.raises(ValueError, match="--ray-server"):
        plan_server(gpu, "yes")
    with pytest.raises(ValueError, match="--ray-server"):
        RayPool("auto", server="shared")  # refused before Ray starts


@pytest.mark.timeout(240)
def test_one_process_per_node_holds_the_net_and_reloads_it_once_per_new_net(cluster, tmp_path):
    first, second = save_net(tmp_path / "a.pt", 1), save_net(tmp_path / "b.pt", 2)
    config = SelfPlayConfig(visits=16, parallel_games=2, seed=5)
    with RayPool("auto", workers=2, server="on") as pool:
        assert pool.size == 2 and len(pool.servers) == 1
        rounds = [("a.pt", first, 4), ("a.pt", first, 2), ("b.pt", second, 4)]
        for k, (name, net_hash, games) in enumerate(rounds):
            stats = pool.play_round(tmp_path / name, games, config, tmp_path / f"c{k}", tmp_path / f"s{k}",
                                    progress=False)
            shards = sorted((tmp_path / f"c{k}").glob("*.npz"))
            assert stats.games == games == len(shards)
            assert {read_npz_shard(f).meta["net"] for f in shards} == {net_hash}
            if k == 0:
                held = ray.get([s.handle.holds_net.remote() for s in pool.slots])
        (server_stats,) = pool.servers.stats().values()
        (served,) = [s.served for s in pool.servers.by_node.values()]
        held_after = ray.get([s.handle.holds_net.remote() for s in pool.slots])
        info = pool.info()
        server_pid, node_server_pid = server_stats[0]["pid"], served["pid"]
        assert pid_alive(server_pid)
    # the actors: no net in their processes, both clients of the one server
    for report in (*held, *held_after):
        assert report["nets"] == 0 and report["served"] == served["addresses"][0]
    assert len({r["pid"] for r in held}) == 2 and len(server_stats) == 1
    # the server: the net read once per distinct net (3 rounds, 2 nets), every position of every round
    assert server_stats[0]["loads"] == 2 and server_stats[0]["positions"] > 0
    assert info["ray_servers"] == 1 and info["ray_server_starts"] == 1
    # closed: the server process, its socket, its shared memory and its scratch folder are gone
    deadline = time.monotonic() + 10
    while pid_alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not pid_alive(server_pid)
    assert not Path(served["addresses"][0]).exists() and not Path(served["addresses"][0]).parent.exists()
    assert not shared_memory_of(node_server_pid)
    assert not [n for n in ray.util.list_named_actors() if n.startswith(f"zero9-{pool.token}")]


@pytest.mark.timeout(240)
def test_shared_and_own_nets_play_the_same_games_and_own_nets_are_copies(cluster, tmp_path):
    save_net(tmp_path / "net.pt", 3)
    # one actor, one batch in flight: the batches the server sees are exactly those of an own net
    config = SelfPlayConfig(visits=16, parallel_games=2, seed=7, in_flight=1)
    records = {}
    for sharing in ("on", "off"):
        with RayPool("auto", workers=1, server=sharing) as pool:
            stats = pool.play_round(tmp_path / "net.pt", 4, config, tmp_path / f"c-{sharing}",
                                    tmp_path / f"s-{sharing}", progress=False)
            assert stats.games == 4
            held = ray.get([s.handle.holds_net.remote() for s in pool.slots])
            assert [h["nets"] for h in held] == ([0] if sharing == "on" else [1])
            assert len(pool.servers) == (1 if sharing == "on" else 0)
        records[sharing] = [read_npz_shard(f) for f in sorted((tmp_path / f"c-{sharing}").glob("*.npz"))]
    assert games_of(tmp_path / "s-on") == games_of(tmp_path / "s-off")
    assert len({len(g) for g in games_of(tmp_path / "s-on")}) > 1  # four real games, not one repeated
    on = sorted(records["on"], key=lambda d: d.policy.tobytes())
    off = sorted(records["off"], key=lambda d: d.policy.tobytes())
    for a, b in zip(on, off, strict=True):  # the training targets too
        np.testing.assert_allclose(a.policy, b.policy, atol=1e-6)
        np.testing.assert_array_equal(a.value, b.value)


def kill_the_node_server_after_a_game(pool: RayPool, chunks: Path, killed: list) -> None:
    while not list(chunks.glob("*.npz")):
        time.sleep(0.02)
    (server,) = pool.servers.by_node.values()
    killed.append(server.served["pid"])
    ray.kill(server.handle)


@pytest.mark.timeout(240)
def test_a_killed_node_server_is_replaced_and_no_game_is_lost(cluster, tmp_path):
    net_hash = save_net(tmp_path / "net.pt", 4)
    config = SelfPlayConfig(visits=16, parallel_games=1, seed=9)
    chunks, sgfs = tmp_path / "c", tmp_path / "s"
    logged: list[str] = []
    with RayPool("auto", workers=2, server="on", log=logged.append) as pool:
        killed: list[int] = []
        killer = threading.Thread(target=kill_the_node_server_after_a_game, args=(pool, chunks, killed),
                                  daemon=True)
        killer.start()
        stats = pool.play_round(tmp_path / "net.pt", 10, config, chunks, sgfs, progress=False)
        killer.join(30)
        assert killed, "the node server was not killed"
        assert stats.games == 10 == len(list(chunks.glob("*.npz"))) == len(games_of(sgfs))
        assert len(set(games_of(sgfs))) == 10  # the replayed games are new games, none twice
        assert {read_npz_shard(f).meta["net"] for f in chunks.glob("*.npz")} == {net_hash}
        assert pool.info()["ray_server_starts"] == 2 and pool.lost == 0  # the actors lived on
        assert any("node server" in line and "started a new one" in line for line in logged), logged
        (server,) = pool.servers.by_node.values()
        assert server.served["pid"] != killed[0]
        # the next round plays on the new server, each actor connected to it
        stats = pool.play_round(tmp_path / "net.pt", 2, config, tmp_path / "c2", None, progress=False)
        assert stats.games == 2
        held = ray.get([s.handle.holds_net.remote() for s in pool.slots])
        assert {h["served"] for h in held} == set(server.served["addresses"])
        assert all(h["nets"] == 0 for h in held)
    # the killed server's process is gone and its resource tracker unlinked its shared memory
    deadline = time.monotonic() + 10
    while shared_memory_of(killed[0]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not shared_memory_of(killed[0])


def test_slots_of_dead_owners_are_swept_and_live_ones_kept():
    import subprocess
    import sys
    from multiprocessing import resource_tracker, shared_memory

    from zero9.nn.inference import sweep_dead_slots

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    mine = shared_memory.SharedMemory(f"z9-{os.getpid():x}-abc-0-0-in", create=True, size=16)
    gone = shared_memory.SharedMemory(f"z9-{dead.pid:x}-abc-0-0-in", create=True, size=16)
    try:
        assert sweep_dead_slots() >= 1
        names = os.listdir("/dev/shm")
        assert mine.name.lstrip("/") in names and gone.name.lstrip("/") not in names
    finally:
        mine.close()
        mine.unlink()
        gone.close()
        resource_tracker.unregister(gone._name, "shared_memory")  # swept: not this process's to unlink


@pytest.mark.timeout(240)
def test_a_killed_actors_replacement_is_served_by_the_same_node_server(cluster, tmp_path):
    save_net(tmp_path / "net.pt", 5)
    config = SelfPlayConfig(visits=16, parallel_games=1, seed=11)
    chunks = tmp_path / "c"
    with RayPool("auto", workers=2, server="on") as pool:
        victim = ray.get(pool.slots[0].handle.holds_net.remote())["pid"]
        segments: list[list[str]] = []

        def kill_an_actor() -> None:
            while not list(chunks.glob("*.npz")):
                time.sleep(0.02)
            (server,) = pool.servers.by_node.values()
            segments.append(shared_memory_of(server.served["pid"]))
            os.kill(victim, signal.SIGKILL)  # its process alone, as the kernel's OOM killer does

        killer = threading.Thread(target=kill_an_actor, daemon=True)
        killer.start()
        stats = pool.play_round(tmp_path / "net.pt", 8, config, chunks, tmp_path / "s", progress=False)
        killer.join(30)
        assert stats.games == 8 == len(games_of(tmp_path / "s")) == len(set(games_of(tmp_path / "s")))
        assert pool.lost == 1 and pool.info()["ray_server_starts"] == 1  # the server was not touched
        (server,) = pool.servers.by_node.values()
        assert len(segments[0]) == 4 * 2 * 4  # 2 actors + 2 spare clients, 2 slots of 4 segments each
        assert shared_memory_of(server.served["pid"]) == segments[0]
        # the dead actor's own resource tracker did not unlink the server's slots: the replacement,
        # given a freed client number, plays on them
        stats = pool.play_round(tmp_path / "net.pt", 4, config, tmp_path / "c2", None, progress=False)
        assert stats.games == 4
        (server_stats,) = pool.servers.stats().values()
        assert server_stats[0]["loads"] == 1
        held = ray.get([s.handle.holds_net.remote() for s in pool.slots])
        assert all(h["nets"] == 0 and h["served"] for h in held) and len(held) == 2


@pytest.mark.timeout(240)
def test_autotrain_ray_server_on_shares_a_node_server(cluster, tmp_path):
    parser = argparse.ArgumentParser()
    autotrain.add_arguments(parser)
    tiny = ["--game", "gomoku", "--size", "6", "--connect", "4", "--blocks", "1", "--filters", "16",
            "--games-per-gen", "6", "--visits", "16", "--steps", "10", "--device", "cpu", "--no-plots",
            "--eval-games", "2", "--anchors", "random", "--generations", "1", "--dir", str(tmp_path / "run")]
    args = parser.parse_args([*tiny, "--ray", "auto", "--ray-server", "on", "--workers", "2"])
    assert autotrain.run(args) == 0
    rd = RunDir(tmp_path / "run")
    (row,) = read_jsonl(rd.selfplay_log)
    assert row["games"] == 6 == rd.count_games(0)
    assert row["ray_servers"] == 1 and row["ray_actors"] == 2 and row["ray_server_starts"] == 1
    assert {read_npz_shard(f).meta["net"] for f in rd.chunk_files(0)} == {row["net"]}
    with pytest.raises(SystemExit):
        parser.parse_args([*tiny, "--ray", "auto", "--ray-server", "shared"])


@pytest.mark.slow  # a cluster of two nodes of its own: ~30 s on 2 cores
@pytest.mark.timeout(240)
def test_each_node_of_a_cluster_has_its_node_server_and_its_actors_use_it(tmp_path):
    from ray.cluster_utils import Cluster

    was_up = ray.is_initialized()
    if was_up:
        ray.shutdown()  # the module's one-node instance: this test makes a cluster of its own
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
    cluster.add_node(num_cpus=2)
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        net_hash = save_net(tmp_path / "net.pt", 6)
        config = SelfPlayConfig(visits=16, parallel_games=1, seed=13)
        with RayPool("auto", workers=1, server="on") as pool:
            assert pool.size == 2 and len(pool.servers) == 2
            stats = pool.play_round(tmp_path / "net.pt", 6, config, tmp_path / "c", None, progress=False)
            assert stats.games == 6
            assert {read_npz_shard(f).meta["net"] for f in (tmp_path / "c").glob("*.npz")} == {net_hash}
            served = {node: s.served for node, s in pool.servers.by_node.items()}
            held = ray.get([s.handle.holds_net.remote() for s in pool.slots])
            loads = {node: [x["loads"] for x in stats] for node, stats in pool.servers.stats().items()}
        assert {s["node"] for s in served.values()} == set(served) and len(served) == 2
        for actor in held:  # each actor is a client of the server on its own node, and holds no net
            assert actor["nets"] == 0 and actor["served"] in served[actor["node"]]["addresses"]
        assert loads == {node: [1] for node in served}
    finally:
        ray.shutdown()
        cluster.shutdown()
        if was_up:
            ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False)
