"""``zero9 train``: learn from the newest window of a run's training data.

Vocabulary:

- **sample** (or position): one training example: input ``planes`` ``[C, N, N]``,
  the search's visit distribution ``policy`` ``[A]`` (the policy target), the game
  result ``value`` in ``{-1, 0, +1}`` from the side to move's view, and for Go with
  an ownership head the final Tromp-Taylor ``ownership`` ``[N*N]`` (+1 = the side to
  move's area, -1 the opponent's, 0 neither). Samples are held as one type from self-play
  through the chunk files to the batches here: :class:`zero9.nn.chunks.ChunkData`.
- **window**: the newest share of the run's positions, by creation order of the
  chunk files (``--window`` fraction of all positions, clamped to
  ``[--window-min, --window-max]``), as leelaz-ninenine's trainpipe trained on the
  newest 20% of chunks.
- **test split**: a chunk is a *test* chunk when the CRC of its file name falls in
  the lowest 10%: the split is by game file (positions of one game never sit on
  both sides) and stable across generations (a test chunk stays one forever). Small
  windows top the test set up to :data:`MIN_TEST_CHUNKS` chunks (the next-lowest CRCs).
- **down-sampling**: keep one position in ``--downsample`` (Leela Zero keeps 1 in
  16) so a window of many games fits in memory and one batch mixes many games.
  ``0`` = automatic: keep everything in small windows, thin big ones to about
  :data:`AUTO_KEEP` positions (at most 1 in 16).
- **reuse cap**: a round draws ``steps * batch`` samples; on a small window the batch
  shrinks (to no less than ``min_batch``) so no position is drawn more than
  ``max_reuse`` times per round on average (see :func:`effective_batch`).
- **symmetry**: each drawn sample gets one of the 8 dihedral transforms at random
  (planes and policy together; ownership too).
- **loss**: policy cross-entropy + value MSE + ``l2`` * sum of squared weights (+
  ``ownership_weight`` * ownership MSE when on, + ``score_weight`` * score MSE when the net
  has a score head: see :func:`score_target`). **accuracy**: the share of samples
  whose policy arg-max matches the target's arg-max (top-1).
- **schedule**: a linear warm-up over the run's first ``warmup`` steps, then in
  each training round a cosine decay from ``lr`` to ``lr * lr_floor``; the next
  round restarts at ``lr`` (warm restarts). The optimizer (SGD with Nesterov
  momentum 0.9 by default, or Adam) keeps its state across rounds through the
  checkpoint.
- **train state**: ``nets/train_state.pt`` holds the model, optimizer, step and
  RNG of the round in progress, saved atomically every ``--save-every`` seconds and
  when SIGINT/SIGTERM stops the round after its current step
  (:mod:`zero9.util.interrupts`), so a stopped round resumes at the next step and a
  killed one where it last saved, instead of from scratch.
- **bad chunk**: a chunk file that cannot be read (truncated by a full disk, damaged
  by a crash elsewhere). It is skipped with a warning naming it and counted in the
  window's summary; when more than ``max_bad_share`` of the window's files are bad
  the data itself is suspect and training stops with an error instead.
"""

from __future__ import annotations

import argparse
import math
import os
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from zero9.games import BLACK
from zero9.learn.rundir import RECORD_NAME, RunDir, sorted_chunk_files
from zero9.nn import chunks
from zero9.nn.checkpoint import game_from_meta, load_checkpoint, save_checkpoint
from zero9.nn.chunks import BAD_CHUNK_ERRORS, ChunkData, warn_bad_chunk
from zero9.nn.features import transform_planes, transform_policy
from zero9.settings import ADAM_LR, TrainOptions
from zero9.util.files import append_jsonl, read_jsonl, rewrite_jsonl
from zero9.util.interrupts import check_stop, stop_requested

AUTO_KEEP = 250_000  # positions held in memory at most when --downsample is automatic
TEST_SHARE = 10  # percent of chunks (by file-name CRC) kept for testing
MIN_TEST_CHUNKS = 4  # ... but at least this many (at most a quarter of the window)


