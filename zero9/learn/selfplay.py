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
  workers, so a run of N games writes exactly N records (``zero9 selfplay``, and
  ``zero9 autotrain`` without ``--straddle``: every game of a round ends in it).
- **round**, **session**, **straddling** (``zero9 autotrain``, as KataGo's and Leela Zero's
  continuous self-play): each worker of a kept :class:`WorkerPool` plays one endless
  session of games (:class:`_Session`) whose games in flight go on from one round into
  the next, so no round waits for its longest games with its workers idle. A round asks
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
from zero9.learn.selfplay_game import GameRecord, SelfPlay, play_games
from zero9.nn import features
from zero9.nn.checkpoint import game_from_meta, load_net
from zero9.nn.chunks import ChunkData, ownership_target, write_lz_chunk, write_npz_shard
from zero9.nn.inference import InferenceServer, RemoteNet, ServerGroup
from zero9.nn.net import resolve_device
from zero9.search.evaluator import NetEvaluator
from zero9.settings import PCR_SHARE, SearchConfig, SelfPlayConfig
from zero9.util.files import DiskFullError
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
    g.add_argument("--eval-cache", type=int, default=c.eval_cache, metavar="N",
                   help="entries of each worker's evaluator cache (0: none; a hit reuses an evaluation "
                        "made under another random symmetry)")
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
    if getattr(args, "eval_cache", 0) < 0:
        raise ValueError(f"--eval-cache must be >= 0 (0: no cache), got {args.eval_cache}")
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
        eval_cache=getattr(args, "eval_cache", SelfPlayConfig.eval_cache),
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


def sgf_text(record: GameRecord, net_hash: str, options: dict[str, Any],
             nets: list[str] | None = None) -> str:
    """The game as SGF with the net hash (and ``nets``, see :func:`write_record`), options and result
    in the root."""

    params = record.game.to_dict()
    info = {"net": net_hash, "game": params, "options": options, "resigned": record.resigned,
            "no_resign": record.no_resign, "would_resign": record.would_resign}
    if nets:
        info["nets"] = nets
    moves = [(m.position.to_play, m.action) for m in record.moves]
    player = f"zero9 {net_hash}"
    return write_sgf(record.game, moves, record.result or "?", properties={
        "PB": player, "PW": player, "GN": f"zero9 self-play {net_hash} #{record.index}",
        "PC": "zero9 self-play", "C": json.dumps(info, sort_keys=True)})


def write_record(record: GameRecord, stem: str, chunk_dir: Path, sgf_dir: Path | None, net_hash: str,
                 options: dict[str, Any], lz_dir: Path | None = None, nets: list[str] | None = None) -> Path:
    """Write the SGF, the optional LZ chunk, then the shard of one game; returns the shard's path.

    The shard goes last because it commits the record: the game count is the shards on
    disk, and the files of a game killed before its shard are swept on restart
    (:meth:`zero9.learn.rundir.RunDir.sweep_uncommitted_records`). ``net_hash`` is the net
    the game ended with; ``nets``, every net of the rounds it was in flight in, oldest
    first (a game of a session), goes beside it into the SGF and the shard when there are two or more.
    """

    nets = nets if nets is not None and len(nets) > 1 else None
    data = record_chunk(record)
    if sgf_dir is not None:
        save_sgf(sgf_dir / f"{stem}.sgf", sgf_text(record, net_hash, options, nets))
    if lz_dir is not None and record.game.name == "go" and record.winner != EMPTY and len(data):
        write_lz_chunk(lz_dir / f"{stem}.gz", data)
    path = chunk_dir / f"{stem}-{len(data)}p.npz"
    meta = {"net": net_hash, "result": record.result}
    if nets:
        meta["nets"] = nets
    write_npz_shard(path, data, meta=meta)
    return path


# --------------------------------------------------------------------------------------
# workers


@dataclass
class WorkerJob:
    """Everything a worker needs for a quota, or for a round of its session; picklable for spawn."""

    worker: int
    net_path: str
    device: str
    games: int  # a quota: the worker's games; a round: the round's (the pool's shared count decides)
    config: SelfPlayConfig
    chunk_dir: str
    sgf_dir: str | None
    lz_dir: str | None
    threads: int
    options: dict = field(default_factory=dict)
    round: int = 0  # a round's number: the worker's "paused" message names it


