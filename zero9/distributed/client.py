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
  succeed later; it moves to ``CACHE/refused/`` with the server's reason.
- **batch** (``-g N``): up to N self-play tasks for the same net are played at once by
  :func:`zero9.search.batched.play_games`, one net call serving every game's search.

Task options map onto zero9's self-play exactly: ``visits`` (or ``playouts`` when visits is
0), ``randomcnt`` (first moves in proportion to visits), ``noise`` (Dirichlet noise at the
root), ``resignation_percent`` (resign below that winrate; every game may resign, as the
server asks). Every move is a full, recorded search, as Leela Zero's self-play.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import json
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from zero9.arena.match import play_game
from zero9.arena.players import make_player
from zero9.games import BLACK, WHITE, make_game
from zero9.games.sgf import moves_from_position, write_sgf
from zero9.learn.records import record_chunk
from zero9.learn.selfplay_game import GameRecord, play_games
from zero9.nn.checkpoint import game_from_meta, load_net
from zero9.nn.chunks import lz_chunk_text
from zero9.nn.net import resolve_device
from zero9.search.evaluator import NetEvaluator
from zero9.settings import SearchConfig, SelfPlayConfig
from zero9.util.files import atomic_write_bytes, atomic_write_text, unlink_quietly

CLIENT_VERSION = 18  # the autogtp protocol version this client speaks
HTTP_TIMEOUT = 60.0
BACKOFF_MIN, BACKOFF_MAX = 2.0, 300.0
COLOUR_NAMES = {BLACK: "black", WHITE: "white"}


class ServerError(Exception):
    """The server could not be reached, or answered 429 / 5xx: try again later."""


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


