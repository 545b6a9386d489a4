"""The worker process's side of self-play: its job loop and its one game loop.

A **worker** (one process of a :class:`zero9.learn.selfplay.pool.WorkerPool`, or a thread of this
process when the pool has none) runs jobs from its queue (:func:`serve_jobs`): **self-play**
(``"selfplay"``, :func:`play_job`) or a **call** (``"call"``: rating matches). Self-play is one
loop (:class:`WorkerGames`) for both of its kinds: a **quota** (play N games) and a **round** of
the worker's **session** (endless games that go on from one round into the next; see
:mod:`zero9.learn.selfplay.pool`'s docstring). It writes each finished game's record itself
(:mod:`zero9.learn.selfplay.records`) on a thread beside its games (:class:`RecordWriter`) and
reports to the main process:
``("tick", worker, counters)``, ``("game", worker, summary, counters)``, ``("paused", worker,
round, counters)``, ``("done", worker, counters)``, ``("result", worker, value)`` or
``("error", worker, text, disk)`` (:func:`error_message`). It dies with its parent
(:func:`die_with_parent`), ``kill -9`` included.
"""

from __future__ import annotations

import ctypes
import os
import queue
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from zero9.games import Game
from zero9.learn.selfplay.game import check_config
from zero9.learn.selfplay.lockstep import GameRecord, SelfPlay
from zero9.learn.selfplay.records import game_summary, new_stem, write_record
from zero9.nn.checkpoint import game_from_meta, load_net
from zero9.nn.inference import RemoteNet
from zero9.search.evaluator import NetEvaluator
from zero9.settings import SelfPlayConfig
from zero9.util.files import DiskFullError
from zero9.util.interrupts import ignore_ctrl_c
from zero9.util.logs import configure_logging

TICK_SECONDS = 1.0  # how often workers report their counters
PR_SET_PDEATHSIG = 1  # prctl option: the signal a process gets when its parent dies (Linux)


class StopSelfPlay(Exception):
    """Raised inside a worker's evaluator when the main process asks it to stop."""


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
    round: int = 0  # 0: a quota; else a round of the pool's sessions (its "paused" message names it)
    game: Game | None = None  # the board to play (None: the net's own); a session keeps its first round's


class RecordWriter:
    """A worker's finished games written on a thread of their own, while its games search on.

    Writing a record (its planes packed, the npz deflated, the files fsync'd) was a tenth of a Go
    recipe worker's time on the GPU machine (py-spy, issue 40), and the worker waits for the net a
    seventh of its time: deflate, writes and fsyncs let go of the interpreter, so they fill those
    waits. Each record is announced (its ``"game"`` message) once it is on disk, as before; a
    worker flushes before it says ``"paused"`` or ``"done"``, so those still come after its games.
    At most ``MOST`` records wait: a slow disk slows the games rather than filling memory.
    """

    MOST = 8

    def __init__(self):
        self.waiting: queue.Queue = queue.Queue(self.MOST)
        self.error: BaseException | None = None
        threading.Thread(target=self._run, name="records", daemon=True).start()

    def put(self, write) -> None:
        """Run ``write()`` on the writer's thread, after those put before it."""
        self._raise()
        self.waiting.put(write)

    def flush(self) -> None:
        """Wait until every record put is written; a writer's error is raised here."""
        self.waiting.join()
        self._raise()

    def close(self) -> None:
        """:meth:`flush`, and the thread ends."""
        try:
            self.flush()
        finally:
            self.waiting.put(None)

    def _raise(self) -> None:
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        while (write := self.waiting.get()) is not None:
            try:
                if self.error is None:  # after an error nothing more is written: the worker reports it
                    write()
            except BaseException as e:
                self.error = e
            finally:
                self.waiting.task_done()


class _CountingEvaluator:
    """The NetEvaluator plus periodic counter reports, a stop check (see StopSelfPlay) and, in a
    session, the pause between rounds (``pause``: see :class:`WorkerGames`)."""

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

    def evaluate_encoded(self, batch):
        self.check()
        self.wait()
        out = self.inner.evaluate_encoded(batch)
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

    def submit_encoded(self, batch):
        self.check()
        asked = self.inner.submit_encoded(batch)
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


