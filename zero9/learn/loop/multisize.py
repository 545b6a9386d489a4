"""One size-independent net, self-played and trained on several board sizes (Gomoku 15x15 and 20x20).

A net with pooled heads (:mod:`zero9.nn.net`, ``heads="pooled"``) plays every board size; this
is the smallest loop that teaches it more than one. It keeps the rules of
:mod:`zero9.learn.loop.autotrain` (self-play, then training on the newest share of the data) and
changes one thing: every size has its own games, window and batches.

Vocabulary:

- **sizes**: the boards learnt, e.g. ``(15, 20)``; the first is the net's own (its checkpoint's
  game). The game of size N is the first size's game with ``size=N`` (same rules).
- **round**: ``games`` self-play games on each size with the current net, then ``steps``
  training steps. A round's games land in ``data/size<N>/r<round:04d>/`` as self-play records
  (:mod:`zero9.learn.selfplay.records`: an npz shard, an SGF beside it under ``sgf/``).
- **window**: per size, the newest share of that size's positions, read, thinned and split into
  train and test chunks by :func:`zero9.learn.training.train.load_window` (the same rule as autotrain).
- **batch**: one size each (pooling has no mask for padding, unlike KataGo's mixed-size
  batches). Steps go round-robin over the sizes, so each size gets an equal share of the
  steps whatever its positions count (a 20x20 game has more positions than a 15x15 one).
- **fit and test loss**: before and after each round's training, the loss terms on up to
  ``test_positions`` of each size's training window (fit) and of its held-out chunks (test),
  without symmetries; ``logs/multisize.jsonl`` keeps one row per size and round.
- **the run directory** (``--dir``): ``net.pt`` (the current net with its optimizer state, kept
  while the optimizer stays the same, and the next round's number; rewritten atomically after
  each round), ``nets/<hash>.pt`` (each round's net), ``data/``, ``sgf/``, ``logs/multisize.jsonl``.
  A stopped run resumes at its round: the round's games already on disk count, the round's
  training starts again.
- **start from a fixed-head net** (``init``, e.g. the shipped 15x15 net): its input block and
  tower go under new pooled heads (:func:`pooled_from`). With ``distill_games`` and
  ``distill_steps``, before round 0 the new heads learn the old net's policy and value
  (:func:`distill_heads`, the tower frozen) on the positions of that many of its own self-play
  games on its own board (``distill/``), so the first rounds play as well as the old net on its
  size instead of from random heads; the row ``{"kind": "distill"}`` of the log says how close.
- **workers**: self-play processes (0: in this process). Each loads ``net.pt`` on the device
  and plays its share of a size's games, G at a time (:func:`zero9.learn.selfplay.lockstep.play_games`).

Entry point: ``scripts/train_multisize.py``.
"""

from __future__ import annotations

import dataclasses
import logging
import multiprocessing as mp
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from zero9.games import Game, make_game
from zero9.learn.rundir import sorted_chunk_files
from zero9.learn.selfplay.lockstep import play_games
from zero9.learn.selfplay.pool import config_summary
from zero9.learn.selfplay.records import new_stem, write_record
from zero9.learn.training.losses import LossSums, compute_losses, evaluate, komi_view, make_batch
from zero9.learn.training.train import effective_batch, learning_rate, make_optimizer
from zero9.learn.training.window import load_window
from zero9.nn.checkpoint import load_checkpoint, load_net, net_hash, save_checkpoint
from zero9.nn.chunks import ChunkData, load_chunks
from zero9.nn.heads import POOLED_HEAD_CHANNELS, POOLED_HEADS, make_net, net_from_config
from zero9.nn.net import ZeroNet, resolve_device
from zero9.search.evaluator import NetEvaluator
from zero9.settings import SelfPlayConfig, TrainOptions
from zero9.util.files import append_jsonl
from zero9.util.logs import configure_logging

log = logging.getLogger(__name__)

NET_FILE = "net.pt"
LOG_FILE = "logs/multisize.jsonl"


@dataclass
class MultiSizeOptions:
    """What one multi-size run does (module docstring)."""

    sizes: tuple[int, ...] = (15, 20)
    rounds: int = 1
    games: int = 16  # self-play games per size per round
    steps: int = 200  # training steps per round, shared round-robin by the sizes
    workers: int = 0  # self-play processes; 0: in this process
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    train: TrainOptions = field(default_factory=TrainOptions)
    sgf: bool = True  # an SGF beside each game's shard
    distill_games: int = 0  # init from a fixed-head net: its games whose positions teach the new heads
    distill_steps: int = 0  # ... and the steps of that teaching (0: none)
    progress: bool = True


