"""Self-play over a pool of workers, the main process's side: the pool, the jobs, the one main loop.

:func:`play_selfplay` deals the games out as jobs to a pool's workers (:class:`WorkerPool`,
built with its inference servers by :func:`make_pool`; the worker's side is
:mod:`zero9.learn.selfplay.worker`) and takes in their messages in one loop (:func:`_play_jobs`)
until each job has ended, adding up the counters (:class:`SelfPlayStats`). The command
line is :mod:`zero9.cli.selfplay`.

Vocabulary (search terms are :mod:`zero9.learn.selfplay.lockstep`'s: G games in flight, K leaves
per tree per net call, full/fast moves, opening moves, no-resign games):

- **worker**: one process playing G games at a time (:class:`zero9.learn.selfplay.lockstep.SelfPlay`)
  with its own copy of the net (``--workers W``, default one per core; each gets
  ``cores // W`` torch threads so they do not fight). ``W = 1`` plays in-process.
  On CUDA with several workers one inference server owns the GPU
  (:mod:`zero9.nn.inference`) and each worker keeps two batches in flight (``--in-flight``).
- **record**: one finished game, written by its worker *as soon as it ends*, atomically
  (:mod:`zero9.learn.selfplay.records`: its files and their names). ``--lz-chunks`` also writes
  Leela Zero text chunks (drawn games cannot be written there and are skipped) to ``lz_chunks/``.
- **net evaluations**: positions the net actually computed (cache hits excluded);
  **batch**: evaluations per net call.
- **quota**: the games a worker plays; the main process splits ``--games`` among
  workers, so a run of N games writes exactly N records (``zero9 selfplay``, and
  ``zero9 autotrain`` without ``--straddle``: every game of a round ends in it).
- **round**, **session**, **straddling** (``zero9 autotrain``, as KataGo's and Leela Zero's
  continuous self-play): each worker of a kept :class:`WorkerPool` plays one endless
  session of games (:class:`zero9.learn.selfplay.worker.WorkerGames`) whose games in flight go on
  from one round into the next, so no round waits for its longest games with its workers idle. A round asks
  for N games: the workers share one count of the games the round still lacks
  (``WorkerPool.left``); each game that ends **claims** a place and is written into the
  round's folders, and once none is left every worker **pauses** (its games kept,
  mid-search) until the next round's job brings the new net. A game that ends after the
  round had its N is **held** by its worker and is the first record of the next round;
  like a game in flight, it is dropped if the run stops between rounds. Records name the
  net the game ended with (``net``) and, when the game was in flight in rounds with
  other nets, all of them (``nets``, oldest first). The first round's config (its seed)
  starts each worker's session; later rounds change only the net and the folders.
"""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
import os
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

from zero9.games import BLACK, EMPTY
from zero9.learn.selfplay.lockstep import warm_up_native
from zero9.learn.selfplay.worker import JobQueue, WorkerJob, pool_main, raise_worker_error, serve_jobs
from zero9.nn.inference import InferenceServer, ServerGroup
from zero9.settings import SelfPlayConfig
from zero9.util.interrupts import check_stop, ctrl_c_held

CLOSE_WAIT_S = 5.0  # how long closing a pool waits for a worker before killing it


# --------------------------------------------------------------------------------------
# the pool and its inference servers


class Pool(Protocol):
    """What the loops ask of a pool of self-play players, one way for both kinds:
    :class:`WorkerPool` (this host's processes, an inference server per GPU) and
    :class:`zero9.learn.cluster.pool.RayPool` (a Ray cluster's actors)."""

    @property
    def size(self) -> int:
        """Players: rating games are dealt over this many."""

    def play_round(self, net_path: str | os.PathLike, games: int, config: SelfPlayConfig,
                   chunk_dir: str | os.PathLike, sgf_dir: str | os.PathLike | None = None, *,
                   device: str = "cpu", lz_dir: str | os.PathLike | None = None, progress: bool = True,
                   options: dict | None = None, straddle: bool = False) -> SelfPlayStats:
        """Play ``games`` games with the net, each record written as it ends; the round's counters."""

    def call_all(self, calls: list[tuple]) -> list:
        """``fn(**kwargs)`` for each ``(fn, kwargs)`` on a player of its own; the results in order."""

    def info(self) -> dict[str, Any]:
        """Fields for the round's row of ``logs/selfplay.jsonl`` (none for local workers)."""

    def __enter__(self) -> Pool: ...

    def __exit__(self, *exc) -> None: ...


