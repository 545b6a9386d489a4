"""Checkpoints: a net plus everything needed to use it, name it, and resume training it.

Vocabulary:

- **checkpoint** (``.pt``): one ``torch.save`` dict, loadable with
  ``weights_only=True``: ``format`` (``"zero9-checkpoint"``), ``version`` (1),
  ``config`` (``net.config``: in_planes, size, num_actions, blocks, filters,
  ownership, and for size-independent nets ``heads: "pooled"`` and ``head_channels``
  (:mod:`zero9.nn.net`; ``size`` is then the board it was made for)), ``state_dict``,
  ``meta``, and for resuming ``optimizer``, ``scheduler``, ``rng`` (Python, NumPy, torch
  CPU and CUDA generator states) and
  ``extra`` (anything the trainer wants back, e.g. a data cursor). Written
  atomically (temporary file, then ``os.replace``), so a crash leaves the old file
  or the new one.
- **meta**: a JSON-able dict: ``game`` (``game.to_dict()``), ``blocks``, ``filters``,
  ``in_planes``, ``size``, ``num_actions``, ``ownership``, ``input_encoding``,
  ``step`` (training steps so far), ``hash``, ``created`` (Unix time), plus any
  keys the caller adds (``parent``, ``generation``, ...).
- **net hash**: the first 12 hex digits of a SHA-256 over the net's config and its
  parameters and BN statistics (float32 bytes, in state-dict key order, without
  BN's batch counter). Like Leela Zero's network hashes it names a net by its
  content: every net a run produces is called by it, and converting between
  ``.pt`` and Leela Zero text keeps it (the conversion is exact).
- **finite weights**: a checkpoint whose weights or batch-norm statistics hold a NaN or an
  infinity is refused naming the tensor (a net that would play nonsense, A1 B1 C1, silently);
  Leela Zero text is refused the same way line by line (:mod:`zero9.nn.weights`).
- **input encoding**: the name of the planes the net expects: ``"lz18"`` for Go
  (Leela Zero's 18 planes), ``"gomoku<C>"`` for Gomoku's C planes.
- **shipped nets**: :func:`default_net_path` looks in the repository's
  ``example-data/`` folder (``zero9/../example-data``, which works because the
  package is installed editable) for ``<game>_<N>x<N>*.pt`` / ``.txt`` /
  ``.txt.gz``, preferring a name containing ``best``, then a ``.pt`` (it keeps an
  ownership head, which Leela Zero text cannot), then the last name in sort
  order; 9x9 Go falls back to ``initial_9x9.txt.gz`` (a random 10x64 net).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import random
import stat
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import torch

from zero9.games import make_game
from zero9.nn.heads import net_from_config
from zero9.nn.net import ZeroNet, resolve_device
from zero9.nn.net_limits import shape_problem
from zero9.nn.weights import FORMAT_VERSION as LZ_FORMAT_VERSION
from zero9.nn.weights import load_lz_weights
from zero9.util.files import GZIP_MAGIC, TooLargeError, atomic_write_bytes, file_kind, open_regular_file

FORMAT = "zero9-checkpoint"
VERSION = 1
HASH_DIGITS = 12
EXAMPLE_DATA = Path(__file__).resolve().parents[2] / "example-data"
NET_SUFFIXES = (".pt", ".txt", ".txt.gz")
DEFAULT_GO_9X9 = "initial_9x9.txt.gz"
LZ_DEFAULT_KOMI = 7.5
SHAPE_KEYS = ("blocks", "filters", "in_planes", "size", "num_actions", "ownership")
CHECKPOINT_KEYS = ("config", "state_dict", "meta")  # the parts every checkpoint needs
ZIP_MAGIC = b"PK\x03\x04"  # torch.save writes a zip archive
MAX_CHECKPOINT_BYTES = 4 << 30  # a net at zero9.nn.net_limits' parameter limit, with Adam's two moments


@dataclass
class Checkpoint:
    """What :func:`load_checkpoint` gives back. ``restore`` puts the training state back in place."""

    net: ZeroNet
    meta: dict[str, Any]
    optimizer_state: dict | None = None
    scheduler_state: dict | None = None
    rng_state: dict | None = None
    extra: Any = None

    def restore(self, optimizer: Any = None, scheduler: Any = None, rng: bool = True) -> None:
        """Load optimizer/scheduler state into the given objects and (by default) the RNG states."""
        if optimizer is not None:
            if self.optimizer_state is None:
                raise ValueError("this checkpoint holds no optimizer state")
            optimizer.load_state_dict(self.optimizer_state)
        if scheduler is not None:
            if self.scheduler_state is None:
                raise ValueError("this checkpoint holds no scheduler state")
            scheduler.load_state_dict(self.scheduler_state)
        if rng and self.rng_state is not None:
            set_rng_state(self.rng_state)


def net_hash(net: ZeroNet) -> str:
    """Short content hash naming ``net`` (see the module docstring)."""
    h = hashlib.sha256(json.dumps(net.config, sort_keys=True).encode())
    for key, value in net.state_dict().items():
        if key.endswith("num_batches_tracked"):
            continue  # does not change what the net computes, and LZ files lack it
        h.update(key.encode())
        h.update(value.detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
    return h.hexdigest()[:HASH_DIGITS]


def input_encoding(game: dict[str, Any], in_planes: int) -> str:
    return "lz18" if game.get("game") == "go" and in_planes == 18 else f"{game.get('game')}{in_planes}"


def net_meta(net: ZeroNet, game: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """The meta dict of ``net`` for ``game`` (a ``game.to_dict()``), with its hash."""
    if int(game.get("size", net.size)) != net.size:
        n = game.get("size")
        raise ValueError(f"net is for {net.size}x{net.size} but the game is {n}x{n}")
    meta = dict(extra)
    meta.update({k: net.config[k] for k in SHAPE_KEYS})
    if net.size_independent:  # only then: fixed-head metas stay as they were
        meta["heads"] = net.config["heads"]
    meta["game"] = dict(game)
    meta.setdefault("input_encoding", input_encoding(game, net.config["in_planes"]))
    meta.setdefault("step", 0)
    meta["hash"] = net_hash(net)
    return meta


def game_from_meta(meta: dict[str, Any]) -> Any:
    """The :class:`zero9.games.Game` a net's meta names."""

    if "game" not in meta:
        raise ValueError("net meta has no 'game' entry")
    return make_game(**meta["game"])


