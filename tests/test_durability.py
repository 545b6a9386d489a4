"""Lose nothing, whatever happens: faults a user meets, each tried for real on a tiny config.

Two autotrains on one run, SIGINT in self-play and in training, ``kill -9`` of the parent,
a truncated chunk, a full disk (a real tmpfs in a private mount namespace), bad net files,
bad SGF files, and ``printsgf`` onto a symlink or a pipe. docs/durability.md's table says
what each test shows.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from test_train import GAME, fake_game_chunk, make_run

from zero9.games import make_game
from zero9.games.sgf import save_sgf
from zero9.learn.rundir import RunDir, StatusLost
from zero9.nn.checkpoint import load_checkpoint, load_net, read_meta, save_checkpoint
from zero9.nn.net import make_net
from zero9.protocols.gtp import GTPEngine, LeelaZeroOptions
from zero9.search.player import NetSource
from zero9.util.files import NotRegularFileError, read_jsonl
from zero9.util.runlock import LOCK_NAME, LockFileError, RunDirBusy, RunLock, lock_holder

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--game", "gomoku", "--size", "6", "--connect", "4", "--blocks", "1", "--filters", "16",
        "--visits", "16", "--eval-games", "0", "--no-plots", "--device", "cpu", "--threads", "1"]
ENV = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=str(ROOT))


def zero9(*args: str) -> list[str]:
    return [sys.executable, "-m", "zero9", *args]


def autotrain(run_dir: Path, *extra: str) -> list[str]:
    return zero9("autotrain", *TINY, "--dir", str(run_dir), *extra)


def start(cmd: list[str]) -> subprocess.Popen:
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=ENV, text=True)


def wait_for(what, proc: subprocess.Popen, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        if proc.poll() is not None:
            raise AssertionError(f"ended (rc {proc.returncode}) before the fault:\n{proc.stdout.read()}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"timed out waiting:\n{proc.stdout.read()}")
        time.sleep(0.05)


def stop_with(proc: subprocess.Popen, sig: int, limit_s: float = 10.0) -> tuple[int, float, str]:
    """Send ``sig``; (return code, seconds to exit, output). Fails when it takes over ``limit_s``."""
    sent = time.monotonic()
    proc.send_signal(sig)
    try:
        out, _ = proc.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        name = signal.Signals(sig).name
        raise AssertionError(f"no exit within {limit_s}s of {name}:\n{proc.stdout.read()}") from None
    return proc.returncode, time.monotonic() - sent, out


def records(run_dir: Path) -> set[str]:
    return {p.name for p in RunDir(run_dir).chunk_files()}


def assert_exact_counts(rd: RunDir, games_per_gen: int, generations: int) -> None:
    status = rd.status()
    assert status["generation"] == generations
    assert [rd.count_games(g) for g in range(generations)] == [games_per_gen] * generations
    assert status["games"] == len(records(rd.root)) == games_per_gen * generations
    assert not list(rd.root.rglob(".tmp-*")), "temporary files left behind"


# --------------------------------------------------------------------------------------------- the lock


def test_run_lock_names_its_holder_and_dies_with_it(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from zero9.util.runlock import RunLock
        lock = RunLock({str(tmp_path)!r}, command="holder").acquire()
        print("locked", flush=True)
        time.sleep(60)
        """)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    with pytest.raises(RunDirBusy) as busy:
        RunLock(tmp_path).acquire()
    text = str(busy.value)
    assert f"PID {holder.pid}" in text and socket.gethostname() in text and "(holder)" in text
    assert lock_holder(tmp_path)["pid"] == holder.pid
    holder.kill()  # kill -9: the kernel drops the lock, the file stays and blocks no one
    holder.wait()
    assert (tmp_path / LOCK_NAME).exists() and lock_holder(tmp_path) is None
    with RunLock(tmp_path) as lock:
        assert lock.held and lock_holder(tmp_path)["pid"] == os.getpid()
    assert not lock.held


