"""``zero9 train``'s library: one training round of a net on the run's window, resumable.

Vocabulary:

- **reuse cap**: a round draws ``steps * batch`` samples; on a small window the batch
  shrinks (to no less than ``min_batch``) so no position is drawn more than
  ``max_reuse`` times per round on average (see :func:`effective_batch`).
- **schedule**: a linear warm-up over the run's first ``warmup`` steps, then in
  each training round a cosine decay from ``lr`` to ``lr * lr_floor``; the next
  round restarts at ``lr`` (warm restarts). The optimizer (SGD with Nesterov
  momentum 0.9 by default, or Adam) keeps its state across rounds through the
  checkpoint.
- **train state**: ``nets/train_state.pt`` holds the model, optimizer, step and
  RNG of the round in progress, saved atomically every ``save_every`` seconds and
  when SIGINT/SIGTERM stops the round after its current step
  (:mod:`zero9.util.interrupts`), so a stopped round resumes at the next step and a
  killed one where it last saved, instead of from scratch.

The window a round learns from (samples, test split, down-sampling, bad chunks) is
:mod:`zero9.learn.training.window`; a batch and its losses (symmetries, the loss terms) are
:mod:`zero9.learn.training.losses`.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from zero9.learn.rundir import RunDir
from zero9.learn.training.losses import (
    LossSums,
    autocast,
    compute_losses,
    evaluate,
    komi_view,
    make_batch,
    to_tensors,
)
from zero9.learn.training.window import ChunkCache, load_window
from zero9.nn.checkpoint import game_from_meta, load_checkpoint, save_checkpoint
from zero9.nn.chunks import ChunkData
from zero9.settings import TrainOptions
from zero9.util.files import append_jsonl, read_jsonl, rewrite_jsonl
from zero9.util.interrupts import check_stop, stop_requested

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------
# the optimisation


def make_optimizer(net, opts: TrainOptions):
    if opts.optimizer == "sgd":
        return torch.optim.SGD(net.parameters(), lr=opts.lr, momentum=opts.momentum, nesterov=True)
    if opts.optimizer == "adam":
        return torch.optim.Adam(net.parameters(), lr=opts.lr)
    raise ValueError(f"unknown optimizer {opts.optimizer!r}: expected sgd or adam")


def learning_rate(opts: TrainOptions, step: int, global_step: int) -> float:
    """Warm-up over the run's first steps, then a cosine decay within this round (module docstring)."""
    warmup = opts.warmup if opts.warmup >= 0 else min(200, opts.steps // 4)
    warm = min(1.0, (global_step + 1) / warmup) if warmup > 0 else 1.0
    frac = step / max(1, opts.steps)
    decay = opts.lr_floor + (1 - opts.lr_floor) * 0.5 * (1 + math.cos(math.pi * frac))
    return opts.lr * warm * decay


def effective_batch(opts: TrainOptions, train_positions: int) -> int:
    """The batch size, shrunk so a small window is not drawn more than ``max_reuse`` times per position.

    Leela Zero's pipeline sees each position about once per round; memorising a
    few hundred positions a hundred times over is what makes tiny runs overfit.
    """
    if opts.max_reuse <= 0:
        return opts.batch_size
    cap = math.ceil(opts.max_reuse * train_positions / max(1, opts.steps))
    return int(min(opts.batch_size, max(opts.min_batch, cap)))


def batch_losses(net, planes, policy, value, own, opts: TrainOptions, komi):
    """One batch's loss terms under the device's autocast (:func:`compute_losses`)."""
    with autocast(planes.device):
        return compute_losses(net, planes, policy, value, own, opts, komi)


def compiles(opts: TrainOptions, device: torch.device) -> bool:
    """Whether training compiles its losses: ``opts.compile``, by default on CUDA only."""
    return device.type == "cuda" if opts.compile is None else opts.compile


@functools.cache  # the process's one compiled batch_losses: every round's net reuses its graphs
def compiled_losses():
    """:func:`batch_losses` through torch.compile (the forward and backward of the losses; BN, ReLU and
    the residual adds fused). A 10x64 net's eager step on a GPU is launch-bound: it trained 400 steps a
    round in 8-15 s on an H200, 56% of a 20-minute run (docs/runs/go9-zero20). The net is an argument,
    not a closure, so a round's fresh net of the same shape reuses the compiled graphs (Dynamo guards on
    its structure, not its identity): the compile is paid once per process, not once per round."""
    return torch.compile(batch_losses, dynamic=False)


@dataclass
class RoundResult:
    net: Any
    optimizer_state: dict
    steps: int
    global_step: int
    last_train: dict
    last_test: dict | None
    info: dict


def train_round(net, train: ChunkData, test: ChunkData | None, opts: TrainOptions, *,
                generation: int = 0, global_step: int = 0, optimizer_state: dict | None = None,
                start_step: int = 0, log_path: Path | None = None, state_saver=None,
                progress: bool = True, info: dict | None = None) -> RoundResult:
    """Run steps ``start_step .. opts.steps`` of one round; log, and call ``state_saver`` periodically.

    ``state_saver(step, optimizer)`` persists a resumable state (see module docstring); after
    a SIGINT/SIGTERM the round saves it at the end of the current step and raises
    :class:`zero9.util.interrupts.StopRequested`.
    """
    device = net.device
    rng = np.random.default_rng(None if opts.seed is None else opts.seed + generation * 7919 + start_step)
    optimizer = make_optimizer(net, opts)
    if optimizer_state:
        try:
            optimizer.load_state_dict(optimizer_state)
        except ValueError as e:
            raise ValueError(f"saved optimizer state does not fit this net and optimizer "
                             f"({opts.optimizer}): {e}") from e
    test_every = opts.test_every or max(1, opts.steps // 10)
    batch_size = effective_batch(opts, len(train))
    if batch_size < opts.batch_size and progress:
        log.info("small window: batch %s instead of %s so each position is drawn at most %g times this round",
                 batch_size, opts.batch_size, opts.max_reuse)
    if start_step == 0 and test is not None and len(test):
        _log(log_path, "test", generation, 0, global_step, 0.0, evaluate(net, test, opts, device), info)
    net.train()
    if device.type == "cuda":
        # cuDNN times its kernels for the round's fixed shapes once, as the inference server does: the
        # H200's steps/s in scripts/bench_train.py were measured so, 20 ms a 10x64 step at batch 512,
        # where autotrain's rounds without it took 20-38 ms (docs/runs/go9-zero20)
        torch.backends.cudnn.benchmark = True
    losses = compiled_losses() if compiles(opts, device) else batch_losses
    sums = LossSums()
    last_train, last_test = {}, None
    last_save = time.monotonic()
    desc = f"train round {generation} (-> net {generation + 1})"  # round g makes net generation g + 1
    bar = _progress(range(start_step, opts.steps), progress, desc)
    step = start_step
    for step in bar:
        lr = learning_rate(opts, step, global_step + step)
        for group in optimizer.param_groups:
            group["lr"] = lr
        idx = rng.integers(0, len(train), batch_size)
        planes, policy, value, own, komi = to_tensors(
            (*make_batch(train, idx, rng, train.size), komi_view(train, idx)), device)
        terms = losses(net, planes, policy, value, own, opts, komi)
        optimizer.zero_grad(set_to_none=True)
        terms["total"].backward()
        optimizer.step()
        sums.add(terms)
        done = step + 1
        if done % test_every == 0 or done == opts.steps:
            last_train = sums.means()
            _log(log_path, "train", generation, done, global_step + done, lr, last_train, info)
            sums = LossSums()
            if test is not None and len(test):
                last_test = evaluate(net, test, opts, device)
                _log(log_path, "test", generation, done, global_step + done, lr, last_test, info)
            if hasattr(bar, "set_postfix"):
                bar.set_postfix(loss=f"{last_train['total']:.3f}",
                                test=f"{last_test['total']:.3f}" if last_test else "-")
        if state_saver is not None and done < opts.steps and (
                stop_requested() or time.monotonic() - last_save > opts.save_every):
            state_saver(done, optimizer)
            last_save = time.monotonic()
        if done < opts.steps:
            check_stop()  # after the save: a stopped round resumes at step ``done``, nothing redone
    return RoundResult(net, optimizer.state_dict(), opts.steps, global_step + opts.steps,
                       last_train, last_test, info or {})


def _log(path: Path | None, kind: str, generation: int, step: int, global_step: int, lr: float,
         terms: dict, info: dict | None) -> None:
    if path is None:
        return
    row = {"kind": kind, "generation": generation, "step": step, "global_step": global_step, "lr": lr,
           "time": time.time()}
    row.update({k: round(float(v), 6) for k, v in terms.items()})
    if info:
        row["window_positions"] = info.get("window_positions")
    append_jsonl(path, row)


def _progress(it, enabled: bool, desc: str):
    if not enabled:
        return it
    return tqdm(it, desc=desc, unit="step", dynamic_ncols=True, mininterval=1.0)


# --------------------------------------------------------------------------------------
# the round as the run directory sees it


def train_generation(run_dir: RunDir, net, meta: dict, opts: TrainOptions, *, generation: int,
                     optimizer_state: dict | None, global_step: int, data_paths: list[Path] | None = None,
                     progress: bool = True, cache: ChunkCache | None = None) -> RoundResult:
    """Train one round on the run's window, resuming from ``nets/train_state.pt`` when it matches.

    Returns the trained net and optimizer state; the caller saves the checkpoint. A loop
    passes the same ``cache`` every round (:class:`ChunkCache`).
    """

    game = game_from_meta(meta)
    rng = np.random.default_rng(None if opts.seed is None else opts.seed + generation)
    train, test, info = load_window(data_paths or [run_dir.chunks_dir], game, opts, rng, cache)
    start_step = 0
    state = _load_train_state(run_dir, generation, meta.get("hash"))
    if state is not None:
        net.load_state_dict(state.net.state_dict())
        optimizer_state, start_step = state.optimizer_state, state.extra["round_step"]
        log.info("resuming training of generation %s at step %s", generation, start_step)
    # Steps after the saved state (all of them when a crash came before the first save) were
    # lost; drop their log rows so that none counts twice.
    rows = read_jsonl(run_dir.train_log)
    keep = [r for r in rows
            if not (r.get("generation") == generation and (not start_step or r["step"] > start_step))]
    if len(keep) < len(rows):
        rewrite_jsonl(run_dir.train_log, keep)

    def saver(step: int, optimizer) -> None:
        save_checkpoint(run_dir.train_state_path, net, dict(meta, step=global_step + step), optimizer,
                        extra={"generation": generation, "parent": meta.get("hash"), "round_step": step})

    bad = len(info["skipped"])
    skipped = f"; skipped {bad} unreadable chunk file(s), named above" if bad else ""
    log.info("training window: %s chunks, %s of %s positions, keep 1 in %s: %s train / %s test%s",
             info["chunks"], info["window_positions"], info["total_positions"], info["downsample"],
             len(train), len(test) if test else 0, skipped)
    return train_round(net, train, test, opts, generation=generation, global_step=global_step,
                       optimizer_state=optimizer_state, start_step=start_step, log_path=run_dir.train_log,
                       state_saver=saver, progress=progress, info=info)


def _load_train_state(run_dir: RunDir, generation: int, parent_hash: str | None):
    """The saved state of this round (a :class:`zero9.nn.checkpoint.Checkpoint`), or None."""

    path = run_dir.train_state_path
    if not path.exists():
        return None
    try:
        state = load_checkpoint(path, "cpu")
    except ValueError as e:
        raise ValueError(f"{e}; delete {path} to restart this training round") from e
    extra = state.extra or {}
    if extra.get("generation") != generation or extra.get("parent") != parent_hash:
        return None  # left over from another round
    return state


def clear_train_state(run_dir: RunDir) -> None:
    try:
        os.unlink(run_dir.train_state_path)
    except FileNotFoundError:
        pass

class StateHolder:
    """``save_checkpoint`` wants an object with ``state_dict()``; a round hands back the dict."""

    def __init__(self, state: dict):
        self._state = state

    def state_dict(self) -> dict:
        return self._state