def job_game(job: WorkerJob, net, meta: dict, remote: RemoteNet | None):
    """The game a job plays: ``job.game`` when it has one (a net with pooled heads plays other board
    sizes than the one it was made for), else the net's own; ValueError when the net cannot play it."""
    own, name = game_from_meta(meta), meta.get("hash")
    game = job.game
    if game is None or game.to_dict() == own.to_dict():
        return own
    if game.name != own.name:
        raise ValueError(f"self-play job asks for {game.name}, but net {name} plays {own.name}")
    if not net.serves_size(game.size):
        raise ValueError(f"self-play job asks for a {game.size}x{game.size} board, but net {name} "
                         f"serves {net.sizes_served()}")
    if remote is not None and remote.size != game.size:  # its shared buffers are shaped for one board
        raise ValueError(f"self-play job asks for a {game.size}x{game.size} board, but the pool's inference "
                         f"server evaluates {remote.size}x{remote.size} positions only")
    return game


def error_message(worker: int, error: BaseException) -> tuple:
    """A worker's failure as a message: ``("error", worker, text, disk)``; ``disk`` is ``(path, errno)``
    for a full disk, so that the main process ends with docs/durability.md's one line."""
    disk = (str(error.path), error.errno) if isinstance(error, DiskFullError) else None
    return ("error", worker, f"{type(error).__name__}: {error}\n{traceback.format_exc()}", disk)


def raise_worker_error(msg: tuple) -> None:
    """Raise the failure a worker reported (:func:`error_message`): a full disk as
    :class:`zero9.util.files.DiskFullError` and bad input (a ValueError: a damaged net file, say) as a
    ValueError naming it, each one line and exit 2 in the CLI; anything else as a RuntimeError with
    the worker's traceback (a bug)."""
    disk = msg[3] if len(msg) > 3 else None
    if disk is not None:
        raise DiskFullError(disk[0], OSError(disk[1], os.strerror(disk[1])))
    first_line = msg[2].split("\n", 1)[0]
    if first_line.startswith("ValueError: "):
        raise ValueError(f"self-play worker {msg[1]}: {first_line.removeprefix('ValueError: ')}")
    raise RuntimeError(f"self-play worker {msg[1]} failed: {msg[2]}")



# --------------------------------------------------------------------------------------
# the worker loop: a quota's games, or a session's across rounds


def claim(left) -> bool:
    """Take one of the games the round still lacks from the pool's shared count; False when none is left."""
    with left.get_lock():
        if left.value <= 0:
            return False
        left.value -= 1
        return True


class WorkerGames:
    """One worker's self-play: a **quota** (``job.round == 0``: ``job.games`` games, then ``"done"``)
    or a **session** (a round's job: endless games across autotrain's rounds, paused between them).

    Both are one :class:`SelfPlay` whose records are written as their games end; a quota is a
    session of one round whose every game has its place. In a session the first round's job
    brings the seed-bearing config (later rounds' configs are not used) and each round's job its
    net and folders. Each game that ends takes a place in the round (:func:`claim`); when none is
    left the record is **held** and written first in the next round. The pause is inside the
    evaluator (:meth:`_CountingEvaluator.wait`): once the round has all its games, the worker
    reports ``("paused", worker, round, counters)`` and runs other jobs (rating matches) until
    the next round's job; then it serves that round's net (the cache emptied when it is another
    one) and its games search on from where they were.
    """

    def __init__(self, job: WorkerJob, jobs: JobQueue, out_queue, remote: RemoteNet | None, left):
        if job.threads > 0:
            torch.set_num_threads(job.threads)
        self.jobs, self.out_queue, self.remote = jobs, out_queue, remote
        self.session = job.round > 0
        self.left = left if self.session else None  # a quota's games all have their place
        self.worker, self.options = job.worker, job.options
        net, self.meta = self.load(job)
        inner = NetEvaluator(remote if remote is not None else net, cache_size=job.config.eval_cache,
                             rng=np.random.default_rng(job.config.seed))
        pause = self.wait_while_full if self.session else None
        self.evaluator = _CountingEvaluator(inner, self.report, jobs.stop, pause=pause)
        check_config(job.config)
        # A session plays until the pool closes (or stops it); a quota, its games.
        games = sys.maxsize if self.session else job.games
        self.selfplay = SelfPlay(job_game(job, net, self.meta, remote), self.evaluator, games, job.config)
        self.rounds: list[tuple[int, str]] = []  # per round: (games begun before it, its net's hash)
        self.held: list[tuple[GameRecord, list[str]]] = []  # (record, its nets) ended after the round's last
        self.seq = 0  # records written
        self.writer = RecordWriter()
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
        """Play until the quota is done, or the pool stops the games (:class:`StopSelfPlay`)."""
        for record in self.selfplay.games():
            first = max(k for k, (begun, _) in enumerate(self.rounds) if begun <= record.index)
            hashes = [h for _, h in self.rounds[first:]]
            nets = [h for k, h in enumerate(hashes) if k == 0 or h != hashes[k - 1]]  # a kept net plays on
            self.commit(record, nets, carried=first < len(self.rounds) - 1)

    def commit(self, record: GameRecord, nets: list[str], carried: bool) -> None:
        """Write the record into the round's folders if the round still lacks a game, else hold it."""
        if self.left is not None and not claim(self.left):
            self.held.append((record, nets))
            return
        job, counters = self.job, self.evaluator.counters()
        stem = new_stem(self.worker, self.seq)
        self.seq += 1

        def write() -> None:
            path = write_record(record, stem, Path(job.chunk_dir), Path(job.sgf_dir) if job.sgf_dir else None,
                                nets[-1], self.options, Path(job.lz_dir) if job.lz_dir else None, nets)
            self.out_queue.put(("game", self.worker, game_summary(record, path, carried), counters))

        self.writer.put(write)

    def wait_while_full(self) -> None:
        """A session's pause: while the round has all its games, say so and wait for the next round's job."""
        while self.left.value <= 0:
            self.writer.flush()  # the round's games are on disk and announced before it says so
            self.out_queue.put(("paused", self.worker, self.job.round, self.evaluator.counters()))
            while True:
                item = self.jobs.next()
                if item is None or (item[0] == "selfplay" and item[1].round == 0):  # closing, or a quota
                    self.jobs.back = item
                    raise self.evaluator.stopping()  # these games are dropped
                if item[0] == "selfplay":
                    self.begin(item[1])
                    break
                run_job(self.worker, item, self.jobs, self.out_queue, self.remote, self.left)