def save_checkpoint(
    path: str | os.PathLike,
    net: ZeroNet,
    meta: dict[str, Any],
    optimizer: Any = None,
    scheduler: Any = None,
    extra: Any = None,
) -> dict[str, Any]:
    """Write a checkpoint atomically; returns the meta written (with ``hash``, ``created``).

    ``meta`` must hold ``game`` (a ``game.to_dict()``); the net's shape and hash are filled in.
    """

    if "game" not in meta:
        raise ValueError("checkpoint meta needs 'game' (a game.to_dict())")
    full = net_meta(net, meta["game"], **{k: v for k, v in meta.items() if k != "game"})
    full["created"] = time.time()
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "config": dict(net.config),
        "state_dict": {k: v.detach().cpu() for k, v in net.state_dict().items()},
        "meta": full,
        "optimizer": None if optimizer is None else optimizer.state_dict(),
        "scheduler": None if scheduler is None else scheduler.state_dict(),
        "rng": get_rng_state(),
        "extra": extra,
    }
    buffer = io.BytesIO()  # in memory first: torch's own file writer reports a full disk without errno
    torch.save(payload, buffer)
    atomic_write_bytes(path, buffer.getvalue())
    return full


def load_checkpoint(path: str | os.PathLike, device: str | torch.device = "cpu") -> Checkpoint:
    """Read a zero9 checkpoint; ValueError naming the file and what was expected if it is not one,
    or naming the tensor if a weight or statistic is NaN or infinite (every net zero9 loads comes
    through here or :mod:`zero9.nn.weights`, which refuses those too)."""
    path = Path(path)
    payload = _read_payload(path)
    problem = shape_problem(payload["config"])  # before the net is built: the shape is the file's claim
    if problem is not None:
        raise ValueError(f"checkpoint {path}: {problem}; refused before allocating the net "
                         f"(a damaged or hostile file?)")
    unfinite = next((key for key, value in payload["state_dict"].items() if _not_finite(value)), None)
    if unfinite is not None:
        raise ValueError(f"checkpoint {path}: {unfinite} holds a NaN or infinity (a training run that "
                         f"diverged, or a damaged file); zero9 plays no such net")
    net = net_from_config(payload["config"])
    try:
        net.load_state_dict(payload["state_dict"])
    except (RuntimeError, TypeError, AttributeError) as e:
        raise ValueError(f"checkpoint {path}: weights do not fit its config: {_first_line(e)}") from None
    meta = dict(payload["meta"])
    if meta.get("hash") and net_hash(net) != meta["hash"]:
        raise ValueError(f"checkpoint {path}: content hash {net_hash(net)} differs from "
                         f"the recorded {meta['hash']} (damaged file?)")
    net.to(resolve_device(device)).eval()
    return Checkpoint(net, meta, payload.get("optimizer"), payload.get("scheduler"), payload.get("rng"),
                      payload.get("extra"))