class _CountingEvaluator:
    """The NetEvaluator plus periodic counter reports, a stop check (see StopSelfPlay) and, in a
    session, the pause between rounds (``pause``: see :class:`_Session`)."""

    def __init__(self, inner, report, stop, pause=None):
        self.inner, self.report, self.stop, self.pause = inner, report, stop, pause
        self.last = time.monotonic()
        self.parent = os.getppid()
        self.base = dict.fromkeys(("evals", "calls", "requests", "net_seconds"), 0)  # at the round's start
        self.in_flight: set = set()  # batches submitted and not yet collected
        self.stale: set = set()  # batches submitted before the net changed (see new_net)

    def evaluate(self, positions):
        self.check()
        self.wait()
        out = self.inner.evaluate(positions)
        self.tick()
        return out

    def check(self) -> None:
        if self.stop is not None and self.stop.is_set():
            raise self.stopping()

    def stopping(self) -> StopSelfPlay:
        """The exception that ends the games; they collect their batches in flight without pausing."""
        self.pause = None
        return StopSelfPlay()

    def wait(self) -> None:
        """A session's pause point: between a batch's answer and the trees taking it in, so that every
        game that ended before it has come out of the games' generator already (and names the net it
        ended with), and no batch of the worker's is left uncollected if the games end here."""
        if self.pause is not None:
            self.pause()

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.last >= TICK_SECONDS:
            self.last = now
            if os.getppid() != self.parent:
                raise self.stopping()  # the main process died (kill -9): an orphan must not play on
            self.report()

    @property
    def answers_later(self) -> bool:
        return self.inner.answers_later

    def submit(self, positions):
        self.check()
        asked = self.inner.submit(positions)
        self.in_flight.add(asked)
        return asked

    def collect(self, asked):
        out = self.inner.collect(asked)
        self.in_flight.discard(asked)
        if asked in self.stale:
            # The old net's answer: the trees that asked take it, as they took its earlier answers,
            # but the cache must not hand it to a later request.
            self.stale.discard(asked)
            self.inner.clear_cache()
        self.wait()
        self.tick()
        return out

    def new_net(self, net=None) -> None:
        """The net changed (``net``: the worker's own; None: the inference server's): empty the cache,
        whose entries are the old net's answers, and again after each batch it still answers."""
        if net is not None:
            self.inner.net = net
        self.stale = set(self.in_flight)
        self.inner.clear_cache()

    def totals(self) -> dict[str, float]:
        e = self.inner
        return {"evals": e.positions - e.cache_hits, "calls": e.calls, "requests": e.positions,
                "net_seconds": e.net_seconds}

    def counters(self) -> dict[str, float]:
        """The counters since the round began (a quota: since the start)."""
        return {k: v - self.base[k] for k, v in self.totals().items()}

    def restart_counters(self) -> None:
        self.base = self.totals()


def run_worker(job: WorkerJob, out_queue, stop=None, remote: RemoteNet | None = None) -> None:
    """Play ``job.games`` games, writing each record at once and reporting to ``out_queue``.

    Messages: ``("tick", worker, counters)``, ``("game", worker, summary, counters)``,
    ``("done", worker, counters)`` or ``("error", worker, text, disk)`` (:func:`error_message`).
    With ``remote`` (a :class:`zero9.nn.inference.RemoteNet`), the pool's inference server evaluates the
    positions and this process only reads the net's game from its file.
    """
    try:
        if job.threads > 0:
            torch.set_num_threads(job.threads)
        net, meta = load_net(job.net_path, device="cpu" if remote is not None else job.device)
        if remote is not None:
            net = remote
        game = game_from_meta(meta)
        inner = NetEvaluator(net, cache_size=job.config.eval_cache,
                             rng=np.random.default_rng(job.config.seed))

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
        out_queue.put(error_message(job.worker, e))


def error_message(worker: int, error: BaseException) -> tuple:
    """A worker's failure as a message: ``("error", worker, text, disk)``; ``disk`` is ``(path, errno)``
    for a full disk, so that the main process ends with docs/durability.md's one line."""
    disk = (str(error.path), error.errno) if isinstance(error, DiskFullError) else None
    return ("error", worker, f"{type(error).__name__}: {error}\n{traceback.format_exc()}", disk)


def raise_worker_error(msg: tuple) -> None:
    """Raise the failure a worker reported (:func:`error_message`): a full disk as
    :class:`zero9.util.files.DiskFullError` (one line, exit 2), anything else as a RuntimeError."""
    disk = msg[3] if len(msg) > 3 else None
    if disk is not None:
        raise DiskFullError(disk[0], OSError(disk[1], os.strerror(disk[1])))
    raise RuntimeError(f"self-play worker {msg[1]} failed: {msg[2]}")