@pytest.mark.timeout(400)
def test_second_autotrain_exits_at_once_and_a_sigint_in_selfplay_loses_nothing(tmp_path):
    run_dir = tmp_path / "run"
    games, gens = 16, 2
    cmd = autotrain(run_dir, "--games-per-gen", str(games), "--generations", str(gens), "--steps", "20",
                    "--workers", "2", "--games-parallel", "4")
    first = start(cmd)
    rd = RunDir(run_dir)
    wait_for(lambda: lock_holder(run_dir) is not None, first)

    began = time.monotonic()
    second = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=60)
    second_s = time.monotonic() - began
    assert second.returncode != 0 and second_s < 5, (second_s, second.stdout, second.stderr)
    assert f"PID {first.pid} on host {socket.gethostname()}" in second.stderr, second.stderr
    assert "Traceback" not in second.stderr

    # Ctrl-C in round 0's self-play, once a few games are on disk.
    wait_for(lambda: rd.count_games(0) >= 3, first)
    rc, took, out = stop_with(first, signal.SIGINT)
    assert rc == 0 and "SIGINT: stopped" in out, out
    assert "Traceback" not in out
    kept = records(run_dir)
    assert 3 <= len(kept) < games and lock_holder(run_dir) is None

    result = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert kept <= records(run_dir), "finished games were lost"
    assert_exact_counts(rd, games, gens)
    print(f"second autotrain refused in {second_s:.1f}s; SIGINT in self-play: exit 0 in {took:.1f}s, "
          f"{len(kept)} games kept")


@pytest.mark.timeout(400)
def test_sigint_and_sigterm_in_training_save_the_step_and_resume_exactly(tmp_path):
    run_dir = tmp_path / "run"
    steps = 4000
    cmd = autotrain(run_dir, "--games-per-gen", "8", "--generations", "1", "--steps", str(steps),
                    "--workers", "1")
    rd = RunDir(run_dir)
    resumed_at = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        proc = start(cmd)
        logged = len(read_jsonl(rd.train_log))
        wait_for(lambda n=logged: len(read_jsonl(rd.train_log)) > n, proc)  # a training round is under way
        time.sleep(0.5)
        rc, took, out = stop_with(proc, sig)
        assert rc == 0 and f"{signal.Signals(sig).name}: stopped" in out, out
        state = load_checkpoint(rd.train_state_path)
        step = state.extra["round_step"]
        assert 0 < step < steps and state.optimizer_state and state.optimizer_state["state"]
        assert step > (resumed_at[-1] if resumed_at else 0)
        resumed_at.append(step)
        print(f"{signal.Signals(sig).name} in training: exit 0 in {took:.1f}s at step {step}")

    result = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"resuming training of generation 0 at step {resumed_at[-1]}" in result.stderr  # the log
    status = rd.status()
    assert status["global_step"] == steps and status["generation"] == 1
    assert not rd.train_state_path.exists()
    rows = read_jsonl(rd.train_log)
    keys = [(r["kind"], r["generation"], r["step"]) for r in rows]
    assert len(keys) == len(set(keys)), "a training step was logged twice"
    assert max(r["step"] for r in rows) == steps
    assert_exact_counts(rd, 8, 1)


# ------------------------------------------------------------------------------ kill -9 and the workers


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie is dead; only its exit status waits for a reaper


def is_worker(pid: int) -> bool:
    try:
        return b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


@pytest.mark.timeout(300)
def test_kill_9_of_the_parent_takes_every_worker_with_it(tmp_path):
    run_dir = tmp_path / "run"
    proc = start(autotrain(run_dir, "--games-per-gen", "200", "--generations", "1", "--workers", "3",
                           "--games-parallel", "2"))
    rd = RunDir(run_dir)
    wait_for(lambda: rd.count_games(0) >= 3, proc)  # every worker is playing
    workers = [p for p in children(proc.pid) if is_worker(p)]
    assert len(workers) == 3, workers
    proc.kill()
    killed = time.monotonic()
    proc.wait()
    while any(alive(p) for p in workers) and time.monotonic() - killed < 5:
        time.sleep(0.02)
    gone_s = time.monotonic() - killed
    assert not any(alive(p) for p in workers) and gone_s <= 1.0, f"workers alive {gone_s:.2f}s after kill -9"
    assert lock_holder(run_dir) is None
    print(f"kill -9: 3 workers gone {gone_s:.2f}s later")


# ----------------------------------------------------------------------------------- bad training data


