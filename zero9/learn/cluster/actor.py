"""A Ray self-play actor's side (:mod:`zero9.learn.cluster.pool` has the vocabulary and the driver).

- :class:`SelfPlayActor`: plays sessions one game per call, with its node server's net
  (:mod:`zero9.learn.cluster.node`) or one of its own, and runs match calls.
- **shipped files**: a match call's net files travel from the driver as bytes
  (:func:`ship_files`) and land in the actor's scratch folder (:func:`land_files`).
- **scratch folder**: ``zero9-ray-<pid>-<random>`` on the node's ``/dev/shm`` (a node
  server's too); a killed actor cannot clean up, so the next actor sweeps the folders of
  dead processes (:func:`sweep_dead_folders`).
"""

from __future__ import annotations

import gc
import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from zero9.learn.cluster.node import ServerLost
from zero9.learn.selfplay.lockstep import play_games
from zero9.learn.selfplay.records import game_summary, write_record
from zero9.nn.checkpoint import game_from_meta, load_net
from zero9.nn.inference import RemoteNet
from zero9.nn.inference import connect as connect_server
from zero9.nn.net import ZeroNet
from zero9.search.evaluator import NetEvaluator
from zero9.util.files import atomic_write_bytes

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
    (``served``, see :mod:`zero9.learn.cluster.node`), and runs match calls."""

    def __init__(self, worker: int, gpu_node: bool = False):
        import ray

        torch.set_num_threads(1)  # one CPU reserved per actor: threads would only fight
        self.worker, self.get = worker, ray.get  # get: an object from Ray's store
        self.node = ray.get_runtime_context().get_node_id()
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
            path = self.folder / "net.pt"
            atomic_write_bytes(path, self.get(box[0]))
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
        nets = sum(issubclass(type(o), ZeroNet) for o in gc.get_objects())  # type(): no property lookups
        return {"nets": nets, "served": self.address, "pid": os.getpid(), "node": self.node}

    def cleanup(self) -> None:
        self.disconnect()
        shutil.rmtree(self.folder, ignore_errors=True)

    def call(self, fn, kwargs: dict) -> Any:
        return fn(**land_files(kwargs, self.folder / "files", self.get, self.device))
