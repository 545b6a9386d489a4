"""``zero9 server``: many machines train one net, the way Leela Zero's server did it.

The task cycle
--------------
A client (``zero9 client``, or Leela Zero's own ``autogtp``) loops:

1. ``GET /get-task/<client_version>[/<engine_version>]`` -> a JSON task. Every value is a
   string, as autogtp reads them:

   - ``{"cmd": "selfplay", "hash", "hash_gzip_hash", "options", "options_hash", "random_seed",
     "required_client_version", "minimum_autogtp_version", "minimum_leelaz_version"}``: play one
     self-play game with the net ``hash`` and exactly these ``options`` (``visits``,
     ``playouts``, ``resignation_percent``, ``randomcnt``, ``noise``) and seed;
   - ``{"cmd": "match", "black_hash", "white_hash", ...}``: one gating game, the candidate
     and the best net taking turns with Black;
   - ``{"cmd": "wait", "minutes"}``: nothing to do now (the run directory holds a ``pause``
     file).

   A client older than ``required_client_version`` is told so in the task and must stop.
2. ``GET /networks/<hash>.gz`` -> the net (``hash`` = sha256 of the uncompressed Leela Zero
   text, ``hash_gzip_hash`` = sha256 of the ``.gz``; the client checks both).
   ``GET /best-network`` -> the best net's ``.gz``.
3. ``POST /submit`` (multipart: ``networkhash``, ``clientversion``, ``options_hash``,
   ``movescount``, ``winnercolor``, ``random_seed``, gzip'd files ``sgf`` and ``trainingdata``)
   or ``POST /submit-match`` (``winnerhash``, ``loserhash``, ``winnercolor``, ``movescount``,
   ``score``, ``options_hash``, ``random_seed``, ``clientversion``, ``sgf``). The upload is
   checked (:mod:`zero9.distributed.validation`): its task must be one this server handed out
   (same seed, nets and options) and not already answered, the gzip must inflate within a limit,
   the SGF must replay legally and agree with the fields and the training data, the game (its
   moves, under any of the board's symmetries) must not have been kept before, from any client
   under any seed (:func:`zero9.distributed.validation.game_digest`), and a resignation must be
   one the resigner's own net calls lost (:mod:`zero9.distributed.resign`).
   A refused upload gets a 4xx with the reason and leaves nothing behind.

The trainer (``zero9 trainer``) posts candidates to ``POST /submit-network`` with the run's
API key (the file ``api_key`` in the run directory).

Gating
------
A new candidate gets a **match** against the best net. While a match is undecided, clients are
handed its games (at most ``--match-in-flight`` outstanding); after each result SPRT(elo0=0,
elo1=35, alpha=beta=0.05) is updated (:func:`zero9.arena.elo.sprt`). ``H1`` promotes the
candidate: every later self-play task uses it. ``H0``, or ``--match-games`` games without a
decision, rejects it. A client whose record in the match is improbable against the others' has
its results held until the teacher accepts or drops them (:mod:`zero9.distributed.gating`).
Ratings are maximum-likelihood over every counted match game (:func:`zero9.arena.elo.bayeselo`),
the start net pinned at 0 Elo (random play when the server started from a random net, as Leela
Zero's graph).

Storage
-------
Files live in the run directory, named by arrival time and content hash, written atomically
(:mod:`zero9.util.files`): ``networks/<hash>.gz``, ``chunks/<time>-<sha>-<N>p.gz`` (Leela Zero
v1 chunks; the ``-Np`` tail lets the trainer's window rule count positions without opening
them), ``sgf/<time>-<sha>.sgf.gz`` and ``matches/<time>-<sha>.sgf.gz``. Rows live in the
database (:mod:`zero9.distributed.db`): SQLite in WAL mode at ``server.db`` by default,
PostgreSQL with ``--db postgresql://...``. An upload's files are written before its
transaction commits; on start the server deletes temporary files and files no row names, so
after ``kill -9`` at any moment nothing accepted is lost and nothing half-done remains.

Pages (:mod:`zero9.distributed.status` reads what they show): ``GET /status.json`` (counts, clients in
the last hour, the best net and its Elo) and ``GET /`` (best net, games per hour, the match table
with SPRT state, recent nets, and the Elo graph as an SVG picture).
"""



from __future__ import annotations

