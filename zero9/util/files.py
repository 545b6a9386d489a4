"""Files that are whole or absent: atomic writes, crash-tolerant JSON logs, full disks named.

Vocabulary:

- **atomic write**: write to a temporary file in the same folder, flush, fsync,
  then ``os.replace`` onto the final name and fsync the folder. A reader (or a rerun
  after ``kill -9``) sees the old file or the new one, never half of one. Temporary
  names start with ``.tmp-`` (:data:`TMP_PREFIX`) and every reader in zero9 ignores
  them. The file gets the mode a plain ``open(path, 'w')`` would give (``0666`` less
  the user's umask), and only a regular file (or nothing) is ever replaced: a
  symlink, device node, pipe or folder at the final name is refused
  (:class:`NotRegularFileError`), so a write can never go somewhere unexpected.
- **disk full**: an ``ENOSPC``, ``EDQUOT`` or ``EIO`` while writing becomes a
  :class:`DiskFullError` whose one line names the file ("disk full writing FILE;
  nothing was lost, free space and rerun"): the temporary file is removed and the
  file being replaced, like every earlier one, is left as it was.
- **JSON log** (``.jsonl``): one JSON object a line, appended; a line torn by a
  crash mid-append is dropped on reading, and an append that fails (disk full) is
  cut back off so the next one starts on a clean line.
- **bounded read**: every reader opens with ``O_NONBLOCK`` and checks ``fstat`` on the
  open descriptor, so it reads only a regular file (a named pipe never blocks, a device
  like ``/dev/zero`` is never read), and reads at most a cap: the file's size, and for a
  gzip'd file what comes out of it, counted while unpacking, so a small file cannot
  become gigabytes in memory. Line readers cap each line too. A refusal is a ValueError
  (:class:`TooLargeError` for a cap) naming the file and the limit.

Every layer writes through these functions, so they sit at the bottom of the package.
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import stat
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, cast

TMP_PREFIX = ".tmp-"
FILE_MODE = 0o666  # what open() asks for; the kernel takes the umask off
DISK_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EIO}
GZIP_MAGIC = b"\x1f\x8b"
MAX_JSON_BYTES = 64 << 20  # status.json, config.json, ratings.json: a few KB in a long run
MAX_JSONL_BYTES = 1 << 30  # a log of a million rows is ~300 MB


class DiskFullError(OSError):
    """A write failed for lack of space (or an I/O error); the message is the one line a user sees."""

    def __init__(self, path: str | os.PathLike, cause: OSError):
        what = "I/O error (EIO)" if cause.errno == errno.EIO else "disk full"
        super().__init__(cause.errno, f"{what} writing {path}; nothing was lost, free space and rerun")
        self.path = Path(path)

    def __str__(self) -> str:
        return str(self.strerror)


class NotRegularFileError(OSError):
    """The final name of a write is a symlink, device, pipe or folder: zero9 writes only regular files."""

    def __init__(self, path: Path, kind: str):
        super().__init__(errno.EEXIST, f"{path} is a {kind}, not a regular file; zero9 replaces only "
                                       f"regular files (remove it or choose another name)")
        self.path = path

    def __str__(self) -> str:
        return str(self.strerror)


def check_replaceable(path: str | os.PathLike) -> None:
    """Raise :class:`NotRegularFileError` unless ``path`` is absent or a regular file (links not followed)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise NotRegularFileError(Path(path), file_kind(mode))


@contextmanager
def disk_full_named(path: str | os.PathLike) -> Iterator[None]:
    """Turn an ENOSPC / EDQUOT / EIO raised inside into a :class:`DiskFullError` naming ``path``."""
    try:
        yield
    except DiskFullError:
        raise
    except OSError as e:
        if e.errno in DISK_FULL_ERRNOS:
            raise DiskFullError(path, e) from e
        raise


