"""The HTTP edge: what a connection may cost the server before the app sees a request.

uvicorn answers requests, but it waits forever for a request's headers and accepts every
connection, so a few hundred sockets that send their headers a byte a minute (slowloris) hold
the server's file descriptors and keep every real client out. This module closes them:

- **header deadline**: a request's headers must all arrive within ``header_seconds`` of its first
  byte (of the connection's opening, for the first request); then the connection is closed.
  (The body's deadline is the app's: :func:`zero9.distributed.web.read_form`.)
- **connection caps**: at most ``max_connections`` open connections per server process, and at
  most ``connections_per_address`` from one address; a connection over a cap is closed at once.
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
from collections import Counter

from uvicorn.protocols.http.h11_impl import H11Protocol

from zero9.distributed.config import Edge

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # httptools is optional: uvicorn's pure-Python h11 parser serves then
    HttpToolsProtocol = None

log = logging.getLogger("zero9.server")

EDGE_ENV = "ZERO9_SERVER_EDGE"
QUIET_SECONDS = 10.0


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


class GuardedConnection:
    """The header deadline and the connection caps, over either of uvicorn's HTTP protocols."""

    per_address: Counter[str] = Counter()  # open connections by address, in this process

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        edge = edge_settings()
        self._address = self.client[0] if self.client else "unknown"
        self._header_timer, self._timed_cycle = None, None
        self.per_address[self._address] += 1
        if len(self.connections) > edge.max_connections:
            NOTICES.event("connection refused", f"{len(self.connections) - 1} connections are open, the cap "
                          f"is {edge.max_connections} (from {self._address})")
            transport.close()
        elif edge.connections_per_address and self.per_address[self._address] > edge.connections_per_address:
            NOTICES.event("connection refused", f"{self._address} has {edge.connections_per_address} "
                          "connections open, the cap per address")
            transport.close()
        else:
            self._start_header_timer()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and (self.cycle is None or self.cycle.response_complete):
            self._start_header_timer()  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)
        if self._header_timer is not None and self.cycle is not self._timed_cycle:
            self._header_timer.cancel()  # its headers are complete
            self._header_timer = None

    def connection_lost(self, exc) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        self.per_address[self._address] -= 1
        if self.per_address[self._address] <= 0:
            del self.per_address[self._address]
        super().connection_lost(exc)

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
