"""Games that straddle rounds: a worker's games go on from one round into the next, with its net.

Rounds of a pool's sessions (``play_selfplay(..., straddle=True)``), each with exactly its
games; the records name the nets of the rounds a game was in flight in; a batch the old
net answers after the change never reaches the cache; and autotrain, killed between two
rounds, loses only its games in flight and keeps an exact ledger.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from zero9.games import make_game
from zero9.learn.rundir import RunDir
from zero9.learn.selfplay.pool import WorkerPool, play_selfplay
from zero9.learn.selfplay.worker import _CountingEvaluator
from zero9.nn.checkpoint import save_checkpoint
from zero9.nn.net import make_net
from zero9.search.evaluator import NetEvaluator
from zero9.settings import SelfPlayConfig
from zero9.util.files import read_jsonl

torch.set_num_threads(1)  # tiny nets: threads only fight (the machine runs several test suites)
ROOT = Path(__file__).resolve().parents[1]
GAME = make_game("gomoku", 6, connect=4)


def two_nets(tmp_path) -> list[tuple[Path, str]]:
    nets = []
    for i in range(2):
        torch.manual_seed(i)
        meta = save_checkpoint(tmp_path / f"net{i}.pt", make_net(GAME, 1, 8), {"game": GAME.to_dict()})
        nets.append((tmp_path / f"net{i}.pt", meta["hash"]))
    return nets


def shard_metas(folder: Path) -> list[dict]:
    return [json.loads(str(np.load(f)["meta"])) for f in sorted(folder.glob("*.npz"))]


def sgf_infos(folder: Path) -> list[dict]:
    import sgfmill.sgf

    return [json.loads(sgfmill.sgf.Sgf_game.from_bytes(f.read_bytes()).get_root().get("C"))
            for f in sorted(folder.glob("*.sgf"))]


@pytest.mark.parametrize("workers", [0, 2])
def test_games_of_a_round_go_on_into_the_next_with_its_net(tmp_path, workers):
    # Each round changes the net, as a promotion does. A round writes exactly its games, and the
    # games begun in one round and ended in the next name both nets (without straddling no game
    # of round 2 is begun in round 1, and none names two nets).
    nets = two_nets(tmp_path)
    (a, hash_a), (b, hash_b) = nets
    cfg = SelfPlayConfig(visits=8, parallel_games=4, leaves_per_tree=4, seed=5)
    games = 6
    with WorkerPool(workers, 1) as pool:
        stats = [play_selfplay(nets[r % 2][0], games, cfg, tmp_path / f"chunks{r}", tmp_path / f"sgf{r}",
                               pool=pool, progress=False, straddle=True) for r in range(3)]
    for r, s in enumerate(stats):
        assert s.games == games and len(shard_metas(tmp_path / f"chunks{r}")) == games
        assert len(list((tmp_path / f"sgf{r}").glob("*.sgf"))) == games
        assert s.evals > 0
    assert stats[0].carried == 0 and stats[1].carried > 0 and stats[2].carried > 0

    first = shard_metas(tmp_path / "chunks0")
    assert {m["net"] for m in first} == {hash_a} and not any("nets" in m for m in first)
    second = shard_metas(tmp_path / "chunks1")
    straddled = [m for m in second if "nets" in m]
    assert straddled and all(m["nets"] == [hash_a, hash_b] and m["net"] == hash_b for m in straddled)
    # A game that ended after round 0 had all its games was held and written in round 1, named after
    # the net it ended with (a alone); every other game of round 1 ended with net b.
    assert all(m["net"] == hash_b or "nets" not in m for m in second)
    assert {m["net"] for m in second} <= {hash_a, hash_b}
    infos = sgf_infos(tmp_path / "sgf1")
    assert sorted(str(i.get("nets")) for i in infos) == sorted(str(m.get("nets")) for m in second)


def test_a_pool_runs_calls_between_rounds_and_quota_jobs_after_them(tmp_path):
    # Between two rounds the paused sessions let the workers play rating matches (call_all); a quota
    # job (zero9 selfplay's way) ends a paused session and plays exactly its games.
    (a, _), (b, _) = two_nets(tmp_path)
    cfg = SelfPlayConfig(visits=8, parallel_games=3, leaves_per_tree=4, seed=2)
    with WorkerPool(2, 1) as pool:
        play_selfplay(a, 4, cfg, tmp_path / "r0", None, pool=pool, progress=False, straddle=True)
        assert pool.call_all([(os.getpid, {}), (os.getpid, {})]) != [os.getpid()] * 2
        play_selfplay(b, 4, cfg, tmp_path / "r1", None, pool=pool, progress=False, straddle=True)
        quota = play_selfplay(b, 5, cfg, tmp_path / "quota", None, pool=pool, progress=False)
        again = play_selfplay(a, 3, cfg, tmp_path / "r2", None, pool=pool, progress=False, straddle=True)
    assert quota.games == 5 and len(list((tmp_path / "quota").glob("*.npz"))) == 5
    assert again.games == 3 and again.carried == 0  # the quota ended the sessions: new games
    assert [len(list((tmp_path / d).glob("*.npz"))) for d in ("r0", "r1", "r2")] == [4, 4, 3]


def test_rounds_through_the_inference_server_with_two_batches_in_flight(tmp_path):
    # The sessions pause with batches in flight; the server loads each round's net; the batches the
    # old net answered are collected after the pause, and a quota job after the rounds (which ends
    # the sessions) finds both of each worker's slots free.
    from zero9.nn.inference import InferenceServer

    nets = two_nets(tmp_path)
    cfg = SelfPlayConfig(visits=8, parallel_games=4, leaves_per_tree=4, seed=3, in_flight=2)
    slot = cfg.parallel_games * cfg.leaves_per_tree
    server = InferenceServer(str(nets[0][0]), "cpu", workers=2, max_batch=slot)
    with WorkerPool(2, 1, inference=server) as pool:
        stats = [play_selfplay(nets[r % 2][0], 5, cfg, tmp_path / f"r{r}", None, pool=pool, progress=False,
                               straddle=True) for r in range(3)]
        quota = play_selfplay(nets[0][0], 4, cfg, tmp_path / "quota", None, pool=pool, progress=False)
    assert [s.games for s in stats] == [5, 5, 5] and stats[1].carried > 0 and stats[2].carried > 0
    assert [len(list((tmp_path / f"r{r}").glob("*.npz"))) for r in range(3)] == [5, 5, 5]
    assert quota.games == 4 and len(list((tmp_path / "quota").glob("*.npz"))) == 4
    # A game that ended once round 1 had all its games is held and written first in round 2: it
    # ended with round 1's net. Every other game begun before round 2 ended with round 2's net.
    straddled = [m["nets"] for m in shard_metas(tmp_path / "r2") if "nets" in m]
    assert all(n[k] != n[k + 1] for n in straddled for k in range(len(n) - 1))
    assert all(n[-1] in (nets[0][1], nets[1][1]) for n in straddled)
    assert any(n[-1] == nets[0][1] for n in straddled)


class _LaterNet:
    """A net that answers later (the inference server's contract) with a constant value per version."""

    def __init__(self):
        self.version, self.asked = 0.0, {}

    def submit(self, planes):
        ticket = len(self.asked)
        self.asked[ticket] = (len(planes), self.version)
        return ticket

    def collect(self, ticket):
        n, version = self.asked.pop(ticket)
        priors = np.full((n, GAME.num_actions), 1.0 / GAME.num_actions, np.float32)
        return priors, np.full(n, version, np.float32)


def test_a_batch_the_old_net_answers_after_the_change_stays_out_of_the_cache():
    positions = [GAME.new_position()]
    positions.append(positions[0].play(7))
    net = _LaterNet()
    inner = NetEvaluator(net, cache_size=100)
    evaluator = _CountingEvaluator(inner, report=lambda: None, stop=None)
    _, values = evaluator.collect(evaluator.submit(positions[:1]))  # cached: the old net's answer
    assert values[0] == 0.0 and len(inner._cache) == 1
    stale = evaluator.submit(positions)  # in flight when the net changes
    net.version = 1.0
    evaluator.new_net()
    assert len(inner._cache) == 0
    _, values = evaluator.collect(stale)
    assert list(values) == [0.0, 0.0]  # the trees that asked take the old net's answers...
    _, values = evaluator.collect(evaluator.submit(positions))
    assert list(values) == [1.0, 1.0]  # ...but a later request gets the new net's


# ------------------------------------------------------------------------------------ autotrain


TINY = ["--game", "gomoku", "--size", "6", "--connect", "4", "--blocks", "1", "--filters", "16",
        "--visits", "16", "--eval-games", "2", "--anchors", "random", "--no-plots", "--device", "cpu",
        "--threads", "1", "--workers", "2", "--games-parallel", "8", "--games-per-gen", "12", "--steps", "20"]
ENV = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=str(ROOT))


