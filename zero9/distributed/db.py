"""The server's database: what was handed out, what came back, and which net is best.

Vocabulary (one table each, SQLAlchemy Core so the same code runs on SQLite and PostgreSQL):

- **network**: a Leela Zero weights file the server serves, keyed by ``hash`` (sha256 of the
  uncompressed text, as Leela Zero) with ``gzip_hash`` (sha256 of the ``.gz`` file). ``number``
  counts networks in order of arrival (0 = the start net); ``best_since`` is set when it became
  the best net; the best net is the one with the newest ``best_since``.
- **task**: one unit of work handed out by ``get-task``, keyed by its ``seed`` (the
  ``random_seed`` the client plays with). An upload is only accepted for a task that exists,
  with the same nets and options hash, and at most once (``games.seed`` / ``match_games.seed``
  are unique).
- **game**: an accepted self-play upload: its files (``sgf_file``, ``chunk_file``, relative to
  the run directory, named by content hash), the net, moves and winner.
- **match**: a candidate net against the best net of the moment, gated by SPRT; ``decision``
  is ``'H1'`` (promoted), ``'H0'`` (rejected) or NULL while it runs.
- **match game**: an accepted match upload, with the winning and losing net.
- **game digest**: one row per kept game (self-play or match), keyed by the digest of its rules
  and moves (:func:`zero9.distributed.validation.game_digest`): the same game uploaded again,
  under any seed by any client, trips the key and is refused; the row names who sent it first.
- **match hold**: a client's results in one match that gating holds out of the count because
  its record is improbable against the other clients' (:mod:`zero9.distributed.gating`), with
  the records that made it so, until the teacher accepts (``accepted``: counted) or drops
  (``dropped``: never counted) them.
- **client**: one entry of the teacher's roster (``zero9 server RUN_DIR clients add NAME``): a
  ``name`` and the sha256 of its credential (the credential itself is shown once, never stored);
  ``revoked`` is set when the teacher revokes it. ``games.client``, ``match_games.client`` and
  ``tasks.client`` hold a roster name, or ``anonymous@ADDRESS`` for a client without one.

Every accepted upload is one transaction (:func:`transaction`); its files are written (atomically)
before it commits, so after a crash a row always has its files, and a file without a row is an
orphan that :func:`referenced_files` lets the server sweep on start.

SQLite runs in WAL mode (readers never wait for the writer) with a busy timeout, so the
web server's threads can share it; ``synchronous=NORMAL`` keeps every committed transaction
through a crash of the process (only a power cut can lose the newest ones).
"""

from __future__ import annotations

import time
from contextlib import contextmanager

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    UniqueConstraint,
    create_engine,
    distinct,
    event,
    func,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, OperationalError

# what the server uses through this module
__all__ = ["IntegrityError", "OperationalError", "distinct", "func", "select"]

metadata = MetaData()

networks = Table(
    "networks", metadata,
    Column("hash", String(64), primary_key=True),
    Column("gzip_hash", String(64), nullable=False),
    Column("number", Integer, nullable=False, unique=True),
    Column("blocks", Integer, nullable=False),
    Column("filters", Integer, nullable=False),
    Column("training_steps", BigInteger, nullable=False, default=0),
    Column("created", Float, nullable=False),
    Column("best_since", Float, nullable=True),
)

tasks = Table(
    "tasks", metadata,
    Column("seed", BigInteger, primary_key=True),
    Column("kind", String(16), nullable=False),  # 'selfplay' or 'match'
    Column("net", String(64), nullable=False),  # self-play net, or the match's black net
    Column("other_net", String(64), nullable=True),  # the match's white net
    Column("match_id", Integer, nullable=True),
    Column("options_hash", String(16), nullable=False),
    Column("client", String(64), nullable=False),
    Column("issued", Float, nullable=False, index=True),
)

games = Table(
    "games", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("seed", BigInteger, nullable=False, unique=True),
    Column("net", String(64), ForeignKey("networks.hash"), nullable=False, index=True),
    Column("client", String(64), nullable=False),
    Column("client_version", String(16), nullable=False),
    Column("moves", Integer, nullable=False),
    Column("winner", String(8), nullable=False),
    Column("positions", Integer, nullable=False),
    Column("sgf_file", String(200), nullable=False),
    Column("chunk_file", String(200), nullable=False),
    Column("submitted", Float, nullable=False, index=True),
)

