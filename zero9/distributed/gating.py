"""Gating: who may play a candidate's match games, and how the results decide it.

Vocabulary:

- **lease**: a match task handed to one roster client. It expires after ``lease_minutes``: its
  seat goes back to the pool and a late answer is refused (410). A client holds at most
  ``tasks_per_client`` leases at once, and at most ``match_in_flight`` are out for a match, so
  clients that fetch tasks and never answer cannot starve the others.
- **share**: the games of one match (answered or leased) one client has. A client is handed a
  match task only while its share stays at most ``client_share`` of the match's games (or below
  ``tasks_per_client`` games, so that a match can start), so no one client's results decide a
  match alone.
- **counted games**: a match's results from clients that are on the roster and not revoked.
  Anonymous clients are never handed match tasks; only roster clients answer them.
- **decision**: SPRT(elo0 = 0, elo1) over the counted games (:func:`zero9.arena.elo.sprt`), taken
  only once at least ``min_clients`` different clients contributed; ``H1`` promotes the
  candidate, ``H0`` (or ``match_games`` games without a decision) rejects it. The decision is
  stored with its **contributors** (JSON ``{client: games}``).
- **recount**: after a client is revoked, every match it played in is counted again without it:
  a decision that no longer holds is undone (a promotion too), and the match runs on.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Callable

from sqlalchemy.engine import Engine

from zero9.arena.elo import sprt
from zero9.distributed import db
from zero9.distributed.config import SPRT_ALPHA, SPRT_BETA, SPRT_ELO0, Gating
from zero9.distributed.roster import Roster

log = logging.getLogger("zero9.server")


class Gate:
    """The match rules of one server (see the module docstring)."""

    def __init__(self, engine: Engine, rules: Gating, roster: Roster, on_change: Callable[[], None]):
        self.engine, self.rules, self.roster, self.on_change = engine, rules, roster, on_change
        self.lock = threading.Lock()  # one decision at a time in this process

    @property
    def lease_seconds(self) -> float:
        return 60.0 * self.rules.lease_minutes

    # --- handing out --------------------------------------------------------------------------

    def match_for(self, client: str):
        """The oldest undecided match ``client`` may be handed a game of now, or None."""
        since = db.now() - self.lease_seconds
        t, g = db.tasks.c, db.match_games.c
        with self.engine.connect() as c:
            match = c.execute(db.select(db.matches).where(db.matches.c.decision.is_(None))
                              .order_by(db.matches.c.id).limit(1)).first()
            if match is None:
                return None
            open_leases = (db.select(t.client, t.match_id).select_from(
                db.tasks.outerjoin(db.match_games, g.seed == t.seed))
                .where(t.kind == "match", t.issued > since, g.id.is_(None)))
            leases = c.execute(open_leases).all()
            played = Counter(row.client for row in c.execute(
                db.select(g.client).where(g.match_id == match.id)) if row.client not in self.roster.revoked())
        if sum(1 for row in leases if row.client == client) >= self.rules.tasks_per_client:
            return None
        in_match = Counter(row.client for row in leases if row.match_id == match.id)
        if sum(in_match.values()) >= self.rules.match_in_flight:
            return None
        mine = played[client] + in_match[client]
        total = sum(played.values()) + sum(in_match.values())
        allowed = max(self.rules.tasks_per_client, self.rules.client_share * (total + 1))
        return match if mine < allowed else None

    # --- deciding -----------------------------------------------------------------------------

    def score(self, c, match) -> tuple[int, int, dict[str, int]]:
        """(candidate wins, losses, {client: games}) over the match's counted games."""
        g = db.match_games.c
        revoked = self.roster.revoked()
        rows = [r for r in c.execute(db.select(g.client, g.winner_net).where(g.match_id == match.id))
                if r.client not in revoked and not r.client.startswith("anonymous")]
        wins = sum(1 for r in rows if r.winner_net == match.candidate)
        return wins, len(rows) - wins, dict(Counter(r.client for r in rows))

    def decide(self, wins: int, losses: int, contributors: dict[str, int]) -> str | None:
        decision = sprt(wins, losses, 0, SPRT_ELO0, self.rules.elo1, SPRT_ALPHA, SPRT_BETA)[3]
        if decision is None and wins + losses >= self.rules.match_games:
            decision = "H0"  # Leela Zero: no pass within the game budget is a fail
        if decision is not None and len(contributors) < self.rules.min_clients:
            return None  # one client alone never decides
        return decision

    def update(self, match_id: int) -> str | None:
        """Count a match again; on a decision, record it with its contributors and promote a pass."""
        with self.lock, db.transaction(self.engine) as c:
            match = c.execute(db.select(db.matches).where(db.matches.c.id == match_id)).first()
            if match.decision is not None:
                return match.decision
            wins, losses, contributors = self.score(c, match)
            decision = self.decide(wins, losses, contributors)
            if decision is None:
                return None
            stamp = db.now()
            decided = c.execute(db.matches.update()
                                .where(db.matches.c.id == match_id, db.matches.c.decision.is_(None))
                                .values(decision=decision, decided=stamp,
                                        contributors=json.dumps(contributors, sort_keys=True))).rowcount
            if not decided:  # another worker process decided it first
                return decision
            if decision == "H1":
                c.execute(db.networks.update().where(db.networks.c.hash == match.candidate)
                          .values(best_since=stamp))
        self.on_change()
        log.info("match %d: %s %s after %d-%d, counting games of %s", match_id, match.candidate[:8],
                 "promoted" if decision == "H1" else "rejected", wins, losses,
                 ", ".join(f"{k} ({v})" for k, v in sorted(contributors.items())))
        return decision

    def recount(self, client: str) -> list[int]:
        """Count again every match ``client`` played in (it was revoked); returns their ids."""
        g = db.match_games.c
        with self.engine.connect() as c:
            ids = sorted({r.match_id for r in c.execute(db.select(g.match_id).where(g.client == client))})
        for match_id in ids:
            with self.lock, db.transaction(self.engine) as c:
                match = c.execute(db.select(db.matches).where(db.matches.c.id == match_id)).first()
                if match.decision is None:
                    continue
                wins, losses, contributors = self.score(c, match)
                if self.decide(wins, losses, contributors) == match.decision:
                    continue  # the decision holds without the revoked client
                c.execute(db.matches.update().where(db.matches.c.id == match_id)
                          .values(decision=None, decided=None, contributors=None))
                if match.decision == "H1":
                    c.execute(db.networks.update().where(db.networks.c.hash == match.candidate)
                              .values(best_since=None))
                undone = "promotion" if match.decision == "H1" else "rejection"
                log.warning("match %d: the %s of %s is undone (%s revoked); it runs on", match_id,
                            undone, match.candidate[:8], client)
            self.on_change()
            self.update(match_id)
        return ids
