"""Half-open connections cannot starve roster clients (issue 42). Real sockets on 127.0.0.1, bounded in
time: attackers from 30 addresses (a LAN) open connections and leave them waiting for headers,
reopening each one the server closes, while a roster client asks for tasks. And, without sockets, which
half-open connection the guard closes (:class:`zero9.distributed.edge.HalfOpen`).

Reported on an older main: half-open connections from 20 to 40 source addresses, each address
under its own cap, filled the process's connection cap and kept honest clients out for as long
as they lasted. Then, closing the oldest half-open connection closed about 1 in 100 of a roster client's
fresh connections under load (the flood's reconnects outran its headers): now the address holding the
most loses its oldest, and a connection younger than the grace period goes last.
"""

from __future__ import annotations

import socket
import threading
import time

import pytest

pytest.importorskip("fastapi", reason="the server extra: pip install '.[server]'")

from zero9.distributed import edge  # noqa: E402
from zero9.distributed.client import http  # noqa: E402
from zero9.distributed.config import Edge  # noqa: E402
from zero9.distributed.local import LocalServer  # noqa: E402

pytestmark = pytest.mark.timeout(300)
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


def exchange(sock: socket.socket, request: bytes, limit: int = 1 << 16) -> bytes:
    """Send ``request`` on a kept-alive connection and read its whole answer (b"" if the server hung up).
    The server writes the headers and the body separately, so one ``recv`` may return only the headers,
    and the next request's ``recv`` the rest of this answer. Bounded: ``limit`` bytes, and the socket's
    timeout for each read."""
    sock.sendall(request)
    answer = b""
    while (b"\r\n\r\n" not in answer or len(answer) < _answer_length(answer)) and len(answer) < limit:
        more = sock.recv(4096)
        if not more:
            break
        answer += more
    return answer


def _answer_length(answer: bytes) -> int:
    """The length of the whole answer whose headers begin ``answer`` (by its Content-Length)."""
    head = answer.partition(b"\r\n\r\n")[0]
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    return len(head) + 4 + length


@pytest.mark.integration
def test_half_open_connections_from_a_lan_do_not_starve_roster_clients(tmp_path):
    with LocalServer(tmp_path / "run", *ARGS, log_through_pipe=True) as server:
        url = server.client_url("ann")
        credential_path = url.removeprefix(server.url)
        keep_alive = socket.create_connection(("127.0.0.1", server.port), timeout=10)  # before the flood
        request = f"GET {credential_path}/get-task/18 HTTP/1.1\r\nHost: x\r\n\r\n".encode()
        assert exchange(keep_alive, request).startswith(b"HTTP/1.1 200")
        flood = HalfOpenFlood(server.port).start()
        try:
            for _ in range(3):  # the flood holds every seat it can
                time.sleep(1.0)  # (uvicorn closes a connection idle for 5 s, credentialed or not)
                assert exchange(keep_alive, request).startswith(b"HTTP/1.1 200")
            assert flood.opened >= MAX_CONNECTIONS, flood.opened
            answered = []
            for _ in range(10):  # a roster client's requests, each on a new connection
                start = time.monotonic()
                http(f"{url}/get-task/18")
                answered.append(time.monotonic() - start)
                # a credentialed connection kept alive through the flood is still served
                assert exchange(keep_alive, request).startswith(b"HTTP/1.1 200")
            assert flood.closed_by_server > 0
        finally:
            flood.stop()
            keep_alive.close()
        log = server.log.read_text(errors="replace")
    assert max(answered) < 3.0, answered
    assert "half-open" in log and "Traceback" not in log
    assert log.count("connection closed") + log.count("connection refused") <= 20  # quiet


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeTransport:
    def __init__(self):
        self.closed = False

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


class FakeLoop:
    def call_later(self, seconds, callback):
        return threading.Timer(seconds, callback)  # never started: cancel() is all the guard asks of it


class FakeProtocol:
    """What :class:`zero9.distributed.edge.GuardedConnection` asks of uvicorn's protocol, without a socket: a
    request's headers are complete when ``\\r\\n\\r\\n`` arrives."""

    connections: set = set()

    def __init__(self, address: str):
        self.client, self.cycle, self.loop, self.received = (address, 40000), None, FakeLoop(), b""

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.connections.add(self)

    def data_received(self, data: bytes) -> None:
        self.received += data
        if b"\r\n\r\n" in self.received:
            self.cycle = object()

    def connection_lost(self, exc) -> None:
        self.connections.discard(self)


class Guarded(edge.GuardedConnection, FakeProtocol):
    pass


