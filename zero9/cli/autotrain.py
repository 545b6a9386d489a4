"""``zero9 autotrain``: its options, and which loop runs them.

The alternating loop (:class:`zero9.learn.autotrain.AutoTrain`: self-play, then training)
on one device; the concurrent one (:class:`zero9.learn.concurrent.ConcurrentAutoTrain`: a
trainer beside self-play, every GPU) on a host with two GPUs or more, or with ``--concurrent``
(:func:`zero9.learn.autotrain.concurrent_by_default`).
"""

from __future__ import annotations

import argparse

from zero9.learn.autotrain import AutoTrain, concurrent_by_default, run_loop
from zero9.learn.autotrain import add_arguments as add_arguments
from zero9.learn.concurrent import ConcurrentAutoTrain


def run(args: argparse.Namespace) -> int:
    loop = ConcurrentAutoTrain(args) if concurrent_by_default(args) else AutoTrain(args)
    return run_loop(loop)
