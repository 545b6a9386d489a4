"""``zero9 autotrain``: its options, and which loop runs them.

The alternating loop (:class:`zero9.learn.autotrain.AutoTrain`: self-play, then training)
on one device; the concurrent one (:class:`zero9.learn.concurrent.ConcurrentAutoTrain`: a
trainer beside self-play, every GPU) on a host with two GPUs or more, or with ``--concurrent``
(:func:`zero9.learn.autotrain.concurrent_by_default`).
"""

from __future__ import annotations

import argparse

from zero9.cli.selfplay import add_selfplay_arguments, selfplay_config
from zero9.learn import autotrain
from zero9.learn.autotrain import AutoTrain, concurrent_by_default, run_loop
from zero9.learn.concurrent import ConcurrentAutoTrain


def add_arguments(parser: argparse.ArgumentParser) -> None:
    autotrain.add_arguments(parser)
    # Playout cap randomisation is on in the loop (None: 0.25 with PUCT, off with --gumbel): at equal
    # compute it beat full searches on every move 36-4 (docs/runs/ab, 9x9 Gomoku, 8 minutes each).
    add_selfplay_arguments(parser, {"pcr": None})


def run(args: argparse.Namespace) -> int:
    selfplay = selfplay_config(args)
    loop = ConcurrentAutoTrain(args, selfplay) if concurrent_by_default(args) else AutoTrain(args, selfplay)
    return run_loop(loop)
