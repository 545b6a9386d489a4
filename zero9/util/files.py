"""Files that are whole or absent: atomic writes and crash-tolerant JSON logs.

Vocabulary:

- **atomic write**: write to a temporary file in the same folder, flush, fsync,
  then ``os.replace`` onto the final name. A reader (or a rerun after ``kill -9``)
  sees the old file or the new one, never half of one. Temporary names start with
  ``.tmp-`` (:data:`TMP_PREFIX`) and every reader in zero9 ignores them.
- **JSON log** (``.jsonl``): one JSON object a line, appended; a line torn by a
  crash mid-append is dropped on reading.

Every layer writes through these functions, so they sit at the bottom of the package.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

TMP_PREFIX = ".tmp-"


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        unlink_quietly(tmp)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


def atomic_save_with(path: str | os.PathLike, save_fn) -> None:
    """Atomic write for writers that want a file name (``torch.save``, ``np.savez``).

    ``save_fn(tmp_path)`` must write the complete file at ``tmp_path``; the
    temporary name keeps the final suffix because some writers append one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{TMP_PREFIX}{os.getpid()}-{time.monotonic_ns()}-{path.name}")
    try:
        save_fn(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        unlink_quietly(tmp)
        raise


def read_json(path: str | os.PathLike, default: Any = None) -> Any:
    """Parse a JSON file; ``default`` if it does not exist; ValueError naming a corrupt one."""
    path = Path(path)
    if not path.exists():
        return default
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"corrupt JSON file {path}: {e}") from e


def append_jsonl(path: str | os.PathLike, obj: dict) -> None:
    """Append one JSON line. A line cut short by a crash is skipped by :func:`read_jsonl`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(obj, sort_keys=True) + "\n")
        f.flush()


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    """All complete JSON lines of a log; a torn last line (crash mid-append) is dropped."""
    path = Path(path)
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # only a crash mid-append leaves one; it is the newest and partial
    return rows


def rewrite_jsonl(path: str | os.PathLike, rows: list[dict]) -> None:
    atomic_write_text(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))


def unlink_quietly(path: str | os.PathLike) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
