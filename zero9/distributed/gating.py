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
- **counted games**: a match's results from clients that are on the roster, not revoked, and
  not held. Anonymous clients are never handed match tasks; only roster clients answer them.
- **improbable record**: a client whose record in a match (candidate wins of its games) is
  unlikely to come from the same games as the other counted clients' records together:
  Fisher's exact test (two-sided) on the 2x2 table of wins and losses, the client against
  the others, gives p below ``suspicion_p`` (1e-4), once the client and the others have each
  at least ``suspicion_games`` (10) counted games. Fisher's rather than a binomial against
  the others' share: that share is itself an estimate, and with two clients the binomial
  picks whichever has fewer games, while Fisher's gives both the same p (the server cannot
  tell which of two is lying: both are held). A forger reporting the candidate's win in every
  game beside one honest client is held before SPRT (elo1 35) could promote the candidate (it
  did after 59 games without the test), beside two it is held alone; no honest client was held
  in 50 simulated matches of five clients and 400 games (tests/test_gating_suspicion.py). A
  forger who reports wins only somewhat more often than the truth is not caught by this: the
  share cap and ``min_clients`` bound what it can do, and ``revoke`` undoes it.
- **held**: the results of a client with an improbable record in that match, kept out of the
  count (and of the ratings) and out of the match's further tasks, flagged on the status page,
  until the teacher decides: ``zero9 server RUN_DIR clients accept NAME`` counts them (and
  tests that client no more in that match), ``clients drop NAME`` never counts them.
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
import math
import threading
from collections import Counter
from collections.abc import Callable

from sqlalchemy.engine import Engine

from zero9.arena.elo import sprt
from zero9.distributed import db
from zero9.distributed.config import SPRT_ALPHA, SPRT_BETA, SPRT_ELO0, Gating
from zero9.distributed.roster import Roster

log = logging.getLogger("zero9.server")


def fisher_p(wins: int, losses: int, other_wins: int, other_losses: int) -> float:
    """Fisher's exact test, two-sided: the probability, with the table's margins fixed, of a split of
    the wins at most as likely as this one (the client's ``wins`` of its games against the others')."""
    games, total_wins = wins + losses, wins + other_wins
    total = games + other_wins + other_losses

    def log_p(x: int) -> float:  # hypergeometric: x of the client's games are wins
        return (_log_choose(total_wins, x) + _log_choose(total - total_wins, games - x)
                - _log_choose(total, games))

    observed = log_p(wins)
    low, high = max(0, games - (total - total_wins)), min(games, total_wins)
    return min(1.0, sum(math.exp(lp) for lp in map(log_p, range(low, high + 1)) if lp <= observed + 1e-9))


