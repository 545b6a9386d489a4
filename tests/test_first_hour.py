"""A newcomer's first hour: the set-up waits for a held apt lock, minitrain's closing line opens the
net it names, and Ctrl-C during self-play prints one line.

The apt test holds dpkg's real frontend lock (the fcntl lock apt and dpkg take) from another
process for a few seconds, as unattended-upgrades would, and runs the script the test command
uses; it needs root and apt-get (CI's Debian machine has both).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gui.engine import build_engine
from zero9.cli.play import add_arguments as play_arguments
from zero9.cli.play import settings_from_args
from zero9.games import make_game
from zero9.nn.checkpoint import save_checkpoint
from zero9.nn.net import make_net

ROOT = Path(__file__).resolve().parents[1]
LOCK = "/var/lib/dpkg/lock-frontend"
HOLD = r"""
import fcntl, sys, time
with open(sys.argv[1], "w") as f:
    fcntl.lockf(f, fcntl.LOCK_EX)
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def hold_apt_lock(seconds: float) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, LOCK, str(seconds)], stdout=subprocess.PIPE,
                              text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def apt_get_sh(*args: str, wait: int) -> subprocess.CompletedProcess:
    script = str(ROOT / "scripts" / "apt_get.sh")
    return subprocess.run(["bash", script, *args], capture_output=True, text=True,
                          env={**os.environ, "ZERO9_APT_WAIT": str(wait)}, timeout=wait + 60)


needs_apt = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("apt-get") is None or not os.path.exists(LOCK),
    reason="needs root and Debian's apt (CI has both)")


@needs_apt
def test_apt_get_waits_for_a_held_lock_instead_of_failing():
    package = "gnugo"  # installed by scripts/test.sh already: 'install' only checks it
    holder = hold_apt_lock(12)
    try:
        plain = subprocess.run(["apt-get", "install", "-y", "-qq", package], capture_output=True, text=True)
        assert plain.returncode != 0 and "lock" in plain.stderr.lower(), "plain apt-get fails at once"
        start = time.monotonic()
        waited = apt_get_sh("install", "-y", "-qq", package, wait=120)
        took = time.monotonic() - start
    finally:
        holder.kill()
        holder.wait()
    assert waited.returncode == 0, waited.stderr
    assert took > 5, f"returned after {took:.1f} s: it did not wait for the lock"


@needs_apt
def test_apt_get_gives_up_with_a_clear_line_after_its_limit():
    holder = hold_apt_lock(40)
    try:
        done = apt_get_sh("install", "-y", "-qq", "gnugo", wait=1)
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode != 0 and "still locked by another process after 1 s" in done.stderr


def test_minitrain_says_how_to_play_the_net_it_trained(tmp_path):
    """The closing 'play it:' line names the run's game and size, so the window accepts the net."""
    run = tmp_path / "run"
    game = make_game("gomoku", 8)
    (run / "nets").mkdir(parents=True)
    save_checkpoint(run / "nets" / "gen-0003.pt", make_net(game, 1, 8), {"game": game.to_dict()})
    (run / "status.json").write_text('{"best": "gen-0003"}')
    # a bad extra option makes autotrain stop at once: only the closing lines run
    done = subprocess.run(["bash", str(ROOT / "minitrain.sh"), "gomoku8", "--no-such-option"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "RUN_DIR": str(run), "PYTHONPATH": str(ROOT)})
    line = next(x for x in done.stdout.splitlines() if x.startswith("play it:"))
    argv = line.split(":", 1)[1].split()
    assert argv[:2] == ["zero9", "play"], line
    parser = argparse.ArgumentParser()
    play_arguments(parser)
    settings = settings_from_args(parser.parse_args(argv[2:]))
    assert (settings.game, settings.size) == ("gomoku", 8)
    engine = build_engine(settings.make_game(), settings.net, settings.visits)  # NetMismatch if not fitting
    assert not engine.uniform and engine.net_path == run / "nets" / "gen-0003.pt"


@pytest.mark.parametrize("when", ["starting", "playing"])
def test_ctrl_c_during_selfplay_prints_one_line(tmp_path, when):
    """SIGINT to the whole process group (what Ctrl-C does): while the workers start (importing torch)
    and once games are being written. Every process gets it; only the parent may speak, in one line,
    and the command stops cleanly (exit 0, finished games kept: docs/durability.md)."""
    out = tmp_path / "selfplay"
    net = ROOT / "example-data" / "gomoku_9x9_best.pt"
    command = [sys.executable, "-m", "zero9", "selfplay", "--net", str(net),
               "--games", "200", "--workers", "2", "--visits", "8", "--out", str(out), "--device", "cpu"]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(iter(lambda: proc.stderr.read(1), "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + 180

    def wait_for(ready) -> None:
        while not ready() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)

    if when == "starting":  # the progress bar is up: the pool's processes are being spawned
        wait_for(lambda: "self-play:" in "".join(err))
        time.sleep(1.0)
    else:
        wait_for(lambda: list((out / "chunks").glob("*.npz")))
    assert proc.poll() is None, "self-play ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(timeout=120)
    reader.join(timeout=10)
    text = "".join(err)
    assert proc.returncode == 0, text[-2000:]
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text[-2000:]
    assert text.count("SIGINT: stopping at the next safe point") == 1, text[-2000:]