class WorkerPool:
    """``workers`` spawned processes with ``threads`` torch threads each, kept for many rounds.

    Starting a process costs a torch import (seconds on a busy machine), so the
    autotrain loop starts its pool once. ``workers == 0`` means no processes: jobs
    run in one thread of this process. ``left`` is the count the workers' sessions share:
    the games the round still lacks (see :class:`zero9.learn.selfplay.worker.WorkerGames`).
    """

    def __init__(self, workers: int, threads: int = 1,
                 inference: InferenceServer | ServerGroup | None = None,
                 cpus: list[frozenset[int] | None] | None = None):
        self.workers, self.threads, self.inference = workers, threads, inference
        self.ctx = mp.get_context("spawn")
        self.left = self.ctx.Value("q", 0)
        self.rounds = 0  # rounds of sessions played

        if workers == 0:
            self.out_queue, self.stop, self.job_queues, self.procs = queue.Queue(), threading.Event(), \
                [queue.Queue()], []
            self.thread = threading.Thread(target=serve_jobs, daemon=True, args=(
                0, JobQueue(self.job_queues[0], self.stop, None), self.out_queue, None, self.left))
            self.thread.start()
            return
        warm_up_native()  # the workers then load numba's cache instead of compiling at once
        self.out_queue, self.stop = self.ctx.Queue(), self.ctx.Event()
        self.job_queues = [self.ctx.Queue() for _ in range(workers)]
        clients = [inference.client(w) if inference else None for w in range(workers)]
        cpus = cpus or [None] * workers
        self.procs = [self.ctx.Process(target=pool_main, daemon=True, args=(
            w, q, self.out_queue, self.stop, threads, os.getpid(), client, self.left, cpus[w]))
            for (w, q), client in zip(enumerate(self.job_queues), clients, strict=True)]
        # Ctrl-C reaches every process of the group: the workers ignore it (held back while they start,
        # so even one still importing torch prints nothing) and the parent, which reports it in one
        # line, stops them through close().
        try:
            with ctrl_c_held():
                for p in self.procs:
                    p.start()
        except BaseException:  # a Ctrl-C held during the start arrives as the hold ends
            self.procs = [p for p in self.procs if p.pid is not None]  # those started
            self.close()
            raise

    @property
    def size(self) -> int:
        return max(1, self.workers)

    def submit(self, worker: int, kind: str, payload) -> None:
        self.job_queues[worker].put((kind, payload))

    def alive(self) -> bool:
        if self.workers == 0:
            return self.thread.is_alive()
        return all(p.is_alive() for p in self.procs)

    def play_round(self, net_path: str | os.PathLike, games: int, config: SelfPlayConfig,
                   chunk_dir: str | os.PathLike, sgf_dir: str | os.PathLike | None = None, *,
                   device: str = "cpu", lz_dir: str | os.PathLike | None = None, progress: bool = True,
                   options: dict | None = None, straddle: bool = False) -> SelfPlayStats:
        """A round on these workers (:func:`play_selfplay` with this pool)."""
        return play_selfplay(net_path, games, config, chunk_dir, sgf_dir, pool=self, device=device,
                             lz_dir=lz_dir, progress=progress, options=options, straddle=straddle)

    def info(self) -> dict[str, Any]:
        return {}

    def call_all(self, calls: list[tuple]) -> list:
        """Run ``fn(**kwargs)`` for each ``(fn, kwargs)`` (at most one per worker); results in order."""
        if len(calls) > self.size:
            raise ValueError(f"{len(calls)} calls for {self.size} workers")
        self.stop.clear()
        for w, call in enumerate(calls):
            self.submit(w, "call", call)
        results: dict[int, Any] = {}
        while len(results) < len(calls):
            msg = _next_message(self)
            if msg is None:
                continue
            if msg[0] == "error":
                raise_worker_error(msg)
            if msg[0] == "result":
                results[msg[1]] = msg[2]
        return [results[w] for w in range(len(calls))]

    def close(self) -> None:
        self.stop.set()
        for q in self.job_queues:
            q.put(None)
        deadline = time.monotonic() + CLOSE_WAIT_S
        if self.workers == 0:
            self.thread.join(timeout=CLOSE_WAIT_S)  # a thread cannot be killed: it is a daemon
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