def test_truncated_chunk_is_skipped_by_name_and_too_many_stop_training(tmp_path):
    rd = make_run(tmp_path, 20)
    files = rd.chunk_files()
    bad = files[5]
    data = bad.read_bytes()
    bad.write_bytes(data[:len(data) // 2])  # what a full disk or a crash elsewhere leaves
    cmd = zero9("train", "--dir", str(rd.root), "--game", "gomoku", "--size", "6", "--connect", "4",
                "--blocks", "1", "--filters", "8", "--steps", "5", "--window", "1", "--window-min", "0",
                "--device", "cpu", "--no-progress")
    result = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"skipping bad training data file {bad}" in result.stderr
    assert "19 chunks" in result.stderr and "skipped 1 unreadable chunk file(s)" in result.stderr
    assert len(list(rd.nets_dir.glob("*.pt"))) == 1

    for f in files[6:8]:
        f.write_bytes(b"")  # now 3 of 20 bad: more than the default 10%
    result = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=120)
    assert result.returncode == 2 and "3 of 20 training chunk files are unreadable" in result.stderr
    assert "Traceback" not in result.stderr
    result = subprocess.run(cmd + ["--max-bad-share", "0.2"], capture_output=True, text=True, env=ENV,
                            timeout=120)
    assert result.returncode == 0 and "skipped 3 unreadable" in result.stderr, result.stderr


def test_unreadable_sgf_files_are_listed_and_fail_unless_skip_bad(tmp_path):
    games = tmp_path / "sgf"
    games.mkdir()
    good = "(;GM[1]FF[4]SZ[9]KM[7.5]RE[B+R];B[ee];W[cc];B[gg])"
    (games / "good.sgf").write_text(good)
    (games / "truncated.sgf").write_text(good[:-12])
    (games / "binary.sgf").write_bytes(bytes(range(256)) * 4)
    (games / "empty.sgf").write_text("")
    (games / "two-then-cut.sgf").write_text(good + good + good[:20])
    cmd = zero9("supervised", str(games), "--out", str(tmp_path / "out"), "--game", "go", "--size", "9")
    result = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("unreadable SGF")]
    assert len(lines) == 4, result.stderr
    for name, reason in [("truncated", "truncated"), ("binary", "binary data"), ("empty", "empty file"),
                         ("two-then-cut", "after 2 whole games")]:
        assert any(str(games / f"{name}.sgf") in line and reason in line for line in lines), (name, lines)
    assert "3 games" in result.stdout  # the readable games are converted all the same
    result = subprocess.run(cmd + ["--skip-bad"], capture_output=True, text=True, env=ENV, timeout=120)
    assert result.returncode == 0 and "unreadable files: 4" in result.stdout


# ---------------------------------------------------------------------------------------- bad net files


def bad_net_files(folder: Path) -> dict[str, tuple[Path, str]]:
    """name -> (file, words its error must hold)."""
    game = make_game("gomoku", 6, connect=4)
    net = make_net(game, 1, 8)
    good = folder / "good.pt"
    save_checkpoint(good, net, {"game": game.to_dict()})
    payload = torch.load(good, weights_only=True)
    files = {}

    def add(name: str, words: str, write) -> None:
        path = folder / name
        write(path)
        files[name] = (path, words)

    add("random.pt", "neither a zip archive", lambda p: p.write_bytes(np.random.default_rng(0).bytes(4096)))
    add("lz-v2.txt", "format version 2", lambda p: p.write_text("2\n" + "0.5 " * 16 + "\n"))
    add("no-config.pt", "'config' part is missing",
        lambda p: torch.save({k: v for k, v in payload.items() if k != "config"}, p))
    add("state-dict.pt", "without zero9's format tag", lambda p: torch.save(net.state_dict(), p))
    add("truncated.pt", "truncated zip archive", lambda p: p.write_bytes(good.read_bytes()[:3000]))
    add("empty.pt", "it is empty", lambda p: p.write_bytes(b""))
    add("objects.pt", "Python objects", lambda p: torch.save({"format": "zero9-checkpoint", "x": Path()}, p))
    add("lz-garbled.txt", "line 2", lambda p: p.write_text("1\nnot numbers\n"))
    return files


