"""``zero9 plot RUN_DIR``: the command line of :mod:`zero9.learn.loop.plot`."""

from __future__ import annotations

import argparse

from zero9.learn.loop.plot import plot_run
from zero9.learn.rundir import RunDir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", help="the run directory (--dir of zero9 autotrain)")
    parser.add_argument("--out", default=None, help="folder for the PNGs (default RUN_DIR/plots)")


def run(args: argparse.Namespace) -> int:
    run_dir = RunDir(args.run_dir)
    if not run_dir.root.is_dir():
        raise ValueError(f"run directory {run_dir.root} does not exist")
    written = plot_run(run_dir, out_dir=args.out)
    for path in written:
        print(path)
    if not written:
        print(f"nothing to plot yet in {run_dir.root}")
    return 0