import errno
import gzip
import logging
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from zero9.distributed import db, status
from zero9.distributed.config import (
    FILE_DIRS,
    HANDED_OUT_MEMORY,
    MINIMUM_LEELAZ_VERSION,
    PROTOCOL_VERSION,
    STATE_SECONDS,
    TASK_MAX_AGE,
    Gating,
    Limits,
    TaskOptions,
    is_hash,
    options_hash,
    sha256,
)
from zero9.distributed.gating import Gate
from zero9.distributed.groupcommit import GroupCommit
from zero9.distributed.resign import ResignCheck
from zero9.distributed.roster import Roster
from zero9.distributed.validation import (
    COLOUR_NAMES,
    Rejected,
    ReplayedGame,
    check_chunk,
    check_sgf_shape,
    game_digest,
    gunzip_limited,
    replay_sgf,
    winner_colour,
)
from zero9.games import BLACK, Game, make_game
from zero9.nn.checkpoint import load_net
from zero9.nn.net import make_net
from zero9.nn.weights import lz_text, parse_lz_weights
from zero9.util.files import TMP_PREFIX, atomic_write_bytes, unlink_quietly

log = logging.getLogger("zero9.server")


SEED_MAX = 1 << 62  # seeds are 62 random bits (+1); a bigger number names no task
QUOTA_SECONDS = 5.0  # a client's games of the last hour are counted in the database this often


@dataclass(frozen=True)
class Caller:
    """Who sent a request: a roster ``name`` (credentialed) or ``anonymous@ADDRESS``."""

    name: str
    credentialed: bool

    @staticmethod
    def anonymous(address: str) -> Caller:
        return Caller(f"anonymous@{address}"[:64], False)


