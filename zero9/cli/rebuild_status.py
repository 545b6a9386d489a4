"""``zero9 rebuild-status --dir DIR``: write a run's lost status.json again from the files on disk.

A run whose status.json is missing or unreadable is refused by every command that
resumes it (:class:`zero9.learn.rundir.StatusLost`); this rebuilds it
(:meth:`zero9.learn.rundir.RunDir.rebuild_status`), holding the run's lock.
"""

from __future__ import annotations

import argparse

from zero9.learn.rundir import RunDir
from zero9.util.runlock import RunLock


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", required=True, help="the autotrain run directory whose status.json is lost")


def run(args: argparse.Namespace) -> int:
    run_dir = RunDir(args.dir)
    with RunLock(run_dir.root):
        status = run_dir.rebuild_status()
    candidate = f", candidate {status['candidate']}" if status.get("candidate") else ""
    print(f"rebuilt {run_dir.status_path}: generation {status['generation']}, best {status['best']}, "
          f"trainer {status['trainer']}{candidate}, {status['games']} games, "
          f"global step {status['global_step']}")
    return 0