def _not_finite(value: Any) -> bool:
    """Whether ``value`` is a floating tensor holding a NaN or an infinity. Its sum is finite unless it
    holds one (or finite values overflow, which the exact test then clears), and a sum costs a small
    part of the exact test's mask of every value."""
    if not (isinstance(value, torch.Tensor) and value.is_floating_point()):
        return False
    return not bool(torch.isfinite(value.sum())) and not bool(torch.isfinite(value).all())


def not_a_net(path: Path, reason: str) -> ValueError:
    """The one error for a file that is no net zero9 can read: its name, what was expected, why not."""
    return ValueError(f"{path} is not a zero9 checkpoint or Leela Zero v1 weights file: {reason}")


def read_meta(path: str | os.PathLike) -> dict[str, Any]:
    """The meta dict of the checkpoint at ``path``, its net not built (checked as :func:`load_checkpoint`)."""
    return dict(_read_payload(Path(path))["meta"])


def _read_payload(path: Path) -> dict:
    """The checkpoint dict of ``path``, its parts checked; ValueError (:func:`not_a_net`) otherwise.

    Read from a regular file of at most :data:`MAX_CHECKPOINT_BYTES` whose zip entries declare at
    most as much (a deflated entry could otherwise unpack to any size), with ``weights_only``.
    """
    if not path.exists():
        raise FileNotFoundError(f"no net file {path}")
    with open_regular_file(path, MAX_CHECKPOINT_BYTES, "net file") as handle:
        _check_zip_sizes(handle, path)
        try:
            payload = torch.load(handle, map_location="cpu", weights_only=True)
        except Exception as e:  # zip, pickle and EOF errors all mean a damaged or foreign file
            raise not_a_net(path, _torch_load_reason(handle, e)) from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        what = "a dict (a bare state_dict?)" if isinstance(payload, dict) else type(payload).__name__
        raise not_a_net(path, f"a torch file holding {what}, without zero9's format tag {FORMAT!r}")
    if payload.get("version") != VERSION:
        raise ValueError(f"checkpoint {path} has version {payload.get('version')}; "
                         f"this zero9 reads version {VERSION}")
    missing = [k for k in CHECKPOINT_KEYS if not isinstance(payload.get(k), dict)]
    if missing:
        raise not_a_net(path, f"its {', '.join(repr(k) for k in missing)} part is missing "
                              f"(a checkpoint holds {', '.join(CHECKPOINT_KEYS)})")
    return payload


def _check_zip_sizes(handle: BinaryIO, path: Path) -> None:
    """Refuse a zip whose entries declare more than :data:`MAX_CHECKPOINT_BYTES` unpacked."""
    try:
        declared = sum(info.file_size for info in zipfile.ZipFile(handle).infolist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        declared = 0  # not a readable zip: torch.load refuses it, and _torch_load_reason says why
    finally:
        handle.seek(0)
    if declared > MAX_CHECKPOINT_BYTES:
        raise ValueError(f"checkpoint {path}: its zip entries unpack to {declared:,} bytes, over the "
                         f"{MAX_CHECKPOINT_BYTES:,} zero9 reads")


def _torch_load_reason(handle: BinaryIO, error: Exception) -> str:
    """Why torch.load refused the file, in a few words (its own message advises unsafe loading)."""
    handle.seek(0)
    if handle.read(4) != ZIP_MAGIC:
        return "neither a zip archive (a .pt checkpoint) nor Leela Zero text"
    if not zipfile.is_zipfile(handle):
        return "a truncated zip archive (its end is missing: an interrupted copy or a full disk?)"
    if "weights_only" in str(error) or "Unsupported global" in str(error):
        return "it holds Python objects besides tensors (a file zero9 did not write)"
    return f"a damaged zip archive ({_first_line(error)})"


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:200]


def lz_version(path: str | os.PathLike) -> str | None:
    """The format line of a Leela Zero text file (``'1'``...), or None when ``path`` is not one.

    A ``.pt`` is a zip archive; Leela Zero text is ASCII digits first, plain or gzip'd.
    """
    with open_regular_file(path, MAX_CHECKPOINT_BYTES, "net file") as handle:
        head = handle.read(64)
        if head[:2] == GZIP_MAGIC:
            handle.seek(0)
            try:
                with gzip.GzipFile(fileobj=handle, mode="rb") as f:
                    head = f.read(64)
            except (OSError, EOFError, zlib.error):
                return "1"  # a damaged gzip: let the weights reader name the damage
    first = head.split(b"\n", 1)[0].strip()
    return first.decode("ascii") if first.isdigit() else None


