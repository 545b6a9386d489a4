"""How many threads torch's CPU kernels get, chosen by the batch a command's net calls carry.

Vocabulary:

- **batch**: the positions in one net call. The interactive commands search with a few
  leaves per tree per call (``zero9 play``'s window, ``zero9 demo`` and ``zero9 gtp``: 8;
  ``zero9 analysis``: 8 for each of its 16 positions; ``zero9 review``: 8 for each
  position of the game), so their batches are small, and their nets are small (10x64).
- **small batch**: below :data:`SMALL_BATCH` positions: one thread (see
  :func:`threads_for_batch` for the measurement). Larger batches get every core.
- **explicit setting**: a thread count the user gave wins: a command's own option
  (``zero9 gtp -t N``, ``zero9 analysis --threads N``; 0 = torch's default), else
  ``OMP_NUM_THREADS`` in the environment (torch reads it at start; nothing is changed then).
"""

from __future__ import annotations

import os

import torch

SMALL_BATCH = 1024  # batches below this run on one thread (threads_for_batch's measurement)


def threads_for_batch(batch: int, cores: int | None = None) -> int:
    """Torch threads for net calls of ``batch`` positions on ``cores`` cores (default: this machine's).

    Measured on the 2-core CPU shared with other jobs (load average 7 to 9 from them), the
    shipped nets' shape (10x64, fp32), ``scripts/bench_net.py --nets 10x64 --layouts nchw
    --batches 1,8,32,128,512 --threads T``, positions per second, 1 thread / 2 threads:

    ============================  =========  =========  =========  =========  =========
    batch                         1          8          32         128        512
    ============================  =========  =========  =========  =========  =========
    alone                         128 / 142  316 / 671  632 / 662  456 / 322  445 / 189
    beside 2 busy-loop processes  41 / 2     78 / 4     93 / 10    79 / 26    89 / 53
    ============================  =========  =========  =========  =========  =========

    Two threads that must meet at every layer wait for each other whenever another process
    holds a core: beside two busy loops they were 1.7x (batch 512) to 20x (batch 1 and 8)
    slower than one thread, and alone they won only at batch 8. Issue 42 saw the same in whole
    commands: ``zero9 demo`` took 21-54 s instead of 2.7 s on a busy 2-core machine with
    torch's two threads, 2.7-7.7 s with ``OMP_NUM_THREADS=1``. So every batch up to the
    largest measured runs on one thread; the cores are for training's and self-play's batches.
    Whole commands, ``scripts/bench_review.py --busy 2`` (same machine, load average 9 to 13
    from other jobs), seconds alone / beside 2 busy loops, one thread vs ``OMP_NUM_THREADS=2``:
    ``zero9 review`` (77 moves, 200 visits) 50 / 194 vs 146 / 246; ``zero9 demo`` 9.6 / 37 vs
    71 / 188.
    """
    cores = cores or os.cpu_count() or 1
    return 1 if batch < SMALL_BATCH else cores


def choose_torch_threads(batch: int, asked: int | None = None) -> int:
    """Set torch's CPU threads for net calls of ``batch`` positions; the number in effect.

    ``asked``: the command line's thread count (None: not given; 0: torch's default); it wins,
    then ``OMP_NUM_THREADS``, then :func:`threads_for_batch`.
    """
    if asked is not None:
        if asked > 0:
            torch.set_num_threads(asked)
        return torch.get_num_threads()
    if os.environ.get("OMP_NUM_THREADS", "").strip():
        return torch.get_num_threads()
    torch.set_num_threads(threads_for_batch(batch))
    return torch.get_num_threads()
