#!/usr/bin/env python3
"""Training speed: steps per second of :func:`zero9.learn.training.train.train_round` against a
reference loop.

Vocabulary:

- **step**: one optimizer step on a batch of ``--batch`` samples (policy, value and L2
  losses, backward, SGD with Nesterov momentum), as ``zero9 train`` and ``autotrain`` run it.
- **samples**: synthetic positions of the chosen game (random binary planes, a random
  policy target, values of +-1), held in memory like a loaded window.
- **train_round**: zero9's loop: each batch under random symmetries (numpy), copied to
  the GPU through pinned memory without waiting, the loss terms summed on the device and
  read back only when a log row is due.
- **reference** (measured in the same run): the same steps as the loop was written before
  (batches copied from ordinary memory, the L2 term summed weight by weight, every loss
  term read back after every step), so the ratio shows what not waiting for the GPU is worth.
- **compiled**: train_round with ``TrainOptions(compile=True)`` (torch.compile of the losses'
  forward and backward; autotrain's default on CUDA), its compile paid in the warm-up round.
- **ceiling**: one batch already on the device, stepped again and again (no batch making,
  no copies): the net's own forward + backward + update speed.

Run from the repository root (``PYTHONPATH=.`` if zero9 is not installed)::

    python3 scripts/bench_train.py                                  # CPU, 6x64 Gomoku 9x9
    python3 scripts/bench_train.py --device cuda --steps 300 --nets 6x64,10x128
    python3 scripts/bench_train.py --device cuda --game go --ownership --nets 10x64   # autotrain's Go net
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from zero9.games import make_game  # noqa: E402
from zero9.learn.training.losses import autocast, compute_losses, make_batch  # noqa: E402
from zero9.learn.training.train import make_optimizer, train_round  # noqa: E402
from zero9.nn.chunks import ChunkData  # noqa: E402
from zero9.nn.features import num_planes  # noqa: E402
from zero9.nn.net import make_net, resolve_device  # noqa: E402
from zero9.settings import TrainOptions  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--game", default="gomoku", choices=["gomoku", "go"])
    p.add_argument("--size", type=int, default=9)
    p.add_argument("--nets", default="6x64", help="comma-separated BLOCKSxFILTERS")
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--steps", type=int, default=40, help="timed steps per loop (after 5 warm-up steps)")
    p.add_argument("--positions", type=int, default=30_000, help="synthetic samples in memory")
    p.add_argument("--device", default="cpu", help="auto, cpu or cuda")
    p.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    p.add_argument("--ownership", action="store_true",
                   help="Go: nets with the ownership head and its targets (autotrain's Go runs)")
    p.add_argument("--compiled", action=argparse.BooleanOptionalAction, default=True,
                   help="also time train_round with TrainOptions(compile=True) (on by default on CUDA)")
    return p.parse_args(argv)


def synthetic_samples(game, positions: int, rng: np.random.Generator, ownership: bool = False) -> ChunkData:
    n = game.size
    planes = (rng.random((positions, num_planes(game), n, n)) < 0.2).astype(np.uint8)
    logits = rng.normal(size=(positions, game.num_actions)).astype(np.float32)
    policy = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    value = rng.choice([-1.0, 1.0], positions).astype(np.float32)
    to_play = np.ones(positions, np.int8)  # unused by training: values are already the mover's view
    own = rng.choice([-1, 1], (positions, n * n)).astype(np.int8) if ownership else None
    return ChunkData(planes, to_play, policy.astype(np.float32), value, own, game.to_dict())


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def seconds_per_step(step, device: torch.device, steps: int) -> float:
    """Seconds per call of ``step``: 5 warm-up calls, then ``steps`` timed ones."""
    for _ in range(5):
        step()
    sync(device)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    sync(device)
    return (time.perf_counter() - start) / steps


def time_train_round(net, samples: ChunkData, opts: TrainOptions) -> float:
    """Seconds per step of zero9's loop (a short round first, to warm up)."""
    warm = TrainOptions(**{**opts.__dict__, "steps": 5})
    train_round(net, samples, None, warm, progress=False)
    sync(net.device)
    start = time.perf_counter()
    train_round(net, samples, None, opts, progress=False)
    sync(net.device)
    return (time.perf_counter() - start) / opts.steps