def records(rd: RunDir) -> set[str]:
    return {p.name for p in rd.chunk_files()}


@pytest.mark.timeout(400)
def test_autotrain_killed_between_rounds_loses_only_games_in_flight(tmp_path):
    run_dir = tmp_path / "run"
    rd = RunDir(run_dir)
    cmd = [sys.executable, "-m", "zero9", "autotrain", *TINY, "--dir", str(run_dir), "--generations", "3",
           "--steps", "200", "--straddle"]  # time to kill it in training
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=ENV, text=True)
    # kill -9 once round 0 is trained, before round 1 plays: the games in flight (and any held) go
    deadline = time.monotonic() + 240
    while not any(r.get("generation") == 0 for r in read_jsonl(rd.train_log)):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read()
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = records(rd)
    assert rd.count_games(0) == 12 and rd.count_games(1) == 0, "round 1 had begun"

    result = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    after = records(rd)
    assert before <= after, f"games lost: {sorted(before - after)}"
    status = rd.status()
    assert status["generation"] == 3
    assert [rd.count_games(g) for g in range(3)] == [12, 12, 12]
    assert status["games"] == len(after) == 36
    assert status["games_by_generation"] == {"0": 12, "1": 12, "2": 12}
    assert len(list(rd.sgf_dir.rglob("*.sgf"))) == 36

    # The rerun's second round (generation 2) holds games begun in its first, with both nets named.
    rows = read_jsonl(rd.selfplay_log)
    assert [r["straddle"] for r in rows] == [True, True, True]
    assert rows[-1]["carried"] > 0 and "begun in an earlier round" in result.stderr
    best = {e["generation"]: e["net"] for e in read_jsonl(rd.events_log) if e["event"] == "promoted"}
    straddled = [m["nets"] for m in shard_metas(rd.gen_chunks_dir(2)) if "nets" in m]
    assert straddled and all(nets == [best[1], best[2]] for nets in straddled)


@pytest.mark.timeout(300)
def test_autotrain_ends_every_game_with_its_round_by_default(tmp_path):
    run_dir = tmp_path / "run"
    rd = RunDir(run_dir)
    cmd = [sys.executable, "-m", "zero9", "autotrain", *TINY, "--dir", str(run_dir), "--generations", "2",
           "--eval-games", "0"]  # --straddle is off by default
    result = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=250)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    rows = read_jsonl(rd.selfplay_log)
    assert [(r["straddle"], r["carried"], r["games"]) for r in rows] == [(False, 0, 12), (False, 0, 12)]
    assert not any("nets" in m for g in range(2) for m in shard_metas(rd.gen_chunks_dir(g)))