def make_pool(net_path: str | os.PathLike, device: str, workers: int, threads: int, config: SelfPlayConfig,
              devices: list[str] | None = None, server: bool | None = None,
              pin: bool | None = None) -> WorkerPool:
    """The worker pool and its inference servers, built here and nowhere else.

    ``workers`` processes (0: one thread of this process) with ``threads`` torch threads each.
    ``server`` (default: on for CUDA with several workers) puts one inference server on each of
    ``devices`` (default ``[device]``; a host's GPUs: ``cuda:0`` ... ``cuda:{N-1}``), the workers
    spread over them in blocks (:class:`zero9.nn.inference.ServerGroup`). ``pin`` keeps each
    server's workers on its share of the host's physical cores (:func:`core_blocks`;
    off by default: on 4 H200s and 64 cores the host's 4-GPU rate was 666,954 evaluations/s pinned,
    723,446 unpinned, docs/runs/host-go9).
    """
    devices = list(devices or [device])
    if server is None:
        server = devices[0].startswith("cuda") and workers > 1
    slot = config.parallel_games * config.leaves_per_tree  # the most positions a worker sends at once
    group = ServerGroup(str(net_path), devices, workers, slot) if server and workers > 0 else None
    cpus = None
    if group is not None and pin:
        blocks = core_blocks(len(devices))
        cpus = [blocks[group.owner[w]] for w in range(workers)]
    return WorkerPool(workers, threads, inference=group, cpus=cpus)