def test_every_bad_net_file_is_refused_by_name_without_a_traceback(tmp_path):
    for name, (path, words) in bad_net_files(tmp_path).items():
        with pytest.raises(ValueError) as refused:
            load_net(path, device="cpu")
        text = str(refused.value)
        assert str(path) in text and words in text, (name, text)
        if name != "lz-garbled.txt":
            assert "is not a zero9 checkpoint or Leela Zero v1 weights file" in text, (name, text)
        assert "weights_only" not in text and "\n" not in text, (name, text)
    path = tmp_path / "random.pt"
    for cmd in (zero9("convert", str(path), str(tmp_path / "out.txt")),
                zero9("selfplay", "--net", str(path), "--out", str(tmp_path / "sp"), "--games", "1")):
        result = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=120)
        said = result.stdout + result.stderr
        assert result.returncode != 0 and "Traceback" not in said, said
        assert f"{path} is not a zero9 checkpoint or Leela Zero v1 weights file" in said


# ------------------------------------------------------------------------------------------- full disks

FULL_DISK_SCRIPT = r"""
import json, os, subprocess, sys
from pathlib import Path
import numpy as np
import torch
from zero9.games import make_game
from zero9.games.sgf import save_sgf
from zero9.nn.checkpoint import save_checkpoint
from zero9.nn.chunks import ChunkData, write_npz_shard
from zero9.nn.net import make_net
from zero9.util.files import DiskFullError, append_jsonl, atomic_write_json, read_jsonl

disk, run = Path(sys.argv[1]), Path(sys.argv[2])
out = {}
earlier = disk / "status.json"
atomic_write_json(earlier, {"games": 16})
append_jsonl(disk / "log.jsonl", {"row": 1})
net = make_net(make_game("gomoku", 6, connect=4), 1, 16)
fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)  # fill the disk, then free its last few KB
try:
    while True:
        os.write(fd, b"\0" * 4096)
except OSError:
    os.close(fd)
os.truncate(disk / "filler", os.path.getsize(disk / "filler") - 4096)
writes = {
    "checkpoint": lambda: save_checkpoint(disk / "net.pt", net, {"game": make_game("gomoku", 6).to_dict()}),
    "status": lambda: atomic_write_json(earlier, {"games": 17, "pad": "x" * 20000}),
    "sgf": lambda: save_sgf(disk / "game.sgf", "(;GM[1]" + "C[" + "x" * 20000 + "])"),
    "chunk": lambda: write_npz_shard(disk / "c.npz", ChunkData(
        np.random.default_rng(0).integers(0, 2, (200, 5, 6, 6)).astype(np.uint8), np.ones(200, np.int8),
        np.random.default_rng(1).random((200, 36), np.float32), np.ones(200, np.float32), None,
        make_game("gomoku", 6).to_dict())),
    "log": lambda: append_jsonl(disk / "log.jsonl", {"row": 2, "pad": "y" * 20000}),
}
for name, write in writes.items():
    try:
        write()
        out[name] = "written"
    except DiskFullError as e:
        out[name] = str(e)
out["status_after"] = json.loads(earlier.read_text())
out["log_after"] = read_jsonl(disk / "log.jsonl")
out["leftovers"] = sorted(p.name for p in disk.iterdir() if p.name.startswith(".tmp-"))
os.truncate(disk / "filler", os.path.getsize(disk / "filler") - 8192)  # room for chunks, not for a net
result = subprocess.run([sys.executable, "-m", "zero9", "train", "--dir", str(run), "--game", "gomoku",
                         "--size", "6", "--connect", "4", "--blocks", "2", "--filters", "64", "--steps", "3",
                         "--window", "1", "--window-min", "0", "--device", "cpu", "--no-progress"],
                        capture_output=True, text=True)
out["train"] = [result.returncode, result.stderr]
out["train_leftovers"] = sorted(str(p) for p in run.rglob(".tmp-*"))
out["train_nets"] = sorted(p.name for p in (run / "nets").glob("*.pt")) if (run / "nets").exists() else []
print("RESULT " + json.dumps(out))
"""