def game_of_size(game: Game, size: int) -> Game:
    """``game`` with another board size, the rules unchanged."""
    return make_game(**{**game.to_dict(), "size": size})


def new_multisize_net(game: Game, blocks: int, filters: int) -> ZeroNet:
    """A fresh net with pooled heads, made for ``game`` (it serves every size in the net limits)."""
    return make_net(game, blocks, filters, heads=POOLED_HEADS)


def check_sizes(net: ZeroNet, sizes: tuple[int, ...]) -> None:
    """ValueError unless ``net`` serves every one of ``sizes``."""
    if not sizes:
        raise ValueError("no board sizes to train on")
    wrong = [n for n in sizes if not net.serves_size(n)]
    if wrong:
        raise ValueError(f"the net is for {net.sizes_served()}, so it cannot learn size(s) "
                         f"{', '.join(map(str, wrong))}; make one with pooled heads (heads='pooled')")


# --------------------------------------------------------------------------------------
# self-play


def play_size(net: ZeroNet, game: Game, games: int, config: SelfPlayConfig, chunk_dir: Path,
              sgf_dir: Path | None, worker: int = 0) -> dict[str, Any]:
    """Play ``games`` self-play games of ``game`` with ``net`` here, writing each record as it ends."""
    chunk_dir.mkdir(parents=True, exist_ok=True)
    if sgf_dir is not None:
        sgf_dir.mkdir(parents=True, exist_ok=True)
    name, options = net_hash(net), config_summary(config)
    evaluator = NetEvaluator(net, cache_size=config.eval_cache, rng=np.random.default_rng(config.seed))
    played = positions = moves = 0
    start = time.monotonic()
    for record in play_games(game, evaluator, games, config):
        write_record(record, new_stem(worker, played), chunk_dir, sgf_dir, name, options)
        played += 1
        moves += len(record.moves)
        positions += sum(m.recorded for m in record.moves)
    return {"games": played, "moves": moves, "positions": positions, "seconds": time.monotonic() - start,
            "evals": evaluator.positions - evaluator.cache_hits}  # positions the net itself evaluated


def _worker_play(args: tuple) -> dict[str, Any]:
    """A self-play process: load the net on its device, play its share (``play_size``)."""
    net_path, device, game_dict, games, config, chunk_dir, sgf_dir, worker = args
    torch.set_num_threads(1)
    net, _ = load_net(net_path, device=device)
    return play_size(net, make_game(**game_dict), games, config, Path(chunk_dir),
                     None if sgf_dir is None else Path(sgf_dir), worker)