def core_blocks(parts: int) -> list[frozenset[int]]:
    """This process's CPUs cut into ``parts`` blocks of whole physical cores (a core's hyperthreads
    stay together), as equal as they come: one block a GPU, so a GPU's workers keep to their share
    of the host and one GPU's figure is a quarter host's on four. Linux; elsewhere every block is
    all CPUs."""
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if not allowed:
        return [frozenset()] * parts
    cores: dict[str, set[int]] = {}
    for cpu in allowed:
        try:
            topology = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
            key = (topology / "thread_siblings_list").read_text().strip()
        except OSError:
            key = str(cpu)
        cores.setdefault(key, set()).add(cpu)
    groups = sorted((sorted(c) for c in cores.values()), key=lambda c: c[0])
    if len(groups) < parts:
        return [frozenset(allowed)] * parts
    bounds = [len(groups) * k // parts for k in range(parts + 1)]
    return [frozenset(cpu for group in groups[bounds[k]:bounds[k + 1]] for cpu in group)
            for k in range(parts)]


def _next_message(pool: WorkerPool):
    """The workers' next message, or None after a second without one; a stop request or a dead worker
    raises."""
    check_stop()
    try:
        return pool.out_queue.get(timeout=1.0)
    except queue.Empty:
        check_stop()  # a SIGTERM to the process group ends the workers too
        if not pool.alive():
            raise RuntimeError("a self-play worker process died without reporting") from None
        return None


# --------------------------------------------------------------------------------------
# the jobs and the main loop


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
    carried: int = 0  # games begun in an earlier round (a round of sessions)

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["moves_per_s"] = self.moves / self.seconds if self.seconds else 0.0
        d["evals_per_s"] = self.evals / self.seconds if self.seconds else 0.0
        d["mean_length"] = self.moves / self.games if self.games else 0.0
        d["mean_batch"] = self.evals / self.calls if self.calls else 0.0
        return d


def config_summary(config: SelfPlayConfig) -> dict[str, Any]:
    """The config as JSON-able options (for SGF roots and logs)."""
    d = dataclasses.asdict(config)
    d["search"] = dataclasses.asdict(config.search)
    return d


def default_workers(device: str) -> int:
    return max(1, os.cpu_count() or 1)


def play_selfplay(net_path: str | os.PathLike, games: int, config: SelfPlayConfig,
                  chunk_dir: str | os.PathLike, sgf_dir: str | os.PathLike | None = None, *,
                  workers: int = 0, device: str = "cpu", lz_dir: str | os.PathLike | None = None,
                  progress: bool = True, seconds: float | None = None,
                  warmup_seconds: float = 0.0, options: dict | None = None,
                  threads: int = 0, pool: WorkerPool | None = None,
                  inference_server: bool | None = None, straddle: bool = False) -> SelfPlayStats:
    """Play ``games`` games (or until ``seconds`` pass) over ``workers`` processes; returns the counters.

    Records land in ``chunk_dir`` (and ``sgf_dir``/``lz_dir``) as each game ends. ``pool``
    reuses running workers (its size wins over ``workers``); without one, a pool is
    started for this call (one worker and no time limit: in this process).
    ``inference_server`` (default: on for CUDA with several workers) has one process own
    the device and evaluate every worker's positions (:mod:`zero9.nn.inference`).
    ``straddle`` (with a ``pool``): this is a **round** of the pool's sessions, whose games
    began in earlier rounds and go on in later ones (the module docstring).
    """
    if games < 0:
        raise ValueError(f"number of games must be >= 0, got {games}")
    if straddle and (pool is None or seconds is not None):
        raise ValueError("straddling rounds need a pool kept from round to round, and a number of games")
    if pool is not None:  # ``workers`` may ask for the pool's first few (the host bench's 1-GPU figure)
        workers = min(workers, pool.size) if workers else pool.size
    else:
        workers = workers or default_workers(device)
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
        quota = games if straddle else games // workers + (1 if w < games % workers else 0)
        if quota == 0 and seconds is None:
            continue
        cfg = dataclasses.replace(config, seed=base_seed * 1009 + w)
        jobs.append(WorkerJob(w, str(net_path), device, quota, cfg, str(chunk_dir),
                              str(sgf_dir) if sgf_dir else None, str(lz_dir) if lz_dir else None,
                              threads, options=options))
    if pool is not None:
        if pool.inference is not None and jobs:
            pool.inference.load(str(net_path))
        return _play_jobs(pool, jobs, games, progress, seconds, warmup_seconds, straddle)
    processes = 0 if workers == 1 and seconds is None else workers
    with make_pool(net_path, device, processes, threads, config, server=inference_server) as own:
        return _play_jobs(own, jobs, games, progress, seconds, warmup_seconds)


def _play_jobs(pool: WorkerPool, jobs: list[WorkerJob], games: int, progress: bool,
               seconds: float | None = None, warmup_seconds: float = 0.0,
               straddle: bool = False) -> SelfPlayStats:
    """The main loop: hand the workers their jobs and take in their messages until each job has ended.

    A quota's job ends with its ``"done"`` (or, with ``seconds``, when the time is up: the stop
    drops the games in flight); a round's when its worker has paused, the round having its
    ``games`` records (see :class:`zero9.learn.selfplay.worker.WorkerGames`). The counters measured are the
    ones after ``warmup_seconds`` (a quota's) or the whole round's (a round is warm throughout).
    """
    pool.stop.clear()
    round_number = None
    if straddle:
        pool.rounds += 1
        round_number = pool.rounds
        with pool.left.get_lock():
            pool.left.value = games  # every worker is paused (or has no session yet): none is claiming
        jobs = [dataclasses.replace(job, round=round_number) for job in jobs]
    start = time.monotonic()
    for job in jobs:
        pool.submit(job.worker, "selfplay", job)
    stats, bar = SelfPlayStats(), progress_bar(games, progress)
    counters: dict[int, dict] = {}
    warm = _Warm(start, {}) if straddle else None  # a round's counters begin with it
    ended: set[int] = set()
    try:
        while len(ended) < len(jobs):
            msg = _next_message(pool)  # a stop drops the games in flight (and a session's held records)
            now = time.monotonic()
            if msg is not None:
                kind, worker = msg[0], msg[1]
                if kind == "error":
                    raise_worker_error(msg)
                if kind == "done" or (kind == "paused" and msg[2] == round_number):
                    ended.add(worker)
                if kind in ("tick", "game", "paused", "done"):
                    counters[worker] = msg[-1]
                if kind == "game":
                    add_game(stats, msg[2])
                    _show_game(bar, stats, counters, now - start)
            if warm is None and now - start >= warmup_seconds and len(counters) >= len(jobs):
                warm = _Warm(now, {k: dict(v) for k, v in counters.items()})
            if seconds is not None and now - start >= seconds and not pool.stop.is_set():
                pool.stop.set()
                _measure(stats, counters, warm, now)
    except BaseException:
        pool.stop.set()
        raise
    finally:
        if bar is not None:
            bar.close()
    if straddle and stats.games != games:  # each worker's records come before its pause: this would be a bug
        raise RuntimeError(f"a round of {games} games ended with {stats.games} written")
    end = time.monotonic()
    stats.seconds = end - start
    stats.evals, stats.calls = (_total(counters, name) for name in ("evals", "calls"))
    if seconds is None:
        _measure(stats, counters, warm, end)
    return stats


@dataclass
class _Warm:
    """The moment the measuring window opened, and every worker's counters then."""

    at: float
    counters: dict[int, dict]


def _total(counters: dict[int, dict], name: str) -> float:
    return sum(c.get(name, 0) for c in counters.values())


def _show_game(bar, stats: SelfPlayStats, counters: dict[int, dict], elapsed: float) -> None:
    if bar is not None:
        bar.update(1)
        bar.set_postfix_str(f"{stats.moves / elapsed:.1f} moves/s, {_total(counters, 'evals') / elapsed:.0f} "
                            f"evals/s, len {stats.moves / stats.games:.1f}", refresh=False)


def _measure(stats: SelfPlayStats, counters: dict[int, dict], warm: _Warm | None, now: float) -> None:
    """The measured counters: from the window's opening to ``now``."""
    if warm is None or now <= warm.at:
        return

    def since_warm(name: str) -> float:
        return _total(counters, name) - _total(warm.counters, name)

    stats.measured_evals, stats.measured_seconds = since_warm("evals"), now - warm.at
    stats.measured_net_seconds = since_warm("net_seconds")


def add_game(stats: SelfPlayStats, summary: dict) -> None:
    stats.games += 1
    stats.carried += bool(summary.get("carried"))
    stats.moves += summary["moves"]
    stats.positions += summary["recorded"]
    stats.resigned += bool(summary["resigned"])
    if summary["no_resign"]:
        stats.no_resign_games += 1
        stats.false_resigns += bool(summary["false_resign"])
    key = {BLACK: "B", EMPTY: "draw"}.get(summary["winner"], "W")
    stats.wins[key] += 1


def progress_bar(total: int, enabled: bool):
    if not enabled:
        return None
    return tqdm(total=total, desc="self-play", unit="game", dynamic_ncols=True, mininterval=1.0)


