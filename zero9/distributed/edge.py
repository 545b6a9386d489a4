"""The HTTP edge: what a connection may cost the server before the app sees a request.

uvicorn answers requests, but it waits forever for a request's headers and accepts every
connection, so a few hundred sockets that send their headers a byte a minute (slowloris) hold
the server's file descriptors and keep every real client out. This module closes them:

- **header deadline**: a request's headers must all arrive within ``header_seconds`` of its first
  byte (of the connection's opening, for the first request); then the connection is closed.
  (The body's deadline is the app's: :func:`zero9.distributed.web.read_form`.)
- **half-open connection**: one that is waiting for a request's headers (just opened, or idle
  between requests) and has not yet sent a request with a valid roster credential. At most
  ``max_half_open`` per server process: one more closes one of them (:class:`HalfOpen`), so
  connections opened and left waiting (from 20 to 40 addresses of a LAN, each under its own cap)
  cannot hold every seat. The one closed is the oldest of the address holding the most, among
  addresses whose oldest has waited :data:`GRACE_SECONDS` (among all, when none has): a flood's
  reconnects do not close a client's fresh connection while its headers are on their way (the
  oldest overall was such a connection, under load, about 1 in 60 times), unless the flood
  comes from more addresses than the cap and renews every connection within the grace period.
- **credentialed connection**: one that has sent a request the app admitted with a valid
  credential (the app marks it, :data:`CREDENTIALED`); it is never closed to make room.
- **connection caps**: at most ``max_connections`` open connections per server process, and at
  most ``connections_per_address`` from one address; a connection over the address cap is closed
  at once, one over the process cap closes a half-open connection instead (as above; room kept
  for credentialed clients), or itself when no other connection is half-open.
- **proxy headers**: ``X-Forwarded-For`` is believed only from the addresses named in
  ``forwarded_allow_ips`` (none by default): otherwise any client could pick the address the
  rate limit counts.
- **quiet log**: each kind of event (a cap hit, a header deadline missed, a client that hung
  up) is logged as one line; a flood of them as one line per ten seconds with a count.

The settings reach uvicorn's worker processes through the environment (:data:`EDGE_ENV`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
import time
from collections import Counter, OrderedDict

from uvicorn.protocols.http.h11_impl import H11Protocol

from zero9.distributed.config import Edge

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # httptools is optional: uvicorn's pure-Python h11 parser serves then
    HttpToolsProtocol = None

log = logging.getLogger("zero9.server")

EDGE_ENV = "ZERO9_SERVER_EDGE"
CREDENTIALED = "zero9.credentialed"  # the app sets this in a request's scope when its credential is valid
QUIET_SECONDS = 10.0
# A half-open connection this new is closed to make room only when every other one is as new: an
# honest client's headers follow its connection within milliseconds, a second or so on a loaded server.
GRACE_SECONDS = 2.0


class QuietLog:
    """One log line per kind of event, then at most one per :data:`QUIET_SECONDS` with a count."""

    def __init__(self):
        self.pending: Counter[str] = Counter()
        self.last: dict[str, float] = {}
        self.lock = threading.Lock()

    def event(self, kind: str, detail: str, key: str | None = None) -> None:
        """Log ``kind: detail`` unless an event of the same ``key`` (default: ``kind``) was logged in
        the last :data:`QUIET_SECONDS`; then only count it, for the next line of that key."""
        key = key or kind
        now = time.monotonic()
        with self.lock:
            if now - self.last.get(key, -1e9) < QUIET_SECONDS:
                self.pending[key] += 1
                return
            self.last[key] = now
            more = self.pending.pop(key, 0)
            if len(self.last) > 10_000:  # many keys (many clients): forget the old ones
                self.last = {k: v for k, v in self.last.items() if now - v < QUIET_SECONDS}
        log.warning("%s: %s%s", kind, detail, f" (and {more} more in the last {QUIET_SECONDS:.0f} s)" if more
                    else "")


NOTICES = QuietLog()
_edge: Edge | None = None


def edge_settings() -> Edge:
    """This process's :class:`Edge` (from :data:`EDGE_ENV`, which :func:`run` sets)."""
    global _edge
    if _edge is None:
        _edge = Edge(**json.loads(os.environ.get(EDGE_ENV, "{}")))
    return _edge