def selfplay_round(net_path: Path, net: ZeroNet, game: Game, games: int, config: SelfPlayConfig,
                   chunk_dir: Path, sgf_dir: Path | None, workers: int, device: str,
                   pool=None) -> dict[str, Any]:
    """``games`` games of ``game`` (less those of this folder already on disk: a resumed round), here
    or shared out over the ``workers`` processes of ``pool`` (a multiprocessing pool kept by the run)."""
    done = len(sorted_chunk_files(chunk_dir))
    left = max(0, games - done)
    if left == 0:
        return {"games": 0, "moves": 0, "positions": 0, "seconds": 0.0, "evals": 0, "on_disk": done}
    seed = config.seed if config.seed is not None else int.from_bytes(os.urandom(4), "little")
    if workers <= 0 or pool is None:
        out = play_size(net, game, left, dataclasses.replace(config, seed=seed + done), chunk_dir, sgf_dir)
        return {**out, "on_disk": done}
    shares = [left // workers + (1 if w < left % workers else 0) for w in range(workers)]
    jobs = [(str(net_path), device, game.to_dict(), n,
             dataclasses.replace(config, seed=seed * 1009 + w + done),
             str(chunk_dir), None if sgf_dir is None else str(sgf_dir), w)
            for w, n in enumerate(shares) if n]
    start = time.monotonic()
    parts = pool.map(_worker_play, jobs, chunksize=1)
    total = {k: sum(p[k] for p in parts) for k in ("games", "moves", "positions", "evals")}
    return {**total, "seconds": time.monotonic() - start, "on_disk": done}


# --------------------------------------------------------------------------------------
# training, one size per batch


def train_sizes(net: ZeroNet, windows: dict[int, ChunkData], opts: TrainOptions, steps: int,
                optimizer, rng: np.random.Generator, global_step: int = 0) -> dict[int, dict[str, float]]:
    """``steps`` optimizer steps, step k on a batch of size ``sizes[k % len(sizes)]``, each batch drawn
    from that size's training window with a random symmetry. Returns each size's mean loss terms."""
    sizes = sorted(windows)
    device = net.device
    per_size = dataclasses.replace(opts, steps=max(1, steps // len(sizes)))
    batch = {n: effective_batch(per_size, len(windows[n])) for n in sizes}
    sums = {n: LossSums() for n in sizes}
    net.train()
    for step in range(steps):
        size = sizes[step % len(sizes)]
        data = windows[size]
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(opts, step, global_step + step)
        idx = rng.integers(0, len(data), batch[size])
        arrays = (*make_batch(data, idx, rng, size), komi_view(data, idx))
        planes, policy, value, own, komi = (None if a is None else torch.from_numpy(np.ascontiguousarray(a))
                                            .to(device) for a in arrays)
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            terms = compute_losses(net, planes, policy, value, own, opts, komi)
        optimizer.zero_grad(set_to_none=True)
        terms["total"].backward()
        optimizer.step()
        sums[size].add(terms)
    return {n: sums[n].means() for n in sizes}


def size_losses(net: ZeroNet, windows: dict[int, tuple[ChunkData, ChunkData | None]],
                opts: TrainOptions) -> dict[int, dict[str, dict[str, float]]]:
    """Per size: ``fit`` (the training window) and ``test`` (held-out chunks) loss terms, no symmetries."""
    device = net.device
    out = {}
    for size, (train, test) in windows.items():
        out[size] = {"fit": evaluate(net, train, opts, device)}
        if test is not None and len(test):
            out[size]["test"] = evaluate(net, test, opts, device)
    return out


# --------------------------------------------------------------------------------------
# the run


def start_or_resume(root: Path, game: Game, blocks: int, filters: int, opts: MultiSizeOptions,
                    device: torch.device, init: str | None = None, pool=None):
    """The run's net, optimizer, next round and global step: from ``root/net.pt``, or a new net
    (pooled heads, ``blocks`` x ``filters``; or from the net file ``init``) saved there."""
    path = root / NET_FILE
    if path.exists():
        ckpt = load_checkpoint(path, device)
        net, extra = ckpt.net, ckpt.extra or {}
        optimizer = make_optimizer(net, opts.train)
        if ckpt.optimizer_state is not None and extra.get("optimizer") == opts.train.optimizer:
            optimizer.load_state_dict(ckpt.optimizer_state)
        elif ckpt.optimizer_state is not None and opts.progress:
            log.info("optimizer changed from %s to %s: fresh state", extra.get("optimizer"),
                     opts.train.optimizer)
        check_sizes(net, opts.sizes)
        return net, optimizer, int(extra.get("round", 0)), int(extra.get("global_step", 0)), ckpt.meta["game"]
    if init is not None:
        net, meta = load_net(init, device="cpu")
        net.set_channels_last(False)
        game_dict = meta["game"]
        if not net.size_independent:
            teacher, net = net.to(device), pooled_from(net).to(device)
            if opts.progress:
                log.info("--init %s: its input block and tower, with new pooled heads", init)
            if opts.distill_games > 0 and opts.distill_steps > 0:
                distill_from(root, net, teacher, init, make_game(**game_dict), opts, pool)
    else:
        if opts.train.seed is not None:
            torch.manual_seed(opts.train.seed)  # the same seed, the same first net
        net, game_dict = new_multisize_net(game, blocks, filters), game.to_dict()
    check_sizes(net, opts.sizes)
    net.to(device)
    optimizer = make_optimizer(net, opts.train)
    save_run_net(root, net, game_dict, optimizer, 0, 0, opts)
    return net, optimizer, 0, 0, game_dict


def pooled_from(source: ZeroNet) -> ZeroNet:
    """A net with pooled heads that starts from ``source``'s input block and residual tower.

    Convolutions do not care about the board size, so a fixed-head net's tower (the shipped 15x15
    net's) carries over; its heads do not fit and start fresh.
    """
    net = net_from_config({**source.config, "heads": POOLED_HEADS, "head_channels": POOLED_HEAD_CHANNELS})
    own = net.state_dict()
    own.update({k: v for k, v in source.state_dict().items() if k.startswith(("input_block.", "tower."))})
    net.load_state_dict(own)
    return net


def distill_heads(net: ZeroNet, teacher: ZeroNet, positions: ChunkData, opts: TrainOptions, steps: int,
                  rng: np.random.Generator, held_out: float = 0.1) -> dict[str, float]:
    """Teach ``net``'s heads ``teacher``'s policy and value on ``positions`` (one board size), its input
    block and tower frozen (they should be the teacher's: :func:`pooled_from`).

    The targets are the teacher's outputs; batches take random symmetries as training does. Returns
    the top-1 agreement with the teacher and the policy's KL divergence from it, on the last
    ``held_out`` share of the positions (the last games), before and after.
    """
    device = net.device
    probs, value = [], []
    for start in range(0, len(positions), 256):  # the teacher's answers, once
        p, v = teacher.predict(positions.planes[start:start + 256].astype(np.float32))
        probs.append(p)
        value.append(v)
    labelled = dataclasses.replace(positions, policy=np.concatenate(probs), value=np.concatenate(value),
                                   ownership=None)
    cut = max(1, int(len(labelled) * (1 - held_out)))
    train, test = labelled.take(np.arange(cut)), labelled.take(np.arange(cut, len(labelled)))
    frozen = [p for m in (net.input_block, net.tower) for p in m.parameters()]
    for p in frozen:
        p.requires_grad_(False)
    heads = [p for p in net.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(heads, lr=opts.lr if opts.optimizer == "adam" else 1e-3)
    before = _agreement(net, test)
    try:
        net.train()
        net.input_block.eval()  # the tower's batch-norm statistics stay the teacher's
        net.tower.eval()
        batch = min(opts.batch_size, len(train))
        for _ in range(steps):
            idx = rng.integers(0, len(train), batch)
            arrays = make_batch(train, idx, rng, train.size)
            planes, policy, target = (torch.from_numpy(np.ascontiguousarray(a)).to(device)
                                      for a in arrays[:3])
            terms = compute_losses(net, planes, policy, target, None, opts)
            optimizer.zero_grad(set_to_none=True)
            terms["total"].backward()
            optimizer.step()
    finally:
        for p in frozen:
            p.requires_grad_(True)
    after = _agreement(net, test)
    return {"positions": len(labelled), "steps": steps, **{f"{k}_before": v for k, v in before.items()},
            **{f"{k}_after": v for k, v in after.items()}}


def _agreement(net: ZeroNet, test: ChunkData) -> dict[str, float]:
    """Top-1 agreement with ``test.policy`` (the teacher's) and the mean KL(teacher || net) of the policy."""
    probs, value = net.predict(test.planes.astype(np.float32))
    teacher = test.policy
    kl = (teacher * (np.log(np.maximum(teacher, 1e-12)) - np.log(np.maximum(probs, 1e-12)))).sum(1)
    return {"agreement": float((probs.argmax(1) == teacher.argmax(1)).mean()), "kl": float(kl.mean()),
            "value_mse": float(((value - test.value) ** 2).mean())}


def distill_from(root: Path, net: ZeroNet, teacher: ZeroNet, teacher_path: str, game: Game,
                 opts: MultiSizeOptions, pool=None) -> dict:
    """Play the teacher's games (``root/distill/``, kept: a restart reads them) and distill its heads.

    The games need positions, not good search targets (the targets are the teacher's outputs), so
    they search with PCR's fast visits only.
    """
    chunk_dir = root / "distill"
    config = dataclasses.replace(opts.selfplay, visits=opts.selfplay.fast_visits, full_search_share=1.0)
    played = selfplay_round(Path(teacher_path), teacher, game, opts.distill_games, config, chunk_dir, None,
                            opts.workers, str(net.device), pool)
    positions = load_chunks(sorted_chunk_files(chunk_dir), game)
    rng = np.random.default_rng(opts.train.seed)
    row = {"kind": "distill", "selfplay": played,
           **distill_heads(net, teacher, positions, opts.train, opts.distill_steps, rng), "time": time.time()}
    append_jsonl(root / LOG_FILE, row)
    if opts.progress:
        log.info("distilled the heads on %s positions of %s games: top-1 agreement with the old net "
                 "%.1f%% -> %.1f%%, policy KL %.3f -> %.3f", row["positions"], opts.distill_games,
                 100 * row["agreement_before"], 100 * row["agreement_after"], row["kl_before"],
                 row["kl_after"])
    return row


def save_run_net(root: Path, net: ZeroNet, game_dict: dict, optimizer, next_round: int, global_step: int,
                 opts: MultiSizeOptions) -> str:
    """``net.pt`` (atomically) and its copy ``nets/<hash>.pt``; returns the hash."""
    meta = save_checkpoint(root / NET_FILE, net, {"game": game_dict, "step": global_step,
                                                  "sizes": list(opts.sizes), "round": next_round},
                           optimizer, extra={"round": next_round, "global_step": global_step,
                                             "optimizer": opts.train.optimizer})
    (root / "nets").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(root / NET_FILE, root / "nets" / f"{meta['hash']}.pt")
    return meta["hash"]


def run_multisize(root: str | os.PathLike, game: Game, opts: MultiSizeOptions, blocks: int = 2,
                  filters: int = 16, device: str = "cpu", init: str | None = None) -> list[dict[str, Any]]:
    """Rounds of self-play on every size and training on all of them (module docstring).

    ``game`` gives the rules (its size is replaced by each of ``opts.sizes``). Returns the log rows
    written this call.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    dev = resolve_device(device)
    # spawned workers start with no log handler: configure_logging gives them the command line's
    pool = mp.get_context("spawn").Pool(opts.workers, configure_logging) if opts.workers > 0 else None
    try:
        net, optimizer, first, global_step, game_dict = start_or_resume(
            root, game, blocks, filters, opts, dev, init, pool)
        rules = make_game(**game_dict)
        return _rounds(root, net, optimizer, first, global_step, game_dict, rules, opts, dev, pool)
    finally:
        if pool is not None:
            pool.terminate()


def _rounds(root: Path, net: ZeroNet, optimizer, first: int, global_step: int, game_dict: dict, rules: Game,
            opts: MultiSizeOptions, dev: torch.device, pool) -> list[dict[str, Any]]:
    """Rounds ``first`` .. ``opts.rounds - 1`` of :func:`run_multisize`."""
    rows = []
    for rnd in range(first, opts.rounds):
        windows, played = {}, {}
        for size in opts.sizes:
            g = game_of_size(rules, size)
            chunk_dir = root / "data" / f"size{size}" / f"r{rnd:04d}"
            sgf_dir = root / "sgf" / f"size{size}" / f"r{rnd:04d}" if opts.sgf else None
            config = dataclasses.replace(opts.selfplay, seed=None if opts.selfplay.seed is None
                                         else opts.selfplay.seed + 7919 * rnd + size)
            played[size] = selfplay_round(root / NET_FILE, net, g, opts.games, config, chunk_dir, sgf_dir,
                                          opts.workers, str(dev), pool)
            rng = np.random.default_rng(None if opts.train.seed is None else opts.train.seed + rnd + size)
            train, test, info = load_window([root / "data" / f"size{size}"], g, opts.train, rng)
            windows[size] = (train, test)
            played[size]["window"] = info
            if opts.progress:
                p = played[size]
                log.info("round %s size %s: played %s games (%s positions) in %.1f s "
                         "(%.0f net evaluations/s); window %s train / %s test", rnd, size, p["games"],
                         p["positions"], p["seconds"], p["evals"] / max(p["seconds"], 1e-9), len(train),
                         len(test) if test else 0)
        before = size_losses(net, windows, opts.train)
        rng = np.random.default_rng(None if opts.train.seed is None else opts.train.seed * 31 + rnd)
        start = time.monotonic()
        trained = train_sizes(net, {n: w[0] for n, w in windows.items()}, opts.train, opts.steps, optimizer,
                              rng, global_step)
        seconds = time.monotonic() - start
        global_step += opts.steps
        after = size_losses(net, windows, opts.train)
        name = save_run_net(root, net, game_dict, optimizer, rnd + 1, global_step, opts)
        for size in opts.sizes:
            row = {"round": rnd, "size": size, "net": name, "global_step": global_step,
                   "train_seconds": round(seconds, 2), "selfplay": played[size], "train": trained[size],
                   "before": before[size], "after": after[size], "time": time.time()}
            append_jsonl(root / LOG_FILE, row)
            rows.append(row)
            if opts.progress:
                b, a = before[size], after[size]
                test = (f", test {b['test']['total']:.3f} -> {a['test']['total']:.3f}" if "test" in b else "")
                log.info("round %s size %s: fit loss %.3f -> %.3f%s (net %s)", rnd, size, b["fit"]["total"],
                         a["fit"]["total"], test, name)
    return rows
