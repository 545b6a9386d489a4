"""The concurrent autotrain (a trainer process beside self-play) loses nothing either, on the CPU.

``--concurrent`` forces the mode on one device, so these run without a GPU: two owners,
SIGINT while the trainer trains (its step is saved and the rerun resumes it exactly), ``kill -9``
of the parent (the workers and the trainer die with it), and a full disk (a real tmpfs): the
one line of docs/durability.md, exit 2, and after freeing space the rerun completes the run.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_durability import (
    ENV,
    alive,
    assert_exact_counts,
    autotrain,
    children,
    in_private_tmpfs,
    is_worker,
    records,
    start,
    stop_with,
    wait_for,
)

from zero9.learn.rundir import RunDir
from zero9.nn.checkpoint import load_checkpoint
from zero9.util.files import read_jsonl
from zero9.util.runlock import lock_holder


def concurrent(run_dir: Path, *extra: str) -> list[str]:
    return autotrain(run_dir, "--concurrent", *extra)


@pytest.mark.timeout(400)
def test_two_owners_and_sigint_while_training_resume_exactly(tmp_path):
    run_dir = tmp_path / "run"
    games, rounds, steps = 8, 3, 3000
    cmd = concurrent(run_dir, "--games-per-gen", str(games), "--generations", str(rounds),
                     "--steps", str(steps), "--workers", "2", "--games-parallel", "4")
    first = start(cmd)
    rd = RunDir(run_dir)
    wait_for(lambda: lock_holder(run_dir) is not None, first)
    second = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=60)
    assert second.returncode != 0 and f"PID {first.pid}" in second.stderr, second.stderr

    # Ctrl-C once the trainer is under way beside self-play
    wait_for(lambda: any(r["step"] > 0 for r in read_jsonl(rd.train_log)), first)
    rc, took, out = stop_with(first, signal.SIGINT, limit_s=30)
    assert rc == 0 and "SIGINT: stopped" in out and "Traceback" not in out, out
    state = load_checkpoint(rd.train_state_path)
    step = state.extra["round_step"]
    assert 0 < step < steps, step
    assert rd.status()["training"] == 0, "the round under way is not named for the rerun"
    kept = records(run_dir)

    result = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"resuming training of generation 0 at step {step}" in result.stderr, result.stderr[-3000:]
    assert kept <= records(run_dir), "finished games were lost"
    assert_exact_counts(rd, games, rounds)
    status = rd.status()
    assert status["nets_trained"] >= 1 and status["training"] is None and status["best"] == status["trainer"]
    assert not rd.train_state_path.exists()
    keys = [(r["kind"], r["generation"], r["step"]) for r in read_jsonl(rd.train_log)]
    assert len(keys) == len(set(keys)), "a training step was logged twice"
    published = [r for r in read_jsonl(rd.events_log) if r["event"] == "promoted"]
    assert [r["generation"] for r in published] == list(range(1, status["nets_trained"] + 1))
    print(f"SIGINT while training: exit 0 in {took:.1f}s at step {step}; resumed there")


@pytest.mark.timeout(300)
def test_kill_9_takes_the_workers_and_the_trainer_with_it(tmp_path):
    run_dir = tmp_path / "run"
    proc = start(concurrent(run_dir, "--games-per-gen", "4", "--generations", "50", "--steps", "100000",
                            "--workers", "2", "--games-parallel", "2"))
    rd = RunDir(run_dir)
    wait_for(lambda: rd.status().get("training") is not None, proc)  # a training round beside self-play
    time.sleep(1.0)
    spawned = [p for p in children(proc.pid) if is_worker(p)]
    assert len(spawned) == 3, spawned  # two workers and the trainer
    proc.kill()
    killed = time.monotonic()
    proc.wait()
    while any(alive(p) for p in spawned) and time.monotonic() - killed < 5:
        time.sleep(0.02)
    gone_s = time.monotonic() - killed
    assert not any(alive(p) for p in spawned) and gone_s <= 1.0, f"alive {gone_s:.2f}s after kill -9"
    assert lock_holder(run_dir) is None
    print(f"kill -9: 2 workers and the trainer gone {gone_s:.2f}s later")


FULL_DISK_SCRIPT = r"""
import json, os, subprocess, sys
from pathlib import Path
from zero9.learn.rundir import RunDir
from zero9.learn.training.window import read_chunk
from zero9.games import make_game

disk, run, cmd = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)  # fill the disk, then free 160 KB of it
try:
    while True:
        os.write(fd, b"\0" * 65536)
except OSError:
    pass
os.close(fd)
os.truncate(disk / "filler", os.path.getsize(disk / "filler") - 160 * 1024)
first = subprocess.run(cmd, capture_output=True, text=True)
rd = RunDir(run)
game = make_game("gomoku", 6, connect=4)
unreadable = []
for path in rd.chunk_files():
    try:
        read_chunk(path, game)
    except ValueError as e:
        unreadable.append(f"{path.name}: {e}")
out = {"rc1": first.returncode, "stderr1": first.stderr[-3000:], "stdout1": first.stdout[-3000:],
       "kept": sorted(p.name for p in rd.chunk_files()), "unreadable": unreadable,
       "leftovers1": sorted(str(p) for p in run.rglob(".tmp-*")), "status1": rd.status()}
os.unlink(disk / "filler")
second = subprocess.run(cmd, capture_output=True, text=True)
out.update(rc2=second.returncode, out2=second.stdout[-3000:] + second.stderr[-3000:],
           after=sorted(p.name for p in rd.chunk_files()), status2=rd.status(),
           counts=[rd.count_games(g) for g in range(int(rd.status().get("generation", 0)))],
           leftovers2=sorted(str(p) for p in run.rglob(".tmp-*")))
print("RESULT " + json.dumps(out))
"""


@pytest.mark.timeout(400)
def test_full_disk_is_the_one_line_and_a_rerun_after_freeing_space_completes(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    run_dir = disk / "run"
    games, rounds = 8, 12
    cmd = concurrent(run_dir, "--games-per-gen", str(games), "--generations", str(rounds), "--steps", "20",
                     "--workers", "2", "--games-parallel", "4")
    # The run's disk is full but for 160 KB: it fills in self-play or in training, wherever it comes
    result = in_private_tmpfs(disk, "4m", [sys.executable, "-c", FULL_DISK_SCRIPT, str(disk), str(run_dir),
                                           *cmd])
    line = next((x for x in result.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line, result.stdout[-3000:] + result.stderr[-3000:]
    out = json.loads(line[len("RESULT "):])
    last = [x for x in out["stderr1"].splitlines() if x.strip()][-1]
    assert out["rc1"] == 2 and "Traceback" not in out["stderr1"], out["stderr1"] + out["stdout1"]
    assert last.startswith("zero9 autotrain: error: disk full writing ") and last.endswith(
        "; nothing was lost, free space and rerun"), out["stderr1"]
    assert out["unreadable"] == [] and out["leftovers1"] == [], out
    assert out["status1"].get("best"), "status.json was damaged"
    assert out["rc2"] == 0, out["out2"]
    assert set(out["kept"]) <= set(out["after"]), "finished games were lost"
    assert out["counts"] == [games] * rounds and out["status2"]["generation"] == rounds, out["counts"]
    assert out["leftovers2"] == []
    print(f"full disk: exit 2 with {last!r}; {len(out['kept'])} games kept, the rerun completed")
