"""Gating and rating: the matches between a run's nets and the anchors, and the Elo fit over them.

- **gate** (``--gate``): the candidate plays the best net under SPRT (elo0 = 0, elo1 = 35,
  alpha = beta = 0.05, the Leela Zero server's test) for at most ``--gate-games``; it is
  promoted if H1 is accepted, or, when the games run out undecided, if it scored at least
  :data:`GATE_FALLBACK_SCORE`.
- **rate**: the candidate plays ``--eval-games`` against the last rated net and against
  each **anchor** (``random`` = 0 Elo, the pure-MCTS ladder ``mcts:N``, and for Go
  ``gnugo`` when installed).
- **ratings**: :func:`zero9.arena.elo.bayeselo` over every rating game of the run,
  written to ``ratings/ratings.json`` with each rated net's round, games and wall time.
- **the rating line** (:func:`rating_line`, printed after each fit): the newest net's Elo
  with its 95% interval; **saturated** when it won every game against the strongest
  anchor it played: the games then say only that it is stronger than the anchors can
  measure, and the fit's number is the prior's (issue 42: ``./minitrain.sh gomoku8``
  printed "280 Elo" four rounds in a row while the anchors moved), so the line gives the
  interval's lower end, "≥ 108 Elo", and names the anchor (``--anchors`` can add a stronger
  one). Likewise a net that lost every game against the weakest anchor gets "≤ hi".

Every game is appended to its log (``logs/gate.jsonl``, ``ratings/games.jsonl``) as it
ends, with its round and opponent, so an interrupted match resumes with the games it lacks.
A rated net is named ``gen{generation:04d}-{hash}``.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zero9.arena.elo import bayeselo, sprt
from zero9.arena.gtpclient import find_gnugo
from zero9.arena.match import play_match_segments
from zero9.games import Game
from zero9.learn.rundir import RunDir
from zero9.learn.selfplay.pool import Pool
from zero9.util.files import append_jsonl, atomic_write_json, read_json, read_jsonl

log = logging.getLogger(__name__)

GATE_ELO0, GATE_ELO1, GATE_ALPHA, GATE_BETA = 0.0, 35.0, 0.05, 0.05
GATE_FALLBACK_SCORE = 0.55


@dataclass
class RunMatches:
    """Matches of a run's nets (``net:HASH``) and anchors, their games dealt over a pool's workers."""

    run_dir: RunDir
    game: Game
    pool: Pool
    device: str
    visits: int  # net visits per move
    seed: int | None = None

    def play(self, a: str, b: str, games: int, first_index: int = 0) -> list[float]:
        """Scores (1, 0.5, 0) of player ``a`` against ``b``, colours alternating by game index."""
        return self.play_all([(a, b, games, first_index)])[0]

    def play_all(self, matches: list[tuple[str, str, int, int]]) -> list[list[float]]:
        """Player A's scores for each match ``(a, b, games, first_index)``, all played at once.

        The games of all matches, in order, are cut into one contiguous block per pool
        worker; a block plays its games as segments (runs of one match's game indices),
        so each worker loads each player once.
        """
        games = [(k, i) for k, (_, _, n, first) in enumerate(matches) for i in range(first, first + n)]
        scores: list[list[float]] = [[] for _ in matches]
        if not games:
            return scores
        blocks = min(self.pool.size, len(games))
        bounds = [len(games) * w // blocks for w in range(blocks + 1)]
        calls, owners = [], []  # owners[c]: the match of each segment of call c
        for w in range(blocks):
            segments: list[dict[str, Any]] = []
            keys: list[int] = []
            for k, i in games[bounds[w]:bounds[w + 1]]:
                last = segments[-1] if segments else None
                if last and keys[-1] == k and last["first_index"] + last["games"] == i:
                    last["games"] += 1
                    continue
                seed = None if self.seed is None else self.seed * 7919 + i
                a, b = matches[k][0], matches[k][1]
                segments.append({"spec_a": self.player_spec(a), "spec_b": self.player_spec(b), "games": 1,
                                 "first_index": i, "seed": seed, "device": self.device})
                keys.append(k)
            calls.append((play_match_segments, {"game": self.game, "segments": segments}))
            owners.append(keys)
        for keys, parts in zip(owners, self.pool.call_all(calls), strict=True):
            for k, part in zip(keys, parts, strict=True):
                scores[k].extend(part)
        return scores

    def player_spec(self, spec: str) -> dict[str, Any]:
        if spec.startswith("net:"):
            return {"kind": "net", "path": str(self.run_dir.net_path(spec[4:])), "visits": self.visits,
                    "device": self.device}
        return {"kind": spec}


def gate(matches: RunMatches, generation: int, candidate: str, best: str, max_games: int) -> bool:
    """Whether round ``generation``'s candidate is promoted over ``best`` (module docstring)."""
    gate_log = matches.run_dir.logs_dir / "gate.jsonl"
    key = f"gate-{generation + 1}"
    games = [r for r in read_jsonl(gate_log) if r.get("key") == key]
    while True:
        w = sum(r["score"] == 1 for r in games)
        losses = sum(r["score"] == 0 for r in games)
        d = len(games) - w - losses
        llr, lower, upper, decision = sprt(w, losses, d, GATE_ELO0, GATE_ELO1, GATE_ALPHA, GATE_BETA)
        if decision is not None or len(games) >= max_games:
            break
        batch = min(2, max_games - len(games))
        for score in matches.play(f"net:{candidate}", f"net:{best}", batch, first_index=len(games)):
            row = {"key": key, "score": score, "time": time.time()}
            append_jsonl(gate_log, row)
            games.append(row)
    score = (w + 0.5 * d) / max(1, len(games))
    promoted = decision == "H1" or (decision is None and score >= GATE_FALLBACK_SCORE)
    log.info("gate: candidate %s vs best %s: +%s -%s =%s, llr %.2f [%.2f, %.2f] -> %s", candidate, best, w,
             losses, d, llr, lower, upper, "promoted" if promoted else "rejected")
    return promoted


def default_anchors(game: Game) -> list[str]:
    """random and mcts:100; Go adds GNU Go level 1 when it is installed."""
    found = ["random", "mcts:100"]
    if game.name == "go" and find_gnugo():
        found.append("gnugo:1")
    return found


def rate(matches: RunMatches, generation: int, candidate: str, games: int, anchors: list[str],
         wall_seconds: Callable[[], float]) -> None:
    """Rating games for a new net vs the last rated net and the anchors; refit ratings.json."""
    if games <= 0:
        return
    rd = matches.run_dir
    name = f"gen{generation:04d}-{candidate}"
    opponents = list(anchors)
    rated = {int(rated_name[3:7]): (net, rated_name) for net, rated_name in net_names(rd).items()}
    # The newest rated net before this one whose file is still here (the previous candidate when
    # every round is rated): a run directory carried on without its old nets rates against the
    # anchors and the nets it kept.
    kept = [g for g, (net, _) in rated.items() if g < generation and rd.net_path(net).exists()]
    if kept:
        opponents.insert(0, rated[max(kept)][1])
    existing = read_jsonl(rd.rating_games)
    todo = []  # (opponent, its spec, games still to play, first game index)
    for opp in opponents:
        done = sum(r["a"] == name and r["b"] == opp for r in existing)
        if done < games:
            opp_spec = f"net:{opp.split('-', 1)[1]}" if opp.startswith("gen") else opp
            todo.append((opp, opp_spec, games - done, done))
    # All opponents at once: the games are dealt over the workers instead of one match after another.
    results = matches.play_all([(f"net:{candidate}", spec, k, first) for _, spec, k, first in todo])
    for (opp, *_), scores in zip(todo, results, strict=True):
        for score in scores:
            append_jsonl(rd.rating_games, {"a": name, "b": opp, "score": score, "generation": generation,
                                           "time": time.time()})
    fit_ratings(rd, wall_seconds())


def net_names(run_dir: RunDir) -> dict[str, str]:
    """net hash -> its rating name, from the rating games played so far."""
    names = {}
    for r in read_jsonl(run_dir.rating_games):
        for key in ("a", "b"):
            if r[key].startswith("gen"):
                names[r[key].split("-", 1)[1]] = r[key]
    return names


def fit_ratings(rd: RunDir, wall_seconds: float) -> None:
    """Refit ``ratings/ratings.json`` over every rating game; a net rated for the first time is
    stamped with ``wall_seconds`` and the run's game count."""
    rows = read_jsonl(rd.rating_games)
    if not rows:
        return
    games = [(r["a"], r["b"], float(r["score"])) for r in rows]
    anchor = "random" if any("random" in (a, b) for a, b, _ in games) else None
    ratings = bayeselo(games, anchor=anchor) if anchor else bayeselo(games, anchor=games[0][0])
    gens = []
    status = rd.status()
    old = read_json(rd.ratings_path, default={}) or {}
    history = {g["name"]: g for g in old.get("generations", [])}
    for name, (elo, lo, hi) in sorted(ratings.items()):
        if not name.startswith("gen"):
            continue
        gen = int(name[3:7])
        entry = history.get(name, {"name": name, "generation": gen,
                                   "wall_seconds": wall_seconds, "games": status.get("games", 0)})
        entry.update({"elo": _finite(elo), "lo": _finite(lo), "hi": _finite(hi)})
        gens.append(entry)
    anchors = {k: _finite(v[0]) for k, v in ratings.items() if not k.startswith("gen")}
    atomic_write_json(rd.ratings_path, {
        "ratings": {k: [_finite(x) for x in v] for k, v in ratings.items()},
        "anchors": anchors, "generations": sorted(gens, key=lambda e: e["generation"]),
        "games": len(games), "updated": time.time()})
    last = gens[-1] if gens else None
    if last:
        log.info("%s", rating_line(last, anchors, games))


def rating_line(net: dict[str, Any], anchors: dict[str, float], games: list[tuple[str, str, float]]) -> str:
    """'rating: NAME 196 Elo [13, 379] (...)', or a bound when saturated (see **the rating line**).

    ``net``: its ratings.json entry (name, elo, lo, hi); ``games``: (net, opponent, its score).
    """
    name = net["name"]
    played = {b: [] for b in anchors}
    for a, b, score in games:
        if a == name and b in played:
            played[b].append(score)
    faced = sorted((elo, b) for b, elo in anchors.items() if played[b])
    told = f"(random = 0; anchors {', '.join(f'{k} {v:.0f}' for k, v in anchors.items())})"
    if faced and all(x == 1 for x in played[faced[-1][1]]):
        elo, top = faced[-1]
        return (f"rating: {name} ≥ {net['lo']:.0f} Elo: won all {len(played[top])} games against the "
                f"strongest anchor, {top} ({elo:.0f}), more than the anchors can measure "
                f"(--anchors can add a stronger one) {told}")
    if faced and all(x == 0 for x in played[faced[0][1]]):
        elo, bottom = faced[0]
        return (f"rating: {name} ≤ {net['hi']:.0f} Elo: lost all {len(played[bottom])} games against the "
                f"weakest anchor, {bottom} ({elo:.0f}) {told}")
    return f"rating: {name} {net['elo']:.0f} Elo [{net['lo']:.0f}, {net['hi']:.0f}] {told}"


def _finite(x: float) -> float:
    return float(x) if math.isfinite(x) else (9999.0 if x > 0 else -9999.0)