# --------------------------------------------------------------------------------------
# reading the window


def read_chunk(path: str | os.PathLike, game: Any) -> ChunkData:
    """All positions of one chunk file (zero9 npz or Leela Zero text chunk) as one ChunkData.

    The formats belong to :mod:`zero9.nn.chunks`; this only adapts its output to arrays.
    Corrupt files raise ValueError naming the file.
    """

    path = Path(path)
    try:
        data = chunks.read_chunk(path, game)
    except ValueError:
        raise
    except Exception as e:  # zlib/zip/EOF errors from a damaged file
        raise ValueError(f"corrupt training chunk {path}: {e}") from e
    planes = np.asarray(data["planes"])
    if planes.dtype != np.uint8 and np.all((planes == 0) | (planes == 1)):
        planes = planes.astype(np.uint8)  # binary planes: 4x less memory
    own = data.ownership
    return ChunkData(
        planes=planes,
        to_play=data.to_play,
        policy=np.asarray(data.policy, dtype=np.float32),
        value=np.asarray(data.value, dtype=np.float32),
        ownership=None if own is None else np.asarray(own, dtype=np.int8),
        game=data.game,
        sources=[str(path)],
    )


def positions_in(path: Path, game: Any) -> int:
    """Positions in a chunk: from the record name when it says, else by reading it."""
    m = RECORD_NAME.search(path.name)
    if m:
        return int(m.group(1))
    return len(read_chunk(path, game))


def _test_key(path: Path) -> int:
    return zlib.crc32(path.name.encode()) % 100


def is_test_chunk(path: Path) -> bool:
    return _test_key(path) < TEST_SHARE


