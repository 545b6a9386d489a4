#!/usr/bin/env python3
"""How long ``zero9 pbrain`` takes to exit after the manager's ``END``, against a normal Python exit.

A Gomocup manager waits a little for a brain to exit after ``END`` and then kills it (the
protocol's example limit is 1 s). zero9's brain answers END, flushes its output and leaves with
``os._exit`` (zero9/cli/pbrain.py); what it skips is the interpreter's own shutdown with torch
loaded, 0.3-1.0 s on a 2-core CPU.

- **brain**: ``zero9 pbrain -w uniform`` is started, answers ``START 15`` and ``BEGIN``, then gets
  ``END``; the time is from writing END to the process's exit.
- **reference**: a Python process that has imported the same modules (torch, the brain), and
  then exits the ordinary way when its input ends: the shutdown the brain used to go through.

The rounds alternate between the two so that load from other processes falls on both alike.
Prints the median and worst of each and, last, ``reference / brain: X.Xx``.

    python scripts/bench_pbrain_exit.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

REFERENCE = "import sys, zero9.protocols.pbrain, torch; print('ready', flush=True); sys.stdin.read()"


def brain_exit() -> float:
    process = subprocess.Popen([sys.executable, "-m", "zero9", "pbrain", "-w", "uniform", "-v", "50"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    process.stdin.write("START 15\nBEGIN\n")
    process.stdin.flush()
    assert process.stdout.readline().strip() == "OK"
    process.stdout.readline()  # our first move
    started = time.monotonic()
    process.stdin.write("END\n")
    process.stdin.flush()
    if process.wait(timeout=30) != 0:
        raise RuntimeError(f"zero9 pbrain exited with {process.returncode}")
    return time.monotonic() - started


def reference_exit() -> float:
    process = subprocess.Popen([sys.executable, "-c", REFERENCE], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "ready"
    started = time.monotonic()
    process.stdin.close()
    process.wait(timeout=30)
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="exits measured of each (default 5)")
    args = parser.parse_args()
    brain, reference = [], []
    for _ in range(args.rounds):
        brain.append(brain_exit())
        reference.append(reference_exit())
    for name, times in (("brain (END -> exit)", brain), ("reference (normal exit)", reference)):
        print(f"{name:24} median {statistics.median(times):.3f} s, worst {max(times):.3f} s")
    print(f"reference / brain: {statistics.median(reference) / statistics.median(brain):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
