"""A server on this machine, as tests, benchmarks and the tutorial start one.

Vocabulary:

- **local server**: ``python3 -m zero9 server RUN_DIR --host 127.0.0.1 --port PORT ...`` in a
  child process of its own process group, so it can be stopped (or ``kill -9``'d) as a whole.
  It listens on 127.0.0.1 only.
- **ready**: ``GET /status.json`` answers 200.
- **client URL**: the server's address with a roster credential in it (``URL/c/CREDENTIAL``), as
  the teacher hands it out: :meth:`LocalServer.client_url` puts a client on the roster first.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from zero9.distributed.client import ServerError, http

READY_SECONDS = 120.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """``zero9 server`` in a child process (see the module docstring)."""

    def __init__(self, run_dir: str | Path, *args: str, port: int | None = None, log: Path | None = None,
                 env: dict[str, str] | None = None, log_through_pipe: bool = False):
        self.run_dir, self.args = Path(run_dir), list(args)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log or self.run_dir.with_name(self.run_dir.name + "-server.log")
        self.env = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}
        self.process: subprocess.Popen | None = None
        self.log_through_pipe = log_through_pipe  # this process writes the log: the server's own file
        # writes may fail (a test that fills its disk) while its log lines still arrive

    def start(self) -> LocalServer:
        command = [sys.executable, "-m", "zero9", "server", str(self.run_dir), "--host", "127.0.0.1",
                   "--port", str(self.port), *self.args]
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(command, stdout=subprocess.PIPE if self.log_through_pipe else out,
                                            stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        if self.log_through_pipe:
            threading.Thread(target=self._copy_log, args=(self.process.stdout,), daemon=True).start()
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"zero9 server exited with {self.process.returncode}: "
                                   f"{self.log.read_text()[-2000:]}")
            try:
                http(f"{self.url}/status.json")
                return self
            except ServerError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"zero9 server did not answer within {READY_SECONDS:.0f}s")

    def _copy_log(self, pipe) -> None:
        with open(self.log, "ab", buffering=0) as out:
            for line in pipe:
                out.write(line)

    def client_url(self, name: str) -> str:
        """Put ``name`` on the server's roster (as ``zero9 server RUN_DIR clients add NAME`` does) and
        return the URL that client uses."""
        from zero9.distributed.db import connect
        from zero9.distributed.roster import Roster

        url = self.args[self.args.index("--db") + 1] if "--db" in self.args else None
        engine = connect(url or f"sqlite:///{self.run_dir / 'server.db'}")
        try:
            return f"{self.url}/c/{Roster(engine).add(name)}"
        finally:
            engine.dispose()

    def status(self) -> dict:
        return json.loads(http(f"{self.url}/status.json"))

    def kill(self) -> None:
        """``kill -9`` the server's process group: no chance to clean up."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
