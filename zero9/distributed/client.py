"""``zero9 client URL``: zero9's autogtp. Ask for work, play it, upload it, repeat.

Vocabulary:

- **task**: the JSON ``get-task`` hands out (see :mod:`zero9.distributed.server`): a self-play
  game with one net, a match game between two nets, or a wait.
- **net cache** (``CACHE/networks/<hash>.gz``): nets downloaded once; a file is used only
  when the sha256 of the ``.gz`` is the task's ``hash_gzip_hash`` and the sha256 of its text is
  the ``hash`` (a damaged download is fetched again).
- **upload**: one finished game as the server wants it: the form fields and the gzip'd files.
  It is written to ``CACHE/pending/`` *before* it is sent and removed when the server answers
  200, so a server that is down, a rate limit or Ctrl-C never loses a finished game: pending
  uploads are sent first on every turn of the loop, with a growing wait between failed tries
  (autogtp's ``sendAllGames``). An upload the server refuses with a 4xx other than 429 cannot
  succeed later; it moves to ``CACHE/refused/`` with the server's reason, as does a pending file
  that is damaged (it is named, and the others are sent).
- **batch** (``-g N``): up to N self-play tasks for the same net are played at once by
  :func:`zero9.search.batched.play_games`, one net call serving every game's search.

- **distrust**: the server (or anyone between it and this client on plain HTTP) may be hostile.
  Every task is checked before anything is done with it (:func:`checked_task`): the command, each
  hash (64 hex digits), each seed (a positive number of at most 19 digits: it names files) and
  each option, within :data:`zero9.distributed.config.TASK_OPTION_LIMITS` (what a laptop plays);
  a net is downloaded within a size cap and inflated within a cap
  (:func:`zero9.util.files.gunzip_limited`); an answer that is not JSON, a bad hash, a task over
  the limits, a 5xx or a refused connection is reported in one line and retried with a growing
  wait (``--retries`` times in a row at most, then one clear line and exit 1).
- **whole-answer deadline**: every request, from connecting to its answer's last byte, ends
  within its time (:data:`HTTP_TIMEOUT`, :data:`NET_TIMEOUT` for a net, and never past
  ``--timeout``): a watchdog shuts the socket at the deadline, so a server that trickles a byte
  now and then cannot hold the client (a socket's own timeout counts only the gap between bytes).

Task options map onto zero9's self-play exactly: ``visits`` (or ``playouts`` when visits is
0), ``randomcnt`` (first moves in proportion to visits), ``noise`` (Dirichlet noise at the
root), ``resignation_percent`` (resign below that winrate; every game may resign, as the
server asks). Every move is a full, recorded search, as Leela Zero's self-play.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import json
import logging
import re
import socket
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from http import client as http_client
from pathlib import Path

import numpy as np
from tqdm import tqdm

from zero9.arena.match import play_game
from zero9.arena.players import make_player
from zero9.distributed.config import option_problems
from zero9.games import BLACK, WHITE, make_game
from zero9.games.sgf import moves_from_position, write_sgf
from zero9.learn.selfplay.lockstep import GameRecord, play_games
from zero9.learn.selfplay.records import record_chunk
from zero9.nn.checkpoint import game_from_meta, load_net
from zero9.nn.chunks import lz_chunk_text
from zero9.nn.net import resolve_device
from zero9.search.evaluator import NetEvaluator
from zero9.settings import SearchConfig, SelfPlayConfig
from zero9.util.files import (
    atomic_write_bytes,
    atomic_write_text,
    gunzip_limited,
    read_at_most,
    read_regular_file,
    unlink_quietly,
)

log = logging.getLogger(__name__)

CLIENT_VERSION = 18  # the autogtp protocol version this client speaks
HTTP_TIMEOUT = 60.0  # seconds for a whole request and its answer
NET_TIMEOUT = 600.0  # for a net's download (up to NET_GZ_MAX_BYTES)
BACKOFF_MIN, BACKOFF_MAX = 2.0, 300.0
RETRIES = 10  # failed tries in a row before the client gives up
COLOUR_NAMES = {BLACK: "black", WHITE: "white"}
ANSWER_MAX_BYTES = 16 << 20  # any answer but a net (a task, a status page)
NET_GZ_MAX_BYTES = 128 << 20  # a net's .gz as downloaded
NET_TEXT_MAX_BYTES = 256 << 20  # and inflated (the server's own limit)
HASH = re.compile(r"[0-9a-f]{64}")
SEED = re.compile(r"[1-9][0-9]{0,18}")  # it names files: digits only
OPTIONS_HASH = re.compile(r"[0-9A-Za-z]{1,16}")
UPLOAD_MAX_BYTES = 64 << 20  # a pending upload on disk (a game's SGF and chunk, base64'd)


class ServerError(Exception):
    """The server could not be reached, answered 429 / 5xx, or sent what this client cannot trust: try
    again later."""


class Refused(ValueError):
    """The server refused an upload for good (a 4xx other than 429); ``reason`` is its answer."""


# --- HTTP -----------------------------------------------------------------------------------------


def multipart(fields: dict[str, str], files: dict[str, bytes]) -> tuple[bytes, str]:
    """A multipart/form-data body (what ``curl -F`` sends) and its content type."""
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
        parts.append(head.encode() + value.encode() + b"\r\n")
    for name, data in files.items():
        head = (f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{name}.gz"\r\n'
                "Content-Type: application/gzip\r\n\r\n")
        parts.append(head.encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def http(url: str, body: bytes | None = None, headers: dict[str, str] | None = None,
         timeout: float = HTTP_TIMEOUT, max_bytes: int = ANSWER_MAX_BYTES) -> bytes:
    """GET (or POST ``body``) ``url``, the answer at most ``max_bytes``, the whole exchange within
    ``timeout`` seconds (the module docstring's *whole-answer deadline*); ServerError to retry,
    Refused for a final 4xx."""
    timeout = max(timeout, 0.1)
    request = urllib.request.Request(url, data=body, headers=headers or {})
    watchdog = Watchdog(timeout)
    error_code = None  # an HTTP error's status
    opener = urllib.request.build_opener(_WatchedHTTPHandler(watchdog), _WatchedHTTPSHandler(watchdog))
    try:
        with watchdog:
            try:
                with opener.open(request, timeout=timeout) as response:
                    data = read_at_most(response, max_bytes + 1)
            except urllib.error.HTTPError as e:
                error_code, data = e.code, read_at_most(e, 2000)
    except (urllib.error.URLError, OSError, ValueError, http_client.HTTPException) as e:
        # ValueError: http.client's bad status line; HTTPException: an answer cut short
        if not watchdog.expired:
            raise ServerError(f"{_public(url)}: {getattr(e, 'reason', e)}") from None
    if watchdog.expired:  # the socket was shut mid-answer: what came is not the whole of it
        raise ServerError(f"{_public(url)}: no whole answer within {timeout:.0f} s (the server stalls "
                          f"or sends it a little at a time)")
    if error_code is not None:
        reason = data.decode("utf-8", "replace").strip()
        if error_code == 429 or error_code >= 500:
            raise ServerError(f"{_public(url)}: HTTP {error_code} {reason[:200]}")
        raise Refused(f"HTTP {error_code}: {reason[:500]}")
    if len(data) > max_bytes:
        raise ServerError(f"{_public(url)}: the answer is larger than {max_bytes:,} bytes")
    return data


class Watchdog:
    """Shuts every socket of one exchange at its deadline, whatever a read waits for (a context
    manager: the clock runs inside the ``with``; ``expired`` says whether it ran out)."""

    def __init__(self, seconds: float):
        self.expired = False
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        self.timer = threading.Timer(seconds, self.expire)
        self.timer.daemon = True

    def __enter__(self) -> Watchdog:
        self.timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self.timer.cancel()

    def watch(self, sock: socket.socket) -> socket.socket:
        with self.lock:
            self.sockets.append(sock)
            if self.expired:
                _shut(sock)
        return sock

    def expire(self) -> None:
        with self.lock:
            self.expired = True
            for sock in self.sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)  # a blocked read returns at once; the owner closes it
    except OSError:
        pass  # already closed, or (TLS) handed over to the socket wrapping it, which is watched too


class _Watched:
    """A connection whose sockets, the plain one and (HTTPS) the TLS one over it, its watchdog shuts."""

    def __init__(self, *args, watchdog: Watchdog, **kwargs):
        super().__init__(*args, **kwargs)
        self.watchdog = watchdog
        create = self._create_connection
        self._create_connection = lambda *a, **k: watchdog.watch(create(*a, **k))

    def connect(self) -> None:
        super().connect()
        self.watchdog.watch(self.sock)


class _WatchedHTTPConnection(_Watched, http_client.HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, http_client.HTTPSConnection):
    pass


class _WatchedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, watchdog: Watchdog):
        super().__init__()
        self.watchdog = watchdog

    def http_open(self, req):
        return self.do_open(functools.partial(_WatchedHTTPConnection, watchdog=self.watchdog), req)


class _WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, watchdog: Watchdog):
        super().__init__()
        self.watchdog = watchdog

    def https_open(self, req):
        return self.do_open(functools.partial(_WatchedHTTPSConnection, watchdog=self.watchdog), req,
                            context=self._context)


def time_left(deadline: float | None, limit: float = HTTP_TIMEOUT) -> float:
    """Seconds from now to ``deadline`` (a ``time.monotonic()``; None: no deadline), at most ``limit``."""
    return limit if deadline is None else min(limit, deadline - time.monotonic())


def _public(url: str) -> str:
    """``url`` without a credential (``/c/CREDENTIAL/``), fit for messages and logs."""
    return re.sub(r"/c/[^/]+", "/c/…", url)


# --- what the server sends ------------------------------------------------------------------------


def checked_task(data: bytes) -> dict:
    """The task in a ``get-task`` answer, every value this client uses checked; ServerError if not."""
    try:
        task = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise ServerError(f"the server's task is not JSON: {data[:60]!r}") from None
    if not isinstance(task, dict) or not all(isinstance(v, (str, dict)) for v in task.values()):
        raise ServerError("the server's task is not a JSON object of strings")
    cmd = task.get("cmd")
    needed = {"wait": ("minutes",), "selfplay": ("hash", "hash_gzip_hash"),
              "match": ("black_hash", "white_hash", "black_hash_gzip_hash", "white_hash_gzip_hash")}
    if cmd not in needed:
        raise ServerError(f"the server sent an unknown command {str(cmd)[:20]!r}")
    problems = [f"{k} is not a sha256" for k in needed[cmd]
                if k != "minutes" and not _fits(HASH, task.get(k))]
    if cmd == "wait":
        minutes = task.get("minutes") or "1"
        if not (isinstance(minutes, str) and minutes.isascii() and minutes.isdigit()
                and 0 < int(minutes) <= 60):
            problems.append("minutes is not 1 to 60")
    else:
        if not _fits(SEED, task.get("random_seed")):
            problems.append(f"random_seed {str(task.get('random_seed'))[:24]!r} is not a positive number")
        if not _fits(OPTIONS_HASH, task.get("options_hash")):
            problems.append("options_hash is not 1 to 16 letters and digits")
        options = task.get("options")
        problems += option_problems(options) if isinstance(options, dict) else ["options is not an object"]
    required = task.get("required_client_version", "0")
    if not (isinstance(required, str) and required.isascii() and required.isdigit() and len(required) < 6):
        problems.append("required_client_version is not a number")
    if problems:
        raise ServerError("the server's task is not one this client trusts: " + "; ".join(problems))
    return task


def _fits(pattern: re.Pattern, value) -> bool:
    return isinstance(value, str) and pattern.fullmatch(value) is not None


# --- nets -----------------------------------------------------------------------------------------


def fetch_network(base_url: str, cache: Path, net_hash: str, gzip_hash: str,
                  timeout: float = NET_TIMEOUT) -> Path:
    """The net's ``.gz`` in the cache, downloaded (within a size cap) when missing or damaged;
    ServerError if the hashes are not sha256 sums or the download does not match them."""
    if not (_fits(HASH, net_hash) and _fits(HASH, gzip_hash)):
        raise ServerError("a network hash from the server is not a sha256")  # it would name a file
    path = cache / "networks" / f"{net_hash}.gz"
    if path.is_file():
        try:
            if network_ok(read_regular_file(path, NET_GZ_MAX_BYTES, "the cached net"), net_hash, gzip_hash):
                return path
        except ValueError:
            pass  # damaged or replaced: download it again
    data = http(f"{base_url}/networks/{net_hash}.gz", timeout=timeout, max_bytes=NET_GZ_MAX_BYTES)
    if not network_ok(data, net_hash, gzip_hash):
        raise ServerError(f"network {net_hash[:8]} arrived with the wrong sha256 (damaged, or not that net)")
    atomic_write_bytes(path, data)
    return path


def network_ok(gz: bytes, net_hash: str, gzip_hash: str) -> bool:
    """Whether ``gz`` has sha256 ``gzip_hash`` and inflates (within a cap) to text of sha256 ``net_hash``."""
    if hashlib.sha256(gz).hexdigest() != gzip_hash:
        return False
    try:
        return hashlib.sha256(gunzip_limited(gz, NET_TEXT_MAX_BYTES, "the network")).hexdigest() == net_hash
    except ValueError:  # not gzip, or a gzip bomb
        return False


# --- uploads on disk ------------------------------------------------------------------------------


@dataclass
class Upload:
    """One finished game for ``endpoint`` (``submit`` or ``submit-match``)."""

    endpoint: str
    fields: dict[str, str]
    files: dict[str, bytes] = field(default_factory=dict)
    sgf: str = ""  # the plain SGF, for --keep-sgf

    def save(self, folder: Path) -> Path:
        seed = self.fields["random_seed"]
        if not _fits(SEED, seed):  # checked_task let no other seed in; a file name must stay a name
            raise ValueError(f"random_seed {seed[:24]!r} cannot name a file")
        path = folder / f"{time.time_ns():019d}-{seed}.json"
        atomic_write_text(path, json.dumps({
            "endpoint": self.endpoint, "fields": self.fields,
            "files": {k: base64.b64encode(v).decode() for k, v in self.files.items()}}))
        return path

    @staticmethod
    def load(path: Path) -> Upload:
        """The upload saved at ``path``; ValueError naming it if it is not one (damaged, or not ours)."""
        try:
            d = json.loads(read_regular_file(path, UPLOAD_MAX_BYTES, "pending upload"))
            return Upload(str(d["endpoint"]), dict(d["fields"]),
                          {k: base64.b64decode(v, validate=True) for k, v in d["files"].items()})
        except (ValueError, KeyError, TypeError, AttributeError) as e:  # binascii.Error is a ValueError
            raise ValueError(f"pending upload {path} is damaged: {e}") from None


class Outbox:
    """Pending uploads on disk, sent oldest first with backoff (see the module docstring)."""

    def __init__(self, base_url: str, cache: Path):
        self.base_url = base_url
        self.pending, self.refused = cache / "pending", cache / "refused"
        self.pending.mkdir(parents=True, exist_ok=True)
        self.backoff, self.next_try = BACKOFF_MIN, 0.0
        self.sent = 0
        self.failures = 0  # failed sends in a row
        self.deadline: float | None = None  # no wait goes past this time.monotonic()

    def add(self, upload: Upload) -> None:
        upload.save(self.pending)

    def count(self) -> int:
        return sum(1 for p in self.pending.glob("*.json"))

    def send_all(self, wait: bool = False) -> None:
        """Send what is pending; on a server error, stop and back off (sleeping first when ``wait``)."""
        if time.monotonic() < self.next_try:
            if not wait:
                return
            until = self.next_try if self.deadline is None else min(self.next_try, self.deadline)
            time.sleep(max(0.0, until - time.monotonic()))
            if time.monotonic() < self.next_try:
                return  # the deadline came first
        for path in sorted(self.pending.glob("*.json")):
            try:
                upload = Upload.load(path)
                body, content_type = multipart(upload.fields, upload.files)
                http(f"{self.base_url}/{upload.endpoint}", body, {"Content-Type": content_type},
                     timeout=time_left(self.deadline))
            except ServerError as e:
                self.failures += 1
                tqdm.write(f"upload failed ({e}); retrying in {self.backoff:.0f}s")
                self.next_try = time.monotonic() + self.backoff
                self.backoff = min(BACKOFF_MAX, self.backoff * 2)
                return
            except ValueError as e:  # Refused (a 4xx), or a damaged file: neither can succeed later
                tqdm.write(f"{'server refused' if isinstance(e, Refused) else 'set aside'} {path.name}: {e}")
                self.refused.mkdir(exist_ok=True)
                atomic_write_text(self.refused / (path.stem + ".reason.txt"), str(e) + "\n")
                path.replace(self.refused / path.name)
                continue
            unlink_quietly(path)
            self.sent += 1
            self.failures = 0
            self.backoff = BACKOFF_MIN


# --- playing tasks --------------------------------------------------------------------------------


def selfplay_config(options: dict[str, str], games: int, leaves: int, seed: int) -> SelfPlayConfig:
    """The task's options as zero9's self-play configuration (see the module docstring)."""
    visits = int(options.get("visits") or 0) or int(options.get("playouts") or 0)
    if visits < 1:
        raise ValueError(f"the task gives neither visits nor playouts: {options}")
    resign = int(options.get("resignation_percent") or 0)
    return SelfPlayConfig(visits=visits, parallel_games=games, leaves_per_tree=leaves,
                          search=SearchConfig(noise=options.get("noise", "true").lower() == "true"),
                          randomcnt=int(options.get("randomcnt") or 0),
                          resign_threshold=resign / 100 if resign > 0 else None, no_resign_share=0.0,
                          full_search_share=1.0, seed=seed)


def selfplay_upload(task: dict, record: GameRecord) -> Upload:
    """The ``/submit`` upload of one self-play game: SGF and Leela Zero chunk, gzip'd."""
    moves = [(m.position.to_play, m.action) for m in record.moves]
    sgf = write_sgf(record.game, moves, record.result,
                    properties={"PB": f"zero9 {task['hash'][:8]}", "PW": f"zero9 {task['hash'][:8]}"})
    chunk = lz_chunk_text(record_chunk(record))
    fields = {"networkhash": task["hash"], "clientversion": str(CLIENT_VERSION),
              "options_hash": task["options_hash"], "movescount": str(len(moves) + int(record.resigned)),
              "winnercolor": COLOUR_NAMES[record.winner], "random_seed": task["random_seed"]}
    files = {"sgf": gzip.compress(sgf.encode()), "trainingdata": gzip.compress(chunk.encode())}
    return Upload("submit", fields, files, sgf)


def play_selfplay(tasks: list[dict], net_path: Path, device: str, leaves: int) -> list[Upload]:
    """Play every task (same net and options) at once; one upload per task."""
    net, meta = load_net(net_path, device=device)
    game = game_from_meta(meta)
    seed = int(tasks[0]["random_seed"])
    config = selfplay_config(tasks[0]["options"], len(tasks), leaves, seed)
    evaluator = NetEvaluator(net, cache_size=config.eval_cache, rng=np.random.default_rng(seed))
    records = sorted(play_games(game, evaluator, len(tasks), config), key=lambda r: r.index)
    return [selfplay_upload(task, record) for task, record in zip(tasks, records, strict=True)]


def play_match_task(task: dict, black_path: Path, white_path: Path, device: str) -> Upload:
    """Play the match game: the task's black net against its white net, no noise."""
    visits = int(task["options"].get("visits") or 0) or int(task["options"].get("playouts") or 1)
    seed = int(task["random_seed"])
    black = make_player(f"{black_path}@{visits}", _lz_game(black_path), seed=seed, device=device)
    white = make_player(f"{white_path}@{visits}", _lz_game(white_path), seed=seed + 1, device=device)
    game = _lz_game(black_path)
    final, result, _ = play_game(game, black, white)
    for agent in (black, white):
        agent.close()
    resigned = "+r" in result.lower()
    moves = moves_from_position(final)
    winner = BLACK if result.upper().startswith("B") else WHITE
    players = {"PB": task["black_hash"][:8], "PW": task["white_hash"][:8]}
    sgf = write_sgf(game, moves, result, properties=players)
    winner_hash, loser_hash = ((task["black_hash"], task["white_hash"]) if winner == BLACK
                               else (task["white_hash"], task["black_hash"]))
    fields = {"winnerhash": winner_hash, "loserhash": loser_hash, "clientversion": str(CLIENT_VERSION),
              "winnercolor": COLOUR_NAMES[winner], "movescount": str(len(moves) + int(resigned)),
              "score": result, "options_hash": task["options_hash"], "random_seed": task["random_seed"]}
    return Upload("submit-match", fields, {"sgf": gzip.compress(sgf.encode())}, sgf)


def _work(task: dict) -> tuple[str, str]:
    """What must be equal for self-play tasks to share one batch: the net and the options."""
    return task["hash"], task["options_hash"]


def _lz_game(net_path: Path):
    _, meta = load_net(net_path, device="cpu")
    return make_game(**meta["game"])


# --- the loop -------------------------------------------------------------------------------------


class GaveUp(Exception):
    """The server kept failing ``--retries`` times in a row."""


class Client:
    """The get-task -> play -> upload loop (see the module docstring)."""

    def __init__(self, url: str, cache: Path, games: int = 1, device: str = "auto", leaves: int = 8,
                 keep_sgf: Path | None = None, retries: int = RETRIES):
        self.url = url.rstrip("/")
        self.cache = cache
        self.games, self.leaves, self.keep_sgf = games, leaves, keep_sgf
        self.device = str(resolve_device(device))
        self.outbox = Outbox(self.url, cache)
        self.backoff, self.failures, self.retries = BACKOFF_MIN, 0, retries
        self.deadline: float | None = None  # time.monotonic() at which --timeout ends the run
        self.played = 0
        self.leftover: dict | None = None  # a task fetched while filling a batch, for the next turn

    def time_left(self, limit: float = HTTP_TIMEOUT) -> float:
        return time_left(self.deadline, limit)

    def failed(self, error: ServerError, what: str) -> None:
        """Count a failure; wait the backoff (never past the deadline), or GaveUp after ``retries``."""
        self.failures += 1
        if self.failures >= self.retries:
            raise GaveUp(f"{what} failed {self.failures} times in a row; last: {error}")
        wait = max(0.0, self.time_left(self.backoff))
        tqdm.write(f"{what} failed ({error}); retrying in {wait:.0f}s")
        time.sleep(wait)
        self.backoff = min(BACKOFF_MAX, self.backoff * 2)

    def succeeded(self) -> None:
        self.failures, self.backoff = 0, BACKOFF_MIN

    def get_task(self) -> dict:
        """A checked task (:func:`checked_task`); ServerError to retry, ValueError if this client is
        too old."""
        task = checked_task(http(f"{self.url}/get-task/{CLIENT_VERSION}", timeout=self.time_left()))
        required = int(task.get("required_client_version") or 0)
        if required > CLIENT_VERSION:
            raise ValueError(f"the server requires client version {required}; this is {CLIENT_VERSION}: "
                             "update zero9")
        return task

    def net(self, task: dict, key: str = "hash") -> Path:
        return fetch_network(self.url, self.cache, task[key], task[f"{key}_gzip_hash"],
                             self.time_left(NET_TIMEOUT))

    def turn(self, budget: int) -> list[Upload]:
        """Get work (up to ``budget`` self-play games for one net, or one match game) and play it."""
        first, self.leftover = self.leftover or self.get_task(), None
        if first["cmd"] == "wait":
            time.sleep(max(0.0, self.time_left(60 * float(first["minutes"] or 1))))
            return []
        if first["cmd"] == "match":
            black, white = self.net(first, "black_hash"), self.net(first, "white_hash")
            return [play_match_task(first, black, white, self.device)]
        tasks = [first]
        while len(tasks) < min(self.games, budget):
            task = self.get_task()
            if task["cmd"] != "selfplay" or _work(task) != _work(first):
                self.leftover = task  # another kind of work: the next turn's
                break
            tasks.append(task)
        return play_selfplay(tasks, self.net(first), self.device, self.leaves)

    def finish(self, uploads: list[Upload]) -> None:
        for upload in uploads:
            self.outbox.add(upload)  # on disk before anything is sent
            if self.keep_sgf is not None:
                name = f"{upload.fields['random_seed']}.sgf"  # checked: digits only
                atomic_write_text(self.keep_sgf / name, upload.sgf)
        self.played += len(uploads)
        self.outbox.send_all()

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def run(self, max_games: int | None, single: bool, timeout_min: float | None) -> int:
        start = time.monotonic()
        self.deadline = None if timeout_min is None else start + 60 * timeout_min
        self.outbox.deadline = self.deadline
        bar = tqdm(total=max_games, unit="game", desc="zero9 client", dynamic_ncols=True)
        try:
            self.outbox.send_all()
            while (max_games is None or self.played < max_games) and not self.out_of_time():
                budget = self.games if max_games is None else max_games - self.played
                try:
                    uploads = self.turn(budget)
                except ServerError as e:
                    self.failed(e, "getting work")
                    continue
                self.succeeded()
                self.finish(uploads)
                bar.update(len(uploads))
                hours = (time.monotonic() - start) / 3600
                bar.set_postfix(games_per_hour=f"{self.played / max(hours, 1e-9):.0f}",
                                pending=self.outbox.count())
                if single and uploads:
                    break
            while self.outbox.count() and not self.out_of_time():
                self.outbox.send_all(wait=True)  # leave nothing unsent when the server is back in time
                if self.outbox.failures >= self.retries:
                    raise GaveUp(f"uploading failed {self.outbox.failures} times in a row")
        except GaveUp as e:
            bar.close()
            log.error("zero9 client: giving up: %s. %s finished games wait in %s and are sent next time", e,
                      self.outbox.count(), self.outbox.pending)
            return 1
        except KeyboardInterrupt:
            tqdm.write(f"interrupted: {self.outbox.count()} finished games wait in {self.outbox.pending} "
                       "and are sent next time")
            return 130
        finally:
            bar.close()
        print(f"{self.played} games played, {self.outbox.sent} uploads accepted, "
              f"{self.outbox.count()} pending")
        return 0
