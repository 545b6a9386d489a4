"""One inference server per Ray node: the node's self-play actors share one copy of the net.

Without it every actor of a GPU node holds its own copy of the net on the GPU, and many small
uncompiled batches take turns there (on one H100 local mode reached a fifth of the compiled
net's speed that way). With it a node plays as a local host with its inference server does.

Vocabulary (the rest is :mod:`zero9.learn.cluster.pool`'s):

- **node server**: :class:`NodeServer`, one Ray actor per node, pinned there by node
  affinity. It reserves the node's GPUs (and one CPU when the node has two or more) and runs
  one :class:`zero9.nn.inference.InferenceServer` per GPU, or one on the CPU of a CPU node,
  each listening on a Unix socket in the node server's scratch folder. It is the only process
  of the node that loads the net; the self-play actors hold none.
- **sharing**: which nodes get a node server. ``auto`` (the default): nodes with a GPU;
  ``on``: every node (a CPU node too: one process computes every actor's batches); ``off``:
  none, every actor loads its own copy of the net (the only way an actor ever does).
- **served**: what the driver hands an actor's session on a sharing node: the address of
  its server and the net's meta (its hash names the net in every shard, its game is played).
- **serve**: the driver's call before each round: the node server loads the published net
  only when its digest changed (once per node, not once per actor), starts its servers the
  first time, or again when the round needs larger batches, more clients, or one of them died.
- **server lost**: an actor whose server stops answering raises :class:`ServerLost`; the
  driver then gives that actor's unfinished games back to the round, starts a new node
  server if the old one is dead, and the actor's next session connects to the new one.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zero9.nn.checkpoint import load_net, lz_version, read_meta
from zero9.nn.inference import InferenceServer, sweep_dead_slots
from zero9.util.files import atomic_write_bytes
from zero9.util.interrupts import check_stop

SHARING = ("auto", "on", "off")
SPARE_CLIENTS = 2  # client numbers beyond the node's actors: a replacement may connect before its
# predecessor's number is freed
SERVE_SECONDS = 900.0  # the longest a serve may take: the first load on a GPU compiles every bucket


class ServerLost(RuntimeError):
    """The node's inference server stopped answering an actor (it died, or its node server was killed)."""


def check_sharing(sharing: str) -> str:
    if sharing not in SHARING:
        raise ValueError(f"--ray-server must be one of {', '.join(SHARING)}, got {sharing!r}")
    return sharing


@dataclass(frozen=True)
class ServerPlan:
    """Where a node server goes and what it reserves there."""

    node_id: str
    num_cpus: float
    num_gpus: float


def plan_server(node: dict, sharing: str) -> ServerPlan | None:
    """The node server of one node of ``ray.nodes()``, or None where its actors hold their own nets."""
    resources = node.get("Resources", {})
    cpus, gpus = float(resources.get("CPU", 0)), float(resources.get("GPU", 0))
    if not node.get("Alive", False) or cpus <= 0:
        return None  # no actors there, so nothing to serve
    if check_sharing(sharing) == "off" or (sharing == "auto" and gpus <= 0):
        return None
    # Whole GPUs (Ray hands out fractions of one GPU only); a CPU of its own where the node has two.
    return ServerPlan(node["NodeID"], 1.0 if cpus >= 2 else 0.0, math.floor(gpus) if gpus >= 1 else gpus)


def served_address(served: dict, position: int) -> dict:
    """What the actor at ``position`` among its node's actors is given: its server (actors spread
    over the node's GPUs in turn) and the net's meta."""
    addresses = served["addresses"]
    return {"address": addresses[position % len(addresses)], "meta": served["meta"]}


def net_meta_of(path: Path) -> dict:
    """The meta of the net file, its net built only for Leela Zero weights (whose hash needs it)."""
    if lz_version(path) is not None:
        return load_net(path, device="cpu")[1]
    return read_meta(path)