@pytest.fixture
def guard(monkeypatch):
    """A fresh guard (cap 50 half-open, 200 open, 20 an address) on a fake clock; yields the clock."""
    clock = FakeClock()
    monkeypatch.setenv(edge.EDGE_ENV, '{"max_half_open": 50, "max_connections": 200, '
                                      '"connections_per_address": 20}')
    monkeypatch.setattr(edge, "_edge", None)
    monkeypatch.setattr(edge.GuardedConnection, "half_open", edge.HalfOpen(clock=clock))
    monkeypatch.setattr(edge.GuardedConnection, "per_address", edge.Counter())
    monkeypatch.setattr(FakeProtocol, "connections", set())
    yield clock
    monkeypatch.setattr(edge, "_edge", None)


def connect(address: str) -> Guarded:
    connection = Guarded(address)
    connection.connection_made(FakeTransport())
    return connection


def reap(connections: list[Guarded]) -> list[Guarded]:
    """The event loop's part: a closed transport's connection is lost; the rest stay."""
    for c in connections:
        if c.transport.closed:
            c.connection_lost(None)
    return [c for c in connections if not c.transport.closed]


def test_a_flood_s_reconnects_do_not_close_a_fresh_connection_waiting_for_its_headers(guard):
    assert edge.edge_settings() == Edge(max_half_open=50, max_connections=200, connections_per_address=20)
    flood = reap([connect(f"10.0.0.{i % 30}") for i in range(600)])
    assert len(edge.GuardedConnection.half_open) == len(flood) == 50
    roster = connect("10.0.1.1")  # its headers are on their way: meanwhile, the flood reconnects
    for i in range(1000):
        guard.now += 0.001
        flood = reap(flood + [connect(f"10.0.0.{i % 30}")])
        assert len(edge.GuardedConnection.half_open) <= 50
    assert not roster.transport.closed  # closing the oldest closed it after 50 reconnects
    roster.data_received(b"GET /get-task/18 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert roster not in edge.GuardedConnection.half_open.by_address.get("10.0.1.1", {})


def test_over_the_connection_cap_a_new_connection_closes_a_half_open_one_not_a_fresh_one(guard):
    edge.configure(Edge(max_half_open=1000, max_connections=60, connections_per_address=20))
    flood = reap([connect(f"10.0.0.{i % 30}") for i in range(60)])
    roster = connect("10.0.1.1")
    for i in range(200):
        flood = reap(flood + [connect(f"10.0.0.{i % 30}")])
        assert len(FakeProtocol.connections) <= 61
    assert not roster.transport.closed


def test_half_open_closes_the_oldest_of_the_address_holding_the_most():
    clock = FakeClock()
    half_open = edge.HalfOpen(grace=2.0, clock=clock)
    assert half_open.victim() is None
    for name, address in [("a1", "A"), ("b1", "B"), ("a2", "A"), ("c1", "C"), ("b2", "B"), ("b3", "B")]:
        half_open.add(name, address)
        clock.now += 0.1
    assert len(half_open) == 6
    assert half_open.victim() == ("b1", "B", 3)  # none has waited 2 s: B holds the most
    clock.now += 10
    assert half_open.victim() == ("b1", "B", 3)
    assert half_open.victim(keep="b1") == ("b2", "B", 3)
    half_open.discard("b1", "B")
    half_open.discard("b2", "B")
    assert half_open.victim() == ("a1", "A", 2)
    half_open.discard("a1", "A")
    assert half_open.victim() == ("a2", "A", 1)  # all hold one: the oldest
    half_open.add("a2", "A")  # idle again after a request: waits from now
    assert half_open.victim() == ("c1", "C", 1)
    half_open.add("d1", "D")
    assert half_open.victim(keep="d1") == ("c1", "C", 1)
    half_open.discard("nobody", "A")
    half_open.discard("nobody", "Z")
    assert len(half_open) == 4


def test_half_open_closes_a_connection_in_its_grace_period_last():
    clock = FakeClock()
    half_open = edge.HalfOpen(grace=2.0, clock=clock)
    for i in range(50):  # a flood from as many addresses as the cap, one connection each, waiting
        half_open.add(f"old{i}", f"10.0.0.{i}")
    clock.now += 5
    half_open.add("roster1", "NAT")  # a classroom behind one address: fresh connections, headers coming
    half_open.add("roster2", "NAT")
    assert half_open.victim() == ("old0", "10.0.0.0", 1)
    for _ in range(50):
        victim = half_open.victim()
        assert victim[0].startswith("old")
        half_open.discard(victim[0], victim[1])
    assert half_open.victim() == ("roster1", "NAT", 2)  # none other left
