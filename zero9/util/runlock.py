"""One owner per run directory: an OS file lock held for the life of the process.

Vocabulary:

- **run lock**: an exclusive ``fcntl.flock`` on ``RUN_DIR/.zero9-lock``, taken by
  every command that writes a run directory (``autotrain``, ``train``, ``selfplay``,
  the Ray pool's and the server's owner). The kernel drops the lock when its
  holder's last file descriptor closes, on any death, ``kill -9`` included, so a
  stale lock never blocks: the lock file may stay on disk, but no one holds it.
- **holder**: the lock file's content, rewritten by whoever takes the lock: one
  JSON line with ``pid``, ``host``, ``command`` and ``since`` (Unix time). A second
  process that finds the lock taken reads it to name who holds it, and exits at
  once (:class:`RunDirBusy`).
- **lock file**: opened without following a symlink and without blocking on a named
  pipe; anything but a regular file at ``.zero9-lock`` is refused with
  :class:`LockFileError` naming it, so the holder line is never written elsewhere.

Use::

    with RunLock(run_dir):           # or: lock = RunLock(run_dir).acquire() ... lock.release()
        ...write the run...

A lock is per process: child processes (self-play workers) do not inherit it, and
one process takes a run's lock once.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import stat
import sys
import time
from pathlib import Path

from zero9.util.files import file_kind

LOCK_NAME = ".zero9-lock"
PROBE_RETRIES, PROBE_WAIT_S = 5, 0.02  # lock_holder() holds a shared lock for microseconds


class RunDirBusy(OSError):
    """Another process holds the run directory's lock; the message names its PID and host."""

    def __init__(self, root: Path, holder: dict):
        pid, host = holder.get("pid", "?"), holder.get("host", "?")
        command = f" ({holder['command']})" if holder.get("command") else ""
        since = f" since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(holder['since']))}" \
            if isinstance(holder.get("since"), (int, float)) else ""
        super().__init__(f"run directory {root} is in use by PID {pid} on host {host}{command}{since}; "
                         f"stop that process first (one process writes a run at a time)")
        self.root, self.holder = root, holder


class RunLock:
    """The run lock of ``root`` (module docstring): ``acquire()`` or ``with RunLock(root):``."""

    def __init__(self, root: str | os.PathLike, command: str | None = None):
        self.root = Path(root)
        self.path = self.root / LOCK_NAME
        self.command = command if command is not None else _command_line()
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> RunLock:
        """Take the lock now or raise :class:`RunDirBusy` naming its holder; never waits."""
        if self._fd is not None:
            return self
        self.root.mkdir(parents=True, exist_ok=True)
        fd = _open_lock_file(self.path, os.O_RDWR | os.O_CREAT)
        try:
            taken = _try_lock(fd)
        except BaseException:
            os.close(fd)
            raise
        if not taken:
            holder = _read_holder(fd)
            os.close(fd)
            raise RunDirBusy(self.root, holder)
        self._fd = fd
        self._write_holder()
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        os.close(fd)  # closing drops the flock; the file stays for the next holder to rewrite

    def _write_holder(self) -> None:
        assert self._fd is not None, "the holder is written only while the lock is held"
        line = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "command": self.command,
                           "since": time.time()}, sort_keys=True) + "\n"
        try:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, line.encode("utf-8"), 0)
        except OSError:
            pass  # a full disk must not stop the owner: the lock itself is the flock, not this text

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def lock_holder(root: str | os.PathLike) -> dict | None:
    """Who holds ``root``'s lock now (its holder dict), or None when it is free."""
    path = Path(root) / LOCK_NAME
    try:
        fd = _open_lock_file(path, os.O_RDONLY)
    except (FileNotFoundError, LockFileError):
        return None  # no holder to name: acquire() says what is wrong with the file
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(fd)
        return None
    finally:
        os.close(fd)


class LockFileError(OSError):
    """The lock file is a symlink, pipe, device or folder: zero9 locks only a regular file of its own."""

    def __init__(self, path: Path, kind: str):
        super().__init__(errno.EEXIST, f"lock file {path} is a {kind}, not a regular file; zero9 neither "
                                       f"follows nor waits on it (remove it and rerun)")
        self.path = path

    def __str__(self) -> str:
        return str(self.strerror)


def _open_lock_file(path: Path, flags: int) -> int:
    """Open the lock file without following a symlink (O_NOFOLLOW) or blocking on a pipe (O_NONBLOCK).

    A symlink at the name would have the holder line written into its target; a named pipe would
    block the open forever. fstat on the descriptor then refuses anything but a regular file.
    """
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):  # a symlink; a folder; a pipe no one reads
            raise LockFileError(path, _kind(path)) from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise LockFileError(path, _kind(path))
    return fd


def _kind(path: Path) -> str:
    try:
        return file_kind(os.lstat(path).st_mode)
    except OSError:
        return "special file"


def _command_line() -> str:
    """This process's command in a few words: ``zero9 autotrain`` for ``python -m zero9 autotrain ...``."""
    program = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path("python")
    name = program.parent.name if program.name == "__main__.py" else program.name
    return " ".join([name, *sys.argv[1:2]])


def _try_lock(fd: int) -> bool:
    """Take the exclusive lock without waiting; a few quick retries get past a :func:`lock_holder` probe."""
    for attempt in range(PROBE_RETRIES + 1):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if attempt < PROBE_RETRIES:
                time.sleep(PROBE_WAIT_S)
    return False


def _read_holder(fd: int) -> dict:
    try:
        holder = json.loads(os.pread(fd, 4096, 0).decode("utf-8", "replace") or "{}")
    except ValueError:
        holder = {}  # the holder is between truncating and writing its line
    return holder if isinstance(holder, dict) else {}
