"""The roster: the clients the teacher has given a credential, and which of them are revoked.

Vocabulary:

- **credential**: a random string (``z9c-`` and 32 hex digits) the teacher hands one client. It
  travels in the URL, ``http://HOST:PORT/c/CREDENTIAL/``, because Leela Zero's autogtp cannot
  send a header but can be pointed at any address; ``zero9 client`` does the same. The server
  keeps only its sha256, so a copy of the database gives no one a credential.
- **name**: what the status page, the log and every stored row call the client.
- **revoked**: a client whose credential no longer works, and whose games and match results
  the server has taken out of the training window and the match counts
  (:meth:`zero9.distributed.server.Server.revoke_client`).

Every worker process keeps the roster in memory and reads it again at most once a second, so a
revocation made by ``zero9 server RUN_DIR clients ...`` in another process applies within a second;
a credential the cached roster does not know is looked up in the database at once.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time

from sqlalchemy.engine import Engine

from zero9.distributed import db

CREDENTIAL_PREFIX = "z9c-"
CREDENTIAL_PATTERN = re.compile(r"z9c-[0-9a-f]{32}")
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
REFRESH_SECONDS = 1.0


def credential_hash(credential: str) -> str:
    return hashlib.sha256(credential.encode("ascii", "replace")).hexdigest()


class Roster:
    """The roster in the database, with a cached view for the request path (see the module docstring)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._names: dict[str, str] = {}  # credential hash -> name, of clients not revoked
        self._revoked: frozenset[str] = frozenset()
        self._read_at = -1e9
        self._lock = threading.Lock()

    def add(self, name: str) -> str:
        """Put ``name`` on the roster; returns its new credential (shown once: only its hash is kept)."""
        if not NAME_PATTERN.fullmatch(name) or name.startswith("anonymous"):
            raise ValueError(f"client name {name[:40]!r}: use 1 to 32 letters, digits, '_', '.', '-' "
                             "(not starting with 'anonymous')")
        credential = CREDENTIAL_PREFIX + secrets.token_hex(16)
        try:
            with db.transaction(self.engine) as c:
                c.execute(db.clients.insert().values(name=name, token_hash=credential_hash(credential),
                                                     created=db.now(), revoked=None))
        except db.IntegrityError:
            raise ValueError(f"client {name!r} is already on the roster") from None
        self._read_at = -1e9
        return credential

    def revoke(self, name: str) -> None:
        """Mark ``name`` revoked (ValueError if it is not on the roster); idempotent."""
        with db.transaction(self.engine) as c:
            found = c.execute(db.select(db.clients.c.revoked).where(db.clients.c.name == name)).first()
            if found is None:
                raise ValueError(f"no client {name[:40]!r} on the roster")
            if found.revoked is None:
                c.execute(db.clients.update().where(db.clients.c.name == name).values(revoked=db.now()))
        self._read_at = -1e9

    def entries(self) -> list:
        """Every roster row (name, created, revoked), oldest first."""
        with self.engine.connect() as c:
            return c.execute(db.select(db.clients.c.name, db.clients.c.created, db.clients.c.revoked)
                             .order_by(db.clients.c.created)).all()

    def name_of(self, credential: str) -> str | None:
        """The name of the client ``credential`` belongs to, or None (unknown or revoked)."""
        if not CREDENTIAL_PATTERN.fullmatch(credential):
            return None
        key = credential_hash(credential)
        self._refresh()
        name = self._names.get(key)
        if name is None:  # perhaps added since the last read: ask the database (one indexed read)
            with self.engine.connect() as c:
                row = c.execute(db.select(db.clients.c.name).where(
                    db.clients.c.token_hash == key, db.clients.c.revoked.is_(None))).first()
            name = row.name if row else None
        return name

    def revoked(self) -> frozenset[str]:
        self._refresh()
        return self._revoked

    def _refresh(self) -> None:
        if time.monotonic() - self._read_at < REFRESH_SECONDS:
            return
        with self._lock:
            if time.monotonic() - self._read_at < REFRESH_SECONDS:
                return
            with self.engine.connect() as c:
                rows = c.execute(db.select(db.clients)).all()
            self._names = {r.token_hash: r.name for r in rows if r.revoked is None}
            self._revoked = frozenset(r.name for r in rows if r.revoked is not None)
            self._read_at = time.monotonic()