def game_summary(record: GameRecord, path: Path, carried: bool = False) -> dict[str, Any]:
    return {"moves": len(record.moves), "recorded": sum(m.recorded for m in record.moves),
            "result": record.result, "winner": record.winner, "resigned": record.resigned,
            "no_resign": record.no_resign, "false_resign": record.false_resignation, "path": str(path),
            "carried": carried}


# --------------------------------------------------------------------------------------
# sessions: games that straddle rounds


def claim(left) -> bool:
    """Take one of the games the round still lacks from the pool's shared count; False when none is left."""
    with left.get_lock():
        if left.value <= 0:
            return False
        left.value -= 1
        return True


class _Session:
    """One worker's games across autotrain's rounds: one :class:`SelfPlay`, paused between rounds.

    A round's job brings the net, the folders and the seed-bearing config (the first round's
    starts the session; later rounds' configs are not used). Each game that ends takes a
    place in the round (:func:`claim`) and is written into the round's folders; when none
    is left the record is **held** and written first in the next round. The pause is inside
    the evaluator (:meth:`_CountingEvaluator.wait`): once the round has all its games, the
    worker reports ``("paused", worker, round, counters)`` and runs other jobs (rating
    matches) until the next round's job; then it serves that round's net (the cache
    emptied when it is another one) and its games search on from where they were.
    """

    def __init__(self, job: WorkerJob, jobs: _Jobs, out_queue, stop, remote: RemoteNet | None, left):
        if job.threads > 0:
            torch.set_num_threads(job.threads)
        self.jobs, self.out_queue, self.remote, self.left = jobs, out_queue, remote, left
        self.worker, self.options = job.worker, job.options
        net, self.meta = self.load(job)
        inner = NetEvaluator(remote if remote is not None else net, cache_size=job.config.eval_cache,
                             rng=np.random.default_rng(job.config.seed))
        self.evaluator = _CountingEvaluator(inner, self.report, stop, pause=self.wait_while_full)
        # No quota: a session plays until the pool closes (or stops it).
        self.selfplay = SelfPlay(game_from_meta(self.meta), self.evaluator, sys.maxsize, job.config)
        self.rounds: list[tuple[int, str]] = []  # per round: (games begun before it, its net's hash)
        self.held: list[tuple[GameRecord, list[str]]] = []  # (record, its nets) ended after the round's last
        self.seq = 0  # records written
        self.begin(job)

    def load(self, job: WorkerJob):
        return load_net(job.net_path, device="cpu" if self.remote is not None else job.device)

    def report(self) -> None:
        self.out_queue.put(("tick", self.worker, self.evaluator.counters()))

    def begin(self, job: WorkerJob) -> None:
        """Take round ``job``: its net, its folders, then the records held from the round before."""
        if self.rounds:
            net, meta = self.load(job)
            if meta["hash"] != self.meta["hash"]:
                self.evaluator.new_net(None if self.remote is not None else net)
                self.meta = meta
        self.job = job
        self.rounds.append((self.selfplay.started, self.meta["hash"]))
        self.evaluator.restart_counters()
        held, self.held = self.held, []
        for record, nets in held:
            self.commit(record, nets, carried=True)

    def play(self) -> None:
        for record in self.selfplay.games():
            first = max(k for k, (begun, _) in enumerate(self.rounds) if begun <= record.index)
            hashes = [h for _, h in self.rounds[first:]]
            nets = [h for k, h in enumerate(hashes) if k == 0 or h != hashes[k - 1]]  # a kept net plays on
            self.commit(record, nets, carried=first < len(self.rounds) - 1)

    def commit(self, record: GameRecord, nets: list[str], carried: bool) -> None:
        """Write the record into the round's folders if the round still lacks a game, else hold it."""
        if not claim(self.left):
            self.held.append((record, nets))
            return
        job = self.job
        stem = f"{time.time_ns():019d}-w{self.worker:02d}-{self.seq:05d}"
        self.seq += 1
        path = write_record(record, stem, Path(job.chunk_dir), Path(job.sgf_dir) if job.sgf_dir else None,
                            nets[-1], self.options, Path(job.lz_dir) if job.lz_dir else None, nets)
        self.out_queue.put(("game", self.worker, game_summary(record, path, carried),
                            self.evaluator.counters()))

    def wait_while_full(self) -> None:
        """The pause: while the round has all its games, say so and wait for the next round's job."""
        while self.left.value <= 0:
            self.out_queue.put(("paused", self.worker, self.job.round, self.evaluator.counters()))
            while True:
                item = self.jobs.next()
                if item is None or item[0] == "selfplay":  # the pool closes, or a quota takes this worker
                    self.jobs.back = item
                    raise self.evaluator.stopping()  # these games are dropped
                if item[0] == "round":
                    self.begin(item[1])
                    break
                run_job(self.worker, item, self.out_queue, self.jobs.stop, self.remote)