matches = Table(
    "matches", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("candidate", String(64), ForeignKey("networks.hash"), nullable=False),
    Column("best", String(64), ForeignKey("networks.hash"), nullable=False),
    Column("created", Float, nullable=False),
    Column("decision", String(4), nullable=True),  # 'H1', 'H0' or NULL while undecided
    Column("decided", Float, nullable=True),
    Column("contributors", String(4000), nullable=True),  # JSON {client: games} the decision counted
    UniqueConstraint("candidate", "best"),
)

match_games = Table(
    "match_games", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("match_id", Integer, ForeignKey("matches.id"), nullable=False, index=True),
    Column("seed", BigInteger, nullable=False, unique=True),
    Column("winner_net", String(64), nullable=False),
    Column("loser_net", String(64), nullable=False),
    Column("winner_colour", String(8), nullable=False),
    Column("moves", Integer, nullable=False),
    Column("score", String(32), nullable=False),
    Column("client", String(64), nullable=False),
    Column("sgf_file", String(200), nullable=False),
    Column("submitted", Float, nullable=False),
)


match_holds = Table(  # a client's results in one match, held out of the count (gating's improbable record)
    "match_holds", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("match_id", Integer, ForeignKey("matches.id"), nullable=False),
    Column("client", String(64), nullable=False),
    Column("state", String(16), nullable=False),  # 'held', then the teacher's 'accepted' or 'dropped'
    Column("wins", Integer, nullable=False),  # the client's record when it was held (candidate wins, games)
    Column("games", Integer, nullable=False),
    Column("others_wins", Integer, nullable=False),  # the other counted clients' record then
    Column("others_games", Integer, nullable=False),
    Column("p_value", Float, nullable=False),
    Column("held", Float, nullable=False),
    Column("settled", Float, nullable=True),
    UniqueConstraint("match_id", "client"),
)

game_digests = Table(  # one row per game kept, self-play or match (validation.game_digest)
    "game_digests", metadata,
    Column("digest", String(64), primary_key=True),
    Column("kind", String(16), nullable=False),  # 'selfplay' or 'match'
    Column("seed", BigInteger, nullable=False),
    Column("client", String(64), nullable=False),
    Column("submitted", Float, nullable=False),
)


clients = Table(
    "clients", metadata,
    Column("name", String(32), primary_key=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("created", Float, nullable=False),
    Column("revoked", Float, nullable=True),
)

# Indexes of tables older databases already have (create_all adds tables, not indexes to old ones).
LATER_INDEXES = (Index("games_client_submitted", games.c.client, games.c.submitted),
                 Index("tasks_client_issued", tasks.c.client, tasks.c.issued),
                 Index("match_games_client", match_games.c.client))


def connect(url: str) -> Engine:
    """An engine for ``url`` with the tables created; SQLite gets WAL and a busy timeout."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30},
                               pool_size=16, max_overflow=16)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()
    else:
        engine = create_engine(url, pool_size=16, max_overflow=16, pool_pre_ping=True)
    metadata.create_all(engine)
    add_missing_columns(engine)
    for index in LATER_INDEXES:
        index.create(engine, checkfirst=True)
    return engine


def add_missing_columns(engine: Engine) -> None:
    """Add the (nullable) columns a database made by an older zero9 lacks, so its run goes on."""
    found = inspect(engine)
    with engine.begin() as connection:
        for table in metadata.sorted_tables:
            have = {column["name"] for column in found.get_columns(table.name)}
            for column in table.columns:
                if column.name not in have and column.nullable:
                    kind = column.type.compile(engine.dialect)
                    connection.execute(text(f'ALTER TABLE {table.name} ADD COLUMN "{column.name}" {kind}'))


@contextmanager
def transaction(engine: Engine):
    """One transaction: committed when the block ends, rolled back when it raises."""
    with engine.begin() as connection:
        yield connection


def referenced_files(connection: Connection) -> set[str]:
    """Every file (relative to the run directory) some row points to."""
    found = {row.sgf_file for row in connection.execute(select(games.c.sgf_file))}
    found |= {row.chunk_file for row in connection.execute(select(games.c.chunk_file))}
    found |= {row.sgf_file for row in connection.execute(select(match_games.c.sgf_file))}
    return found


def now() -> float:
    return time.time()