def time_reference(net, samples: ChunkData, opts: TrainOptions) -> float:
    """Seconds per step of the loop as it was: pageable copies, every term read back every step."""
    device = net.device
    rng = np.random.default_rng(0)
    optimizer = make_optimizer(net, opts)
    no_l2 = TrainOptions(**{**opts.__dict__, "l2": 0.0})
    net.train()

    def step() -> None:
        idx = rng.integers(0, len(samples), opts.batch_size)
        planes, policy, value, _ = make_batch(samples, idx, rng, net.size)
        batch = [torch.from_numpy(np.ascontiguousarray(a)).to(device) for a in (planes, policy, value)]
        with autocast(device):
            terms = compute_losses(net, *batch, None, no_l2)
            l2 = sum((p.float() ** 2).sum() for p in net.parameters() if p.dim() > 1)
            terms["l2"] = opts.l2 * l2
            terms["total"] = terms["total"] + terms["l2"]
        optimizer.zero_grad(set_to_none=True)
        terms["total"].backward()
        optimizer.step()
        for v in terms.values():
            float(v.detach())

    return seconds_per_step(step, device, opts.steps)


def time_ceiling(net, samples: ChunkData, opts: TrainOptions) -> float:
    """Seconds per step with one batch already on the device: the net's own speed."""
    device = net.device
    optimizer = make_optimizer(net, opts)
    idx = np.arange(opts.batch_size) % len(samples)
    planes, policy, value, own = make_batch(samples, idx, None, net.size)
    batch = [torch.from_numpy(np.ascontiguousarray(a)).to(device) for a in (planes, policy, value)]
    own_t = None if own is None else torch.from_numpy(own).to(device)
    net.train()

    def step() -> None:
        with autocast(device):
            terms = compute_losses(net, *batch, own_t, opts)
        optimizer.zero_grad(set_to_none=True)
        terms["total"].backward()
        optimizer.step()

    return seconds_per_step(step, device, opts.steps)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    device = resolve_device(args.device)
    torch.set_num_threads(args.threads)
    game = make_game(args.game, args.size)
    samples = synthetic_samples(game, args.positions, np.random.default_rng(1), args.ownership)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
        name = torch.cuda.get_device_name(device)
    else:
        name = f"CPU, {args.threads} threads"
    print(f"# bench_train: {name}, torch {torch.__version__}, {args.game} {args.size}x{args.size}, "
          f"batch {args.batch}, {args.steps} timed steps per loop\n")
    print("| net | reference steps/s | train_round steps/s | ratio to reference | ceiling steps/s "
          "| compiled steps/s | compiled / train_round |")
    print("|---|---|---|---|---|---|---|")
    for text in args.nets.split(","):
        blocks, filters = (int(v) for v in text.lower().split("x"))
        opts = TrainOptions(steps=args.steps, batch_size=args.batch, seed=0, max_reuse=0,
                            test_every=args.steps, compile=False)
        torch.manual_seed(0)
        net = make_net(game, blocks, filters, ownership=args.ownership).to(device)
        ref = time_reference(net, samples, opts)
        ours = time_train_round(net, samples, opts)
        ceiling = time_ceiling(net, samples, opts)
        compiled = (time_train_round(net, samples, dataclasses.replace(opts, compile=True))
                    if args.compiled else float("nan"))
        print(f"| {blocks}x{filters} | {1 / ref:.1f} | {1 / ours:.1f} | {ref / ours:.2f} "
              f"| {1 / ceiling:.1f} | {1 / compiled:.1f} | {ours / compiled:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