def in_private_tmpfs(mount: Path, size: str, command: list[str]) -> subprocess.CompletedProcess:
    """Run ``command`` with a fresh tmpfs of ``size`` at ``mount``, in a private mount namespace.

    ``unshare -rm`` needs no root where user namespaces are allowed; as root ``unshare -m`` does.
    """
    script = f"mount -t tmpfs -o size={size} zero9-full-disk {mount} && exec \"$@\""
    for prefix in (["unshare", "-rm"], ["unshare", "-m"]):
        if subprocess.run([*prefix, "true"], capture_output=True).returncode == 0:
            return subprocess.run([*prefix, "sh", "-c", script, "sh", *command], capture_output=True,
                                  text=True, env=ENV, timeout=300)
    pytest.fail("cannot make a private mount namespace for a small tmpfs (unshare -rm and -m refused)")


@pytest.mark.timeout(400)
def test_full_disk_is_one_clear_line_and_every_earlier_file_stays_whole(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    run = disk / "run"
    make_run(tmp_path / "staging", 6)
    # The chunks go in inside the namespace, so the run lives on the small disk too.
    command = ["sh", "-c", f"cp -r {tmp_path / 'staging' / 'run'} {run} && exec \"$@\"", "sh",
               sys.executable, "-c", FULL_DISK_SCRIPT, str(disk), str(run)]
    result = in_private_tmpfs(disk, "1m", command)
    line = next((x for x in result.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line, result.stdout + result.stderr
    out = json.loads(line[len("RESULT "):])
    for name, file in [("checkpoint", "net.pt"), ("status", "status.json"), ("sgf", "game.sgf"),
                       ("chunk", "c.npz"), ("log", "log.jsonl")]:
        assert out[name] == f"disk full writing {disk / file}; nothing was lost, free space and rerun", out
    assert out["status_after"] == {"games": 16}, "the earlier file changed"
    assert out["log_after"] == [{"row": 1}], "a failed append left part of a line"
    assert out["leftovers"] == [] and out["train_leftovers"] == []
    rc, stderr = out["train"]
    assert rc == 2 and "Traceback" not in stderr, stderr
    # one line says what went wrong (progress lines, on stderr too, may come before it)
    errors = [x for x in stderr.splitlines() if x.startswith("zero9 ")]
    assert len(errors) == 1 and errors[0].startswith("zero9 train: error: disk full writing "), stderr
    assert out["train_nets"] == []


# -------------------------------------------------------------------------- printsgf and atomic writes


def test_printsgf_writes_only_regular_files_with_the_users_umask(tmp_path):
    e = GTPEngine(make_game("go", 9), NetSource(None), LeelaZeroOptions(visits=2))
    e.handle("play b e5")
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    link = tmp_path / "link.sgf"
    link.symlink_to(target)
    pipe = tmp_path / "pipe.sgf"
    os.mkfifo(pipe)
    for path, kind in [(link, "symbolic link"), (pipe, "named pipe"), (tmp_path, "folder")]:
        reply = e.handle(f"printsgf {path}")
        assert reply.startswith("?") and f"{path} is a {kind}, not a regular file" in reply, reply
    assert target.read_text() == "keep me" and link.is_symlink() and stat.S_ISFIFO(os.lstat(pipe).st_mode)
    with pytest.raises(NotRegularFileError):
        save_sgf(link, "(;GM[1])")

    for umask, mode in [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)]:
        old = os.umask(umask)
        try:
            path = tmp_path / f"game-{umask:o}.sgf"
            assert e.handle(f"printsgf {path}").startswith("=")
            assert stat.S_IMODE(os.stat(path).st_mode) == mode and path.read_text().startswith("(;GM[1]")
            net = tmp_path / f"net-{umask:o}.pt"  # every atomic write: checkpoints too
            save_checkpoint(net, make_net(GAME, 1, 8), {"game": GAME.to_dict()})
            assert stat.S_IMODE(os.stat(net).st_mode) == mode
        finally:
            os.umask(old)
    assert not list(tmp_path.glob(".tmp-*"))


def test_a_game_killed_between_its_sgf_and_its_shard_is_swept_on_restart(tmp_path):
    """The shard commits a record (written last); a kill -9 just before it leaves only the SGF."""
    rd = RunDir(tmp_path / "run")
    kept, killed = "0000000000000000001-w00-00000", "0000000000000000002-w01-00000"
    fake_game_chunk(rd.gen_chunks_dir(1) / f"{kept}-4p.npz", 4, np.random.default_rng(0))
    for stem in (kept, killed):
        save_sgf(rd.gen_sgf_dir(1) / f"{stem}.sgf", "(;GM[4]SZ[6])")
    save_sgf(rd.gen_sgf_dir(0) / f"{killed}.sgf", "(;GM[4]SZ[6])")  # an older round: left alone (pruned?)
    assert rd.sweep_uncommitted_records(1) == 1
    assert sorted(p.name for p in rd.sgf_dir.rglob("*.sgf")) == [f"{kept}.sgf", f"{killed}.sgf"]
    assert (rd.gen_sgf_dir(1) / f"{kept}.sgf").exists() and rd.count_games() == 1


# ------------------------------------------------------------------------------- the lock file itself


def test_a_lock_file_that_is_a_symlink_pipe_or_folder_is_refused_untouched(tmp_path):
    """``.zero9-lock`` is opened O_NOFOLLOW | O_NONBLOCK and checked with fstat: a symlink's target is
    never written, a named pipe never blocks the open, and the command says which it found."""
    target = tmp_path / "precious.txt"
    target.write_text("precious\n")
    runs = {"symlink": tmp_path / "a", "pipe": tmp_path / "b", "folder": tmp_path / "c"}
    for run in runs.values():
        run.mkdir()
    (runs["symlink"] / LOCK_NAME).symlink_to(target)
    os.mkfifo(runs["pipe"] / LOCK_NAME)
    (runs["folder"] / LOCK_NAME).mkdir()
    kinds = {"symlink": "symbolic link", "pipe": "named pipe", "folder": "folder"}
    for name, run in runs.items():
        started = time.monotonic()
        with pytest.raises(LockFileError) as refused:
            RunLock(run).acquire()
        assert f"lock file {run / LOCK_NAME} is a {kinds[name]}" in str(refused.value)
        assert lock_holder(run) is None and time.monotonic() - started < 2
    assert target.read_text() == "precious\n"
    result = subprocess.run(autotrain(runs["pipe"], "--generations", "1"), capture_output=True, text=True,
                            env=ENV, timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"zero9 autotrain: error: lock file {runs['pipe'] / LOCK_NAME} is a named pipe, not a regular file; "
        f"zero9 neither follows nor waits on it (remove it and rerun)"]
    assert stat.S_ISFIFO(os.lstat(runs["pipe"] / LOCK_NAME).st_mode)


# --------------------------------------------------------------------------- a lost status.json


def resume(rd: RunDir, generations: int = 2) -> subprocess.CompletedProcess:
    return subprocess.run(autotrain(rd.root, "--generations", str(generations), "--games-per-gen", "4",
                                    "--workers", "1"), capture_output=True, text=True, env=ENV, timeout=300)


def one_generation_run(tmp_path: Path) -> RunDir:
    result = subprocess.run(autotrain(tmp_path / "run", "--generations", "1", "--games-per-gen", "4",
                                      "--workers", "1"), capture_output=True, text=True, env=ENV, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return RunDir(tmp_path / "run")


def test_a_lost_status_json_is_refused_by_name_and_rebuilt_from_disk(tmp_path):
    rd = one_generation_run(tmp_path)
    before = rd.status()
    nets = sorted(p.name for p in rd.nets_dir.iterdir())
    events = rd.events_log.read_text()
    for damage, words in (("missing", "status.json is missing"), ("corrupt", "status.json is unreadable")):
        if damage == "missing":
            rd.status_path.unlink()
        else:
            rd.status_path.write_text('{"best": ')
        result = resume(rd)
        said = result.stdout + result.stderr
        assert result.returncode == 2 and "Traceback" not in said, said
        assert len(result.stderr.strip().splitlines()) == 1 and words in said, said
        assert f"run directory {rd.root}" in said and f"zero9 rebuild-status --dir {rd.root}" in said, said
        assert sorted(p.name for p in rd.nets_dir.iterdir()) == nets and rd.events_log.read_text() == events
    result = subprocess.run(zero9("rebuild-status", "--dir", str(rd.root)), capture_output=True, text=True,
                            env=ENV, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    after = rd.status()
    same = ("generation", "best", "trainer", "promoted", "games", "games_by_generation", "global_step")
    assert {k: after[k] for k in same} == {k: before[k] for k in same}
    assert after["candidate"] is None and after["wall_seconds"] > 0
    again = subprocess.run(zero9("rebuild-status", "--dir", str(rd.root)), capture_output=True, text=True,
                           env=ENV, timeout=120)
    assert again.returncode == 2 and "is readable; there is nothing to rebuild" in again.stderr, again.stderr

    # a candidate trained but not yet gated is found again by its meta (generation, parent)
    trainer = load_checkpoint(rd.net_path(before["trainer"]))
    with torch.no_grad():
        next(trainer.net.parameters()).add_(0.01)
    candidate = save_checkpoint(rd.nets_dir / "candidate.pt", trainer.net,
                                {"game": trainer.meta["game"], "generation": before["generation"] + 1,
                                 "parent": before["trainer"], "step": before["global_step"] + 77})
    os.replace(rd.nets_dir / "candidate.pt", rd.net_path(candidate["hash"]))
    rd.status_path.unlink()
    rebuilt = rd.rebuild_status()
    assert rebuilt["candidate"] == candidate["hash"] and rebuilt["candidate_generation"] == 2
    assert rebuilt["global_step"] == before["global_step"] + 77

    # the rebuilt run goes on from where it was: gate the candidate, no second "created"
    result = resume(rd)
    assert result.returncode == 0, result.stdout + result.stderr
    said = result.stdout + result.stderr  # progress lines are logged (stderr)
    assert "created" not in said and "generation 1 has 4 games" not in said
    assert rd.status()["generation"] == 2 and rd.status()["trainer"] == candidate["hash"]
    assert [e["event"] for e in read_jsonl(rd.events_log)].count("created") == 1
    assert [rd.count_games(g) for g in (0, 1)] == [4, 4]


def test_a_fresh_run_and_a_train_only_folder_are_not_mistaken_for_a_lost_status(tmp_path):
    fresh = RunDir(tmp_path / "fresh")
    assert fresh.status() == {}
    trained = make_run(tmp_path, 3)  # chunks, no config.json: `zero9 train --dir` writes no status
    assert trained.status() == {}
    trained.config_path.write_text("{}")  # an autotrain run: its chunks now mean a status was lost
    with pytest.raises(StatusLost, match="status.json is missing"):
        trained.status()
    with pytest.raises(StatusLost):
        trained.write_status(wall_seconds=1.0)  # a merge into a lost status is refused too
    written = trained.write_status(generation=0, best="abc")  # a whole new status is not
    assert trained.status() == written


# ---------------------------------------------------------------------------------- a damaged best net


def test_a_truncated_best_net_is_one_line_from_every_loader(tmp_path):
    rd = one_generation_run(tmp_path)
    best = rd.net_path(rd.status()["best"])
    best.write_bytes(best.read_bytes()[: best.stat().st_size // 2])
    for load in (lambda p: load_net(p, device="cpu"), load_checkpoint, read_meta):
        with pytest.raises(ValueError) as refused:
            load(best)
        text = str(refused.value)
        assert text.startswith(f"{best} is not a zero9 checkpoint") and "truncated zip archive" in text
        assert "\n" not in text


def test_a_truncated_best_net_stops_autotrain_with_one_line(tmp_path):
    rd = one_generation_run(tmp_path)
    best = rd.net_path(rd.status()["best"])
    best.write_bytes(best.read_bytes()[: best.stat().st_size // 2])
    result = resume(rd)
    assert result.returncode == 2, result.stdout + result.stderr
    # the run's progress lines (logged) and bars share stderr: the error is its one line of its own
    said = [line for line in result.stderr.strip().splitlines() if line.startswith("zero9 ")]
    assert "Traceback" not in result.stderr and len(said) == 1, result.stderr
    assert result.stderr.strip().splitlines()[-1] == said[0], result.stderr
    assert said[0].startswith("zero9 autotrain: error: ") and f"{best} is not a zero9 checkpoint" in said[0]
