"""What ``zero9 server`` is configured with: protocol constants, size limits and task options.

Kept apart from the server itself so that ``zero9 server --help`` (:mod:`zero9.cli.server`) reads
the defaults without the web stack or the database driver (the ``server`` extra) installed.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

PROTOCOL_VERSION = 18  # autogtp v18 (Debian's leela-zero) speaks it; so does zero9 client
MINIMUM_LEELAZ_VERSION = "0.12"
SPRT_ELO0, SPRT_ELO1, SPRT_ALPHA, SPRT_BETA = 0.0, 35.0, 0.05, 0.05
HASH_HEX = frozenset("0123456789abcdef")
FILE_DIRS = ("networks", "chunks", "sgf", "matches")
TASK_MAX_AGE = 3 * 3600.0  # a task older than this is no longer accepted
STATE_SECONDS = 1.0  # get-task's cached view (best net, open match) is re-read at least this often
HANDED_OUT_MEMORY = 100_000  # tasks a process remembers having handed out (see Server._task_for)


@dataclass
class Limits:
    """Sizes (bytes) and rates the server enforces."""

    body: int = 4 << 20  # a whole request (a game upload)
    network_body: int = 128 << 20  # a whole network upload (only read after the API key matched)
    sgf: int = 1 << 20  # an SGF, inflated
    chunk: int = 16 << 20  # a training chunk, inflated
    network: int = 256 << 20  # a weights file, inflated
    requests_per_minute: float = 600.0  # per client address; 0: no limit
    client_games_per_hour: int = 1000  # self-play games one client may upload in an hour; 0: no quota
    min_moves: int = 20  # a shorter game (self-play or match) is refused
    sgf_nodes: int = 1000  # an SGF with more nodes is refused before it is parsed


@dataclass
class Gating:
    """How a candidate's match is played and decided (see :mod:`zero9.distributed.gating`)."""

    elo1: float = SPRT_ELO1  # SPRT's elo1 (elo0 is 0)
    match_games: int = 400  # games after which an undecided match fails
    match_in_flight: int = 20  # match tasks leased at once, all clients together
    lease_minutes: float = 20.0  # a match task not answered within this goes back to the pool
    tasks_per_client: int = 2  # match tasks one client may hold at once
    client_share: float = 0.5  # most of one match's games (played or leased) one client may have
    min_clients: int = 2  # roster clients whose games a decision must count
    suspicion_p: float = 1e-4  # a client's match record this improbable against the others' is held
    suspicion_games: int = 10  # ... tested once it, and the others together, have this many games


@dataclass
class Edge:
    """What the HTTP server allows a connection (see :mod:`zero9.distributed.edge`)."""

    header_seconds: float = 10.0  # a request's headers must arrive within this
    body_seconds: float = 60.0  # and its body within this
    max_connections: int = 2000  # open connections at once; more close a half-open one (as below)
    max_half_open: int = 256  # waiting for headers, no credential shown yet; more close the oldest of
    # the address holding the most (edge.HalfOpen)
    connections_per_address: int = 64  # from one address; 0: no limit per address
    forwarded_allow_ips: str | None = None  # proxies whose X-Forwarded-For is believed; None: none


# The most a task may ask of a client, per option: what a laptop plays. zero9 client refuses a task
# over them (zero9.distributed.client.checked_task): a task of 9,999,999 visits grew it to 4 GB.
TASK_OPTION_LIMITS = {"visits": 20_000, "playouts": 20_000, "resignation_percent": 100, "randomcnt": 1_000}

_WHOLE_NUMBER = re.compile(r"[0-9]{1,12}")


def option_problems(options: dict) -> list[str]:
    """What in a task's options a client does not play: every number a whole number within
    :data:`zero9.distributed.config.TASK_OPTION_LIMITS`, visits or playouts set, noise true or false."""
    problems = [f"{key} {str(options.get(key))[:12]!r} is not a whole number from 0 to {limit:,} (the most "
                f"a client plays)" for key, limit in TASK_OPTION_LIMITS.items()
                if not _whole_number_at_most(options.get(key, "0"), limit)]
    if not problems and not (int(options.get("visits") or 0) or int(options.get("playouts") or 0)):
        problems.append("neither visits nor playouts is set")
    if options.get("noise", "true") not in ("true", "false"):
        problems.append("noise is neither true nor false")
    return problems


def _whole_number_at_most(value, limit: int) -> bool:
    """``value`` is a string of digits (as a task's JSON carries every option) at most ``limit``."""
    return isinstance(value, str) and _WHOLE_NUMBER.fullmatch(value) is not None and int(value) <= limit


@dataclass
class TaskOptions:
    """What every self-play and match game is played with (``get-task``'s ``options``)."""

    visits: int = 100
    playouts: int = 0
    resign_pct: int = 5
    randomcnt: int = 30
    noise: bool = True

    def as_task(self) -> dict[str, str]:
        return {"visits": str(self.visits), "playouts": str(self.playouts),
                "resignation_percent": str(self.resign_pct), "randomcnt": str(self.randomcnt),
                "noise": "true" if self.noise else "false"}

    def match_task(self) -> dict[str, str]:
        """Gating games: no noise, no random opening moves (as Leela Zero's matches)."""
        return dict(self.as_task(), noise="false", randomcnt="0")


def options_hash(options: dict[str, str]) -> str:
    text = ",".join(f"{k}={options[k]}" for k in sorted(options))
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_hash(text: str) -> bool:
    return len(text) == 64 and set(text) <= HASH_HEX



SERVER_PACKAGES = ("fastapi", "uvicorn", "sqlalchemy", "multipart")  # the ``server`` extra's imports
SERVER_EXTRA_HINT = "pip install 'zero9[server]'"


def missing_server_packages() -> list[str]:
    """The packages of the ``server`` extra that cannot be imported here (empty when installed)."""
    missing = []
    for name in SERVER_PACKAGES:
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    return missing