def play_job(job: WorkerJob, jobs: JobQueue, out_queue, remote: RemoteNet | None, left) -> None:
    """The worker loop: play a quota, or rounds of a session from ``job`` on until the pool closes or
    stops its games; a quota ends with ``("done", worker, counters)``.

    With ``remote`` (a :class:`zero9.nn.inference.RemoteNet`), the pool's inference server evaluates the
    positions and this process only reads the net's game from its file.
    """
    try:
        games = WorkerGames(job, jobs, out_queue, remote, left)
        try:
            games.play()
        except StopSelfPlay:
            pass  # the games in flight (and a session's held records) are dropped
        finally:
            games.writer.close()  # (the games that ended are written, whatever stopped the others)
        if not games.session:
            out_queue.put(("done", job.worker, games.evaluator.counters()))
    except BaseException as e:  # the main process must hear about it, not wait forever
        out_queue.put(error_message(job.worker, e))


# --------------------------------------------------------------------------------------
# the worker pool: processes started once per command and reused for every round


class JobQueue:
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


def run_job(worker: int, item: tuple, jobs: JobQueue, out_queue, remote: RemoteNet | None, left) -> None:
    """Self-play (``"selfplay"``: a quota, or a round of a session, :func:`play_job`) or a function call
    (``"call"``: rating matches) on this worker."""
    kind, payload = item
    if kind == "selfplay":
        play_job(payload, jobs, out_queue, remote, left)
    elif kind == "call":
        fn, kwargs = payload
        try:
            out_queue.put(("result", worker, fn(**kwargs)))
        except BaseException as e:
            out_queue.put(error_message(worker, e))


def serve_jobs(worker: int, jobs: JobQueue, out_queue, remote: RemoteNet | None, left) -> None:
    """A worker's job loop, until the pool closes (a session runs the next rounds' jobs itself)."""
    while (item := jobs.next()) is not None:
        run_job(worker, item, jobs, out_queue, remote, left)


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


def pool_main(worker: int, jobs, out_queue, stop, threads: int, parent: int, remote: RemoteNet | None,
               left, cpus: frozenset[int] | None = None) -> None:
    """A pool process: run jobs from ``jobs`` until ``None`` arrives or the parent dies; on ``cpus``
    only when given (its GPU's share of the host's cores, :func:`zero9.learn.selfplay.pool.core_blocks`)."""

    die_with_parent(parent)
    configure_logging()  # spawned without the parent's handler: info lines would be dropped
    if cpus:
        os.sched_setaffinity(0, cpus)
    # Ctrl-C reaches the whole process group; the parent decides when its workers stop (via ``stop``).
    ignore_ctrl_c()
    if threads > 0:
        torch.set_num_threads(threads)
    serve_jobs(worker, JobQueue(jobs, stop, parent), out_queue, remote, left)
