"""``zero9 selfplay``: play games with a net and write training chunks and SGFs.

Vocabulary (search terms are :mod:`zero9.learn.selfplay_game`'s: G games in flight, K leaves
per tree per net call, full/fast moves, opening moves, no-resign games):

- **worker**: one process running :func:`zero9.learn.selfplay_game.play_games` with its own
  copy of the net (``--workers W``, default one per core; each gets
  ``cores // W`` torch threads so they do not fight). ``W = 1`` plays in-process.
  On CUDA with several workers one inference server owns the GPU
  (:mod:`zero9.nn.inference`) and each worker keeps two batches in flight (``--in-flight``).
- **record**: one finished game written *as soon as it ends*, atomically: an npz
  shard (:mod:`zero9.nn.chunks`) with its recorded positions (full-search moves only),
  and an SGF beside it. The name ``{time_ns}-w{worker}-{seq}-{positions}p`` sorts in
  creation order and tells the trainer the position count without opening the file.
  Go shards always carry the ownership target (the final position's Tromp-Taylor
  owners; after a resignation, of the resigned board), so a net with or without an
  ownership head can learn from them. ``--lz-chunks`` also writes Leela Zero text
  chunks (drawn games cannot be written there and are skipped) to ``lz_chunks/``.
- **net evaluations**: positions the net actually computed (cache hits excluded);
  **batch**: evaluations per net call.
- **quota**: the games a worker plays; the main process splits ``--games`` among
  workers, so a run of N games writes exactly N records.
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import json
import multiprocessing as mp
import os
import queue
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from zero9.games import BLACK, EMPTY
from zero9.games.sgf import save_sgf, write_sgf
from zero9.learn.selfplay_game import GameRecord, play_games
from zero9.nn import features
from zero9.nn.checkpoint import game_from_meta, load_net
from zero9.nn.chunks import ChunkData, ownership_target, write_lz_chunk, write_npz_shard
from zero9.nn.inference import InferenceServer, RemoteNet
from zero9.nn.net import resolve_device
from zero9.search.evaluator import NetEvaluator
from zero9.settings import PCR_SHARE, SearchConfig, SelfPlayConfig
from zero9.util.interrupts import StopRequested, check_stop, stop_signals
from zero9.util.runlock import RunLock

TICK_SECONDS = 1.0  # how often workers report their counters
PR_SET_PDEATHSIG = 1  # prctl option: the signal a process gets when its parent dies (Linux)
CLOSE_WAIT_S = 5.0  # how long closing a pool waits for a worker before killing it


class StopSelfPlay(Exception):
    """Raised inside a worker's evaluator when the main process asks it to stop."""


# --------------------------------------------------------------------------------------
# options