class HalfOpen:
    """The half-open connections of one process, by address, each with the time it began to wait, and
    which one to close to make room (:meth:`victim`). Memory: one entry per half-open connection
    (capped by the caller); time: ``victim`` looks at each address's oldest once, ``add`` and
    ``discard`` are O(1)."""

    def __init__(self, grace: float = GRACE_SECONDS, clock=time.monotonic):
        self.by_address: dict[str, OrderedDict[object, float]] = {}  # each address's oldest first
        self.count = 0
        self.grace, self.clock = grace, clock

    def __len__(self) -> int:
        return self.count

    def add(self, connection, address: str) -> None:
        """Count ``connection`` half-open from now (from now again, if it was)."""
        self.discard(connection, address)
        self.by_address.setdefault(address, OrderedDict())[connection] = self.clock()
        self.count += 1

    def discard(self, connection, address: str) -> None:
        """``connection`` is no longer half-open (or never was)."""
        waiting = self.by_address.get(address)
        if waiting is not None and waiting.pop(connection, None) is not None:
            self.count -= 1
            if not waiting:
                del self.by_address[address]

    def victim(self, keep=None):
        """``(connection, address, its address's half-open count)`` to close to make room, never ``keep``:
        the oldest connection of the address holding the most half-open connections, among addresses
        whose oldest has waited ``grace`` seconds (among all, when none has); ties to the oldest. None
        when no connection but ``keep`` is half-open."""
        now, best, best_key = self.clock(), None, None
        for address, waiting in self.by_address.items():
            oldest_first = iter(waiting.items())
            connection, since = next(oldest_first)
            if connection is keep:
                if len(waiting) == 1:
                    continue
                connection, since = next(oldest_first)
            key = (now - since >= self.grace, len(waiting), now - since)
            if best_key is None or key > best_key:
                best, best_key = (connection, address, len(waiting)), key
        return best


class GuardedConnection:
    """The header deadline and the connection caps, over either of uvicorn's HTTP protocols."""

    per_address: Counter[str] = Counter()  # open connections by address, in this process
    half_open = HalfOpen()  # in this process

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        edge = edge_settings()
        self._address = self.client[0] if self.client else "unknown"
        self._header_timer, self._timed_cycle, self._credentialed = None, None, False
        self.per_address[self._address] += 1
        if edge.connections_per_address and self.per_address[self._address] > edge.connections_per_address:
            NOTICES.event("connection refused", f"{self._address} has {edge.connections_per_address} "
                          "connections open, the cap per address")
            transport.close()
            return
        if len(self.connections) > edge.max_connections and not self._close_a_half_open(
                f"{len(self.connections) - 1} connections are open, the cap is {edge.max_connections}"):
            NOTICES.event("connection refused", f"{len(self.connections) - 1} connections are open, the cap "
                          f"is {edge.max_connections}, none half-open (from {self._address})")
            transport.close()
            return
        self._wait_for_headers()
        self._start_header_timer()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and (self.cycle is None or self.cycle.response_complete):
            self._start_header_timer()  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)
        if self._header_timer is not None and self.cycle is not self._timed_cycle:
            self._header_timer.cancel()  # its headers are complete
            self._header_timer = None
            self.half_open.discard(self, self._address)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._credentialed = self._credentialed or bool(self.scope.get(CREDENTIALED))
        if not self.transport.is_closing() and not getattr(self, "pipeline", None):  # (h11 has none)
            self._wait_for_headers()  # idle until its next request

    def connection_lost(self, exc) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        self.half_open.discard(self, self._address)
        self.per_address[self._address] -= 1
        if self.per_address[self._address] <= 0:
            del self.per_address[self._address]
        super().connection_lost(exc)

    def _wait_for_headers(self) -> None:
        """Count this connection half-open (unless it showed a credential); over the cap, close one."""
        if self._credentialed:
            return
        self.half_open.add(self, self._address)
        cap = edge_settings().max_half_open
        if len(self.half_open) > cap:
            self._close_a_half_open(f"{len(self.half_open) - 1} connections are half-open, the cap is {cap}")

    def _close_a_half_open(self, why: str) -> bool:
        """Close :meth:`HalfOpen.victim` (never this connection); whether there was one."""
        victim = self.half_open.victim(keep=self)
        if victim is None:
            return False
        connection, address, count = victim
        self.half_open.discard(connection, address)
        NOTICES.event("connection closed", f"{why}: the oldest of the {count} from {address} closed to make "
                      "room")
        connection.transport.close()
        return True

    def _start_header_timer(self) -> None:
        self._timed_cycle = self.cycle
        self._header_timer = self.loop.call_later(edge_settings().header_seconds, self._headers_too_slow)

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            NOTICES.event("connection closed", f"{self._address} did not send a request's headers within "
                          f"{edge_settings().header_seconds:g} s")
            self.transport.close()


class GuardedH11Protocol(GuardedConnection, H11Protocol):
    pass


if HttpToolsProtocol is not None:
    class GuardedHttpToolsProtocol(GuardedConnection, HttpToolsProtocol):
        pass
    PROTOCOL = "zero9.distributed.edge:GuardedHttpToolsProtocol"
else:
    PROTOCOL = "zero9.distributed.edge:GuardedH11Protocol"


def configure(edge: Edge) -> None:
    """Make ``edge`` the settings of this process and of the worker processes it starts."""
    global _edge
    os.environ[EDGE_ENV] = json.dumps(dataclasses.asdict(edge))
    _edge = None


def run(app, host: str, port: int, workers: int = 1) -> None:
    """uvicorn with the edge's protocol and settings (:func:`configure`); ``app`` is the app, or (with
    several workers) the import string of an app factory."""
    import uvicorn

    trust = edge_settings().forwarded_allow_ips
    uvicorn.run(app, host=host, port=port, log_level="warning", http=PROTOCOL, factory=workers > 1,
                workers=workers if workers > 1 else None, proxy_headers=trust is not None,
                forwarded_allow_ips=trust or None, timeout_keep_alive=5)