class Server:
    """The server's state and rules, apart from HTTP (the app of :mod:`zero9.distributed.web` calls these)."""

    def __init__(self, run_dir: str | Path, game: Game, options: TaskOptions, db_url: str | None = None,
                 limits: Limits | None = None, gating: Gating | None = None, api_key: str | None = None,
                 trust_anonymous: bool = False, sweep: bool = True):
        self.root = Path(run_dir)
        self.root.mkdir(parents=True, exist_ok=True)
        self.game, self.options, self.limits = game, options, limits or Limits()
        self.gating, self.trust_anonymous = gating or Gating(), trust_anonymous
        self.selfplay_options = options.as_task()
        self.selfplay_hash = options_hash(self.selfplay_options)
        self.match_options = options.match_task()
        self.match_hash = options_hash(self.match_options)
        self.engine = db.connect(db_url or f"sqlite:///{self.root / 'server.db'}")
        self.api_key = api_key or self._load_api_key()
        self.roster = Roster(self.engine)
        self.gate = Gate(self.engine, self.gating, self.roster, self._forget_state)
        self.resign_check = ResignCheck(game, self.network_file, options.resign_pct)
        self._ratings = status.Ratings(self.engine, self.roster)
        self._quota_counts: dict[str, tuple[float, int]] = {}  # client -> (read at, games this hour)
        self._gzip_hash_cache: dict[str, str] = {}  # a net's files never change
        self._state: tuple[float, str | None, bool] = (0.0, None, True)  # (read at, best net, a match open)
        self._handed_out: OrderedDict[int, dict] = OrderedDict()  # see _task_for
        self._handed_out_lock = threading.Lock()
        for name in FILE_DIRS:
            (self.root / name).mkdir(exist_ok=True)
        self.commits = GroupCommit(self.engine, self.root)
        swept = self.sweep() if sweep else 0  # only the process that starts the workers sweeps
        if swept:
            log.warning("removed %d leftover files (temporary, or written by an upload that never "
                        "committed)", swept)

    @classmethod
    def from_settings(cls, settings: dict, sweep: bool) -> Server:
        """A server from :func:`zero9.cli.server.server_settings`'s JSON (how worker processes get theirs)."""
        return cls(**dict(settings, game=make_game(**settings["game"]), sweep=sweep,
                          options=TaskOptions(**settings["options"]), limits=Limits(**settings["limits"]),
                          gating=Gating(**settings["gating"])))

    # --- start-up -----------------------------------------------------------------------------

    def _load_api_key(self) -> str:
        path = self.root / "api_key"
        if not path.exists():
            atomic_write_bytes(path, (secrets.token_hex(16) + "\n").encode())
            path.chmod(0o600)
        return path.read_text().strip()

    def sweep(self) -> int:
        """Delete temporary files and files no row names (a crash between writing and committing)."""
        with self.engine.connect() as connection:
            keep = db.referenced_files(connection)
            keep |= {f"networks/{row.hash}.gz" for row in connection.execute(db.select(db.networks.c.hash))}
        removed = 0
        for name in FILE_DIRS:
            for path in (self.root / name).iterdir():
                if path.name.startswith(TMP_PREFIX) or f"{name}/{path.name}" not in keep:
                    unlink_quietly(path)
                    removed += 1
        return removed

    def ensure_start_net(self, net_path: str | None, blocks: int, filters: int) -> str:
        """The best net's hash; on an empty server first add ``net_path`` or a random net."""
        best = self.best_network()
        if best is not None:
            return best
        if net_path:
            net, _ = load_net(net_path, device="cpu", expected_size=self.game.size)
        else:
            net = make_net(self.game, blocks, filters)
        data = gzip.compress(lz_text(net, drop_ownership=True).encode("ascii"), compresslevel=6, mtime=0)
        return self.add_network(data, training_steps=0, best=True)

    # --- networks -----------------------------------------------------------------------------

    def best_network(self) -> str | None:
        with self.engine.connect() as c:
            row = c.execute(db.select(db.networks.c.hash).where(db.networks.c.best_since.is_not(None))
                            .order_by(db.networks.c.best_since.desc(), db.networks.c.number.desc())
                            .limit(1)).first()
        return row.hash if row else None

    def network_file(self, net_hash: str) -> Path | None:
        if not is_hash(net_hash):
            return None
        path = self.root / "networks" / f"{net_hash}.gz"
        with self.engine.connect() as c:
            known = c.execute(db.select(db.networks.c.hash).where(db.networks.c.hash == net_hash)).first()
        return path if known and path.exists() else None

    def add_network(self, gz: bytes, training_steps: int = 0, best: bool = False) -> str:
        """Check and store a gzip'd Leela Zero weights file; returns its hash. A candidate gets a match."""
        text = gunzip_limited(gz, self.limits.network, "the network")
        try:
            net = parse_lz_weights(text.decode("ascii"), "the uploaded network", self.game.size)
        except (ValueError, UnicodeDecodeError) as e:
            raise Rejected(f"bad network: {e}") from None
        if net.num_actions != self.game.num_actions:
            raise Rejected(f"the network has {net.num_actions} moves, {self.game.name} needs "
                           f"{self.game.num_actions}")
        net_hash = sha256(text)
        path = self.root / "networks" / f"{net_hash}.gz"
        with self.engine.connect() as c:
            if c.execute(db.select(db.networks.c.hash).where(db.networks.c.hash == net_hash)).first():
                raise Rejected(f"network {net_hash[:8]} is already known", 409)
        try:
            atomic_write_bytes(path, gz)
            with db.transaction(self.engine) as c:
                number = c.execute(db.select(db.func.count()).select_from(db.networks)).scalar_one()
                stamp = db.now()
                c.execute(db.networks.insert().values(
                    hash=net_hash, gzip_hash=sha256(gz), number=number, blocks=net.config["blocks"],
                    filters=net.config["filters"], training_steps=training_steps, created=stamp,
                    best_since=stamp if best else None))
                if not best:
                    current = self._best_in(c)
                    c.execute(db.matches.insert().values(candidate=net_hash, best=current, created=stamp))
        except Exception:
            unlink_quietly(path)
            raise
        self._forget_state()
        log.info("network %s added (%s)", net_hash[:8], "best" if best else "candidate")
        return net_hash

    @staticmethod
    def _best_in(c) -> str:
        return c.execute(db.select(db.networks.c.hash).where(db.networks.c.best_since.is_not(None))
                         .order_by(db.networks.c.best_since.desc(), db.networks.c.number.desc())
                         .limit(1)).scalar_one()

    # --- tasks --------------------------------------------------------------------------------

    def get_task(self, caller: Caller) -> dict[str, str]:
        """A task for ``caller``, recorded (committed) before it is returned."""
        answer, rows = self.new_task(caller)
        if rows:
            self.commits.commit({}, rows)
        return answer

    def admit(self, caller: Caller) -> None:
        """Rejected (403) unless ``caller`` may get tasks and upload games: a roster client, or any
        client when the server trusts anonymous ones (``--trust-anonymous``, a closed lab network)."""
        if not caller.credentialed and not self.trust_anonymous:
            raise Rejected("this server gives work only to clients on its roster: ask the teacher for a "
                           "credential and use the URL http://HOST:PORT/c/CREDENTIAL/", 403)

    def new_task(self, caller: Caller) -> tuple[dict[str, str], list]:
        """A task and the rows that record it: they must be committed before the task is sent."""
        self.admit(caller)
        common = {"required_client_version": str(PROTOCOL_VERSION),
                  "minimum_autogtp_version": str(PROTOCOL_VERSION),
                  "minimum_leelaz_version": MINIMUM_LEELAZ_VERSION}
        if (self.root / "pause").exists():
            return {"cmd": "wait", "minutes": "1", **common}, []
        seed = secrets.randbits(62) + 1  # nonzero: autogtp treats "0" as no seed
        best, match_open = self._task_state()
        match = self.gate.match_for(caller.name) if match_open and caller.credentialed else None
        if match is not None:
            with self.engine.connect() as c:
                issued = c.execute(db.select(db.func.count()).select_from(db.tasks)
                                   .where(db.tasks.c.match_id == match.id)).scalar_one()
            black, white = ((match.candidate, match.best) if issued % 2 == 0
                            else (match.best, match.candidate))
            row = dict(seed=seed, kind="match", net=black, other_net=white, match_id=match.id,
                       options_hash=self.match_hash, client=caller.name, issued=db.now())
            self._remember(row)
            return {"cmd": "match", "black_hash": black, "white_hash": white,
                    "black_hash_gzip_hash": self._gzip_hash(black),
                    "white_hash_gzip_hash": self._gzip_hash(white),
                    "options": self.match_options, "options_hash": self.match_hash,
                    "random_seed": str(seed), **common}, [(db.tasks, row)]
        row = dict(seed=seed, kind="selfplay", net=best, other_net=None, match_id=None,
                   options_hash=self.selfplay_hash, client=caller.name, issued=db.now())
        self._remember(row)
        return {"cmd": "selfplay", "hash": best, "hash_gzip_hash": self._gzip_hash(best),
                "options": self.selfplay_options, "options_hash": self.selfplay_hash,
                "random_seed": str(seed), **common}, [(db.tasks, row)]

    def task_state_cached(self) -> bool:
        """Whether :meth:`new_task` will read nothing from the database (no match open, state fresh)."""
        read_at, best, match_open = self._state
        return best is not None and not match_open and time.monotonic() - read_at <= STATE_SECONDS

    def _task_state(self) -> tuple[str, bool]:
        """(the best net, whether some match is undecided): read again after :data:`STATE_SECONDS`, or
        at once after a change made in this process (other worker processes' changes show within it)."""
        read_at, best, match_open = self._state
        if best is None or time.monotonic() - read_at > STATE_SECONDS:
            with self.engine.connect() as c:
                best = self._best_in(c)
                match_open = c.execute(db.select(db.matches.c.id).where(db.matches.c.decision.is_(None))
                                       .limit(1)).first() is not None
            self._gzip_hash(best)  # cached too, so that a fresh state needs no read at all
            self._state = (time.monotonic(), best, match_open)
        return best, match_open

    def _forget_state(self) -> None:
        self._state = (0.0, None, True)

    def _gzip_hash(self, net_hash: str) -> str:
        if net_hash not in self._gzip_hash_cache:
            with self.engine.connect() as c:
                self._gzip_hash_cache[net_hash] = c.execute(
                    db.select(db.networks.c.gzip_hash).where(db.networks.c.hash == net_hash)).scalar_one()
        return self._gzip_hash_cache[net_hash]

    def _remember(self, task_row: dict) -> None:
        with self._handed_out_lock:
            self._handed_out[task_row["seed"]] = task_row
            if len(self._handed_out) > HANDED_OUT_MEMORY:
                self._handed_out.popitem(last=False)  # the oldest; the database still has it

    def _task_for(self, form: dict[str, str], kind: str, answers, caller: Caller):
        """The handed-out task an upload answers, not yet in the table ``answers``, or Rejected.

        A task this process handed out is remembered until the first upload that names it, which
        then needs no database read; every later one (and any task of another worker process) is
        looked up in the database. Either way the database has the last word: ``answers.seed`` is
        unique, so of two answers that pass the checks only the first to commit is kept and the
        other gets a 409 from the group commit."""
        self.admit(caller)
        seed_text, option_hash = form.get("random_seed", ""), form.get("options_hash", "")
        if not (seed_text.isascii() and seed_text.isdigit() and len(seed_text) <= 19
                and 0 < int(seed_text) <= SEED_MAX):
            raise Rejected(f"random_seed {seed_text[:24]!r} is not a seed this server hands out")
        with self._handed_out_lock:
            remembered = self._handed_out.pop(int(seed_text), None)
        if remembered is not None:
            task = SimpleNamespace(**remembered, answer=None)
        else:
            with self.engine.connect() as c:
                task = c.execute(db.select(db.tasks, answers.c.id.label("answer"))
                                 .outerjoin(answers, answers.c.seed == db.tasks.c.seed)
                                 .where(db.tasks.c.seed == int(seed_text))).first()
        if task is None or task.kind != kind:
            raise Rejected(f"random_seed {seed_text} names no {kind} task this server handed out")
        if task.client != caller.name:
            raise Rejected(f"the task of random_seed {seed_text} was handed to another client", 403)
        if task.options_hash != option_hash:
            raise Rejected(f"options_hash {option_hash[:16]!r} is not the task's {task.options_hash}")
        age = db.now() - task.issued
        if age > TASK_MAX_AGE or (kind == "match" and age > self.gate.lease_seconds):
            raise Rejected(f"the task of random_seed {seed_text} has expired (its lease went back to the "
                           "pool)", 410)
        if task.answer is not None:
            raise Rejected(f"random_seed {seed_text} was already answered", 409)
        return task

    # --- uploads ------------------------------------------------------------------------------

    def submit_game(self, form: dict[str, str], sgf_gz: bytes, chunk_gz: bytes, caller: Caller) -> dict:
        """Check and store one self-play game (see the module docstring); Rejected when refused."""
        answer, files, rows = self.check_game(form, sgf_gz, chunk_gz, caller)
        self._store(files, rows)
        return answer

    def check_game(self, form: dict[str, str], sgf_gz: bytes, chunk_gz: bytes, caller: Caller
                   ) -> tuple[dict, dict[str, bytes], list]:
        """Check one self-play game: (the answer, its files, its rows: ``games`` and ``game_digests``),
        or Rejected."""
        task = self._task_for(form, "selfplay", db.games, caller)
        if form.get("networkhash") != task.net:
            raise Rejected(f"networkhash {form.get('networkhash', '')[:16]!r} is not the task's net")
        self._check_quota(caller)
        winner = winner_colour(form.get("winnercolor", ""))
        replayed = self._replay(form, sgf_gz, winner)
        chunk_text = gunzip_limited(chunk_gz, self.limits.chunk, "the trainingdata file")
        try:
            chunk = check_chunk(chunk_text.decode("ascii"), replayed)
        except UnicodeDecodeError:
            raise Rejected("the trainingdata file is not ASCII text") from None
        digest = self._new_game(replayed, caller)
        if replayed.resigned_at is not None:  # last: one forward pass, for an upload otherwise good
            self.resign_check.check(replayed.resigned_at, task.net)
        stamp = time.time_ns()
        sgf_file = f"sgf/{stamp:019d}-{sha256(sgf_gz)[:16]}.sgf.gz"
        chunk_file = f"chunks/{stamp:019d}-{sha256(chunk_gz)[:16]}-{len(chunk)}p.gz"
        row = dict(seed=task.seed, net=task.net, client=caller.name,
                   client_version=form.get("clientversion", "")[:16],
                   moves=len(replayed.positions), winner=COLOUR_NAMES[winner], positions=len(chunk),
                   sgf_file=sgf_file, chunk_file=chunk_file, submitted=db.now())
        rows = [(db.games, row), (db.game_digests, self._digest_row(digest, "selfplay", row))]
        return {"accepted": True, "positions": len(chunk)}, {sgf_file: sgf_gz, chunk_file: chunk_gz}, rows

    def _new_game(self, replayed: ReplayedGame, caller: Caller) -> str:
        """The game's digest; Rejected (409) if a game with the same moves was kept before, under any
        seed from any client (the database's key refuses the same race between two uploads)."""
        digest = game_digest(self.game, replayed.actions)
        with self.engine.connect() as c:
            first = c.execute(db.select(db.game_digests.c.client)
                              .where(db.game_digests.c.digest == digest)).first()
        if first is not None:
            raise duplicate_game(first.client == caller.name)
        return digest

    @staticmethod
    def _digest_row(digest: str, kind: str, row: dict) -> dict:
        return dict(digest=digest, kind=kind, seed=row["seed"], client=row["client"],
                    submitted=row["submitted"])

    def _replay(self, form: dict[str, str], sgf_gz: bytes, winner: int) -> ReplayedGame:
        """The upload's SGF, bounded (size, then nodes and variations before parsing), replayed, and
        long enough to be a real game."""
        sgf = gunzip_limited(sgf_gz, self.limits.sgf, "the sgf file")
        check_sgf_shape(sgf, self.limits.sgf_nodes)
        replayed = replay_sgf(self.game, sgf, _count(form, "movescount"), winner)
        if len(replayed.positions) < self.limits.min_moves:
            raise Rejected(f"the game has {len(replayed.positions)} moves; this server takes games of "
                           f"{self.limits.min_moves} moves or more")
        return replayed

    def _check_quota(self, caller: Caller) -> None:
        """Rejected (429) once ``caller`` sent its hour's games. The count is read from the database at
        most every :data:`QUOTA_SECONDS` per client and counted on in between (so another worker
        process's uploads of those seconds may go past the quota by that much)."""
        quota = self.limits.client_games_per_hour
        if not quota:
            return
        now = time.monotonic()
        read_at, recent = self._quota_counts.get(caller.name, (-1e9, 0))
        if now - read_at > QUOTA_SECONDS:
            with self.engine.connect() as c:
                recent = c.execute(db.select(db.func.count()).select_from(db.games).where(
                    db.games.c.client == caller.name, db.games.c.submitted > db.now() - 3600)).scalar_one()
            read_at = now
            if len(self._quota_counts) > 10_000:
                self._quota_counts.clear()
        self._quota_counts[caller.name] = (read_at, recent + 1)  # this one, if it is accepted
        if recent >= quota:
            raise Rejected(f"{caller.name} sent {recent} games in the last hour; the quota is {quota} "
                           "(try again later)", 429)

    def submit_match(self, form: dict[str, str], sgf_gz: bytes, caller: Caller) -> dict:
        """Check and store one match game, then update its match's SPRT."""
        task = self._task_for(form, "match", db.match_games, caller)
        winner = winner_colour(form.get("winnercolor", ""))
        winner_net, loser_net = (task.net, task.other_net) if winner == 1 else (task.other_net, task.net)
        if (form.get("winnerhash"), form.get("loserhash")) != (winner_net, loser_net):
            raise Rejected("winnerhash / loserhash do not match the task's nets and winnercolor")
        replayed = self._replay(form, sgf_gz, winner)
        digest = self._new_game(replayed, caller)
        if replayed.resigned_at is not None:  # by the resigner's own net (Black's is the task's net)
            resigner = task.net if replayed.resigned_at.to_play == BLACK else task.other_net
            self.resign_check.check(replayed.resigned_at, resigner)
        sgf_file = f"matches/{time.time_ns():019d}-{sha256(sgf_gz)[:16]}.sgf.gz"
        row = dict(match_id=task.match_id, seed=task.seed, winner_net=winner_net, loser_net=loser_net,
                   winner_colour=COLOUR_NAMES[winner], moves=_count(form, "movescount"),
                   score=form.get("score", "")[:32], client=caller.name, sgf_file=sgf_file,
                   submitted=db.now())
        self._store({sgf_file: sgf_gz}, [(db.match_games, row), (db.game_digests,
                                                                self._digest_row(digest, "match", row))])
        decision = self.gate.update(task.match_id)
        return {"accepted": True, "decision": decision}

    def _store(self, files: dict[str, bytes], rows: list) -> None:
        """Write ``files`` atomically and insert ``rows`` (``(table, values)`` pairs), with the other
        uploads of the moment (:mod:`zero9.distributed.groupcommit`); a failed commit leaves none of the
        files."""
        try:
            self.commits.commit(files, rows)
        except db.IntegrityError as error:
            raise refused_insert(error) from None

    # --- the roster ---------------------------------------------------------------------------

    def revoke_client(self, name: str) -> dict:
        """Revoke ``name``: its credential stops working, its self-play chunks leave the training
        window (moved to ``revoked/chunks/``), and every match it played in is counted again."""
        self.roster.revoke(name)
        g = db.games.c
        with db.transaction(self.engine) as c:
            rows = c.execute(db.select(g.id, g.chunk_file).where(
                g.client == name, g.chunk_file.like("chunks/%"))).all()
            for row in rows:
                c.execute(db.games.update().where(g.id == row.id)
                          .values(chunk_file=f"revoked/{row.chunk_file}"))
        (self.root / "revoked" / "chunks").mkdir(parents=True, exist_ok=True)
        moved = 0
        with self.engine.connect() as c:  # also finishes the moves of an earlier, interrupted revoke
            names = [r.chunk_file for r in c.execute(db.select(g.chunk_file).where(g.client == name))]
        for relative in names:
            source = self.root / relative.removeprefix("revoked/")
            if relative.startswith("revoked/") and source.exists():
                source.replace(self.root / relative)
                moved += 1
        matches = self.gate.recount(name)
        self._forget_state()
        log.warning("client %s revoked: %d chunks left the window, %d matches counted again",
                    name, moved, len(matches))
        return {"chunks_removed": moved, "matches_recounted": matches}

    def settle_holds(self, name: str, accept: bool) -> list[int]:
        """The teacher's decision on ``name``'s held match results (:mod:`zero9.distributed.gating`):
        counted from now on (``accept``) or never; returns the matches counted again."""
        matches = self.gate.settle(name, accept)
        self._forget_state()
        return matches

    # --- status (zero9.distributed.status) ------------------------------------------------

    def ratings(self) -> dict[str, tuple[float, float, float]]:
        """Elo with 95% intervals of every net in a counted match game, the start net at 0."""
        return self._ratings.read()

    def status(self) -> dict:
        """Counts, matches, ratings and contributions: what ``GET /status.json`` answers."""
        with self.engine.connect() as c:
            numbers = status.counts(c)
            nets = status.networks(c)
            matches = status.recent_matches(c, self.gate, self.gating.elo1)
            clients = status.contributions(c, self.roster)
            holds = status.holds(c, self.gate)
        best = self.best_network()
        ratings = self.ratings()
        return {
            **numbers, "best_network": best,
            "best_elo": round(ratings.get(best, (0.0,))[0], 1) if best else None,
            "game": self.game.to_dict(), "options": self.selfplay_options, "elo1": self.gating.elo1,
            "trust_anonymous": self.trust_anonymous, "matches": matches, "clients": clients,
            "held_results": holds,
            "group_commit": {"batches": self.commits.batches,  # of the process that answers
                             "entries": self.commits.entries,
                             "busy_seconds": round(self.commits.busy_seconds, 3)},
            "network_list": status.network_list(nets, ratings),
        }


def already_answered() -> Rejected:
    """Two answers to one task raced and the other one committed first (the seed is unique)."""
    return Rejected("this task was already answered", 409)


def duplicate_game(own: bool) -> Rejected:
    """The same game (the same moves, perhaps turned or mirrored) was kept before."""
    return Rejected(f"this game (the same moves) was already uploaded by {'you' if own else 'another client'}"
                    ": a game counts once, for whoever sent it first", 409)


def refused_insert(error: Exception) -> Rejected:
    """The 409 for a unique key that refused an upload's rows: its game, or its task's seed, was kept by
    another upload that committed first."""
    return duplicate_game(False) if "game_digests" in str(error) else already_answered()


def out_of_space(error: BaseException) -> bool:
    """Whether ``error`` says the disk (or the database's file) is full."""
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return True
    text = str(error).lower()
    return isinstance(error, db.OperationalError) and ("full" in text or "no space" in text)


def _count(form: dict[str, str], key: str) -> int:
    text = form.get(key, "")
    if not (text.isascii() and text.isdigit()) or len(text) > 6:
        raise Rejected(f"{key} {text[:20]!r} is not a move count")
    return int(text)
