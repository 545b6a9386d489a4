"""Self-play across machines on Ray (``zero9 autotrain --ray auto|ADDRESS``).

Vocabulary:

- **cluster**: machines joined by ``ray start --head`` / ``ray start --address ...``
  (``docs/ray.md``). The **driver** is the ``zero9 autotrain`` process on the head;
  it alone touches the run directory, so no shared filesystem is needed.
- **actor**: one :class:`SelfPlayActor`, a Ray worker process holding ``num_cpus=1``.
  By default a node gets one actor per CPU; ``--workers N`` asks for N per node.
- **node server** (:mod:`zero9.learn.cluster.node`): on a GPU node (``--ray-server auto``, the
  default; ``on``: every node) one more actor holds the net once, on the node's GPUs, and the
  node's actors send it their batches through a Unix socket and shared memory. Elsewhere
  (``--ray-server off``, or a CPU node under ``auto``) each actor holds its own copy of the
  net (on a GPU node, with an equal share of the node's GPUs).
- **publish**: the driver puts the current net's bytes in Ray's object store once per
  round; a node server, or an actor with its own net, loads them only when the digest
  differs from the net it holds.
- **session**: an actor's share of a round: ``start`` (net, config, quota) then one
  ``next_game`` call per game. Each call plays until *one* game ends and returns its
  **record bytes** (npz shard + SGF text + optional Leela Zero chunk + summary), made
  by :func:`zero9.learn.selfplay.records.write_record` exactly as local mode writes them. The
  driver writes them atomically under the same names local mode uses, so a run can
  switch between local and Ray mode and resume either way. Every shard's metadata
  names the net hash the actor loaded.
- **lost actor**: a call that fails with ``RayActorError`` (the process was killed,
  its node left). Its finished games are already on disk; the rest of its quota
  (the games it had in flight included) goes back to the **leftover**, which the
  next idle actor plays. A replacement is started on the same node while that node
  is alive; a node that left simply has no actors any more.
- **call**: ``call_all`` runs ``fn(**kwargs)`` on actors (rating and gating matches).
  File arguments (dict keys ``path`` naming a file on the driver) travel as bytes,
  and ``device`` keys become the actor's own device.

Ray is imported only when a :class:`RayPool` is made, so ``zero9`` works without it.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zero9.games.sgf import save_sgf
from zero9.learn.cluster.actor import TMP_PREFIX, SelfPlayActor, ShippedFile, file_digest, ship_files
from zero9.learn.cluster.node import (
    WAIT_SECONDS,
    NodeServers,
    check_sharing,
    is_server_lost,
    plan_server,
    ray_lost,
)
from zero9.learn.selfplay.pool import SelfPlayStats, add_game, config_summary, progress_bar
from zero9.learn.selfplay.records import new_stem
from zero9.util.files import atomic_write_bytes
from zero9.util.interrupts import check_stop

logger = logging.getLogger(__name__)  # "log" is RayPool's callback (a test collects the lines)

RAY_MISSING = "--ray needs Ray on this machine and every worker: pip install 'zero9[ray]' (ray>=2.9)"
AHEAD = 2  # next_game calls queued per actor


def import_ray():
    """The ``ray`` module, or ImportError saying how to install it."""
    try:
        import ray
    except ImportError as e:
        raise ImportError(RAY_MISSING) from e
    return ray


def connect(address: str) -> bool:
    """Join the Ray cluster at ``address`` (``auto``: a running one, else start one here).

    Returns True when this call initialised Ray (so closing the pool shuts it down).
    """
    ray = import_ray()
    if ray.is_initialized():
        return False  # a test or a notebook set Ray up already: use its cluster
    if not address:
        raise ValueError("--ray needs 'auto' or a cluster address like 192.168.1.10:6379")
    if address == "auto":
        try:
            ray.init(address="auto", log_to_driver=False)
        except ConnectionError:
            logger.info("no running Ray cluster found: starting one on this machine only")
            ray.init(log_to_driver=False, include_dashboard=False)
    else:
        ray.init(address=address, log_to_driver=False)
    return True


# --------------------------------------------------------------------------------------
# sizing actors to nodes


@dataclass(frozen=True)
class ActorPlan:
    """Where one actor goes and what it reserves there."""

    node_id: str
    num_cpus: float
    num_gpus: float
    gpu_node: bool = False  # its node has GPUs (the actor's match calls use one even with no share)


def plan_actors(nodes: list[dict], per_node: int = 0, sharing: str = "off") -> list[ActorPlan]:
    """One plan per actor for the alive nodes of ``ray.nodes()``.

    A node gets ``per_node`` actors (0: one per CPU); each reserves an equal share of the
    node's CPUs (at most 1) and of its GPUs, so every actor of a GPU node shares the GPUs.
    Where a node server is planned (``sharing``, :func:`zero9.learn.cluster.node.plan_server`) it
    holds the GPUs and its CPU; the actors share the other CPUs (0: one actor per CPU left).
    """
    if per_node < 0:
        raise ValueError(f"--workers must be >= 0, got {per_node}")
    plans = []
    for node in nodes:
        if not node.get("Alive", False):
            continue
        resources = node.get("Resources", {})
        cpus, gpus = float(resources.get("CPU", 0)), float(resources.get("GPU", 0))
        server = plan_server(node, sharing)
        if server is not None:
            cpus, gpus_left = cpus - server.num_cpus, 0.0
        else:
            gpus_left = gpus
        count = per_node or int(cpus)
        if count <= 0 or cpus <= 0:
            continue  # a node without CPUs for Ray (a head started with --num-cpus 0) plays nothing
        share_cpu = min(1.0, _round_down(cpus / count))
        share_gpu = _round_down(gpus_left / count) if gpus_left else 0.0
        plans.extend(ActorPlan(node["NodeID"], share_cpu, share_gpu, gpus > 0) for _ in range(count))
    return plans


def _round_down(x: float) -> float:
    # Ray keeps resources in units of 1e-4; rounding down keeps N shares within the node.
    return math.floor(x * 10_000) / 10_000


# --------------------------------------------------------------------------------------
# the driver's pool


@dataclass
class _Session:
    slot: int
    worker: int
    handle: Any
    quota: int
    config: Any = None  # the session's SelfPlayConfig (its own seed)
    asked: int = 0  # calls sent (start included): each returns one game
    seq: int = 0  # games received
    over: bool = False  # quota received, or the actor was lost
    lost: bool = False  # the actor died: its unreceived games went back to the leftover
    counters: dict = field(default_factory=dict)


@dataclass
class _Slot:
    worker: int
    plan: ActorPlan
    handle: Any


@dataclass
class _Round:
    """One ``play_round``: what its actors are told, and the games still to come."""
    digest: str
    box: Any
    max_batch: int
    config: Any
    options: dict
    base_seed: int
    dirs: list
    leftover: int  # games neither played nor asked of a session
    sessions: list = field(default_factory=list)
    pending: dict = field(default_factory=dict)  # call -> its session
    net: str | None = None  # the hash the actors report for the published net


class RayPool:
    """Self-play actors over a Ray cluster, with the interface autotrain uses for a WorkerPool.

    ``size`` / ``threads`` / ``call_all`` / ``close`` / context manager as
    :class:`zero9.learn.selfplay.pool.WorkerPool`: the :class:`zero9.learn.selfplay.pool.Pool` protocol
    (``size``, :meth:`play_round`, :meth:`call_all`, :meth:`info`).
    """

    threads = 1

    def __init__(self, address: str = "auto", workers: int = 0, log=logger.info, server: str = "auto"):
        self.sharing = check_sharing(server)  # before Ray starts: a typo costs nothing
        self.ray = import_ray()
        self.owns_ray = connect(address)
        self.per_node, self.log = workers, log
        self.actor_class = self.ray.remote(SelfPlayActor)
        self.token = uuid.uuid4().hex[:6]  # names actors apart from another run's on the same cluster
        self.slots: list[_Slot | None] = []
        self.servers = NodeServers(self.ray, self.token, self.sharing, lambda text: self.log(text))
        self.next_worker = 0
        self.lost = 0
        self.sync()
        nodes = {s.plan.node_id for s in self.slots if s}
        gpus = sum(s.plan.num_gpus for s in self.slots if s)
        gpu_text = f", sharing {gpus:g} GPU(s)" if gpus else ""
        server_text = (f"; {len(self.servers)} node server(s) hold the net, the actors none"
                       if self.servers else "; each actor holds its own net")
        log(f"Ray: {self.size} self-play actors on {len(nodes)} node(s){gpu_text}{server_text}")

    # --- actors ------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return max(1, sum(s is not None for s in self.slots))

    def _name(self, worker: int) -> str:
        return f"zero9-{self.token}-w{worker:02d}"

    def _start(self, plan: ActorPlan) -> _Slot:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        worker, self.next_worker = self.next_worker, self.next_worker + 1
        # max_concurrency=1: calls run one after another, in order, which sessions rely on
        handle = self.actor_class.options(
            name=self._name(worker), num_cpus=plan.num_cpus, num_gpus=plan.num_gpus, max_concurrency=1,
            scheduling_strategy=NodeAffinitySchedulingStrategy(plan.node_id, soft=False)).remote(
            worker, plan.gpu_node)
        return _Slot(worker, plan, handle)

    def sync(self) -> None:
        """Start node servers and actors for nodes that joined (or are short of actors); forget the
        node servers of nodes that left. Called before each round."""
        alive = [n for n in self.ray.nodes() if n.get("Alive")]
        self.servers.sync(alive, TMP_PREFIX)
        wanted = plan_actors(alive, self.per_node, self.sharing)
        have: dict[str, int] = {}
        for s in self.slots:
            if s is not None:
                have[s.plan.node_id] = have.get(s.plan.node_id, 0) + 1
        for plan in wanted:
            if have.get(plan.node_id, 0) > 0:
                have[plan.node_id] -= 1
                continue
            self._place(self._start(plan))
        if not any(self.slots):
            raise RuntimeError("the Ray cluster has no CPUs for self-play actors")

    def _place(self, slot: _Slot) -> int:
        for i, s in enumerate(self.slots):
            if s is None:
                self.slots[i] = slot
                return i
        self.slots.append(slot)
        return len(self.slots) - 1

    def _lose(self, i: int, error: BaseException) -> None:
        """Forget the dead actor in slot ``i``; start a replacement if its node is still alive."""
        slot = self.slots[i]
        self.slots[i] = None
        self.lost += 1
        self._kill(slot.handle)
        alive = {n["NodeID"] for n in self.ray.nodes() if n.get("Alive")}
        reason = str(error).splitlines()[0][:160]
        if slot.plan.node_id in alive:
            self.slots[i] = self._start(slot.plan)
            self.log(f"Ray worker {slot.worker} was lost ({type(error).__name__}: {reason}); "
                     f"replaced by worker {self.slots[i].worker}")
        else:
            self.log(f"Ray worker {slot.worker} was lost with its node; {self.size} actors remain")

    def _kill(self, handle) -> None:
        try:
            self.ray.kill(handle)
        except Exception:
            pass  # already gone

    def _is_lost(self, error: BaseException) -> bool:
        return ray_lost(self.ray, error)

    # --- self-play ---------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """For each round's row of selfplay.jsonl: actors now, and actors lost (and replaced) so far."""
        return {"ray_actors": self.size, "ray_lost": self.lost, "ray_servers": len(self.servers),
                "ray_server_starts": self.servers.starts}

    def node_actors(self) -> dict[str, int]:
        """Actors per node id."""
        counts: dict[str, int] = {}
        for s in self.slots:
            if s is not None:
                counts[s.plan.node_id] = counts.get(s.plan.node_id, 0) + 1
        return counts

    def served(self, i: int) -> dict | None:
        """What slot ``i``'s actor plays with: its node server (:meth:`NodeServers.served`), or None."""
        node = self.slots[i].plan.node_id
        position = [k for k, s in enumerate(self.slots) if s and s.plan.node_id == node].index(i)
        return self.servers.served(node, position)

    def publish(self, net_path: str | os.PathLike) -> tuple[str, list]:
        """Put the net's bytes in the object store; (digest, boxed ref) for :meth:`SelfPlayActor.start`."""
        data = Path(net_path).read_bytes()
        return file_digest(data), [self.ray.put(data)]

    def play_round(self, net_path: str | os.PathLike, games: int, config, chunk_dir: str | os.PathLike,
                   sgf_dir: str | os.PathLike | None = None, *, device: str = "cpu",
                   lz_dir: str | os.PathLike | None = None, progress: bool = True,
                   options: dict | None = None, straddle: bool = False):
        """Play ``games`` games on the actors, writing each record here as it arrives; the counters
        (:class:`zero9.learn.selfplay.pool.Pool`).

        ``device`` is ignored: each actor uses its node's GPU share if it has one, else the CPU.
        Actors end every game with its round: ``straddle`` is refused.
        """

        if straddle:
            raise ValueError("Ray's actors end every game with its round: no straddling on Ray")
        if games < 0:
            raise ValueError(f"number of games must be >= 0, got {games}")
        dirs = [Path(d) if d is not None else None for d in (chunk_dir, sgf_dir, lz_dir)]
        for d in dirs:
            if d is not None:
                d.mkdir(parents=True, exist_ok=True)
        self.sync()
        digest, box = self.publish(net_path)
        max_batch = config.parallel_games * config.leaves_per_tree  # the most positions an actor sends
        self.servers.new_round()
        self.servers.serve(digest, box, max_batch, self.node_actors())
        base_seed = config.seed if config.seed is not None else int.from_bytes(os.urandom(4), "little")
        r = _Round(digest, box, max_batch, config, options if options is not None else config_summary(config),
                   base_seed, dirs, leftover=games)
        stats, bar = SelfPlayStats(), progress_bar(games, progress)
        log = self.log
        if bar is not None:
            self.log = bar.write  # messages about lost actors go above the progress bar
        start = time.monotonic()
        try:
            while True:
                check_stop()  # Ctrl-C: the games written so far are the round's; actors stop with the pool
                self._assign(r)
                if not r.pending:
                    if r.leftover:
                        raise RuntimeError(f"no Ray actors left to play the remaining {r.leftover} games")
                    break
                ready, _ = self.ray.wait(list(r.pending), num_returns=1, timeout=WAIT_SECONDS)
                for ref in ready:
                    if self._receive(r, ref, stats) and bar is not None:
                        bar.update(1)
        finally:
            self.log = log
            if bar is not None:
                bar.close()
        stats.seconds = time.monotonic() - start
        stats.evals = sum(s.counters.get("evals", 0) for s in r.sessions)
        stats.calls = sum(s.counters.get("calls", 0) for s in r.sessions)
        stats.measured_evals, stats.measured_seconds = stats.evals, stats.seconds
        return stats

    def _ask(self, r: _Round, session: _Session) -> None:
        """Keep AHEAD calls queued per actor, so it plays on while the driver writes the last game."""
        while session.asked < min(session.quota, session.seq + AHEAD):
            if session.asked == 0:
                ref = session.handle.start.remote(r.digest, r.box, session.quota, session.config, r.options,
                                                  r.dirs[1] is not None, r.dirs[2] is not None,
                                                  self.served(session.slot))
            else:
                ref = session.handle.next_game.remote()
            r.pending[ref] = session
            session.asked += 1

    def _assign(self, r: _Round) -> None:
        """The games still to play, spread over the idle actors as sessions of their own."""
        busy = {s.slot for s in r.sessions if not s.over}
        idle = [i for i, slot in enumerate(self.slots) if slot is not None and i not in busy]
        for k, i in enumerate(idle):
            quota = -(-r.leftover // (len(idle) - k))  # ceil: the leftover spread over the idle actors
            if quota == 0:
                continue
            # a fresh seed per session: a replacement must not replay the lost actor's finished games
            seed = (r.base_seed * 1009 + len(r.sessions)) % 2**32
            session = _Session(i, self.slots[i].worker, self.slots[i].handle, quota,
                               dataclasses.replace(r.config, seed=seed))
            r.sessions.append(session)
            r.leftover -= quota
            self._ask(r, session)

    def _receive(self, r: _Round, ref, stats: SelfPlayStats) -> bool:
        """One answer: a game written (True), or a lost actor or server whose games go back to the round."""
        session = r.pending.pop(ref)
        try:
            result = self.ray.get(ref)
        except Exception as e:
            server_lost = is_server_lost(e)
            if not (server_lost or self._is_lost(e)):
                raise RuntimeError(f"Ray self-play worker {session.worker} failed: {e}") from e
            if not session.lost:  # its other queued calls fail the same way: count it once
                session.lost = session.over = True
                r.leftover += session.quota - session.seq
                if server_lost:  # the actor lives: its next session connects to the new server
                    node = self.slots[session.slot].plan.node_id
                    self.servers.check(node, e, r.digest, r.box, r.max_batch, self.node_actors())
                else:
                    self._lose(session.slot, e)
            return False
        if session.lost:
            # A game the actor finished before it died, read after its death was: the
            # leftover already holds it, so keeping it too would play it twice.
            return False
        if result is None:  # the session ran out early (not expected): replay the rest
            session.over, r.leftover = True, r.leftover + session.quota - session.seq
            return False
        if result["net"] != (r.net or result["net"]):
            raise RuntimeError(f"Ray worker {session.worker} played with net {result['net']}, "
                               f"others with {r.net}: one net per round expected")
        r.net = result["net"]
        session.seq += 1
        session.over = session.seq >= session.quota
        self._ask(r, session)
        self._write(result, session, r.dirs)
        add_game(stats, result["summary"])
        session.counters = result["counters"]
        return True

    def _write(self, result: dict, session: _Session, dirs: list[Path | None]) -> None:
        """One record into the run directory as local mode names it: SGF, LZ chunk, then the shard
        that commits it (see ``write_record``)."""

        chunk_dir, sgf_dir, lz_dir = dirs
        stem = new_stem(session.worker, session.seq - 1)
        if sgf_dir is not None and result["sgf"] is not None:
            save_sgf(sgf_dir / f"{stem}.sgf", result["sgf"])
        if lz_dir is not None and result["lz"] is not None:
            atomic_write_bytes(lz_dir / f"{stem}.gz", result["lz"])
        atomic_write_bytes(chunk_dir / f"{stem}{result['suffix']}", result["chunk"])

    # --- matches -----------------------------------------------------------------------
    def call_all(self, calls: list[tuple]) -> list:
        """Run ``fn(**kwargs)`` for each ``(fn, kwargs)`` on its own actor; results in order.

        A call whose actor is lost is run again on the replacement (match games are only
        recorded by the caller once every call has returned).
        """
        if len(calls) > self.size:
            raise ValueError(f"{len(calls)} calls for {self.size} Ray workers")
        cache: dict[str, ShippedFile] = {}
        shipped = [(fn, ship_files(kwargs, self.ray.put, cache)) for fn, kwargs in calls]
        live = [i for i, s in enumerate(self.slots) if s is not None]
        pending = {}
        for k, (fn, kwargs) in enumerate(shipped):
            pending[self.slots[live[k]].handle.call.remote(fn, kwargs)] = (k, live[k])
        results: dict[int, Any] = {}
        while pending:
            check_stop()
            ready, _ = self.ray.wait(list(pending), num_returns=1, timeout=WAIT_SECONDS)
            for ref in ready:
                k, i = pending.pop(ref)
                try:
                    results[k] = self.ray.get(ref)
                except Exception as e:
                    if not self._is_lost(e):
                        raise RuntimeError(f"Ray worker {self.slots[i].worker} failed: {e}") from e
                    self._lose(i, e)
                    live = [j for j, s in enumerate(self.slots) if s is not None]
                    if not live:
                        raise RuntimeError("no Ray actors left to run match games") from e
                    target = i if self.slots[i] is not None else live[0]
                    fn, kwargs = shipped[k]
                    pending[self.slots[target].handle.call.remote(fn, kwargs)] = (k, target)
        return [results[k] for k in range(len(calls))]

    # --- lifetime ----------------------------------------------------------------------
    def close(self) -> None:
        live = [s.handle for s in self.slots if s is not None]
        try:
            self.ray.get([h.cleanup.remote() for h in live], timeout=10)
        except Exception:
            pass  # a lost actor's temporary folder stays behind (small: one net)
        for s in self.slots:
            if s is not None:
                try:
                    self.ray.kill(s.handle)
                except Exception:
                    pass  # lost already
        self.slots = []
        self.servers.close()  # after the actors, which have left their servers
        if self.owns_ray and self.ray.is_initialized():
            self.ray.shutdown()

    def __enter__(self) -> RayPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
