"""What ``zero9 server`` reports about itself: the data of ``GET /status.json`` and of the status page.

- **counts**: games, match games and nets; games and clients of the last hour;
- **matches**: the latest twenty, each with its score and SPRT state (:func:`zero9.arena.elo.sprt`);
- **ratings**: Elo with 95% intervals from every counted match game (a revoked client's games, and
  results held or dropped by gating, do not count), maximum-likelihood
  (:func:`zero9.arena.elo.bayeselo`), the start net pinned at 0; worked out again only when the
  games, the revocations or the holds change;
- **contributions**: per client (roster and anonymous), games, positions, match games, last upload.
- **held results**: a client's results in a match that gating holds out of the count for an
  improbable record (:mod:`zero9.distributed.gating`), with the records and the p-value, until
  the teacher accepts or drops them.

Everything here only reads; :meth:`zero9.distributed.server.Server.status` puts the parts
together and :mod:`zero9.distributed.pages` draws the page from them.
"""

from __future__ import annotations

import json

from zero9.arena.elo import bayeselo, sprt
from zero9.distributed import db
from zero9.distributed.config import SPRT_ALPHA, SPRT_BETA, SPRT_ELO0
from zero9.distributed.gating import Gate
from zero9.distributed.roster import Roster

RECENT_MATCHES = 20  # matches the status lists, the latest first


class Ratings:
    """The nets' Elo from the match games, remembered until a game or a revocation changes them."""

    def __init__(self, engine, roster: Roster):
        self.engine, self.roster = engine, roster
        self._cache: tuple[tuple, dict] = ((), {})

    def read(self) -> dict[str, tuple[float, float, float]]:
        """Elo with 95% intervals of every net in a counted match game, the start net at 0."""
        g, h = db.match_games.c, db.match_holds.c
        with self.engine.connect() as c:
            rows = c.execute(db.select(g.winner_net, g.loser_net, g.client, g.match_id)).all()
            anchor = c.execute(db.select(db.networks.c.hash).where(db.networks.c.number == 0)).scalar()
            uncounted = frozenset((r.match_id, r.client) for r in c.execute(
                db.select(h.match_id, h.client).where(h.state.in_(("held", "dropped")))))
        revoked = self.roster.revoked()
        key = (len(rows), revoked, uncounted)
        if self._cache[0] == key:
            return self._cache[1]
        results = [(w, l, 1.0) for w, l, client, match_id in rows
                   if client not in revoked and (match_id, client) not in uncounted]
        ratings = bayeselo(results, anchor=anchor or "") if results else {}
        if anchor:
            ratings.setdefault(anchor, (0.0, 0.0, 0.0))
        self._cache = (key, ratings)
        return ratings


def contributions(c, roster: Roster) -> list[dict]:
    """Per client (roster and anonymous): games, positions, match games, last upload, revoked."""
    g, m = db.games.c, db.match_games.c
    found: dict[str, dict] = {}
    for row in roster.entries():
        found[row.name] = {"client": row.name, "games": 0, "positions": 0, "match_games": 0,
                           "last_seen": None, "revoked": row.revoked is not None}

    def entry(name: str) -> dict:
        return found.setdefault(name, {"client": name, "games": 0, "positions": 0, "match_games": 0,
                                       "last_seen": None, "revoked": False})

    per_client = db.select(g.client, db.func.count(), db.func.sum(g.positions), db.func.max(g.submitted))
    for name, games, positions, last in c.execute(per_client.group_by(g.client)):
        e = entry(name)
        e.update(games=games, positions=int(positions or 0), last_seen=last)
    for name, games, last in c.execute(db.select(m.client, db.func.count(), db.func.max(m.submitted))
                                       .group_by(m.client)):
        e = entry(name)
        e["match_games"] = games
        e["last_seen"] = max(last, e["last_seen"] or 0.0)
    return sorted(found.values(), key=lambda e: (-e["games"] - e["match_games"], e["client"]))


def holds(c, gate: Gate) -> list[dict]:
    """Every client's results held (or once held) by gating, the newest first, for the status."""
    return [{"match": h["match_id"], "client": h["client"], "state": h["state"], "wins": h["wins"],
             "games": h["games"], "others_wins": h["others_wins"], "others_games": h["others_games"],
             "p_value": float(f"{h['p_value']:.3g}"), "held": h["held"], "settled": h["settled"]}
            for h in gate.holds(c)]


def counts(c) -> dict[str, int]:
    """Games, match games and nets stored; games and clients (handed a task) of the last hour."""
    hour_ago = db.now() - 3600

    def count(table, *where) -> int:
        return c.execute(db.select(db.func.count()).select_from(table).where(*where)).scalar_one()

    return {"games": count(db.games), "match_games": count(db.match_games), "networks": count(db.networks),
            "games_last_hour": count(db.games, db.games.c.submitted > hour_ago),
            "clients_last_hour": c.execute(db.select(db.func.count(db.distinct(db.tasks.c.client)))
                                           .where(db.tasks.c.issued > hour_ago)).scalar_one()}


def recent_matches(c, gate: Gate, elo1: float) -> list[dict]:
    """The latest matches, each with its score, SPRT bounds, decision and contributors."""
    rows = c.execute(db.select(db.matches).order_by(db.matches.c.id.desc()).limit(RECENT_MATCHES)).all()
    matches = []
    for m in rows:
        wins, losses, contributors = gate.score(c, m)
        llr, lower, upper, _ = sprt(wins, losses, 0, SPRT_ELO0, elo1, SPRT_ALPHA, SPRT_BETA)
        matches.append({"id": m.id, "candidate": m.candidate, "best": m.best, "wins": wins,
                        "losses": losses, "llr": round(llr, 3), "lower": round(lower, 3),
                        "upper": round(upper, 3), "decision": m.decision,
                        "contributors": (json.loads(m.contributors) if m.contributors
                                         else contributors)})
    return matches


def networks(c) -> list:
    """Every net's row, by number."""
    return c.execute(db.select(db.networks).order_by(db.networks.c.number)).all()


def network_list(nets: list, ratings: dict[str, tuple[float, float, float]]) -> list[dict]:
    """The nets as the status lists them, each with its Elo and interval (None: not rated yet)."""
    return [{"number": n.number, "hash": n.hash, "blocks": n.blocks, "filters": n.filters,
             "training_steps": n.training_steps, "created": n.created, "best": n.best_since is not None,
             "elo": [round(x, 1) for x in ratings[n.hash]] if n.hash in ratings else None}
            for n in nets]