def http(url: str, body: bytes | None = None, headers: dict[str, str] | None = None) -> bytes:
    """GET (or POST ``body``) ``url``; ServerError to retry, Refused for a final 4xx."""
    request = urllib.request.Request(url, data=body, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
            return response.read()
    except urllib.error.HTTPError as e:
        reason = e.read().decode("utf-8", "replace").strip()
        if e.code == 429 or e.code >= 500:
            raise ServerError(f"{url}: HTTP {e.code} {reason}") from None
        raise Refused(f"HTTP {e.code}: {reason}") from None
    except (urllib.error.URLError, OSError) as e:
        raise ServerError(f"{url}: {getattr(e, 'reason', e)}") from None


# --- nets -----------------------------------------------------------------------------------------


def fetch_network(base_url: str, cache: Path, net_hash: str, gzip_hash: str) -> Path:
    """The net's ``.gz`` in the cache, downloaded when missing or damaged; ValueError if both sums fail."""
    path = cache / "networks" / f"{net_hash}.gz"
    if path.exists() and network_ok(path.read_bytes(), net_hash, gzip_hash):
        return path
    data = http(f"{base_url}/networks/{net_hash}.gz")
    if not network_ok(data, net_hash, gzip_hash):
        raise ServerError(f"network {net_hash[:8]} downloaded with the wrong sha256; will retry")
    atomic_write_bytes(path, data)
    return path


def network_ok(gz: bytes, net_hash: str, gzip_hash: str) -> bool:
    if hashlib.sha256(gz).hexdigest() != gzip_hash:
        return False
    try:
        return hashlib.sha256(gzip.decompress(gz)).hexdigest() == net_hash
    except (OSError, EOFError):
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
        path = folder / f"{time.time_ns():019d}-{self.fields['random_seed']}.json"
        atomic_write_text(path, json.dumps({
            "endpoint": self.endpoint, "fields": self.fields,
            "files": {k: base64.b64encode(v).decode() for k, v in self.files.items()}}))
        return path

    @staticmethod
    def load(path: Path) -> Upload:
        d = json.loads(path.read_text())
        return Upload(d["endpoint"], d["fields"], {k: base64.b64decode(v) for k, v in d["files"].items()})


class Outbox:
    """Pending uploads on disk, sent oldest first with backoff (see the module docstring)."""

    def __init__(self, base_url: str, cache: Path):
        self.base_url = base_url
        self.pending, self.refused = cache / "pending", cache / "refused"
        self.pending.mkdir(parents=True, exist_ok=True)
        self.backoff, self.next_try = BACKOFF_MIN, 0.0
        self.sent = 0

    def add(self, upload: Upload) -> None:
        upload.save(self.pending)

    def count(self) -> int:
        return sum(1 for p in self.pending.glob("*.json"))

    def send_all(self, wait: bool = False) -> None:
        """Send what is pending; on a server error, stop and back off (sleeping first when ``wait``)."""
        if time.monotonic() < self.next_try:
            if not wait:
                return
            time.sleep(self.next_try - time.monotonic())
        for path in sorted(self.pending.glob("*.json")):
            upload = Upload.load(path)
            body, content_type = multipart(upload.fields, upload.files)
            try:
                http(f"{self.base_url}/{upload.endpoint}", body, {"Content-Type": content_type})
            except ServerError as e:
                tqdm.write(f"upload failed ({e}); retrying in {self.backoff:.0f}s")
                self.next_try = time.monotonic() + self.backoff
                self.backoff = min(BACKOFF_MAX, self.backoff * 2)
                return
            except Refused as e:
                tqdm.write(f"server refused {path.name}: {e}")
                self.refused.mkdir(exist_ok=True)
                atomic_write_text(self.refused / (path.stem + ".reason.txt"), str(e) + "\n")
                path.replace(self.refused / path.name)
                continue
            unlink_quietly(path)
            self.sent += 1
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


class Client:
    """The get-task -> play -> upload loop (see the module docstring)."""

    def __init__(self, url: str, cache: Path, games: int = 1, device: str = "auto", leaves: int = 8,
                 keep_sgf: Path | None = None):
        self.url = url.rstrip("/")
        self.cache = cache
        self.games, self.leaves, self.keep_sgf = games, leaves, keep_sgf
        self.device = str(resolve_device(device))
        self.outbox = Outbox(self.url, cache)
        self.backoff = BACKOFF_MIN
        self.played = 0
        self.leftover: dict | None = None  # a task fetched while filling a batch, for the next turn

    def get_task(self) -> dict:
        """A task, retrying with backoff while the server is down; ValueError if this client is too old."""
        while True:
            try:
                task = json.loads(http(f"{self.url}/get-task/{CLIENT_VERSION}"))
                break
            except ServerError as e:
                tqdm.write(f"no task ({e}); retrying in {self.backoff:.0f}s")
                time.sleep(self.backoff)
                self.backoff = min(BACKOFF_MAX, self.backoff * 2)
        self.backoff = BACKOFF_MIN
        required = int(task.get("required_client_version") or 0)
        if required > CLIENT_VERSION:
            raise ValueError(f"the server requires client version {required}; this is {CLIENT_VERSION}: "
                             "update zero9")
        return task

    def net(self, task: dict, key: str = "hash") -> Path:
        return fetch_network(self.url, self.cache, task[key], task[f"{key}_gzip_hash"])

    def turn(self, budget: int) -> list[Upload]:
        """Get work (up to ``budget`` self-play games for one net, or one match game) and play it."""
        first, self.leftover = self.leftover or self.get_task(), None
        if first["cmd"] == "wait":
            time.sleep(60 * float(first.get("minutes") or 1))
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
                name = f"{upload.fields['random_seed']}.sgf"
                atomic_write_text(self.keep_sgf / name, upload.sgf)
        self.played += len(uploads)
        self.outbox.send_all()

    def run(self, max_games: int | None, single: bool, timeout_min: float | None) -> int:
        start = time.monotonic()
        bar = tqdm(total=max_games, unit="game", desc="zero9 client", dynamic_ncols=True)
        try:
            self.outbox.send_all()
            while max_games is None or self.played < max_games:
                if timeout_min is not None and time.monotonic() - start > 60 * timeout_min:
                    break
                budget = self.games if max_games is None else max_games - self.played
                uploads = self.turn(budget)
                self.finish(uploads)
                bar.update(len(uploads))
                hours = (time.monotonic() - start) / 3600
                bar.set_postfix(games_per_hour=f"{self.played / max(hours, 1e-9):.0f}",
                                pending=self.outbox.count())
                if single and uploads:
                    break
            deadline = None if timeout_min is None else start + 60 * timeout_min
            while self.outbox.count() and (deadline is None or time.monotonic() < deadline):
                self.outbox.send_all(wait=True)  # leave nothing unsent when the server is back in time
        except KeyboardInterrupt:
            tqdm.write(f"interrupted: {self.outbox.count()} finished games wait in {self.outbox.pending} "
                       "and are sent next time")
            return 130
        finally:
            bar.close()
        print(f"{self.played} games played, {self.outbox.sent} uploads accepted, "
              f"{self.outbox.count()} pending")
        return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", metavar="URL", help="the server, e.g. http://192.168.1.10:8000")
    parser.add_argument("-g", "--gamesNum", "--games", dest="games", type=int, default=4,
                        help="self-play games played at once (batched through one net)")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--leaves", type=int, default=8, help="leaves per game per net call")
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "zero9" / "client"),
                        help="folder for downloaded nets and pending uploads")
    parser.add_argument("-k", "--keep-sgf", default=None, metavar="DIR",
                        help="also save every game's SGF here")
    parser.add_argument("--single", action="store_true", help="do one task, then exit")
    parser.add_argument("--max-games", type=int, default=None, help="exit after this many games")
    parser.add_argument("--timeout", type=float, default=None, metavar="MIN",
                        help="exit after this many minutes (the game in progress is finished first)")


def run(args: argparse.Namespace) -> int:
    if args.games < 1:
        raise ValueError(f"-g must be >= 1, got {args.games}")
    keep = Path(args.keep_sgf) if args.keep_sgf else None
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    client = Client(args.url, Path(args.cache), args.games, args.device, args.leaves, keep)
    return client.run(args.max_games, args.single, args.timeout)
