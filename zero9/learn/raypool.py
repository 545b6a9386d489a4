"""Self-play across machines on Ray (``zero9 autotrain --ray auto|ADDRESS``).

Vocabulary:

- **cluster**: machines joined by ``ray start --head`` / ``ray start --address ...``
  (``docs/ray.md``). The **driver** is the ``zero9 autotrain`` process on the head;
  it alone touches the run directory, so no shared filesystem is needed.
- **actor**: one :class:`SelfPlayActor`, a Ray worker process holding ``num_cpus=1``.
  By default a node gets one actor per CPU; ``--workers N`` asks for N per node.
- **node server** (:mod:`zero9.learn.raynode`): on a GPU node (``--ray-server auto``, the
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
  by :func:`zero9.learn.records.write_record` exactly as local mode writes them. The
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
import hashlib
import math
import os
import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from zero9.games.sgf import save_sgf
from zero9.learn.raynode import (
    WAIT_SECONDS,
    NodeServers,
    ServerLost,
    check_sharing,
    is_server_lost,
    plan_server,
    ray_lost,
)
from zero9.learn.records import game_summary, new_stem, write_record
from zero9.learn.selfplay import SelfPlayStats, add_game, config_summary, progress_bar
from zero9.learn.selfplay_game import play_games
from zero9.nn.checkpoint import game_from_meta, load_net
from zero9.nn.inference import RemoteNet
from zero9.nn.inference import connect as connect_server
from zero9.search.evaluator import NetEvaluator
from zero9.util.files import atomic_write_bytes
from zero9.util.interrupts import check_stop

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
            print("no running Ray cluster found: starting one on this machine only")
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
    Where a node server is planned (``sharing``, :func:`zero9.learn.raynode.plan_server`) it
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
# files that travel as bytes


@dataclass
class ShippedFile:
    """A driver-side file sent to an actor: content digest, original name, boxed object ref.

    The ref is boxed in a list so Ray does not fetch it before the actor asks.
    """

    digest: str
    name: str
    box: list


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def ship_files(obj: Any, put, cache: dict[str, ShippedFile]) -> Any:
    """``obj`` with every ``{"path": existing file}`` dict value replaced by a :class:`ShippedFile`."""
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if key == "path" and isinstance(value, (str, os.PathLike)) and Path(value).is_file():
                data = Path(value).read_bytes()
                digest = file_digest(data)
                if digest not in cache:
                    cache[digest] = ShippedFile(digest, Path(value).name, [put(data)])
                out[key] = cache[digest]
            else:
                out[key] = ship_files(value, put, cache)
        return out
    if isinstance(obj, (list, tuple)):
        return type(obj)(ship_files(v, put, cache) for v in obj)
    return obj


def land_files(obj: Any, folder: Path, get, device: str) -> Any:
    """The actor's side of :func:`ship_files`: write shipped files under ``folder``, use that device."""
    if isinstance(obj, ShippedFile):
        path = folder / obj.digest / obj.name
        if not path.exists():
            atomic_write_bytes(path, get(obj.box[0]))
        return str(path)
    if isinstance(obj, dict):
        return {k: device if k == "device" else land_files(v, folder, get, device) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(land_files(v, folder, get, device) for v in obj)
    return obj


# --------------------------------------------------------------------------------------
# the actor


TMP_PREFIX = "zero9-ray-"  # an actor's scratch folder: zero9-ray-<pid>-<random>


def sweep_dead_folders(parent: Path) -> int:
    """Delete scratch folders of actors whose process is gone (killed actors cannot clean up)."""
    swept = 0
    for folder in parent.glob(f"{TMP_PREFIX}*"):
        pid = folder.name[len(TMP_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _process_alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            swept += 1
    return swept


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


class SelfPlayActor:
    """A Ray actor: plays sessions one game per call, with its node server's net or one of its own
    (``served``, see :mod:`zero9.learn.raynode`), and runs match calls."""

    def __init__(self, worker: int, gpu_node: bool = False):
        import ray

        torch.set_num_threads(1)  # one CPU reserved per actor: threads would only fight
        self.worker = worker
        # On a sharing GPU node the actor has no GPU share (the node server has the GPUs), yet Ray
        # leaves the GPUs visible to it: its match calls (a few games per round) run there.
        on_gpu = ray.get_gpu_ids() or (gpu_node and torch.cuda.is_available())
        self.device = "cuda" if on_gpu else "cpu"
        self.remote: RemoteNet | None = None  # the connection to the node server, when served
        self.address: str | None = None
        self.broken: str | None = None  # why the session ended with its server (ServerLost), until a start
        # Records pass through files (write_record is the one writer); fsync costs nothing on tmpfs.
        shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        self.folder = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-", dir=shm))
        sweep_dead_folders(self.folder.parent)
        self.digest: str | None = None
        self.net = self.meta = self.game = None
        self.session = None

    def load(self, digest: str, box: list) -> str:
        """Load the published net unless it is the one held already; returns its hash."""
        if digest != self.digest:
            import ray


            path = self.folder / "net.pt"
            atomic_write_bytes(path, ray.get(box[0]))
            self.net, self.meta = load_net(path, device=self.device)
            self.game = game_from_meta(self.meta)
            self.digest = digest
        return self.meta["hash"]

    def serve_from(self, address: str, meta: dict) -> RemoteNet:
        """Use the node server at ``address`` (connecting again when it moved or the link broke);
        the actor's own net, if it had one, is dropped."""
        if self.remote is None or address != self.address:
            self.disconnect()
            self.remote, self.address = connect_server(address), address
        self.net, self.digest = None, None
        self.meta, self.game = meta, game_from_meta(meta)
        return self.remote

    def disconnect(self) -> None:
        if self.remote is not None:
            try:
                self.remote.close()
            except OSError:
                pass  # the server went first
        self.remote = self.address = None

    def start(self, digest: str, box: list, games: int, config, options: dict, sgf: bool,
              lz: bool, served: dict | None = None) -> dict[str, Any] | None:
        """Begin a session of ``games`` games with the published net (``served``: ``{"address", "meta"}``
        of the node server serving it; None: load it here); returns its first game."""
        self.session = None  # a failed start must not leave the last round's session to play on
        self.broken = None
        if served is not None:
            net = self.serve_from(served["address"], served["meta"])
        else:
            self.disconnect()
            self.load(digest, box)
            net = self.net
        self.evaluator = NetEvaluator(net, cache_size=config.eval_cache,
                                      rng=np.random.default_rng(config.seed))
        self.session = play_games(self.game, self.evaluator, games, config)
        self.options, self.sgf, self.lz = options, sgf, lz
        return self.next_game()

    def next_game(self) -> dict[str, Any] | None:
        """Play until the session's next game ends; its record as bytes, or None when the quota is done.

        ServerLost when the node server stopped answering (the session ends: the driver replays its
        unfinished games).
        """

        if self.broken is not None:
            # The session's calls queued after the failure say so too: the driver may read their
            # answers before the failure's, and a None would read as a session that ran out early.
            raise ServerLost(self.broken)
        try:
            record = next(self.session, None) if self.session is not None else None
        except (EOFError, OSError) as e:
            if self.remote is None:
                raise
            self.broken = (f"Ray worker {self.worker}: the node's inference server at {self.address} stopped "
                           f"answering ({type(e).__name__}: {e})")
            self.session = None
            self.disconnect()
            raise ServerLost(self.broken) from None
        if record is None:
            self.session = None
            return None
        out = self.folder / "record"
        shutil.rmtree(out, ignore_errors=True)
        sgf_dir, lz_dir = out / "sgf", out / "lz"
        path = write_record(record, "game", out, sgf_dir if self.sgf else None, self.meta["hash"],
                            self.options, lz_dir if self.lz else None)
        sgf_path, lz_path = sgf_dir / "game.sgf", lz_dir / "game.gz"
        e = self.evaluator
        return {"suffix": path.name[len("game"):], "chunk": path.read_bytes(),
                "sgf": sgf_path.read_text(encoding="utf-8") if sgf_path.exists() else None,
                "lz": lz_path.read_bytes() if lz_path.exists() else None,
                "net": self.meta["hash"], "summary": game_summary(record, path),
                "counters": {"evals": e.positions - e.cache_hits, "calls": e.calls, "requests": e.positions,
                             "net_seconds": e.net_seconds}}

    def holds_net(self) -> dict[str, Any]:
        """Whether this process holds a net (for the tests and the bench): its own, or only a link."""
        import gc

        from zero9.nn.net import ZeroNet

        nets = sum(issubclass(type(o), ZeroNet) for o in gc.get_objects())  # type(): no property lookups
        return {"nets": nets, "served": self.address, "pid": os.getpid()}

    def cleanup(self) -> None:
        self.disconnect()
        shutil.rmtree(self.folder, ignore_errors=True)

    def call(self, fn, kwargs: dict) -> Any:
        import ray

        return fn(**land_files(kwargs, self.folder / "files", ray.get, self.device))


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


class RayPool:
    """Self-play actors over a Ray cluster, with the interface autotrain uses for a WorkerPool.

    ``size`` / ``threads`` / ``call_all`` / ``close`` / context manager as
    :class:`zero9.learn.selfplay.WorkerPool`: the :class:`zero9.learn.selfplay.Pool` protocol
    (``size``, :meth:`play_round`, :meth:`call_all`, :meth:`info`).
    """

    threads = 1

    def __init__(self, address: str = "auto", workers: int = 0, log=print, server: str = "auto"):
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

    def actor_names(self) -> list[str]:
        return [self._name(s.worker) for s in self.slots if s]

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
        (:class:`zero9.learn.selfplay.Pool`).

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
        options = options if options is not None else config_summary(config)
        base_seed = config.seed if config.seed is not None else int.from_bytes(os.urandom(4), "little")
        stats, bar = SelfPlayStats(), progress_bar(games, progress)
        log = self.log
        if bar is not None:
            self.log = bar.write  # messages about lost actors go above the progress bar
        sessions: list[_Session] = []
        pending: dict[Any, _Session] = {}
        leftover = games
        round_net: dict[str, str] = {}  # the hash the actors report for the published net
        start = time.monotonic()

        def ask(session: _Session) -> None:
            # Keep AHEAD calls queued per actor, so it plays on while the driver writes the last game.
            while session.asked < min(session.quota, session.seq + AHEAD):
                if session.asked == 0:
                    ref = session.handle.start.remote(digest, box, session.quota, session.config, options,
                                                      dirs[1] is not None, dirs[2] is not None,
                                                      self.served(session.slot))
                else:
                    ref = session.handle.next_game.remote()
                pending[ref] = session
                session.asked += 1

        def assign() -> None:
            nonlocal leftover
            busy = {s.slot for s in sessions if not s.over}
            idle = [i for i, slot in enumerate(self.slots) if slot is not None and i not in busy]
            for k, i in enumerate(idle):
                quota = -(-leftover // (len(idle) - k))  # ceil: the leftover spread over the idle actors
                if quota == 0:
                    continue
                # a fresh seed per session: a replacement must not replay the lost actor's finished games
                seed = (base_seed * 1009 + len(sessions)) % 2**32
                session = _Session(i, self.slots[i].worker, self.slots[i].handle, quota,
                                   dataclasses.replace(config, seed=seed))
                sessions.append(session)
                leftover -= quota
                ask(session)

        try:
            while True:
                check_stop()  # Ctrl-C: the games written so far are the round's; actors stop with the pool
                assign()
                if not pending:
                    if leftover:
                        raise RuntimeError(f"no Ray actors left to play the remaining {leftover} games")
                    break
                ready, _ = self.ray.wait(list(pending), num_returns=1, timeout=WAIT_SECONDS)
                for ref in ready:
                    session = pending.pop(ref)
                    try:
                        result = self.ray.get(ref)
                    except Exception as e:
                        server_lost = is_server_lost(e)
                        if not (server_lost or self._is_lost(e)):
                            raise RuntimeError(f"Ray self-play worker {session.worker} failed: {e}") from e
                        if not session.lost:  # its other queued calls fail the same way: count it once
                            session.lost = session.over = True
                            leftover += session.quota - session.seq
                            if server_lost:  # the actor lives: its next session connects to the new server
                                node = self.slots[session.slot].plan.node_id
                                self.servers.check(node, e, digest, box, max_batch, self.node_actors())
                            else:
                                self._lose(session.slot, e)
                        continue
                    if session.lost:
                        # A game the actor finished before it died, read after its death was: the
                        # leftover already holds it, so keeping it too would play it twice.
                        continue
                    if result is None:  # the session ran out early (not expected): replay the rest
                        session.over, leftover = True, leftover + session.quota - session.seq
                        continue
                    if result["net"] != round_net.setdefault("hash", result["net"]):
                        raise RuntimeError(f"Ray worker {session.worker} played with net {result['net']}, "
                                           f"others with {round_net['hash']}: one net per round expected")
                    session.seq += 1
                    session.over = session.seq >= session.quota
                    ask(session)
                    self._write(result, session, dirs)
                    add_game(stats, result["summary"])
                    session.counters = result["counters"]
                    if bar is not None:
                        bar.update(1)
        finally:
            self.log = log
            if bar is not None:
                bar.close()
        stats.seconds = time.monotonic() - start
        stats.evals = sum(s.counters.get("evals", 0) for s in sessions)
        stats.calls = sum(s.counters.get("calls", 0) for s in sessions)
        stats.measured_evals, stats.measured_seconds = stats.evals, stats.seconds
        return stats

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
