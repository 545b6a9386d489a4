"""One process owns the GPU; self-play workers hand it their positions through shared memory.

Why: with a net of its own in every worker, 14 processes take turns on one GPU, each
with batches of a few hundred positions, uncompiled; on an H100 that reached a fifth of
what the compiled net can do. Here one *server* process holds the net, compiled, and
answers all workers, so the GPU sees few large batches.

Vocabulary:

- **server**: the process that owns the device. It holds the net in bf16, channels-last,
  compiled by ``torch.compile``, in a CUDA graph captured per **bucket** (a batch size: CUDA
  graphs need fixed shapes, so a batch runs in the next bucket up; :mod:`zero9.nn.graphed`).
- **client** (:class:`RemoteNet`): what a worker holds instead of a net. Its
  :meth:`RemoteNet.predict` has :meth:`zero9.nn.net.ZeroNet.predict`'s contract (planes
  ``[B, C, N, N]`` in; ``probs [B, A]`` and ``value [B]`` out), so
  :class:`zero9.search.evaluator.NetEvaluator` works on it unchanged.
- **slot**: one batch's shared memory: ``planes`` uint8 ``[max_batch, C, N, N]`` (the
  input planes are 0/1, so a byte each: a quarter of float32's traffic), ``probs``
  float32 ``[max_batch, A]``, ``value`` float32 ``[max_batch]`` and ``syms`` uint8
  ``[max_batch]``. Each worker has :data:`IN_FLIGHT` slots.
- **symmetry on the GPU**: a position comes as it stands (symmetry 0) with the symmetry the
  evaluator drew for it (:data:`zero9.search.evaluator`'s random symmetry); the server turns
  the planes and turns the policy back on the GPU, inside the compiled graph: exact
  permutations, the numbers the worker's own turning gave, and work a worker's core no
  longer does (turning and turning back were a tenth of a recipe worker's time on the H200).
- **in flight**: a batch submitted and not yet collected. A worker may keep one per slot:
  :meth:`RemoteNet.submit` puts a batch in a free slot and returns at once, so the
  worker's core selects the leaves of its other games while the GPU evaluates these
  (:func:`zero9.search.batched.search_in_flight`); :meth:`RemoteNet.collect` waits for
  the answer. ``predict`` is submit then collect.
- **ticket**: what ``submit`` returns and ``collect`` takes: the number of the slot the
  batch went into.
- **request**: five bytes on the worker's own request pipe, the slot's number and ``n``:
  "that slot holds ``n`` positions"; the reply is one byte, the slot's number, on the
  worker's reply pipe once the outputs are in that slot. Positions never go through a
  pipe. Pipes, not a shared queue: a queue's put hands the message to a feeder thread,
  which waits for the GIL while the worker searches (up to the 5 ms switch interval), so
  a batch in flight would reach the server late; ``send_bytes`` writes at once.
- **round of the server**: take the requests waiting (at most the largest bucket of
  positions), run them as one batch, answer each slot. Rounds go two deep: the server
  gathers and launches one round while the GPU still computes the one before, and answers
  that one while the new one computes (its copies in and out go through pinned buffers
  that alternate), so the GPU is not idle while the server's Python copies and replies.

The compiled forward itself, and the benchmark's ceiling beside it, are :mod:`zero9.nn.graphed`.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import queue
import struct
import sys
import threading
import time
from dataclasses import dataclass
from multiprocessing import connection, resource_tracker, shared_memory
from typing import cast

import numpy as np
import torch

from zero9.nn.checkpoint import load_net
from zero9.nn.graphed import BUCKETS, GraphedForward, compiled_forward
from zero9.nn.net import resolve_device
from zero9.util.logs import configure_logging

log = logging.getLogger(__name__)

REQUEST = struct.Struct("<BI")  # a request: slot number, positions in it
IN_FLIGHT = 2  # slots per worker: batches one worker may have in flight at once


# A server's client: the pipes (requests, replies) of a worker it started, or the one socket of a
# process that connected (a Ray actor)
Client = tuple[connection.Connection, connection.Connection] | connection.Connection


@dataclass
class SlotSpec:
    """Shapes and shared-memory names of one slot of a worker (picklable)."""

    worker: int
    slot: int  # its number among the worker's IN_FLIGHT slots: the ticket of a batch in it
    max_batch: int
    planes_shape: tuple[int, int, int]  # (C, N, N)
    num_actions: int
    names: tuple[str, str, str, str]  # planes, probs, value, syms


def _open_shared(name: str) -> shared_memory.SharedMemory:
    """Open a segment made by another process without taking charge of unlinking it.

    Python < 3.13 registers a segment it only opens with the process's resource tracker, which
    unlinks what is registered when the process ends. A spawned worker shares its parent's tracker
    (the owner's registration, harmless); a process the owner did not start (a Ray actor: connect())
    starts a tracker of its own, whose exit would delete the server's slots under the next client.
    """
    if sys.version_info >= (3, 13):
        return shared_memory.SharedMemory(name=name, track=False)
    shm = shared_memory.SharedMemory(name=name)
    if getattr(resource_tracker._resource_tracker, "_pid", None) is not None:  # this process started it
        # the tracker registered the private name (POSIX: with its leading "/"), which .name strips
        resource_tracker.unregister(shm._name, "shared_memory")  # type: ignore[attr-defined]
    return shm


class _Slot:
    """Numpy views of a slot's shared memory (the creator unlinks it; others only close)."""

    def __init__(self, spec: SlotSpec, create: bool):
        b = spec.max_batch
        shapes = [((b, *spec.planes_shape), np.uint8), ((b, spec.num_actions), np.float32),
                  ((b,), np.float32), ((b,), np.uint8)]
        self.shm = []
        views = []
        for name, (shape, dtype) in zip(spec.names, shapes, strict=True):
            nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
            shm = (shared_memory.SharedMemory(name=name, create=True, size=nbytes) if create
                   else _open_shared(name))
            self.shm.append(shm)
            views.append(np.ndarray(shape, dtype, buffer=shm.buf))
        self.planes, self.probs, self.value, self.syms = views

    def close(self, unlink: bool = False) -> None:
        self.planes = self.probs = self.value = self.syms = None
        for shm in self.shm:
            shm.close()
            if unlink:
                shm.unlink()


class RemoteNet:
    """A worker's stand-in for the net: batches go through the server (see the module docstring)."""

    def __init__(self, specs: tuple[SlotSpec, ...], requests, reply):
        self.specs, self.requests, self.reply = specs, requests, reply
        self.max_batch = specs[0].max_batch
        self._slots: list[_Slot] | None = None  # opened on first use, in the worker process
        self._free = list(range(len(specs)))  # tickets (slot numbers) with no batch in flight
        self._sizes = [0] * len(specs)  # positions in each slot's batch
        self._answered: set[int] = set()  # slots whose reply came while we waited for another
        c, n, _ = specs[0].planes_shape
        self.size, self.num_actions, self.config = n, specs[0].num_actions, {"in_planes": c}

    def __getstate__(self):
        return {"specs": self.specs, "requests": self.requests, "reply": self.reply}

    def __setstate__(self, state):
        RemoteNet.__init__(self, state["specs"], state["requests"], state["reply"])

    def close(self) -> None:
        """Leave the server (a listening server frees this client's number for the next one)."""
        for slot in self._slots or ():
            slot.close()
        self._slots = None
        for end in {id(self.requests): self.requests, id(self.reply): self.reply}.values():
            end.close()

    takes_bytes = True  # planes may come as 0/1 bytes (uint8): the slots hold them so
    takes_symmetries = True  # planes come as they stand, with a symmetry each for the server to apply

    def submit(self, planes: np.ndarray, syms: np.ndarray | None = None) -> int:
        """Send ``planes`` (at most ``max_batch``) to the server without waiting; returns the ticket.
        ``syms``: each position's symmetry (none: as it stands), applied and undone by the server."""
        if len(planes) > self.max_batch:
            raise ValueError(f"a batch of {len(planes)} is above the slot's {self.max_batch} positions")
        if not self._free:
            raise RuntimeError(f"all {len(self.specs)} slots have a batch in flight: collect one first")
        if self._slots is None:
            self._slots = [_Slot(spec, create=False) for spec in self.specs]
        ticket = self._free.pop(0)
        n = self._sizes[ticket] = len(planes)
        slot = self._slots[ticket]
        slot.planes[:n] = planes  # 0/1 floats -> bytes
        slot.syms[:n] = 0 if syms is None else syms
        self.requests.send_bytes(REQUEST.pack(ticket, n))
        return ticket

    def collect(self, ticket: int) -> tuple[np.ndarray, np.ndarray]:
        """Wait for the answer to ``ticket``'s batch: ``(probs [n, A], value [n])``, copies."""
        while ticket not in self._answered:  # the first reply may be the other slot's
            self._answered.add(self.reply.recv_bytes()[0])
        self._answered.discard(ticket)
        assert self._slots is not None  # opened by the submit that gave the ticket
        slot, n = self._slots[ticket], self._sizes[ticket]
        out = slot.probs[:n].copy(), slot.value[:n].copy()  # the slot is refilled by the next submit
        self._free.append(ticket)
        return out

    def predict(self, planes: np.ndarray, syms: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        cut = range(0, len(planes), self.max_batch)  # a big batch goes in parts
        out = [self.collect(self.submit(planes[start:start + self.max_batch],
                                        None if syms is None else syms[start:start + self.max_batch]))
               for start in cut]
        if len(out) == 1:
            return out[0]
        return np.concatenate([p for p, _ in out]), np.concatenate([v for _, v in out])


class InferenceServer:
    """Start the server process for ``workers`` clients; :meth:`client` gives worker ``w`` its RemoteNet.

    Create it before the worker processes and hand each its client as a process argument
    (queues and pipes travel only that way). :meth:`load` switches the net between rounds.
    """

    def __init__(self, net_path: str, device: str, workers: int, max_batch: int, load: bool = True,
                 listen: str | None = None):
        if max_batch > BUCKETS[-1]:
            raise ValueError(f"max_batch {max_batch} is above the largest bucket {BUCKETS[-1]}")
        ctx = mp.get_context("spawn")
        planes_shape, num_actions = _shape_of(net_path)
        stem = f"z9-{os.getpid():x}-{id(self):x}"  # the pid too: two owners' id()s may meet on a node
        self.specs = [tuple(SlotSpec(w, s, max_batch, planes_shape, num_actions,
                                     _segment_names(f"{stem}-{w}-{s}"))
                            for s in range(IN_FLIGHT)) for w in range(workers)]
        self.slots = [_Slot(spec, create=True) for specs in self.specs for spec in specs]
        # Pipes made here travel to worker processes as arguments; with ``listen`` (a Unix socket path)
        # processes this one did not start (Ray's actors on this node) connect there instead: connect()
        n = 0 if listen else workers
        asks = [ctx.Pipe(duplex=False) for _ in range(n)]  # (receiving end, sending end) each
        answers = [ctx.Pipe(duplex=False) for _ in range(n)]
        self.requests, self.replies = [send for _, send in asks], [receive for receive, _ in answers]
        self.control, self.control_reply = ctx.Queue(), ctx.Queue()
        self.listen = listen
        self.proc = ctx.Process(target=_serve, daemon=True,
                                args=(self.specs, [r for r, _ in asks], [s for _, s in answers],
                                      self.control, self.control_reply, device, listen))
        self.proc.start()
        if load:
            self.load(net_path)

    def client(self, worker: int) -> RemoteNet:
        if self.listen:
            raise ValueError(f"this server listens on {self.listen}: clients connect() there")
        return RemoteNet(self.specs[worker], self.requests[worker], self.replies[worker])

    def load(self, net_path: str, timeout: float = 900.0) -> dict:
        """Serve ``net_path`` from now on (the first load compiles); returns the server's stats so far."""
        self.ask_load(net_path)
        return self._answer(timeout)

    def ask_load(self, net_path: str) -> None:
        """Send the load without waiting (:class:`ServerGroup` asks every server, then waits)."""
        self.control.put(("load", str(net_path)))

    def stats(self) -> dict:
        self.control.put(("stats", None))
        return self._answer(60.0)

    def _answer(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            try:
                kind, payload = self.control_reply.get(timeout=1.0)
            except queue.Empty:
                if not self.proc.is_alive():
                    raise RuntimeError("the inference server died") from None
                if time.monotonic() > deadline:
                    raise TimeoutError("the inference server did not answer") from None
                continue
            if kind == "error":
                raise RuntimeError(f"inference server: {payload}")
            return payload

    def close(self) -> None:
        if self.proc.is_alive():
            self.control.put(("stop", None))
            self.proc.join(10)
            if self.proc.is_alive():
                self.proc.kill()
        for slot in self.slots:
            slot.close(unlink=True)

    def __enter__(self) -> InferenceServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def connect(address: str, timeout: float = 60.0) -> RemoteNet:
    """A client of the server listening on ``address`` (``InferenceServer(listen=...)``): it is given
    the slots of a free client number and answers on the one socket. For processes the server's
    owner did not start, e.g. Ray's actors on a node (docs/ray.md)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn = connection.Client(address, family="AF_UNIX")
            break
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no inference server listens on {address}") from None
            time.sleep(0.1)
    specs = conn.recv()
    if specs is None:
        raise RuntimeError(f"the inference server on {address} has no free client slots")
    return RemoteNet(specs, conn, conn)


def _accept(listener, specs, joined: list, lock: threading.Lock) -> None:
    """The listening server's door: each new client gets the first free client number's slots."""
    while True:
        try:
            conn = listener.accept()
        except OSError:
            return  # the listener closed: the server is stopping
        with lock:
            taken = {w for w, _ in joined}
            free = next((w for w in range(len(specs)) if w not in taken), None)
            conn.send(None if free is None else specs[free])
            if free is not None:
                joined.append((free, conn))


SHM_FOLDER = "/dev/shm"  # where Linux keeps shared memory segments by name


def sweep_dead_slots(folder: str = SHM_FOLDER) -> int:
    """Unlink the slots of servers whose owner process is gone without closing them (``z9-<pid>-...``,
    see :class:`InferenceServer`): a Ray node server killed with its process group, whose resource
    tracker died with it. Returns how many segments went."""
    try:
        names = os.listdir(folder)
    except OSError:
        return 0  # no such folder (not Linux): nothing named by pid to sweep
    swept = 0
    for name in names:
        parts = name.split("-")  # z9, pid, id, worker, slot, kind (an older name has no pid: 5 parts)
        if len(parts) != 6 or parts[0] != "z9":
            continue
        try:
            os.kill(int(parts[1], 16), 0)
            continue  # its owner lives
        except (ValueError, OverflowError, PermissionError):
            continue  # not a pid, or someone else's live process
        except ProcessLookupError:
            pass
        try:
            os.unlink(os.path.join(folder, name))
            swept += 1
        except OSError:
            pass  # gone already, or not ours
    return swept


def _segment_names(prefix: str) -> tuple[str, str, str, str]:
    """A slot's four shared-memory names: planes, probs, value, syms."""
    return f"{prefix}-in", f"{prefix}-p", f"{prefix}-v", f"{prefix}-s"


def _shape_of(net_path: str) -> tuple[tuple[int, int, int], int]:
    """The net's input planes ``(C, N, N)`` and its number of actions."""
    net, _ = load_net(net_path, device="cpu")
    return (net.config["in_planes"], net.size, net.size), net.num_actions


def _serve(specs: list[tuple[SlotSpec, ...]], requests, replies, control, control_reply,
           device_name: str, listen: str | None = None) -> None:
    """The server's loop (a process of its own; see the module docstring)."""
    configure_logging()  # a spawned process: without a handler its "net ready" line would be lost
    # (client number, its pipes (requests, replies), or the one socket of a client that connected)
    joined: list[tuple[int, Client]] = list(enumerate(zip(requests, replies, strict=True)))
    lock = threading.Lock()
    listener = None
    if listen:
        joined = []  # (client number, its socket), as clients connect
        listener = connection.Listener(listen, family="AF_UNIX")
        threading.Thread(target=_accept, args=(listener, specs, joined, lock), daemon=True).start()
    torch.set_num_threads(1)
    device = resolve_device(device_name)
    if device.type == "cuda" and device.index is not None:
        torch.cuda.set_device(device)  # CUDA graphs and pinned memory on this server's GPU, not GPU 0
    slots = [[_Slot(spec, create=False) for spec in mine] for mine in specs]  # [worker][slot]
    forward, net = None, None
    stats = {"batches": 0, "positions": 0, "busy_s": 0.0, "loads": 0}  # loads: nets read from a file
    parent, checked = os.getppid(), time.monotonic()
    rounds = _Rounds(specs, slots, device)
    stats["registered_slots"] = sum(host is not None for mine in rounds.host_planes for host in mine)
    while True:
        if time.monotonic() - checked > 1.0:
            checked = time.monotonic()
            if os.getppid() != parent:
                break  # the owner died (a Ray node server killed): serve nobody, so clients see the end
        try:
            kind, payload = control.get_nowait()
        except queue.Empty:
            kind = None
        if kind == "stop":
            break
        if kind == "stats":
            control_reply.put(("stats", dict(stats)))
        if kind == "load":
            try:
                rounds.finish(slots, stats)  # the old net's round answers before the weights change
                net, forward = _load(payload, net, forward, device, stats)
                control_reply.put(("loaded", dict(stats)))
            except Exception as e:  # tell the caller, keep serving
                control_reply.put(("error", f"{type(e).__name__}: {e}"))
        with lock:
            clients = list(joined)
        if not clients:  # a listening server before its first client
            time.sleep(0.05)
            continue
        # with a round on the GPU, only look (its answer is due); else wait up to 50 ms for a request
        waiting, replies = _requests(clients, joined, lock, timeout=0.0 if rounds.busy else 0.05)
        rounds.backlog.extend(waiting)
        began = time.perf_counter()
        launched = rounds.launch(slots, replies, forward) if rounds.backlog else None
        rounds.finish(slots, stats)  # the round before: its answers out while this one computes
        rounds.running = launched
        stats["busy_s"] += time.perf_counter() - began
    rounds.finish(slots, stats)
    rounds.close()
    if listener is not None:
        listener.close()
    for mine in slots:
        for slot in mine:
            slot.close()


def _load(path: str, net, forward, device: torch.device, stats: dict) -> tuple:
    """The control message "load": ``(net, forward)`` with the weights of the net file ``path``."""
    new, _ = load_net(path, device="cpu")
    stats["loads"] += 1
    if net is None or new.config != net.config:
        began = time.perf_counter()
        forward = compiled_forward(new, device)
        stats["compile_s"] = time.perf_counter() - began
        log.info("inference server: net ready on %s in %.1f s (batch buckets %s)", device, stats["compile_s"],
                 ", ".join(map(str, BUCKETS)))
        return new, forward
    with torch.no_grad():  # same shape: copy the weights into the compiled net (its CUDA graphs stay valid)
        for mine, theirs in zip(net.state_dict().values(), new.state_dict().values(), strict=True):
            mine.copy_(theirs)
    return net, forward


def _requests(clients: list, joined: list, lock: threading.Lock, timeout: float = 0.05) -> tuple[list, dict]:
    """``(waiting, replies)``: the batches the clients sent, as ``(worker, slot, n)`` (waiting up to
    ``timeout`` for the first; everything already sent joins), and each client's reply end."""
    asking = {id(c[0] if isinstance(c, tuple) else c): w for w, c in clients}
    replies = {w: (c[1] if isinstance(c, tuple) else c) for w, c in clients}
    waiting = []
    for ready in connection.wait([c[0] if isinstance(c, tuple) else c for _, c in clients], timeout=timeout):
        pipe = cast(connection.Connection, ready)  # wait() returns the objects it was given
        w = asking[id(pipe)]
        try:
            while pipe.poll():
                waiting.append((w, *REQUEST.unpack(pipe.recv_bytes())))
        except (EOFError, OSError):  # a client left (a listening server frees its number)
            with lock:
                joined[:] = [(k, c) for k, c in joined if k != w]
    return waiting, replies


class _Rounds:
    """The server's rounds, two deep: while the GPU computes one round, the server answers the round
    before it and gathers the next (pinned input and output buffers alternate between the two).

    On CUDA each slot's planes are registered with the driver as pinned memory (``cudaHostRegister``)
    where it allows: the GPU then copies a request's planes from the worker's slot into the bucket's
    input itself, and the server's core no longer copies them into a pinned buffer first (that copy,
    a quarter of a megabyte a request, was a seventh of the server's time on the Go recipe; py-spy,
    issue 40). Where registering fails, the planes go through the pinned buffer as before."""

    def __init__(self, specs, slots, device: torch.device):
        cuda = device.type == "cuda"
        shape, actions = specs[0][0].planes_shape, specs[0][0].num_actions
        most = BUCKETS[-1]
        self.device = device
        self.planes = [torch.empty((most, *shape), dtype=torch.uint8, pin_memory=cuda) for _ in range(2)]
        self.syms = [torch.empty(most, dtype=torch.uint8, pin_memory=cuda) for _ in range(2)]
        self.probs = [torch.empty((most, actions), dtype=torch.float32, pin_memory=cuda) for _ in range(2)]
        self.value = [torch.empty(most, dtype=torch.float32, pin_memory=cuda) for _ in range(2)]
        self.turn = 0
        self.backlog: list = []  # requests not yet in a round: (worker, slot, n)
        self.running = None  # the round on the GPU: (buffer, group, replies, event)
        self.registered: list[int] = []  # addresses registered with CUDA (unregistered by close)
        self.host_planes = [[_registered(slot.planes, self.registered) if cuda else None for slot in mine]
                            for mine in slots]  # [worker][slot]: a torch view of registered planes, or None

    def close(self) -> None:
        for address in self.registered:
            torch.cuda.cudart().cudaHostUnregister(address)
        self.registered = []

    @property
    def busy(self) -> bool:
        return self.running is not None

    def launch(self, slots, replies: dict, forward):
        """Start a round of the backlog's first requests (at most the largest bucket): copies and the net,
        all queued on the GPU; returns it (its answer is read by :meth:`finish`)."""
        k = self.turn
        self.turn = 1 - k
        group, total = [], 0
        while self.backlog and total + self.backlog[0][2] <= BUCKETS[-1]:
            w, s, n = self.backlog.pop(0)
            group.append((w, s, total, n))
            total += n
        planes, syms = self.planes[k], self.syms[k]
        if isinstance(forward, GraphedForward):
            g = forward.bucket(total)
            for w, s, at, n in group:
                syms[at:at + n].numpy()[:] = slots[w][s].syms[:n]
                host = self.host_planes[w][s]
                if host is None:  # through the pinned buffer
                    planes[at:at + n].numpy()[:] = slots[w][s].planes[:n]
                    host = planes[at:at + n]
                g.x[at:at + n].copy_(host[:n], non_blocking=True)
            g.syms[:total].copy_(syms[:total], non_blocking=True)
            g.graph.replay()
            probs, value = g.probs[:total], g.value[:total]
        else:
            for w, s, at, n in group:
                planes[at:at + n].numpy()[:] = slots[w][s].planes[:n]
                syms[at:at + n].numpy()[:] = slots[w][s].syms[:n]
            probs, value = forward(planes[:total].to(self.device, non_blocking=True),
                                   syms[:total].to(self.device, non_blocking=True))
        self.probs[k][:total].copy_(probs, non_blocking=True)
        self.value[k][:total].copy_(value, non_blocking=True)
        event = None
        if self.device.type == "cuda":
            event = torch.cuda.Event()
            event.record()
        return k, group, replies, event

    def finish(self, slots, stats: dict) -> None:
        """Answer the round on the GPU, if any: its outputs into the clients' slots, a reply each."""
        if self.running is None:
            return
        k, group, replies, event = self.running
        self.running = None
        if event is not None:
            event.synchronize()
        probs, value = self.probs[k].numpy(), self.value[k].numpy()
        total = 0
        for w, s, at, n in group:
            slots[w][s].probs[:n] = probs[at:at + n]
            slots[w][s].value[:n] = value[at:at + n]
            total += n
            try:
                replies[w].send_bytes(bytes((s,)))
            except OSError:  # the client left while its batch was evaluated
                pass
        stats["batches"] += 1
        stats["positions"] += total


def _registered(planes: np.ndarray, registered: list[int]) -> torch.Tensor | None:
    """``planes`` (a slot's shared memory) registered with CUDA as pinned memory, as a torch view; None
    where the driver refuses (the server then copies through its pinned buffer)."""
    address = planes.ctypes.data
    if int(torch.cuda.cudart().cudaHostRegister(address, planes.nbytes, 0)) != 0:
        return None
    registered.append(address)
    return torch.from_numpy(planes)


class ServerGroup:
    """One :class:`InferenceServer` per device (one per GPU of a host), as one server to a pool.

    Worker ``w`` of ``workers`` is a client of server ``w * len(devices) // workers``: contiguous
    blocks, so the first ``workers // len(devices)`` workers all use the first device (the
    host bench's 1-GPU figure is those workers alone). The servers compile at once, in parallel.
    """

    def __init__(self, net_path: str, devices: list[str], workers: int, max_batch: int):
        if not devices:
            raise ValueError("a server group needs at least one device")
        if workers < len(devices):
            raise ValueError(f"{workers} workers cannot feed {len(devices)} inference servers")
        self.devices, self.workers = list(devices), workers
        self.owner = [w * len(devices) // workers for w in range(workers)]  # worker -> server
        self.index = [self.owner[:w].count(self.owner[w]) for w in range(workers)]  # its client number
        self.servers: list[InferenceServer] = []
        try:
            for k, device in enumerate(self.devices):
                self.servers.append(InferenceServer(net_path, device, self.owner.count(k), max_batch,
                                                    load=False))
            self.load(net_path)
        except BaseException:
            self.close()
            raise

    def client(self, worker: int) -> RemoteNet:
        return self.servers[self.owner[worker]].client(self.index[worker])

    def load(self, net_path: str, timeout: float = 900.0) -> list[dict]:
        """Every server serves ``net_path`` (nets are named by their hash: the same path, the same net)."""
        if str(net_path) == getattr(self, "loaded", None):
            return []
        self.loaded = str(net_path)
        for server in self.servers:
            server.ask_load(net_path)
        return [server._answer(timeout) for server in self.servers]

    def stats(self) -> list[dict]:
        return [server.stats() for server in self.servers]

    def close(self) -> None:
        for server in self.servers:
            server.close()

    def __enter__(self) -> ServerGroup:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