def atomic_save_with(path: str | os.PathLike, save_fn: Callable[[Path], Any]) -> None:
    """The atomic write (module docstring): ``save_fn(tmp_path)`` writes the complete file at ``tmp_path``.

    For writers that want a file name (``torch.save``, ``np.savez``); the temporary name
    keeps the final suffix because some writers append one.
    """
    path = Path(path)
    check_replaceable(path)
    tmp = path.with_name(f"{TMP_PREFIX}{os.getpid()}-{time.monotonic_ns()}-{path.name}")
    with disk_full_named(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            save_fn(tmp)
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            check_replaceable(path)  # it may have appeared while we wrote
            os.replace(tmp, path)
        except BaseException:
            unlink_quietly(tmp)
            raise
        fsync_folder(path.parent)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (module docstring)."""

    def write(tmp: Path) -> None:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()

    atomic_save_with(path, write)


def atomic_write_many(files: dict[str, bytes]) -> None:
    """Write several files atomically at once: all temporary files written and fsync'd together
    (:func:`fsync_together`), renamed, then their folders fsync'd together (a batch of n files
    costs about one fsync, not n).

    The folders must exist. All or nothing: if this raises, no temporary file is left and the files
    already renamed into place are removed again.
    """
    written: list[tuple[str, str]] = []  # (temporary name, final name)
    renamed: list[str] = []
    try:
        descriptors: list[tuple[int, str]] = []
        try:
            for path, data in files.items():
                check_replaceable(path)
                folder, name = os.path.split(path)
                tmp = os.path.join(folder, f"{TMP_PREFIX}{os.getpid()}-{time.monotonic_ns()}-{name}")
                with disk_full_named(path):
                    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
                    descriptors.append((fd, path))
                    written.append((tmp, path))
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view):]
            fsync_together(descriptors)
        finally:
            for fd, _ in descriptors:
                os.close(fd)
        while written:
            tmp, path = written[0]
            check_replaceable(path)  # it may have appeared while we wrote
            os.replace(tmp, path)
            renamed.append(path)
            written.pop(0)
    except BaseException:
        for path in renamed:
            unlink_quietly(path)
        raise
    finally:
        for tmp, _ in written:  # after an error: the files not renamed
            unlink_quietly(tmp)
    folders = [(opened, folder) for folder in {os.path.dirname(path) for path in files}
               if (opened := _open_folder(folder)) is not None]
    try:
        fsync_together(folders, folders=True)
    finally:
        for fd, _ in folders:
            os.close(fd)


_sync_pool: ThreadPoolExecutor | None = None
SYNC_THREADS = 16


def fsync_together(items: Sequence[tuple[int, str | os.PathLike]], folders: bool = False) -> None:
    """fsync the open descriptors of ``(descriptor, path)`` at once, from a pool of threads: the file
    system puts fsyncs that wait together into one journal commit (ext4's jbd2 does), where one by
    one each pays a commit. ``path`` names the file in a :class:`DiskFullError`; with ``folders``
    an error is ignored (some file systems cannot fsync a folder; renames are atomic anyway)."""
    global _sync_pool

    def sync(item: tuple[int, str | os.PathLike]) -> None:
        fd, path = item
        try:
            with disk_full_named(path):
                os.fsync(fd)
        except OSError:
            if not folders:
                raise

    if len(items) <= 1:
        for item in items:
            sync(item)
        return
    if _sync_pool is None:
        _sync_pool = ThreadPoolExecutor(SYNC_THREADS, thread_name_prefix="fsync")
    list(_sync_pool.map(sync, items))


def _open_folder(folder: str | os.PathLike) -> int | None:
    try:
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None  # some file systems will not open a folder


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


def fsync_folder(folder: str | os.PathLike) -> None:
    """Make a rename in ``folder`` survive a power cut (the folder's entry list is data too)."""
    fd = _open_folder(folder)
    if fd is None:
        return  # the rename itself is still atomic
    try:
        fsync_together([(fd, folder)], folders=True)
    finally:
        os.close(fd)


def read_json(path: str | os.PathLike, default: Any = None, max_bytes: int | None = None) -> Any:
    """Parse a JSON file; ``default`` if it does not exist; ValueError naming a corrupt one.

    Read with :func:`read_regular_file` (no pipes or devices, at most ``max_bytes``, by default
    :data:`MAX_JSON_BYTES`).
    """
    path = Path(path)
    if not os.path.lexists(path):
        return default
    data = read_regular_file(path, MAX_JSON_BYTES if max_bytes is None else max_bytes, "JSON file")
    try:
        return json.loads(data.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"corrupt JSON file {path}: {e}") from e


def append_jsonl(path: str | os.PathLike, obj: dict) -> None:
    """Append one JSON line. A failed append is cut back off; a crash's torn line is skipped on reading."""
    path = Path(path)
    line = (json.dumps(obj, sort_keys=True) + "\n").encode("utf-8")
    with disk_full_named(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
        try:
            size = os.fstat(fd).st_size
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(fd, view):]
            except OSError:
                os.ftruncate(fd, size)  # leave no half line for the next append to be glued onto
                raise
        finally:
            os.close(fd)


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    """All complete JSON lines of a log; a torn last line (crash mid-append) is dropped."""
    path = Path(path)
    if not os.path.lexists(path):
        return []
    rows = []
    text = read_regular_file(path, MAX_JSONL_BYTES, "JSON log").decode("utf-8", "replace")
    for line in text.splitlines():
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


def file_kind(mode: int) -> str:
    kinds = [(stat.S_ISLNK, "symbolic link"), (stat.S_ISDIR, "folder"), (stat.S_ISCHR, "character device"),
             (stat.S_ISBLK, "block device"), (stat.S_ISFIFO, "named pipe"), (stat.S_ISSOCK, "socket")]
    return next((name for test, name in kinds if test(mode)), "special file")


class TooLargeError(ValueError):
    """An input is larger than zero9 reads: the message names the file and the limit."""


def read_regular_file(path: str | os.PathLike, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of ``path``, refusing what is not a regular file or holds more than ``max_bytes``.

    Opened with O_NONBLOCK so a named pipe never blocks the caller, and checked with fstat on the
    opened descriptor (no race with a rename); reads at most ``max_bytes + 1`` bytes, so a device
    like /dev/zero costs nothing. Raises ValueError naming the file: NotRegularFileError's kind, or
    TooLargeError with the limit.
    """
    with open_regular_file(path, max_bytes, what) as handle:
        data = read_at_most(handle, max_bytes + 1)
    if len(data) > max_bytes:  # it grew since fstat
        raise TooLargeError(f"{what} {Path(path)} is larger than the {max_bytes:,} bytes zero9 reads")
    return data


@contextmanager
def open_regular_file(path: str | os.PathLike, max_bytes: int, what: str = "file") -> Iterator[BinaryIO]:
    """``path`` opened for reading (binary), refused unless it is a regular file of at most ``max_bytes``.

    The checks of :func:`read_regular_file`, for readers that stream (``torch.load``, a line reader):
    O_NONBLOCK at open (a pipe cannot block), fstat on the descriptor, the size from fstat.
    """
    path = Path(path).expanduser()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ValueError(f"cannot read {what} {path}: {e.strerror or e}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise ValueError(f"{what} {path} is a {file_kind(info.st_mode)}, not a regular file")
    if info.st_size > max_bytes:
        os.close(fd)
        raise TooLargeError(f"{what} {path} is larger than the {max_bytes:,} bytes zero9 reads")
    with os.fdopen(fd, "rb") as handle:
        yield handle


def check_regular_file(path: str | os.PathLike, max_bytes: int, what: str = "file") -> Path:
    """``path``, if :func:`open_regular_file` would open it: for a command that names a bad path
    argument (missing, a pipe, a device, too large) in one line before it starts its work."""
    with open_regular_file(path, max_bytes, what):
        return Path(path).expanduser()


def read_at_most(stream: BinaryIO, limit: int, piece: int = 1 << 20) -> bytes:
    """Up to ``limit`` bytes of ``stream``, read a MB at a time (``read(limit)`` would allocate the
    whole limit at once, however short the stream)."""
    parts: list[bytes] = []
    total = 0
    while total < limit:
        part = stream.read(min(piece, limit - total))
        if not part:
            break
        parts.append(part)
        total += len(part)
    return b"".join(parts)


def gunzip_limited(data: bytes, max_bytes: int, what: str = "gzip data") -> bytes:
    """``data`` decompressed if it is gzip (else as it is), refusing more than ``max_bytes`` out."""
    if data[:2] != GZIP_MAGIC:
        if len(data) > max_bytes:
            raise TooLargeError(f"{what} is larger than the {max_bytes:,} bytes zero9 reads")
        return data
    decompressor = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = decompressor.decompress(data, max_bytes + 1)
    except zlib.error as e:
        raise ValueError(f"{what} is not valid gzip: {e}") from None
    if len(out) > max_bytes:
        raise TooLargeError(f"{what} unpacks to more than the {max_bytes:,} bytes zero9 reads")
    return out


# --- text files that may be gzip'd (Leela Zero weights and chunks) ---------------------------


def read_text_file(path: str | os.PathLike, max_file_bytes: int, max_text_bytes: int, what: str) -> str:
    """The ASCII text of ``path``, gunzipped when it starts with gzip's magic, read whole.

    The file itself (a regular file, at most ``max_file_bytes``) and its text (at most
    ``max_text_bytes``, counted while unpacking, so a gzip bomb costs only the cap) are bounded;
    every refusal is a ValueError naming the file (``what`` says what kind: ``'training chunk'``).
    """
    path = Path(path)
    with _opened_text(path, max_file_bytes, what) as stream, _gzip_errors(path, what):
        raw = read_at_most(stream, max_text_bytes + 1)
    if len(raw) > max_text_bytes:
        raise TooLargeError(f"{what} {path} holds more than the {max_text_bytes:,} bytes of text zero9 reads")
    return _ascii(raw, path, what, 0)


def read_text_lines(path: str | os.PathLike, max_file_bytes: int, max_text_bytes: int,
                    max_line_bytes: int, what: str) -> Iterator[str]:
    """The ASCII lines of ``path`` (gunzipped when gzip'd), streamed, without their line ends.

    Bounded like :func:`read_text_file`, and besides no line may exceed ``max_line_bytes``: a line
    is read with that cap, so one endless line costs ``max_line_bytes`` of memory, not the file.
    """
    path = Path(path)
    with _opened_text(path, max_file_bytes, what) as stream:
        total = 0
        lineno = 0
        while True:
            with _gzip_errors(path, what):
                line = stream.readline(max_line_bytes + 1)
            if not line:
                return
            lineno += 1
            total += len(line)
            if total > max_text_bytes:
                raise TooLargeError(f"{what} {path} holds more than the {max_text_bytes:,} bytes of text "
                                    f"zero9 reads")
            body = line[:-1] if line.endswith(b"\n") else line
            if len(body) > max_line_bytes:
                raise TooLargeError(f"{what} {path}, line {lineno}: longer than the {max_line_bytes:,} "
                                    f"bytes a line may hold")
            yield _ascii(body, path, what, total - len(line))


@contextmanager
def _opened_text(path: Path, max_file_bytes: int, what: str) -> Iterator[BinaryIO]:
    with open_regular_file(path, max_file_bytes, what) as handle:
        gzipped = handle.read(2) == GZIP_MAGIC
        handle.seek(0)
        if not gzipped:
            yield handle
            return
        with gzip.GzipFile(fileobj=handle, mode="rb") as stream:
            yield cast(BinaryIO, stream)  # a binary stream like any other to the readers


@contextmanager
def _gzip_errors(path: Path, what: str) -> Iterator[None]:
    try:
        yield
    except (OSError, EOFError, zlib.error) as e:  # BadGzipFile is an OSError
        raise ValueError(f"{what} {path}: corrupt gzip data ({e})") from None


def _ascii(raw: bytes, path: Path, what: str, offset: int) -> str:
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError as e:
        raise ValueError(f"{what} {path}: not a text file (byte {offset + e.start} is not ASCII)") from None
