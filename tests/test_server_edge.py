"""Half-open connections cannot starve roster clients (issue 42). Real sockets on 127.0.0.1, bounded in
time: attackers from 30 addresses (a LAN) open connections and leave them waiting for headers,
reopening each one the server closes, while a roster client asks for tasks.

Reported on an older main: half-open connections from 20 to 40 source addresses, each address
under its own cap, filled the process's connection cap and kept honest clients out for as long
as they lasted.
"""

from __future__ import annotations

import socket
import threading
import time

import pytest

pytest.importorskip("fastapi", reason="the server extra: pip install '.[server]'")

from zero9.distributed.client import http  # noqa: E402
from zero9.distributed.local import LocalServer  # noqa: E402

pytestmark = [pytest.mark.timeout(300), pytest.mark.integration]
ADDRESSES, PER_ADDRESS, MAX_CONNECTIONS, MAX_HALF_OPEN = 30, 20, 200, 50
ARGS = ("--blocks", "1", "--filters", "8", "--visits", "2", "--rate-limit", "0", "--header-timeout", "60",
        "--max-connections", str(MAX_CONNECTIONS), "--max-half-open", str(MAX_HALF_OPEN),
        "--connections-per-address", str(PER_ADDRESS))
ATTACK_SECONDS = 12.0


class HalfOpenFlood:
    """``ADDRESSES`` x ``PER_ADDRESS`` connections that send half a request line and wait, each reopened
    as soon as the server closes it, until :meth:`stop` (or ``ATTACK_SECONDS``)."""

    def __init__(self, port: int):
        self.port, self.stop_at = port, time.monotonic() + ATTACK_SECONDS
        self.sockets: list[socket.socket | None] = [None] * (ADDRESSES * PER_ADDRESS)
        self.opened = self.closed_by_server = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _open(self, i: int) -> None:
        try:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=2,
                                         source_address=(f"127.0.2.{10 + i // PER_ADDRESS}", 0))
            s.sendall(b"GET /status.json HT")
            s.setblocking(False)
            self.sockets[i] = s
            self.opened += 1
        except OSError:
            self.sockets[i] = None

    def _run(self) -> None:
        while time.monotonic() < self.stop_at:
            for i, s in enumerate(self.sockets):
                if s is not None:
                    try:
                        if s.recv(1) != b"":
                            continue
                    except BlockingIOError:
                        continue  # still open and waiting
                    except OSError:
                        pass
                    s.close()
                    self.closed_by_server += 1
                self._open(i)
            time.sleep(0.05)

    def start(self) -> HalfOpenFlood:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stop_at = 0.0
        self.thread.join(30)
        for s in self.sockets:
            if s is not None:
                s.close()


def test_half_open_connections_from_a_lan_do_not_starve_roster_clients(tmp_path):
    with LocalServer(tmp_path / "run", *ARGS, log_through_pipe=True) as server:
        url = server.client_url("ann")
        credential_path = url.removeprefix(server.url)
        keep_alive = socket.create_connection(("127.0.0.1", server.port), timeout=10)  # before the flood
        request = f"GET {credential_path}/get-task/18 HTTP/1.1\r\nHost: x\r\n\r\n".encode()
        keep_alive.sendall(request)
        assert keep_alive.recv(4096).startswith(b"HTTP/1.1 200")
        flood = HalfOpenFlood(server.port).start()
        try:
            time.sleep(3.0)  # the flood holds every seat it can
            assert flood.opened >= MAX_CONNECTIONS, flood.opened
            answered = []
            for _ in range(10):  # a roster client's requests, each on a new connection
                start = time.monotonic()
                http(f"{url}/get-task/18")
                answered.append(time.monotonic() - start)
            # a credentialed connection kept alive through the flood is still served
            keep_alive.sendall(request)
            assert keep_alive.recv(4096).startswith(b"HTTP/1.1 200")
            assert flood.closed_by_server > 0
        finally:
            flood.stop()
            keep_alive.close()
        log = server.log.read_text(errors="replace")
    assert max(answered) < 3.0, answered
    assert "half-open" in log and "Traceback" not in log
    assert log.count("connection closed") + log.count("connection refused") <= 20  # quiet