def held_out_chunks(window: list[Path]) -> set[Path]:
    """The window's test chunks: CRC-chosen, topped up to a few so tiny runs get a usable test loss.

    The top-up takes the chunks with the next-lowest CRC keys, so it is stable too.
    """
    chosen = {f for f in window if is_test_chunk(f)}
    want = min(MIN_TEST_CHUNKS, len(window) // 4)
    if len(chosen) < want:
        chosen.update(sorted(window, key=lambda f: (_test_key(f), f.name))[:want])
    return chosen


def select_window(files: list[Path], game: Any, opts: TrainOptions,
                  bad: dict[Path, str] | None = None) -> tuple[list[Path], int, int]:
    """The newest files holding the window: (files oldest first, window positions, total positions).

    A file whose size can only be learnt by reading it and that cannot be read goes into
    ``bad`` (path -> reason) and out of the window.
    """
    sized = []  # (file, positions) of the readable files
    for f in files:
        try:
            sized.append((f, positions_in(f, game)))
        except BAD_CHUNK_ERRORS as e:
            _skip_chunk(f, e, bad)
    files, counts = [f for f, _ in sized], [n for _, n in sized]
    total = sum(counts)
    want = min(max(int(total * opts.window), opts.window_min), opts.window_max)
    chosen, have = [], 0
    for f, n in zip(reversed(files), reversed(counts), strict=True):
        if have >= want:
            break
        chosen.append(f)
        have += n
    return list(reversed(chosen)), have, total


def downsample_factor(opts: TrainOptions, window_positions: int) -> int:
    if opts.downsample > 0:
        return opts.downsample
    return int(min(16, max(1, math.ceil(window_positions / AUTO_KEEP))))


class ChunkCache:
    """Chunks already read, by path, so that a loop's next round reads only its new games.

    A window slides by one round's games while most of it stays: ``autotrain`` keeps one
    cache for the run, and each round reads the new files and forgets those that left the
    window. Chunk files are written once and never change, so a path names its contents.
    It holds the window un-thinned: about 2 KB a Go position (1 GB at ``--window-max 500000``),
    0.7 KB a 9x9 Gomoku one.
    """

    def __init__(self) -> None:
        self._samples: dict[Path, ChunkData] = {}

    def read(self, path: Path, game: Any) -> ChunkData:
        if path not in self._samples:
            self._samples[path] = read_chunk(path, game)
        return self._samples[path]

    def keep_only(self, paths: list[Path]) -> None:
        wanted = set(paths)
        for path in [p for p in self._samples if p not in wanted]:
            del self._samples[path]

    def __len__(self) -> int:
        return len(self._samples)

    def __contains__(self, path: Path) -> bool:
        return path in self._samples


def load_window(data_paths: list[Path], game: Any, opts: TrainOptions,
                rng: np.random.Generator,
                cache: ChunkCache | None = None) -> tuple[ChunkData, ChunkData, dict]:
    """Read the window, down-sample it and split it by chunk into (train, test, info).

    With a ``cache`` (see :class:`ChunkCache`) the chunks read before are not read again.
    """
    files = []
    for p in data_paths:
        files.extend(sorted_chunk_files(p))
    if not files:
        raise ValueError(f"no training chunks (.npz or .gz) under {', '.join(map(str, data_paths))}")
    bad: dict[Path, str] = {}
    window, window_positions, total = select_window(files, game, opts, bad)
    keep_one_in = downsample_factor(opts, window_positions)
    train_parts, test_parts = [], []
    testing = held_out_chunks(window)
    if cache is None:
        cache = ChunkCache()  # one round's: read each chunk once
    cache.keep_only(window)
    for f in window:
        check_stop()
        try:
            s = cache.read(f, game)
        except BAD_CHUNK_ERRORS as e:
            _skip_chunk(f, e, bad)
            continue
        if keep_one_in > 1:
            s = s.take(np.nonzero(rng.random(len(s)) < 1.0 / keep_one_in)[0])
        if len(s):
            (test_parts if f in testing else train_parts).append(s)
    check_bad_share(bad, len(window) + len(set(bad) - set(window)), opts)
    if not test_parts and len(train_parts) > 1:
        test_parts.append(train_parts.pop())  # tiny windows: still test on one held-out game
    if not train_parts:
        raise ValueError(f"the training window ({len(window)} chunks) left no training positions")
    info = {
        "chunks": len(window) - len(set(bad) & set(window)),
        "window_positions": window_positions,
        "total_positions": total,
        "downsample": keep_one_in,
        "skipped": sorted(map(str, bad)),
    }
    test = ChunkData.concatenate(test_parts) if test_parts else None
    return ChunkData.concatenate(train_parts), test, info


def _skip_chunk(path: Path, error: BaseException, bad: dict[Path, str] | None) -> None:
    if bad is None:
        raise error
    warn_bad_chunk(path, error)
    bad[path] = str(error)


def check_bad_share(bad: dict[Path, str], examined: int, opts: TrainOptions) -> None:
    """ValueError when more than ``opts.max_bad_share`` of the ``examined`` chunk files were unreadable."""
    if bad and len(bad) > opts.max_bad_share * max(1, examined):
        first, reason = next(iter(bad.items()))
        raise ValueError(f"{len(bad)} of {examined} training chunk files are unreadable (more than "
                         f"{opts.max_bad_share:.0%}; the data looks damaged, e.g. {first}: {reason}); "
                         f"move the bad files away or raise --max-bad-share")


# --------------------------------------------------------------------------------------
# batches


def make_batch(samples: ChunkData, idx: np.ndarray, rng: np.random.Generator | None,
               size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Planes, policy, value (and ownership) of ``idx``, each under a random symmetry when ``rng``."""

    planes = samples.planes[idx].astype(np.float32)
    policy = samples.policy[idx].copy()
    value = samples.value[idx]
    own = None if samples.ownership is None else samples.ownership[idx].astype(np.float32)
    if rng is not None:
        syms = rng.integers(0, 8, len(idx))
        for sym in range(1, 8):
            sel = np.nonzero(syms == sym)[0]
            if len(sel) == 0:
                continue
            planes[sel] = transform_planes(planes[sel], sym)
            policy[sel] = transform_policy(policy[sel], sym, size)
            if own is not None:
                board = own[sel].reshape(len(sel), size, size)
                own[sel] = transform_planes(board, sym).reshape(len(sel), size * size)
    return planes, policy, value, own


def komi_view(samples: ChunkData, idx: np.ndarray) -> np.ndarray | None:
    """Komi from the side to move's view for ``idx`` (-komi for Black, +komi for White), or None
    without ownership targets (no score target then)."""
    if samples.ownership is None:
        return None
    komi = float(samples.game.get("komi", 0.0))
    return np.where(samples.to_play[idx] == BLACK, -komi, komi).astype(np.float32)


def score_target(own: torch.Tensor, komi: torch.Tensor) -> torch.Tensor:
    """The final score lead from the side to move's view over the board's points: the ownership
    target summed (own area minus the opponent's, Tromp-Taylor) with komi counted.

    The chunks hold the final ownership, so this needs no new field; ``own`` is [B, N*N]
    in {-1, 0, 1}, ``komi`` [B] from :func:`komi_view`.
    """
    return (own.sum(1) + komi) / own.shape[1]


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


def compute_losses(net, planes, policy, value, own, opts: TrainOptions, komi=None) -> dict:
    """Loss terms (tensors) for one batch: policy, value, ownership, score, l2, total, accuracy.

    With a score head (and ``komi``, :func:`komi_view`), also ``score_error`` and
    ``ownership_sum_error``: the mean absolute error in points of the score head and of the
    other estimate a net with ownership has, its predicted ownership summed plus komi.
    """

    out = net(planes)
    logits, v = out[0].float(), out[1].float()
    policy_loss = -(policy * F.log_softmax(logits, dim=1)).sum(dim=1).mean()
    value_loss = F.mse_loss(v, value)
    # One flat vector instead of a sum over tensors: a few GPU kernels instead of ~4 per weight.
    weights = torch.cat([p.reshape(-1) for p in net.parameters() if p.dim() > 1])
    l2 = (weights.float() ** 2).sum()
    total = policy_loss + value_loss + opts.l2 * l2
    terms = {"policy_loss": policy_loss, "value_loss": value_loss, "l2": opts.l2 * l2}
    if own is not None and len(out) > 2:
        own_loss = F.mse_loss(out[2].float(), own)
        total = total + opts.ownership_weight * own_loss
        terms["ownership_loss"] = own_loss
    if own is not None and komi is not None and len(out) > 3:
        target = score_target(own, komi)
        score = out[3].float()
        score_loss = F.mse_loss(score, target)
        total = total + opts.score_weight * score_loss
        terms["score_loss"] = score_loss
        with torch.no_grad():
            points = own.shape[1]
            terms["score_error"] = (score - target).abs().mean() * points
            terms["ownership_sum_error"] = (score_target(out[2].float(), komi) - target).abs().mean() * points
    with torch.no_grad():
        terms["accuracy"] = (logits.argmax(1) == policy.argmax(1)).float().mean()
    terms["total"] = total
    return terms


def _to_tensors(batch, device):
    """The batch's arrays as tensors on ``device``.

    To a GPU through pinned memory without waiting: a copy from ordinary (pageable) memory
    first waits for the GPU to finish its queue, so the next batch could not be made while
    the GPU still worked on this one.
    """

    cuda = device.type == "cuda"

    def move(a):
        t = torch.from_numpy(np.ascontiguousarray(a))
        return t.pin_memory().to(device, non_blocking=True) if cuda else t.to(device)

    return [None if a is None else move(a) for a in batch]


class LossSums:
    """Running sums of loss terms, kept on the net's device.

    Reading a GPU number back (``float(tensor)``) waits for every queued kernel; doing it
    for each term of each step kept a small net's GPU idle between steps. The terms of a
    step go into one vector that stays on the device, read once when a log row is written.
    """

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.total = None  # tensor [len(keys)]
        self.weight = 0

    def add(self, terms: dict, weight: int = 1) -> None:
        if self.total is None:
            self.keys = list(terms)
        values = torch.stack([terms[k].detach().float() for k in self.keys]) * weight
        self.total = values if self.total is None else self.total + values
        self.weight += weight

    def means(self) -> dict[str, float]:
        if self.total is None:
            return {}
        values = self.total.cpu().tolist()  # the one readback
        return {k: v / self.weight for k, v in zip(self.keys, values, strict=True)}


def evaluate(net, samples: ChunkData, opts: TrainOptions, device) -> dict:
    """Mean loss terms over (up to ``test_positions`` of) ``samples``, without symmetries."""

    n = min(len(samples), opts.test_positions)
    net.eval()
    sums = LossSums()
    with torch.no_grad(), _autocast(device):
        for start in range(0, n, opts.batch_size):
            idx = np.arange(start, min(n, start + opts.batch_size))
            batch = (*make_batch(samples, idx, None, net.size), komi_view(samples, idx))
            planes, policy, value, own, komi = _to_tensors(batch, device)
            terms = compute_losses(net, planes, policy, value, own, opts, komi)
            sums.add(terms, weight=len(idx))
    net.train()
    return sums.means()


def _autocast(device):
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")


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
        print(f"small window: batch {batch_size} instead of {opts.batch_size} so each position is drawn "
              f"at most {opts.max_reuse:g} times this round")
    if start_step == 0 and test is not None and len(test):
        _log(log_path, "test", generation, 0, global_step, 0.0, evaluate(net, test, opts, device), info)
    net.train()
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
        planes, policy, value, own, komi = _to_tensors(
            (*make_batch(train, idx, rng, net.size), komi_view(train, idx)), device)
        with _autocast(device):
            terms = compute_losses(net, planes, policy, value, own, opts, komi)
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
        print(f"resuming training of generation {generation} at step {start_step}")
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
    print(f"training window: {info['chunks']} chunks, "
          f"{info['window_positions']} of {info['total_positions']} "
          f"positions, keep 1 in {info['downsample']}: {len(train)} train / {len(test) if test else 0} test"
          f"{skipped}")
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


# --------------------------------------------------------------------------------------
# the command


def add_training_arguments(group, steps: int, steps_help: str) -> None:
    """The training options that ``zero9 train`` and ``zero9 autotrain`` share, defaults from TrainOptions."""
    d = TrainOptions()
    group.add_argument("--steps", type=int, default=steps, help=steps_help)
    group.add_argument("--batch-size", type=int, default=d.batch_size)
    group.add_argument("--lr", type=float, default=None,
                       help=f"learning rate (default {d.lr:g} SGD, {ADAM_LR:g} Adam)")
    group.add_argument("--optimizer", default=d.optimizer, choices=["sgd", "adam"])
    group.add_argument("--window", type=float, default=d.window, help="share of the newest positions")
    group.add_argument("--window-min", type=int, default=d.window_min,
                       help="window at least this many positions")
    group.add_argument("--window-max", type=int, default=d.window_max,
                       help="window at most this many positions")
    group.add_argument("--downsample", type=int, default=d.downsample,
                       help="keep 1 position in N (0: automatic)")
    group.add_argument("--warmup", type=int, default=d.warmup, help="warm-up steps (-1: min(200, steps/4))")
    group.add_argument("--max-bad-share", type=float, default=d.max_bad_share, metavar="SHARE",
                       help="skip unreadable chunk files, naming each, but stop when more than this share "
                            "of the window's files are (default %(default)s)")


def train_options(args: argparse.Namespace, device: str) -> TrainOptions:
    """TrainOptions from the options :func:`add_training_arguments` added."""
    lr = args.lr if args.lr is not None else (TrainOptions.lr if args.optimizer == "sgd" else ADAM_LR)
    return TrainOptions(steps=args.steps, batch_size=args.batch_size, lr=lr, optimizer=args.optimizer,
                        window=args.window, window_min=args.window_min, window_max=args.window_max,
                        downsample=args.downsample, warmup=args.warmup, seed=args.seed, device=device,
                        max_bad_share=args.max_bad_share)


class StateHolder:
    """``save_checkpoint`` wants an object with ``state_dict()``; a round hands back the dict."""

    def __init__(self, state: dict):
        self._state = state

    def state_dict(self) -> dict:
        return self._state