def load_net(path: str | os.PathLike, device: str | torch.device = "auto",
             expected_size: int | None = None) -> tuple[ZeroNet, dict[str, Any]]:
    """Load a ``.pt`` checkpoint or Leela Zero v1 text weights: (net in eval mode on ``device``, meta).

    The net is tuned for inference (channels-last, :meth:`ZeroNet.set_channels_last`); use
    :func:`load_checkpoint` to resume training. Any other file is refused with a ValueError naming it
    (:func:`not_a_net`).
    """
    path = check_net_file(path)
    version = lz_version(path)
    if version is not None and version != LZ_FORMAT_VERSION:
        raise not_a_net(path, f"it is Leela Zero weights format version {version} (version 2 is ELF's "
                              f"value head from White's view); zero9 reads version {LZ_FORMAT_VERSION}")
    if version is not None:
        net = load_lz_weights(path, expected_size)
        meta = net_meta(net, lz_game(net), source=str(path), step=None)
    else:
        ckpt = load_checkpoint(path, "cpu")
        net, meta = ckpt.net, ckpt.meta
        if expected_size is not None and not net.serves_size(expected_size):
            raise ValueError(f"net file {path} holds a net for {net.sizes_served()}, "
                             f"but a {expected_size}x{expected_size} net is needed")
    return net.to(resolve_device(device)).eval().set_channels_last(True), meta


def check_net_file(path: str | os.PathLike) -> Path:
    """``path`` if it may hold a net, checked as :func:`load_net` checks it first: FileNotFoundError
    if it is absent, :func:`not_a_net` if it is not a regular file (a folder, a pipe that would
    block, a device like /dev/zero) or is empty, TooLargeError if it is larger than any net zero9
    reads (:data:`MAX_CHECKPOINT_BYTES`). For commands that refuse a bad ``--net`` at once."""
    path = Path(path).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"no net file {path}")
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        raise not_a_net(path, f"it is a {file_kind(info.st_mode)}, not a regular file")
    if info.st_size == 0:
        raise not_a_net(path, "it is empty")
    if info.st_size > MAX_CHECKPOINT_BYTES:
        raise TooLargeError(f"net file {path} is larger than the {MAX_CHECKPOINT_BYTES:,} bytes zero9 reads")
    return path


def lz_game(net: ZeroNet) -> dict[str, Any]:
    """The game a Leela Zero file's net plays: Go with komi 7.5, or Gomoku for a pass-less policy."""
    if net.num_actions == net.size * net.size + 1:
        return {"game": "go", "size": net.size, "komi": LZ_DEFAULT_KOMI}
    return {"game": "gomoku", "size": net.size}


def default_net_path(game_name: str, size: int) -> Path | None:
    """The shipped net in ``example-data/`` for this game and size, or None (see module docstring)."""
    prefix = f"{game_name.lower()}_{size}x{size}"
    found = [p for p in EXAMPLE_DATA.glob(f"{prefix}*") if p.name.endswith(NET_SUFFIXES) and p.is_file()]
    if found:
        best = [p for p in found if "best" in p.name.lower()]
        return max(best or found, key=lambda p: (p.suffix == ".pt", p.name))
    fallback = EXAMPLE_DATA / DEFAULT_GO_9X9
    if game_name.lower() == "go" and size == 9 and fallback.exists():
        return fallback
    return None


# --- RNG state -------------------------------------------------------------------------
# Stored as plain lists and tensors so torch.load(weights_only=True) can read them back.


def get_rng_state() -> dict[str, Any]:
    version, state, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)
    assert isinstance(keys, np.ndarray)  # the legacy state's key array (the stub unions its items)
    rng: dict[str, Any] = {
        "python": [version, list(state), gauss],
        "numpy": [kind, torch.from_numpy(keys.astype(np.int64)), int(pos), int(has_gauss), float(cached)],
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        rng["cuda"] = torch.cuda.get_rng_state_all()
    return rng


def set_rng_state(rng: dict[str, Any]) -> None:
    version, state, gauss = rng["python"]
    random.setstate((version, tuple(state), gauss))
    kind, keys, pos, has_gauss, cached = rng["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(rng["torch"])
    if "cuda" in rng and torch.cuda.is_available() and len(rng["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(rng["cuda"])