class NodeServer:
    """A Ray actor: the node's inference servers (see the module docstring)."""

    def __init__(self, scratch_prefix: str):
        import ray

        self.get = ray.get  # an object from Ray's store
        self.node = ray.get_runtime_context().get_node_id()
        gpus = ray.get_gpu_ids()  # Ray sets CUDA_VISIBLE_DEVICES to them: they are cuda:0 ... here
        self.devices = [f"cuda:{k}" for k in range(len(gpus))] or ["cpu"]
        shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        # the self-play actors' scratch prefix, so that their sweep removes a killed server's sockets too
        self.folder = Path(tempfile.mkdtemp(prefix=f"{scratch_prefix}{os.getpid()}-", dir=shm))
        self.servers: list[InferenceServer] = []
        self.digest: str | None = None
        self.net_path: Path | None = None
        self.meta: dict | None = None
        self.max_batch = self.clients = 0  # what the running servers were made for (clients: per server)

    def serve(self, digest: str, box: list, max_batch: int, actors: int) -> dict[str, Any]:
        """Serve the published net to ``actors`` actors sending at most ``max_batch`` positions a batch.

        Returns ``{"addresses", "meta", "loaded", "pid", "devices", "node"}``; ``loaded``: whether a net was
        read from its file by this call (False when the node serves that net already).
        """
        sweep_dead_slots()  # a killed node server's slots (its process group died with it)
        clients = -(-max(1, actors) // len(self.devices)) + SPARE_CLIENTS
        fresh = digest != self.digest
        if fresh:
            path = self.folder / f"net-{digest}.pt"
            atomic_write_bytes(path, self.get(box[0]))
            self.meta = net_meta_of(path)
        else:
            path = self.net_path
        broken = any(not s.proc.is_alive() for s in self.servers)
        if broken or not self.servers or max_batch > self.max_batch or clients > self.clients:
            self._stop()
            self.max_batch, self.clients = max(max_batch, self.max_batch), max(clients, self.clients)
            name = uuid.uuid4().hex[:8]  # a new address: actors of the old servers connect again
            self.servers = [InferenceServer(str(path), device, self.clients, self.max_batch, load=False,
                                            listen=str(self.folder / f"{name}-{k}.sock"))
                            for k, device in enumerate(self.devices)]
            loaded = True
        else:
            loaded = fresh
        if loaded:
            for server in self.servers:  # every GPU's server compiles at once
                server.ask_load(str(path))
            for server in self.servers:
                server._answer(SERVE_SECONDS)
        if fresh and self.net_path is not None and self.net_path != path:
            self.net_path.unlink(missing_ok=True)
        self.digest, self.net_path = digest, path
        return {"addresses": [s.listen for s in self.servers], "meta": self.meta, "loaded": loaded,
                "pid": os.getpid(), "devices": list(self.devices), "node": self.node}

    def alive(self) -> bool:
        """Whether every server process runs (False before the first serve)."""
        return bool(self.servers) and all(s.proc.is_alive() for s in self.servers)

    def stats(self) -> list[dict]:
        """Each server's counters (:meth:`InferenceServer.stats`: batches, positions, loads, ...) and pid."""
        return [{**s.stats(), "pid": s.proc.pid} for s in self.servers]

    def _stop(self) -> None:
        for server in self.servers:
            server.close()
        self.servers = []

    def close(self) -> None:
        self._stop()
        shutil.rmtree(self.folder, ignore_errors=True)


# --------------------------------------------------------------------------------------
# the driver's side


WAIT_SECONDS = 1.0  # how long the driver blocks per wait before checking Ctrl-C again
MAX_SERVER_STARTS = 3  # node server starts per node and round after its first before the round gives up


def ray_lost(ray, error: BaseException) -> bool:
    """Whether ``error`` says an actor is gone (killed, or its node left), not that its call failed."""
    errors = ray.exceptions  # unschedulable: the node its placement named has left the cluster
    return isinstance(error, (errors.RayActorError, getattr(errors, "ActorUnschedulableError", ())))


def is_server_lost(error: BaseException) -> bool:
    """Whether a call's error is an actor's :class:`ServerLost` (Ray wraps it in a RayTaskError)."""
    return isinstance(error, ServerLost) or isinstance(getattr(error, "cause", None), ServerLost)


@dataclass
class _Server:
    """A node server as the driver knows it: its handle, and what its last serve returned."""

    plan: ServerPlan
    handle: Any
    served: dict | None = None  # {"addresses", "meta", "loaded", "pid", "devices"}
    starts_this_round: int = 0  # replacements started this round
    lost_alive_this_round: int = 0  # actors' sessions lost to it this round while it was alive


class NodeServers:
    """The driver's node servers, one per sharing node (``RayPool.servers``)."""

    def __init__(self, ray, token: str, sharing: str, log):
        self.ray, self.token, self.sharing, self.log = ray, token, check_sharing(sharing), log
        self.server_class = ray.remote(NodeServer)
        self.by_node: dict[str, _Server] = {}
        self.starts = 0  # node servers started, replacements included

    def __len__(self) -> int:
        return len(self.by_node)

    def _start(self, plan: ServerPlan, scratch_prefix: str) -> _Server:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self.starts += 1
        # threaded (max_concurrency 4): alive() and stats() answer while a serve compiles
        handle = self.server_class.options(
            name=f"zero9-{self.token}-server{self.starts:02d}", num_cpus=plan.num_cpus,
            num_gpus=plan.num_gpus, max_concurrency=4,
            scheduling_strategy=NodeAffinitySchedulingStrategy(plan.node_id, soft=False),
        ).remote(scratch_prefix)
        return _Server(plan, handle)

    def sync(self, alive: list[dict], scratch_prefix: str) -> None:
        """A node server for each alive sharing node that has none; forget those of nodes that left."""
        alive_ids = {n["NodeID"] for n in alive}
        for node in [n for n in self.by_node if n not in alive_ids]:
            self._kill(self.by_node.pop(node).handle)
        self.prefix = scratch_prefix
        for node in alive:
            plan = plan_server(node, self.sharing)
            if plan is not None and plan.node_id not in self.by_node:
                self.by_node[plan.node_id] = self._start(plan, scratch_prefix)

    def _kill(self, handle) -> None:
        try:
            self.ray.kill(handle)
        except Exception:
            pass  # already gone

    def new_round(self) -> None:
        for server in self.by_node.values():
            server.starts_this_round = server.lost_alive_this_round = 0

    def serve(self, digest: str, box: list, max_batch: int, actors: dict[str, int],
              nodes: list[str] | None = None) -> None:
        """Have each node server (or those of ``nodes``) serve the published net before the sessions
        start (``actors``: the node's actors); a node server found dead is replaced."""
        while True:
            todo = [node for node in self.by_node if nodes is None or node in nodes]
            pending = {self.by_node[n].handle.serve.remote(digest, box, max_batch, actors.get(n, 0)): n
                       for n in todo}
            deadline = time.monotonic() + SERVE_SECONDS + 60
            dead = []
            while pending:
                check_stop()
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the node servers of {sorted(pending.values())} did not load the net "
                                       f"in {SERVE_SECONDS + 60:.0f} s")
                ready, _ = self.ray.wait(list(pending), num_returns=1, timeout=WAIT_SECONDS)
                for ref in ready:
                    node = pending.pop(ref)
                    try:
                        self.by_node[node].served = self.ray.get(ref)
                    except Exception as e:
                        if not ray_lost(self.ray, e):
                            raise RuntimeError(f"the node server of node {node[:12]} could not serve the "
                                               f"net: {e}") from e
                        dead.append(node)
            if not dead:
                return
            for node in dead:
                self._restart(node, "it died before serving")
            nodes = [node for node in dead if node in self.by_node]

    def _restart(self, node: str, reason: str) -> None:
        old = self.by_node.pop(node)
        self._kill(old.handle)
        if node not in {n["NodeID"] for n in self.ray.nodes() if n.get("Alive")}:
            self.log(f"Ray node server of node {node[:12]} was lost with its node")
            return
        if old.starts_this_round >= MAX_SERVER_STARTS:
            raise RuntimeError(f"the inference server of node {node[:12]} was lost "
                               f"{old.starts_this_round + 1} times this round (last: {reason}); "
                               f"see the node's Ray logs")
        new = self.by_node[node] = self._start(old.plan, self.prefix)
        new.starts_this_round = old.starts_this_round + 1
        self.log(f"Ray node server of node {node[:12]} was lost ({reason}); started a new one")

    def check(self, node: str, error: BaseException, digest: str, box: list, max_batch: int,
              actors: dict[str, int]) -> None:
        """An actor of ``node`` lost its server: replace the node server if it is dead (once, however
        many of the node's actors report it) and have the new one serve the round's net."""
        server = self.by_node.get(node)
        if server is None:
            return
        try:
            alive = self.ray.get(server.handle.alive.remote(), timeout=30)
        except Exception:
            alive = False
        if not alive:
            self._restart(node, str(error).splitlines()[0][:200])
            if node in self.by_node:
                self.serve(digest, box, max_batch, actors, [node])
            return
        # Alive, yet an actor lost it: once per actor is a race with a restart; more is a fault that
        # replaying the games would only repeat.
        server.lost_alive_this_round += 1
        if server.lost_alive_this_round > 2 * actors.get(node, 0) + MAX_SERVER_STARTS:
            raise RuntimeError(f"the actors of node {node[:12]} keep losing its node server, which is alive: "
                               f"{str(error).splitlines()[0][:300]}")

    def served(self, node: str, position: int) -> dict | None:
        """What the actor at ``position`` among ``node``'s actors plays with: its server's address and
        the net's meta; None where the node has no node server (the actor loads the net itself)."""
        server = self.by_node.get(node)
        if server is None:
            return None
        if server.served is None:
            raise RuntimeError(f"the node server of node {node[:12]} serves no net yet")
        return served_address(server.served, position)

    def stats(self) -> dict[str, list[dict]]:
        """Each node server's servers' counters (loads, batches, positions, pid), by node id."""
        return {node: self.ray.get(s.handle.stats.remote(), timeout=60) for node, s in self.by_node.items()}

    def close(self) -> None:
        """After the actors have left: each server stops and unlinks its shared memory."""
        handles = [s.handle for s in self.by_node.values()]
        try:
            self.ray.get([h.close.remote() for h in handles], timeout=30)
        except Exception:
            pass  # a lost server's processes died with it; its resource tracker unlinked its memory
        for handle in handles:
            self._kill(handle)
        self.by_node = {}