def _log_choose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def improbable_records(records: dict[str, tuple[int, int]], p_limit: float, min_games: int
                       ) -> dict[str, float]:
    """{client: p} of the clients whose ``(candidate wins, games)`` record is improbable against the
    other clients' records pooled (see the module docstring), each tested once it and the others
    have ``min_games`` games."""
    all_wins = sum(w for w, _ in records.values())
    all_games = sum(n for _, n in records.values())
    found = {}
    for client, (wins, games) in records.items():
        other_wins, other_games = all_wins - wins, all_games - games
        if games < min_games or other_games < min_games:
            continue
        p = fisher_p(wins, games - wins, other_wins, other_games - other_wins)
        if p < p_limit:
            found[client] = p
    return found


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
            uncounted = self.uncounted(c, match.id)
        if client in uncounted:
            return None  # a held client plays no more of the match until the teacher decides
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
        records = self.records(c, match)
        wins = sum(w for w, _ in records.values())
        games = {client: n for client, (_, n) in records.items()}
        return wins, sum(games.values()) - wins, games

    def records(self, c, match, held_too: bool = False) -> dict[str, tuple[int, int]]:
        """{client: (candidate wins, games)} over the match's counted games (``held_too``: and the held)."""
        g = db.match_games.c
        revoked = self.roster.revoked()
        skip = set() if held_too else self.uncounted(c, match.id)
        found: dict[str, list[int]] = {}
        for r in c.execute(db.select(g.client, g.winner_net).where(g.match_id == match.id)):
            if r.client in revoked or r.client.startswith("anonymous") or r.client in skip:
                continue
            record = found.setdefault(r.client, [0, 0])
            record[0] += r.winner_net == match.candidate
            record[1] += 1
        return {client: (w, n) for client, (w, n) in found.items()}

    @staticmethod
    def uncounted(c, match_id: int) -> set[str]:
        """The clients whose results in this match are held or dropped."""
        h = db.match_holds.c
        return {r.client for r in c.execute(db.select(h.client).where(
            h.match_id == match_id, h.state.in_(("held", "dropped"))))}

    def hold_improbable(self, c, match) -> list[str]:
        """Hold the results of the clients whose record in ``match`` is improbable (see the module
        docstring); returns their names. A client the teacher accepted is not tested again."""
        h = db.match_holds.c
        records = self.records(c, match)
        accepted = {r.client for r in c.execute(db.select(h.client).where(
            h.match_id == match.id, h.state == "accepted"))}
        found = improbable_records(records, self.rules.suspicion_p, self.rules.suspicion_games)
        all_wins, all_games = sum(w for w, _ in records.values()), sum(n for _, n in records.values())
        held = []
        for client, p in sorted(found.items()):
            if client in accepted:
                continue
            wins, games = records[client]
            c.execute(db.match_holds.insert().values(
                match_id=match.id, client=client, state="held", wins=wins, games=games,
                others_wins=all_wins - wins, others_games=all_games - games, p_value=p, held=db.now()))
            held.append(client)
            log.warning("match %d: %s's results held (candidate won %d of its %d games, %d of the others' "
                        "%d: p = %.2g); 'zero9 server RUN_DIR clients accept|drop %s' decides", match.id,
                        client, wins, games, all_wins - wins, all_games - games, p, client)
        return held

    def decide(self, wins: int, losses: int, contributors: dict[str, int]) -> str | None:
        decision = sprt(wins, losses, 0, SPRT_ELO0, self.rules.elo1, SPRT_ALPHA, SPRT_BETA)[3]
        if decision is None and wins + losses >= self.rules.match_games:
            decision = "H0"  # Leela Zero: no pass within the game budget is a fail
        if decision is not None and len(contributors) < self.rules.min_clients:
            return None  # one client alone never decides
        return decision

    def update(self, match_id: int) -> str | None:
        """Count a match again; on a decision, record it with its contributors and promote a pass."""
        try:
            return self._update(match_id)
        except db.IntegrityError:  # another worker process held the same client first: it counted
            return None

    def _update(self, match_id: int) -> str | None:
        with self.lock, db.transaction(self.engine) as c:
            match = c.execute(db.select(db.matches).where(db.matches.c.id == match_id)).first()
            if match.decision is not None:
                return match.decision
            self.hold_improbable(c, match)
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

    def settle(self, client: str, accept: bool) -> list[int]:
        """The teacher's decision on ``client``'s held results (every match): count them (``accept``)
        or never count them; then count each of those matches again. Returns the matches' ids."""
        h = db.match_holds.c
        with db.transaction(self.engine) as c:
            ids = sorted(r.match_id for r in c.execute(db.select(h.match_id).where(
                h.client == client, h.state == "held")))
            c.execute(db.match_holds.update().where(h.client == client, h.state == "held")
                      .values(state="accepted" if accept else "dropped", settled=db.now()))
        for match_id in ids:
            log.warning("match %d: %s's held results %s by the teacher", match_id, client,
                        "accepted" if accept else "dropped")
            self.on_change()
            self.update(match_id)
        return ids

    def holds(self, c) -> list[dict]:
        """Every hold, the newest first: what the status page flags."""
        h = db.match_holds.c
        return [dict(row._mapping) for row in c.execute(db.select(db.match_holds).order_by(h.id.desc()))]

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
