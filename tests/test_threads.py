"""Torch's threads for the interactive commands (zero9.util.threads): one for small batches.

Issue 42: on a shared 2-core CPU ``zero9 demo`` took 21-54 s instead of 2.7 s with torch's two
threads fighting the other process. Each command is run in a fresh interpreter, where torch
starts with a thread per core, and says how many threads it left.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from zero9.util.threads import SMALL_BATCH, threads_for_batch

ROOT = Path(__file__).resolve().parents[1]
GAME = ROOT / "docs" / "runs" / "review-gnugo" / "game-0000.sgf"
MANY_CORES = pytest.mark.skipif((os.cpu_count() or 1) < 2,
                                reason="torch starts with one thread on one core: nothing to choose")

def threads_after(code: str, env_extra: dict[str, str] | None = None) -> int:
    """torch.get_num_threads() after ``code`` ran in a fresh interpreter (OMP_NUM_THREADS unset)."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env.update({"PYTHONPATH": str(ROOT), **(env_extra or {})})
    code += "\nimport torch; print('threads', torch.get_num_threads())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return int(done.stdout.split("threads")[-1])


def cli(command: str, *argv: str) -> str:
    """Code that parses ``zero9 COMMAND ARGV`` as the CLI does and runs it (or builds GTP's engine)."""
    module = f"zero9.cli.{command}"
    call = "cmd.make_engine(args)" if command == "gtp" else "cmd.run(args)"
    return (f"import argparse, io, contextlib; import {module} as cmd\n"
            f"p = argparse.ArgumentParser(); cmd.add_arguments(p); args = p.parse_args({list(argv)!r})\n"
            f"with contextlib.redirect_stdout(io.StringIO()): {call}")


def test_small_batches_get_one_thread_large_ones_every_core():
    assert threads_for_batch(1, cores=2) == threads_for_batch(SMALL_BATCH - 1, cores=2) == 1
    assert threads_for_batch(SMALL_BATCH, cores=2) == 2 and threads_for_batch(SMALL_BATCH, cores=1) == 1


@MANY_CORES
def test_the_interactive_commands_run_their_small_batches_on_one_thread(tmp_path):
    assert threads_after("import torch") == os.cpu_count()  # what each command starts from
    assert threads_after(cli("demo", "--game", "gomoku", "--size", "9", "--visits", "2", "--seed", "1",
                             "--quiet")) == 1
    assert threads_after(cli("gtp", "--quiet", "--cpu-only")) == 1
    short = tmp_path / "short.sgf"
    short.write_text("(;GM[1]FF[4]SZ[9]KM[7.5];B[ee];W[cc])")
    assert threads_after(cli("review", str(short), "--visits", "2", "--no-plot", "--out", str(tmp_path))) == 1


@MANY_CORES
def test_a_thread_count_the_user_gave_wins():
    run_demo = cli("demo", "--game", "gomoku", "--size", "9", "--visits", "2", "--seed", "1", "--quiet")
    assert threads_after(run_demo, {"OMP_NUM_THREADS": "2"}) == 2
    assert threads_after(cli("gtp", "--quiet", "--cpu-only", "-t", "2")) == 2
    assert threads_after(cli("gtp", "--quiet", "--cpu-only", "-t", "0")) == os.cpu_count()  # torch's own
