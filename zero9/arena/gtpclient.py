"""Talk GTP to an external engine (GNU Go, Leela Zero, KataGo, another zero9) in a subprocess.

Vocabulary:

- **engine**: a program started from a command line that reads GTP commands on stdin and
  answers on stdout.
- **command**: one line of GTP text (``play b D4``, ``genmove w``); the client sends no ids.
- **reply**: ``= text`` (success) or ``? message`` (failure), ended by an empty line. ``send``
  returns the text of a success; a failure raises :class:`GTPError` with the message.
- An engine that exits, closes its output or does not answer within ``timeout`` seconds raises
  :class:`GTPEngineError` naming the engine (the engine is then stopped: its state is unknown).

    with GTPClient(gnugo_command(level=1)) as gnugo:
        gnugo.send("play b D4")
        move = gnugo.send("genmove w")
"""

from __future__ import annotations

import collections
import os
import queue
import shlex
import shutil
import subprocess
import threading

GNUGO_PATHS = ("/usr/games/gnugo", "/usr/bin/gnugo", "/usr/local/bin/gnugo")
PACHI_ENV = "ZERO9_PACHI"  # names the Pachi binary when it is not on PATH


class GTPError(RuntimeError):
    """The engine answered a command with a failure (``? message``)."""

    def __init__(self, engine: str, command: str, message: str):
        super().__init__(f"{engine}: {command!r} failed: {message}")
        self.engine, self.command, self.message = engine, command, message


class GTPEngineError(RuntimeError):
    """The engine could not be started, died, or did not answer in time."""


def find_gnugo() -> str | None:
    """Path of the GNU Go binary, or None if it is not installed."""
    found = shutil.which("gnugo")
    if found:
        return found
    return next((p for p in GNUGO_PATHS if os.access(p, os.X_OK)), None)


def gnugo_command(level: int = 10, size: int = 9, komi: float = 7.5) -> list[str]:
    """GNU Go's GTP command line with area scoring and positional superko, as zero9 plays.

    ``--capture-all-dead``: GNU Go otherwise passes with dead stones left on the board (fine
    under Japanese scoring), and Tromp-Taylor, which zero9 scores by, would count them alive.
    """
    path = find_gnugo() or GNUGO_PATHS[0]
    return [path, "--mode", "gtp", "--level", str(int(level)), "--chinese-rules", "--positional-superko",
            "--capture-all-dead", "--boardsize", str(int(size)), "--komi", str(float(komi))]


def find_pachi(path: str | None = None) -> str | None:
    """Path of the Pachi binary: ``path`` if given, else ``$ZERO9_PACHI``, else ``pachi`` on PATH.

    None when the one asked for is not an executable file (an explicit ``path`` is not
    silently replaced by another Pachi).
    """
    wanted = path or os.environ.get(PACHI_ENV) or "pachi"
    return shutil.which(wanted)


def pachi_command(path: str, playouts: int) -> list[str]:
    """Pachi's GTP command line: ``playouts`` simulations per move, one thread, Chinese rules.

    ``pass_all_alive``: Pachi otherwise passes with dead stones still on the board, as
    territory scoring allows; this way every genmove is a ``kgs-genmove_cleanup`` and the
    Tromp-Taylor count that zero9 scores by sees no dead stones. ``-t =N`` fixes the playouts
    and makes Pachi ignore GTP time settings. Komi comes later, from GTP ``komi``.
    """
    return [path, "-r", "chinese", "-t", f"={int(playouts)}", "threads=1,pass_all_alive"]


class GTPClient:
    """A running GTP engine. ``send`` one command at a time; ``close`` (or a ``with`` block) ends it."""

    def __init__(self, command: list[str] | str, timeout: float | None = 60.0, name: str | None = None,
                 cwd: str | None = None):
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise ValueError("empty engine command")
        self.name = name or os.path.basename(self.argv[0])
        self.timeout = timeout
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, bufsize=1, cwd=cwd)
        except OSError as e:
            raise GTPEngineError(f"cannot start engine {self.name} ({shlex.join(self.argv)}): {e}") from e
        # Reader threads: the main thread can then wait on a queue with a timeout.
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)
        for stream, put, end in ((self.proc.stdout, self._lines.put, True),
                                 (self.proc.stderr, self._stderr.append, False)):
            threading.Thread(target=self._pump, args=(stream, put, end), daemon=True).start()

    @staticmethod
    def _pump(stream, put, end: bool) -> None:
        try:
            for line in stream:
                put(line.rstrip("\r\n"))
        except (OSError, ValueError):  # closed under us by close()
            pass
        if end:
            put(None)  # end of output

    def _died(self, what: str, wait: float = 1.0) -> GTPEngineError:
        try:  # an engine that closed its output is usually exiting: give it a moment, for its code
            rc = self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            rc = None
        tail = " | ".join(self._stderr)
        if rc is None:  # hung or confused: its state is unknown, so do not wait for it to quit
            self.proc.kill()
        self.close()
        status = f"exited with code {rc}" if rc is not None else "stopped by zero9"
        return GTPEngineError(f"engine {self.name} {what} ({status}){': ' + tail if tail else ''}")

    def _readline(self, command: str) -> str:
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            raise self._died(f"did not answer {command!r} within {self.timeout} s", wait=0) from None
        if line is None:
            raise self._died(f"closed its output while answering {command!r}")
        return line

    def send(self, command: str) -> str:
        """Send one command; return the reply text (lines joined by newlines). Raises GTPError on '?'."""
        command = command.strip()
        if not command or "\n" in command:
            raise ValueError(f"bad GTP command {command!r}: expected one non-empty line")
        if self.proc.poll() is not None or self.proc.stdin is None or self.proc.stdin.closed:
            raise self._died(f"is not running (command {command!r})")
        try:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died(f"stopped reading commands ({command!r})") from None
        line = self._readline(command)
        while not line.strip():  # tolerate stray blank lines before a reply
            line = self._readline(command)
        if line[0] not in "=?":
            raise self._died(f"sent {line!r}, not a GTP reply, to {command!r}")
        failed = line[0] == "?"
        lines = [line[1:].strip()]
        while True:
            line = self._readline(command)
            if not line.strip():
                break
            lines.append(line)
        text = "\n".join(lines).strip("\n").rstrip()
        if failed:
            raise GTPError(self.name, command, text)
        return text

    def close(self) -> None:
        """Ask the engine to quit, and make sure it has stopped."""
        proc = self.proc
        if proc.poll() is None:
            try:
                if proc.stdin and not proc.stdin.closed:
                    proc.stdin.write("quit\n")
                    proc.stdin.flush()
                    proc.stdin.close()
                proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired, ValueError):
                proc.kill()
                proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass

    def __enter__(self) -> GTPClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        proc = getattr(self, "proc", None)
        if proc is not None and proc.poll() is None:
            proc.kill()