def run_session(job: WorkerJob, jobs: _Jobs, out_queue, stop, remote: RemoteNet | None, left) -> None:
    """Play rounds of a session from ``job`` on, until the pool closes or stops its games."""
    try:
        session = _Session(job, jobs, out_queue, stop, remote, left)
        try:
            session.play()
        except StopSelfPlay:
            pass  # the games in flight (and the held records) are dropped, as a quota's are
    except BaseException as e:  # the main process must hear about it, not wait forever
        out_queue.put(error_message(job.worker, e))


# --------------------------------------------------------------------------------------
# the worker pool: processes started once per command and reused for every round


class _Jobs:
    """A worker's end of its job queue. :meth:`next` gives the next job (one put ``back`` first), or
    None for good once the pool closes or the main process dies."""

    def __init__(self, jobs, stop, parent: int | None):
        self.jobs, self.stop, self.parent = jobs, stop, parent
        self.back = None
        self.closed = False

    def next(self):
        if self.back is not None:
            item, self.back = self.back, None
            return item
        while not self.closed:
            try:
                item = self.jobs.get(timeout=1.0)
            except queue.Empty:
                if self.parent is not None and os.getppid() != self.parent:
                    self.closed = True  # orphaned by a kill -9 of the main process
                continue
            if item is None:
                self.closed = True
            else:
                return item
        return None


def run_job(worker: int, item: tuple, out_queue, stop, remote: RemoteNet | None) -> None:
    """A quota (``"selfplay"``) or a function call (``"call"``: rating matches) on this worker."""
    kind, payload = item
    if kind == "selfplay":
        run_worker(payload, out_queue, stop, remote)
    elif kind == "call":
        fn, kwargs = payload
        try:
            out_queue.put(("result", worker, fn(**kwargs)))
        except BaseException as e:
            out_queue.put(error_message(worker, e))


def serve_jobs(worker: int, jobs: _Jobs, out_queue, remote: RemoteNet | None, left) -> None:
    """A worker's loop: quotas, calls, and rounds of its session (which runs the next rounds' jobs
    itself), until the pool closes."""
    while (item := jobs.next()) is not None:
        if item[0] == "round":
            run_session(item[1], jobs, out_queue, jobs.stop, remote, left)
        else:
            run_job(worker, item, out_queue, jobs.stop, remote)


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


def _pool_main(worker: int, jobs, out_queue, stop, threads: int, parent: int, remote: RemoteNet | None,
               left) -> None:
    """A pool process: run jobs from ``jobs`` until ``None`` arrives or the parent dies."""

    die_with_parent(parent)
    # Ctrl-C reaches the whole process group; the parent decides when its workers stop (via ``stop``).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if threads > 0:
        torch.set_num_threads(threads)
    serve_jobs(worker, _Jobs(jobs, stop, parent), out_queue, remote, left)


class WorkerPool:
    """``workers`` spawned processes with ``threads`` torch threads each, kept for many rounds.

    Starting a process costs a torch import (seconds on a busy machine), so the
    autotrain loop starts its pool once. ``workers == 0`` means no processes: jobs
    run in one thread of this process. ``left`` is the count the workers' sessions share:
    the games the round still lacks (see :class:`_Session`).
    """

    def __init__(self, workers: int, threads: int = 1,
                 inference: InferenceServer | ServerGroup | None = None):
        self.workers, self.threads, self.inference = workers, threads, inference
        self.ctx = mp.get_context("spawn")
        self.left = self.ctx.Value("q", 0)
        self.rounds = 0  # rounds of sessions played

        if workers == 0:
            self.out_queue, self.stop, self.job_queues, self.procs = queue.Queue(), threading.Event(), \
                [queue.Queue()], []
            self.thread = threading.Thread(target=serve_jobs, daemon=True, args=(
                0, _Jobs(self.job_queues[0], self.stop, None), self.out_queue, None, self.left))
            self.thread.start()
            return
        self.out_queue, self.stop = self.ctx.Queue(), self.ctx.Event()
        self.job_queues = [self.ctx.Queue() for _ in range(workers)]
        clients = [inference.client(w) if inference else None for w in range(workers)]
        self.procs = [self.ctx.Process(target=_pool_main, daemon=True, args=(
            w, q, self.out_queue, self.stop, threads, os.getpid(), client, self.left))
            for (w, q), client in zip(enumerate(self.job_queues), clients, strict=True)]
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
        self.job_queues[worker].put((kind, payload))

    def alive(self) -> bool:
        if self.workers == 0:
            return self.thread.is_alive()
        return all(p.is_alive() for p in self.procs)

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
    carried: int = 0  # games begun in an earlier round (a round of sessions)

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
        if straddle:
            return _play_round(pool, jobs, games, progress)
        return _run_jobs(pool, jobs, games, progress, seconds, warmup_seconds)
    processes = 0 if workers == 1 and seconds is None else workers
    with make_pool(net_path, device, processes, threads, config, server=inference_server) as own:
        return _run_jobs(own, jobs, games, progress, seconds, warmup_seconds)