def add_selfplay_arguments(parser: argparse.ArgumentParser, defaults: dict | None = None) -> None:
    """The self-play options shared by ``zero9 selfplay`` and ``zero9 autotrain``."""
    c = SelfPlayConfig()
    d = {"visits": c.visits, "workers": 0, "games_parallel": c.parallel_games, "leaves": c.leaves_per_tree,
         "randomcnt": c.randomcnt, "resign_threshold": c.resign_threshold,
         "no_resign_share": c.no_resign_share, "pcr": c.full_search_share, "fast_visits": c.fast_visits,
         "opening_moves": c.opening_moves, "opening_visits": c.opening_visits}
    d.update(defaults or {})
    g = parser.add_argument_group("self-play")
    g.add_argument("--visits", type=int, default=d["visits"], help="visits per recorded move (LZ -v)")
    g.add_argument("--workers", type=int, default=d["workers"], help="worker processes (0: one per core)")
    g.add_argument("--games-parallel", type=int, default=d["games_parallel"],
                   help="games in flight per worker (G)")
    g.add_argument("--leaves", type=int, default=d["leaves"], help="leaves per game per net call (K)")
    g.add_argument("--randomcnt", type=int, default=d["randomcnt"],
                   help="first M moves chosen in proportion to visits (LZ -m)")
    g.add_argument("--no-noise", action="store_true", help="no Dirichlet noise at the root")
    g.add_argument("--resign-threshold", type=float, default=d["resign_threshold"],
                   help="resign below this winrate (negative: never)")
    g.add_argument("--no-resign-share", type=float, default=d["no_resign_share"],
                   help="share of games that never resign (measures false resignations)")
    pcr_default = "1" if d["pcr"] == 1.0 else "0.25; 1 with --gumbel or --visits <= --fast-visits"
    g.add_argument("--pcr", type=float, default=d["pcr"], metavar="SHARE",
                   help="playout cap randomisation: share of moves with a full, recorded search "
                        f"(1 = off; default here: {pcr_default})")
    g.add_argument("--fast-visits", type=int, default=d["fast_visits"], help="visits of PCR's fast moves")
    g.add_argument("--opening-moves", type=int, default=d["opening_moves"],
                   help="cheap random opening: unrecorded moves up to a random move number below this")
    g.add_argument("--opening-visits", type=int, default=d["opening_visits"], help="visits of opening moves")
    g.add_argument("--move-cap", type=int, default=None, help="stop games after this many moves")
    g.add_argument("--gumbel", action="store_true", help="Gumbel root search instead of PUCT + noise")
    g.add_argument("--gumbel-actions", type=int, default=c.gumbel_actions,
                   help="root actions Gumbel search samples")
    g.add_argument("--in-flight", type=int, default=c.in_flight, choices=(1, 2),
                   help="batches each worker keeps in flight with the inference server (2: it searches "
                        "half its games while the GPU evaluates the other half's)")
    g.add_argument("--no-sgf", action="store_true", help="write no SGF files (sgfmill not needed)")
    g.add_argument("--lz-chunks", action="store_true", help="also write Leela Zero text chunks (Go)")