def make_pool(net_path: str | os.PathLike, device: str, workers: int, threads: int, config: SelfPlayConfig,
              devices: list[str] | None = None, server: bool | None = None) -> WorkerPool:
    """The worker pool and its inference servers, built here and nowhere else.

    ``workers`` processes (0: one thread of this process) with ``threads`` torch threads each.
    ``server`` (default: on for CUDA with several workers) puts one inference server on each of
    ``devices`` (default ``[device]``; a host's GPUs: ``cuda:0`` ... ``cuda:{N-1}``), the workers
    spread over them in blocks (:class:`zero9.nn.inference.ServerGroup`).
    """
    devices = list(devices or [device])
    if server is None:
        server = devices[0].startswith("cuda") and workers > 1
    slot = config.parallel_games * config.leaves_per_tree  # the most positions a worker sends at once
    group = ServerGroup(str(net_path), devices, workers, slot) if server and workers > 0 else None
    return WorkerPool(workers, threads, inference=group)


def _run_jobs(pool: WorkerPool, jobs: list[WorkerJob], games: int, progress: bool, seconds: float | None,
              warmup_seconds: float) -> SelfPlayStats:
    pool.stop.clear()
    stop = pool.stop
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
            msg = _next_message(pool)  # a stop: finished games are on disk, the games in flight are dropped
            now = time.monotonic()
            if msg is not None:
                kind, worker = msg[0], msg[1]
                if kind == "error":
                    raise_worker_error(msg)
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


def _play_round(pool: WorkerPool, jobs: list[WorkerJob], games: int, progress: bool) -> SelfPlayStats:
    """A round of the pool's sessions: they play on until ``games`` records are written and every worker
    has paused (see :class:`_Session`); the counters are the round's."""
    pool.stop.clear()
    pool.rounds += 1
    with pool.left.get_lock():
        pool.left.value = games  # every worker is paused (or has no session yet): none is claiming
    start = time.monotonic()
    for job in jobs:
        pool.submit(job.worker, "round", dataclasses.replace(job, round=pool.rounds))
    stats, bar = SelfPlayStats(), _bar(games, progress)
    counters: dict[int, dict] = {}
    paused: set[int] = set()
    try:
        while len(paused) < len(jobs):
            msg = _next_message(pool)  # a stop drops the games in flight and the held records
            if msg is None:
                continue
            kind, worker = msg[0], msg[1]
            if kind == "error":
                raise_worker_error(msg)
            if kind == "paused" and msg[2] == pool.rounds:
                paused.add(worker)
            if kind in ("tick", "game", "paused"):
                counters[worker] = msg[-1]
            if kind == "game":
                _add_game(stats, msg[2])
                if bar is not None:
                    bar.update(1)
                    elapsed = time.monotonic() - start
                    evals = sum(c.get("evals", 0) for c in counters.values())
                    bar.set_postfix_str(f"{stats.moves / elapsed:.1f} moves/s, "
                                        f"{evals / elapsed:.0f} evals/s, "
                                        f"len {stats.moves / stats.games:.1f}", refresh=False)
    except BaseException:
        pool.stop.set()
        raise
    finally:
        if bar is not None:
            bar.close()
    if stats.games != games:  # each worker's records come before its pause: this would be a bug
        raise RuntimeError(f"a round of {games} games ended with {stats.games} written")
    stats.seconds = time.monotonic() - start
    stats.evals, stats.calls, stats.measured_net_seconds = (sum(c.get(name, 0) for c in counters.values())
                                                            for name in ("evals", "calls", "net_seconds"))
    stats.measured_evals, stats.measured_seconds = stats.evals, stats.seconds  # the whole round is warm
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
    stats.carried += bool(summary.get("carried"))
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