def selfplay_config(args: argparse.Namespace, seed: int | None = None) -> SelfPlayConfig:
    """A :class:`SelfPlayConfig` from the parsed options; ValueError for impossible values."""

    for name in ("visits", "games_parallel", "leaves", "fast_visits", "opening_visits"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.pcr is None:  # autotrain's default: PCR for PUCT (it won its A/B), off for Gumbel (not measured)
        args.pcr = 1.0 if args.gumbel or args.fast_visits >= args.visits else PCR_SHARE
    if not 0 < args.pcr <= 1:
        raise ValueError(f"--pcr must be in (0, 1], got {args.pcr}")
    if args.pcr < 1 and args.fast_visits >= args.visits:
        raise ValueError(f"--fast-visits ({args.fast_visits}) must be below --visits ({args.visits}) "
                         f"with --pcr {args.pcr:g}: fast moves are the cheap ones (--pcr 1 turns them off)")
    if not 0 <= args.no_resign_share <= 1:
        raise ValueError(f"--no-resign-share must be in [0, 1], got {args.no_resign_share}")
    return SelfPlayConfig(
        visits=args.visits,
        parallel_games=args.games_parallel,
        leaves_per_tree=args.leaves,
        search=SearchConfig(noise=not args.no_noise),
        randomcnt=args.randomcnt,
        resign_threshold=None if args.resign_threshold < 0 else args.resign_threshold,
        no_resign_share=args.no_resign_share,
        full_search_share=args.pcr,
        fast_visits=args.fast_visits,
        opening_moves=args.opening_moves,
        opening_visits=args.opening_visits,
        move_cap=args.move_cap,
        gumbel=args.gumbel,
        gumbel_actions=args.gumbel_actions,
        in_flight=getattr(args, "in_flight", SelfPlayConfig.in_flight),
        seed=seed,
    )


def config_summary(config: SelfPlayConfig) -> dict[str, Any]:
    """The config as JSON-able options (for SGF roots and logs)."""
    d = dataclasses.asdict(config)
    d["search"] = dataclasses.asdict(config.search)
    return d


# --------------------------------------------------------------------------------------
# records on disk


def record_chunk(record: GameRecord):
    """The recorded positions of a finished game as a :class:`zero9.nn.chunks.ChunkData`."""

    game = record.game
    moves = [m for m in record.moves if m.recorded]
    size, actions = game.size, game.num_actions
    to_play = np.array([m.position.to_play for m in moves], dtype=np.int8)
    if moves:
        planes = features.encode_batch([m.position for m in moves])
        policy = np.stack([np.asarray(m.policy, dtype=np.float32) for m in moves])
    else:
        planes = np.zeros((0, features.num_planes(game), size, size), np.float32)
        policy = np.zeros((0, actions), np.float32)
    if record.winner == EMPTY:
        value = np.zeros(len(moves), np.float32)
    else:
        value = np.where(to_play == record.winner, 1.0, -1.0).astype(np.float32)
    ownership = None
    if game.name == "go":
        owners = np.asarray(record.final.ownership())
        ownership = np.stack([ownership_target(owners, int(c)) for c in to_play]) if moves else \
            np.zeros((0, size * size), np.int8)
    return ChunkData(planes.astype(np.uint8) if np.all((planes == 0) | (planes == 1)) else planes,
                     to_play, policy, value, ownership, game.to_dict(), {}, [])


def sgf_text(record: GameRecord, net_hash: str, options: dict[str, Any]) -> str:
    """The game as SGF with the net hash, options and result in the root."""

    params = record.game.to_dict()
    comment = json.dumps({"net": net_hash, "game": params, "options": options, "resigned": record.resigned,
                          "no_resign": record.no_resign, "would_resign": record.would_resign}, sort_keys=True)
    moves = [(m.position.to_play, m.action) for m in record.moves]
    player = f"zero9 {net_hash}"
    return write_sgf(record.game, moves, record.result or "?", properties={
        "PB": player, "PW": player, "GN": f"zero9 self-play {net_hash} #{record.index}",
        "PC": "zero9 self-play", "C": comment})


def write_record(record: GameRecord, stem: str, chunk_dir: Path, sgf_dir: Path | None, net_hash: str,
                 options: dict[str, Any], lz_dir: Path | None = None) -> Path:
    """Write the SGF, the optional LZ chunk, then the shard of one game; returns the shard's path.

    The shard goes last because it commits the record: the game count is the shards on
    disk, and the files of a game killed before its shard are swept on restart
    (:meth:`zero9.learn.rundir.RunDir.sweep_uncommitted_records`).
    """

    data = record_chunk(record)
    if sgf_dir is not None:
        save_sgf(sgf_dir / f"{stem}.sgf", sgf_text(record, net_hash, options))
    if lz_dir is not None and record.game.name == "go" and record.winner != EMPTY and len(data):
        write_lz_chunk(lz_dir / f"{stem}.gz", data)
    path = chunk_dir / f"{stem}-{len(data)}p.npz"
    write_npz_shard(path, data, meta={"net": net_hash, "result": record.result})
    return path


# --------------------------------------------------------------------------------------
# workers


@dataclass
class WorkerJob:
    """Everything a worker needs; picklable for spawn."""

    worker: int
    net_path: str
    device: str
    games: int
    config: SelfPlayConfig
    chunk_dir: str
    sgf_dir: str | None
    lz_dir: str | None
    threads: int
    cache_size: int = 100_000
    options: dict = field(default_factory=dict)


class _CountingEvaluator:
    """The NetEvaluator plus periodic counter reports and a stop check (see StopSelfPlay)."""

    def __init__(self, inner, report, stop):
        self.inner, self.report, self.stop = inner, report, stop
        self.last = time.monotonic()
        self.parent = os.getppid()

    def evaluate(self, positions):
        self.check()
        out = self.inner.evaluate(positions)
        self.tick()
        return out

    def check(self) -> None:
        if self.stop is not None and self.stop.is_set():
            raise StopSelfPlay

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.last >= TICK_SECONDS:
            self.last = now
            if os.getppid() != self.parent:
                raise StopSelfPlay  # the main process died (kill -9): an orphan must not play on
            self.report()

    @property
    def answers_later(self) -> bool:
        return self.inner.answers_later

    def submit(self, positions):
        self.check()
        return self.inner.submit(positions)

    def collect(self, asked):
        out = self.inner.collect(asked)
        self.tick()
        return out

    def counters(self) -> dict[str, float]:
        e = self.inner
        return {"evals": e.positions - e.cache_hits, "calls": e.calls, "requests": e.positions,
                "net_seconds": e.net_seconds}


def run_worker(job: WorkerJob, out_queue, stop=None, remote: RemoteNet | None = None) -> None:
    """Play ``job.games`` games, writing each record at once and reporting to ``out_queue``.

    Messages: ``("tick", worker, counters)``, ``("game", worker, summary, counters)``,
    ``("done", worker, counters)`` or ``("error", worker, text)``. With ``remote`` (a
    :class:`zero9.nn.inference.RemoteNet`), the pool's inference server evaluates the
    positions and this process only reads the net's game from its file.
    """
    try:
        if job.threads > 0:
            torch.set_num_threads(job.threads)
        net, meta = load_net(job.net_path, device="cpu" if remote is not None else job.device)
        if remote is not None:
            net = remote
        game = game_from_meta(meta)
        inner = NetEvaluator(net, cache_size=job.cache_size, rng=np.random.default_rng(job.config.seed))

        def report() -> None:
            out_queue.put(("tick", job.worker, evaluator.counters()))

        evaluator = _CountingEvaluator(inner, report, stop)
        chunk_dir, sgf_dir = Path(job.chunk_dir), Path(job.sgf_dir) if job.sgf_dir else None
        lz_dir = Path(job.lz_dir) if job.lz_dir else None
        try:
            for seq, record in enumerate(play_games(game, evaluator, job.games, job.config)):
                stem = f"{time.time_ns():019d}-w{job.worker:02d}-{seq:05d}"
                path = write_record(record, stem, chunk_dir, sgf_dir, meta["hash"], job.options, lz_dir)
                out_queue.put(("game", job.worker, game_summary(record, path), evaluator.counters()))
        except StopSelfPlay:
            pass
        out_queue.put(("done", job.worker, evaluator.counters()))
    except BaseException as e:  # the main process must hear about it, not wait forever
        out_queue.put(("error", job.worker, f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))


def game_summary(record: GameRecord, path: Path) -> dict[str, Any]:
    return {"moves": len(record.moves), "recorded": sum(m.recorded for m in record.moves),
            "result": record.result, "winner": record.winner, "resigned": record.resigned,
            "no_resign": record.no_resign, "false_resign": record.false_resignation, "path": str(path)}


# --------------------------------------------------------------------------------------
# the worker pool: processes started once per command and reused for every round


def die_with_parent(parent: int) -> None:
    """Make this process die (SIGKILL) the moment ``parent`` does, ``kill -9`` included.

    Linux's parent-death signal covers every way the parent can end; where there is none
    (another OS), the job loop's ``getppid`` poll still ends an orphan within a second.
    Checked again after setting it: the parent may have died before.
    """
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(1)


def _pool_main(worker: int, jobs, out_queue, stop, threads: int, parent: int,
               remote: RemoteNet | None = None) -> None:
    """A pool process: run jobs from ``jobs`` until ``None`` arrives or the parent dies."""

    die_with_parent(parent)
    # Ctrl-C reaches the whole process group; the parent decides when its workers stop (via ``stop``).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if threads > 0:
        torch.set_num_threads(threads)
    while True:
        try:
            item = jobs.get(timeout=1.0)
        except queue.Empty:
            if os.getppid() != parent:
                return  # orphaned by a kill -9 of the main process
            continue
        if item is None:
            return
        kind, payload = item
        if kind == "selfplay":
            run_worker(payload, out_queue, stop, remote)
        elif kind == "call":
            fn, kwargs = payload
            try:
                out_queue.put(("result", worker, fn(**kwargs)))
            except BaseException as e:
                out_queue.put(("error", worker, f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))


class WorkerPool:
    """``workers`` spawned processes with ``threads`` torch threads each, kept for many rounds.

    Starting a process costs a torch import (seconds on a busy machine), so the
    autotrain loop starts its pool once. ``workers == 0`` means no processes: jobs
    run in a thread of this process.
    """

    def __init__(self, workers: int, threads: int = 1, inference: InferenceServer | None = None):
        self.workers, self.threads, self.inference = workers, threads, inference
        self.ctx = mp.get_context("spawn")

        if workers == 0:
            self.out_queue, self.stop, self.job_queues, self.procs = queue.Queue(), threading.Event(), [], []
            return
        self.out_queue, self.stop = self.ctx.Queue(), self.ctx.Event()
        self.job_queues = [self.ctx.Queue() for _ in range(workers)]
        clients = [inference.client(w) if inference else None for w in range(workers)]
        self.procs = [self.ctx.Process(target=_pool_main,
                                       args=(w, q, self.out_queue, self.stop, threads, os.getpid(), client),
                                       daemon=True) for (w, q), client in zip(enumerate(self.job_queues),
                                                                              clients, strict=True)]
        # Ctrl-C reaches every process of the group: the workers ignore it (spawn passes the ignore on,
        # so even one still importing torch prints nothing) and the parent, which reports it in one
        # line, stops them through close().
        in_main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if in_main else None
        try:
            for p in self.procs:
                p.start()
        finally:
            if in_main:
                signal.signal(signal.SIGINT, previous)

    @property
    def size(self) -> int:
        return max(1, self.workers)

    def submit(self, worker: int, kind: str, payload) -> None:
        if self.workers == 0:
            if kind == "selfplay":
                target, args = run_worker, (payload, self.out_queue, self.stop)
            else:
                fn, kwargs = payload
                target, args = lambda: self.out_queue.put(("result", worker, fn(**kwargs))), ()
            self._thread = threading.Thread(target=target, args=args, daemon=True)
            self._thread.start()
            return
        self.job_queues[worker].put((kind, payload))

    def alive(self) -> bool:
        return self.workers == 0 or all(p.is_alive() for p in self.procs)

    def call_all(self, calls: list[tuple]) -> list:
        """Run ``fn(**kwargs)`` for each ``(fn, kwargs)`` (at most one per worker); results in order."""
        if len(calls) > self.size:
            raise ValueError(f"{len(calls)} calls for {self.size} workers")
        self.stop.clear()
        for w, call in enumerate(calls):
            self.submit(w, "call", call)
        results: dict[int, Any] = {}
        while len(results) < len(calls):
            check_stop()
            try:
                msg = self.out_queue.get(timeout=1.0)
            except queue.Empty:
                check_stop()  # a SIGTERM to the process group ends the workers too
                if not self.alive():
                    raise RuntimeError("a worker process died") from None
                continue
            if msg[0] == "error":
                raise RuntimeError(f"worker {msg[1]} failed: {msg[2]}")
            if msg[0] == "result":
                results[msg[1]] = msg[2]
        return [results[w] for w in range(len(calls))]

    def close(self) -> None:
        self.stop.set()
        for q in self.job_queues:
            q.put(None)
        deadline = time.monotonic() + CLOSE_WAIT_S
        for p in self.procs:
            p.join(timeout=max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join(timeout=1.0)
        self.procs = []
        if self.inference is not None:
            self.inference.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --------------------------------------------------------------------------------------
# the main process


@dataclass
class SelfPlayStats:
    games: int = 0
    moves: int = 0
    positions: int = 0  # recorded training positions
    seconds: float = 0.0
    evals: float = 0.0
    calls: float = 0.0
    no_resign_games: int = 0
    false_resigns: int = 0
    resigned: int = 0
    wins: dict[str, int] = field(default_factory=lambda: {"B": 0, "W": 0, "draw": 0})
    measured_evals: float = 0.0  # evaluations inside the measuring window (after warm-up)
    measured_seconds: float = 0.0
    measured_net_seconds: float = 0.0  # the workers' time inside the net (waiting for its answers), summed

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["moves_per_s"] = self.moves / self.seconds if self.seconds else 0.0
        d["evals_per_s"] = self.evals / self.seconds if self.seconds else 0.0
        d["mean_length"] = self.moves / self.games if self.games else 0.0
        d["mean_batch"] = self.evals / self.calls if self.calls else 0.0
        return d


def default_workers(device: str) -> int:
    return max(1, os.cpu_count() or 1)


def play_selfplay(net_path: str | os.PathLike, games: int, config: SelfPlayConfig,
                  chunk_dir: str | os.PathLike, sgf_dir: str | os.PathLike | None = None, *,
                  workers: int = 0, device: str = "cpu", lz_dir: str | os.PathLike | None = None,
                  progress: bool = True, seconds: float | None = None,
                  warmup_seconds: float = 0.0, options: dict | None = None,
                  threads: int = 0, pool: WorkerPool | None = None,
                  inference_server: bool | None = None) -> SelfPlayStats:
    """Play ``games`` games (or until ``seconds`` pass) over ``workers`` processes; returns the counters.

    Records land in ``chunk_dir`` (and ``sgf_dir``/``lz_dir``) as each game ends. ``pool``
    reuses running workers (its size wins over ``workers``); without one, a pool is
    started for this call (one worker and no time limit: in this process).
    ``inference_server`` (default: on for CUDA with several workers) has one process own
    the device and evaluate every worker's positions (:mod:`zero9.nn.inference`).
    """
    if games < 0:
        raise ValueError(f"number of games must be >= 0, got {games}")
    workers = pool.size if pool is not None else (workers or default_workers(device))
    for d in (chunk_dir, sgf_dir, lz_dir):
        if d is not None:
            Path(d).mkdir(parents=True, exist_ok=True)
    cores = os.cpu_count() or 1
    if pool is not None:
        threads = pool.threads  # the pool's processes were sized for the machine already
    threads = threads or (max(1, cores // workers) if device == "cpu" else 1)
    base_seed = config.seed if config.seed is not None else int.from_bytes(os.urandom(4), "little")
    options = options if options is not None else config_summary(config)
    jobs = []
    for w in range(workers):
        quota = games // workers + (1 if w < games % workers else 0)
        if quota == 0 and seconds is None:
            continue
        cfg = dataclasses.replace(config, seed=base_seed * 1009 + w)
        jobs.append(WorkerJob(w, str(net_path), device, quota, cfg, str(chunk_dir),
                              str(sgf_dir) if sgf_dir else None, str(lz_dir) if lz_dir else None,
                              threads, options=options))
    if pool is not None:
        if pool.inference is not None:
            pool.inference.load(str(net_path))
        return _run_jobs(pool, jobs, games, progress, seconds, warmup_seconds)
    processes = 0 if workers == 1 and seconds is None else workers
    if inference_server is None:
        inference_server = device.startswith("cuda") and processes > 1
    slot = config.parallel_games * config.leaves_per_tree  # the most positions a worker sends at once
    server = InferenceServer(str(net_path), device, processes, slot) if inference_server else None
    with WorkerPool(processes, threads, inference=server) as own:
        return _run_jobs(own, jobs, games, progress, seconds, warmup_seconds)


def _run_jobs(pool: WorkerPool, jobs: list[WorkerJob], games: int, progress: bool, seconds: float | None,
              warmup_seconds: float) -> SelfPlayStats:
    pool.stop.clear()
    out_queue, stop = pool.out_queue, pool.stop
    start = time.monotonic()
    for job in jobs:
        pool.submit(job.worker, "selfplay", job)
    stats = SelfPlayStats()
    bar = _bar(games, progress)
    counters: dict[int, dict] = {}
    warm_counters: dict[int, dict] | None = None
    warm_at = None
    running = len(jobs)
    try:
        while running:
            check_stop()  # finished games are on disk already; the games in flight are dropped whole
            try:
                msg = out_queue.get(timeout=1.0)
            except queue.Empty:
                msg = None
                check_stop()  # a SIGTERM to the process group ends the workers too
                if not pool.alive():
                    raise RuntimeError("a self-play worker process died without reporting") from None
            now = time.monotonic()
            if msg is not None:
                kind, worker = msg[0], msg[1]
                if kind == "error":
                    raise RuntimeError(f"self-play worker {worker} failed: {msg[2]}")
                if kind == "done":
                    running -= 1
                counters[worker] = msg[-1] if kind != "error" else counters.get(worker, {})
                if kind == "game":
                    _add_game(stats, msg[2])
                    if bar is not None:
                        bar.update(1)
            if warm_counters is None and now - start >= warmup_seconds and len(counters) >= len(jobs):
                warm_counters, warm_at = {k: dict(v) for k, v in counters.items()}, now
            elapsed = now - start
            stats.evals = sum(c.get("evals", 0) for c in counters.values())
            stats.calls = sum(c.get("calls", 0) for c in counters.values())
            if bar is not None and msg is not None:
                bar.set_postfix_str(f"{stats.moves / elapsed:.1f} moves/s, "
                                    f"{stats.evals / elapsed:.0f} evals/s, "
                                    f"len {stats.moves / max(1, stats.games):.1f}", refresh=False)
            if seconds is not None and elapsed >= seconds and not stop.is_set():
                stop.set()
                _measure(stats, counters, warm_counters, warm_at, now)
    except BaseException:
        stop.set()
        raise
    finally:
        if bar is not None:
            bar.close()
    stats.seconds = time.monotonic() - start
    if seconds is None:
        _measure(stats, counters, warm_counters, warm_at, time.monotonic())
    return stats


def _measure(stats: SelfPlayStats, counters, warm_counters, warm_at, now) -> None:
    if warm_counters is None or warm_at is None or now <= warm_at:
        return

    def since_warm(name: str) -> float:
        total = sum(c.get(name, 0) for c in counters.values())
        return total - sum(c.get(name, 0) for c in warm_counters.values())

    stats.measured_evals, stats.measured_seconds = since_warm("evals"), now - warm_at
    stats.measured_net_seconds = since_warm("net_seconds")


def _add_game(stats: SelfPlayStats, summary: dict) -> None:
    stats.games += 1
    stats.moves += summary["moves"]
    stats.positions += summary["recorded"]
    stats.resigned += bool(summary["resigned"])
    if summary["no_resign"]:
        stats.no_resign_games += 1
        stats.false_resigns += bool(summary["false_resign"])
    key = {BLACK: "B", EMPTY: "draw"}.get(summary["winner"], "W")
    stats.wins[key] += 1


def _bar(total: int, enabled: bool):
    if not enabled:
        return None
    return tqdm(total=total, desc="self-play", unit="game", dynamic_ncols=True, mininterval=1.0)


# --------------------------------------------------------------------------------------
# the command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--net", required=True, help="net file (.pt checkpoint or Leela Zero weights)")
    parser.add_argument("--games", type=int, default=100, help="games to play")
    parser.add_argument("--out", default="selfplay", help="folder for chunks/ and sgf/ (default ./selfplay)")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--seed", type=int, default=None)
    add_selfplay_arguments(parser)


def run(args: argparse.Namespace) -> int:
    device = str(resolve_device(args.device))
    _, meta = load_net(args.net, device="cpu")  # fail here, not in a worker, on a bad file
    config = selfplay_config(args, seed=args.seed)
    out = Path(args.out)
    sgf_dir = None if args.no_sgf else out / "sgf"
    with RunLock(out), stop_signals():
        try:
            stats = play_selfplay(args.net, args.games, config, out / "chunks", sgf_dir, workers=args.workers,
                                  device=device, lz_dir=out / "lz_chunks" if args.lz_chunks else None)
        except StopRequested as e:
            print(f"{e}: stopped; every finished game is in {out / 'chunks'} (games in flight were dropped)")
            return 0
    s = stats.as_dict()
    print(f"{stats.games} games, {stats.positions} positions with net {meta['hash']} "
          f"in {stats.seconds:.1f}s: "
          f"{s['moves_per_s']:.1f} moves/s, {s['evals_per_s']:.0f} net evaluations/s "
          f"(batch {s['mean_batch']:.1f}), mean length {s['mean_length']:.1f}; results {stats.wins}")
    return 0
