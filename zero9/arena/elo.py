"""Elo arithmetic: match intervals, the sequential probability ratio test, and ratings.

Vocabulary:

- **score**: a game's result from one player's view: 1 (win), 0.5 (draw), 0 (loss).
  A match's score ``p`` is the mean; draws count half, as in chess.
- **Elo difference**: the logistic model ``p = 1 / (1 + 10 ** (-elo / 400))``, so
  +400 Elo means 10:1 odds. ``elo_from_score`` and ``score_from_elo`` convert.
- **interval**: a 95% interval (``lo``, ``hi``). Win rates use the Wilson score
  interval (sane at 0 and 100%); Elo intervals are the win-rate interval mapped
  through ``elo_from_score``, so a perfect score has ``hi = inf`` -- honest, not a bug.
- **SPRT**: Wald's sequential test between H0 "A is ``elo0`` stronger" and H1 "A is
  ``elo1`` stronger". The log-likelihood ratio ``llr`` is compared with
  ``lower = log(beta / (1 - alpha))`` and ``upper = log((1 - beta) / alpha)``;
  crossing one accepts that hypothesis (Leela Zero's gating stops matches this way).
  The model is a Bernoulli one with each draw counted as half a win and half a
  loss, which is exact without draws and slightly conservative with them.
- **ratings**: ``bayeselo`` fits Bradley-Terry strengths (maximum likelihood, the
  model behind Rémi Coulom's BayesElo) to a list of ``(a, b, score_a)`` games, with
  ``prior`` virtual draws between every pair that met (BayesElo's default prior of 2)
  so that a player with only wins still gets a finite rating. One player, by
  Leela Zero's convention ``random``, is pinned to ``anchor_elo``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

import numpy as np

Z95 = 1.959963984540054  # two-sided 95% normal quantile
ELO_PER_NAT = 400.0 / math.log(10.0)  # Elo points per unit of natural log-odds


def score_from_elo(elo: float) -> float:
    """Expected score of a player ``elo`` points stronger than its opponent."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_from_score(p: float) -> float:
    """Elo difference that gives expected score ``p``; +-inf at 1 and 0."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"score {p!r} is not in [0, 1]")
    if p == 1.0:
        return math.inf
    if p == 0.0:
        return -math.inf
    return -400.0 * math.log10(1.0 / p - 1.0) + 0.0  # + 0.0 turns -0.0 into 0.0


def _check_counts(wins: float, losses: float, draws: float) -> None:
    for name, value in (("wins", wins), ("losses", losses), ("draws", draws)):
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value!r}")


def win_rate_interval(wins: float, losses: float, draws: float = 0) -> tuple[float, float, float]:
    """(score, lo, hi): the match score with its 95% Wilson interval. No games -> (0.5, 0, 1)."""
    _check_counts(wins, losses, draws)
    n = wins + losses + draws
    if n == 0:
        return 0.5, 0.0, 1.0
    p = (wins + 0.5 * draws) / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    lo, hi = max(0.0, centre - half), min(1.0, centre + half)
    # Float fuzz would turn a perfect score's bound of 1 into 0.99999999 (= +6000 Elo).
    if losses + draws == 0:
        hi = 1.0
    if wins + draws == 0:
        lo = 0.0
    return p, lo, hi


def elo_interval(wins: float, losses: float, draws: float = 0) -> tuple[float, float, float]:
    """(elo, lo, hi): the Elo difference the match score implies, with its 95% interval."""
    p, lo, hi = win_rate_interval(wins, losses, draws)
    return elo_from_score(p), elo_from_score(lo), elo_from_score(hi)


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """(lower, upper): the LLR thresholds that accept H0 and H1."""
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError(f"alpha and beta must be in (0, 1), got {alpha!r}, {beta!r}")
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def sprt(
    wins: float,
    losses: float,
    draws: float = 0,
    elo0: float = 0.0,
    elo1: float = 35.0,
    alpha: float = 0.05,
    beta: float = 0.05,
) -> tuple[float, float, float, str | None]:
    """(llr, lower, upper, decision): Wald's SPRT of elo0 against elo1; decision 'H1', 'H0' or None."""
    _check_counts(wins, losses, draws)
    if elo1 <= elo0:
        raise ValueError(f"elo1 ({elo1}) must be greater than elo0 ({elo0})")
    lower, upper = sprt_bounds(alpha, beta)
    p0, p1 = score_from_elo(elo0), score_from_elo(elo1)
    won, lost = wins + 0.5 * draws, losses + 0.5 * draws
    llr = won * math.log(p1 / p0) + lost * math.log((1 - p1) / (1 - p0))
    decision = "H1" if llr >= upper else "H0" if llr <= lower else None
    return llr, lower, upper, decision


# ----------------------------------------------------------------------------- ratings


def _pair_tables(
    games: Iterable[tuple[str, str, float]], prior: float
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Players (sorted) with n[i, j] games and s[i, j] points of i against j, prior included."""
    count: dict[tuple[str, str], float] = defaultdict(float)
    points: dict[tuple[str, str], float] = defaultdict(float)
    names: set[str] = set()
    for a, b, score_a in games:
        if score_a not in (0, 0.5, 1):
            raise ValueError(f"game {a} vs {b}: score {score_a!r} must be 1, 0.5 or 0")
        if a == b:
            raise ValueError(f"game {a} vs {b}: a player cannot play itself")
        names.update((a, b))
        count[a, b] += 1
        count[b, a] += 1
        points[a, b] += score_a
        points[b, a] += 1 - score_a
    players = sorted(names)
    index = {name: i for i, name in enumerate(players)}
    n = np.zeros((len(players), len(players)))
    s = np.zeros_like(n)
    for (a, b), c in count.items():
        i, j = index[a], index[b]
        n[i, j] = c + prior
        s[i, j] = points[a, b] + prior / 2
    return players, n, s


def _components(n: np.ndarray) -> list[list[int]]:
    """Groups of players connected by games (ratings only compare within a group)."""
    seen: set[int] = set()
    groups = []
    for start in range(len(n)):
        if start in seen:
            continue
        stack, group = [start], []
        seen.add(start)
        while stack:
            i = stack.pop()
            group.append(i)
            for j in np.nonzero(n[i])[0]:
                if int(j) not in seen:
                    seen.add(int(j))
                    stack.append(int(j))
        groups.append(sorted(group))
    return groups


def _fit_group(n: np.ndarray, s: np.ndarray, pinned: int) -> tuple[np.ndarray, np.ndarray]:
    """Newton's method on log-strengths with player ``pinned`` fixed at 0; (theta, variances)."""
    k = len(n)
    theta = np.zeros(k)
    free = [i for i in range(k) if i != pinned]
    info = np.zeros((k, k))
    for _ in range(100):
        diff = theta[:, None] - theta[None, :]
        expect = 1.0 / (1.0 + np.exp(-diff))
        grad = (s - n * expect).sum(axis=1)
        w = n * expect * (1 - expect)
        info = np.diag(w.sum(axis=1)) - w  # minus the Hessian of the log-likelihood
        if not free:
            break
        step = np.linalg.solve(info[np.ix_(free, free)], grad[free])
        step = np.clip(step, -3.0, 3.0)  # damp the first steps when someone has only wins
        theta[free] += step
        if np.max(np.abs(step)) < 1e-10:
            break
    variances = np.zeros(k)
    if free:
        cov = np.linalg.inv(info[np.ix_(free, free)])
        variances[free] = np.diag(cov)
    return theta, variances


def bayeselo(
    games: Iterable[tuple[str, str, float]],
    anchor: str = "random",
    anchor_elo: float = 0.0,
    prior: float = 2.0,
) -> dict[str, tuple[float, float, float]]:
    """name -> (elo, lo, hi): maximum-likelihood Bradley-Terry ratings with 95% intervals.

    ``anchor`` is pinned at ``anchor_elo`` (interval of zero width). Players not
    connected to the anchor by any chain of games cannot be compared with it: such a
    group has its alphabetically first player pinned at ``anchor_elo`` instead, which
    keeps the numbers finite but means nothing across groups. With ``prior=0`` a
    player that never lost has no finite maximum-likelihood rating.
    """
    if prior < 0:
        raise ValueError(f"prior must be >= 0, got {prior!r}")
    players, n, s = _pair_tables(games, prior)
    ratings: dict[str, tuple[float, float, float]] = {}
    for group in _components(n):
        names = [players[i] for i in group]
        pinned = names.index(anchor) if anchor in names else 0
        sub = np.ix_(group, group)
        theta, variances = _fit_group(n[sub], s[sub], pinned)
        for name, t, var in zip(names, theta, variances, strict=True):
            elo = anchor_elo + ELO_PER_NAT * float(t)
            half = Z95 * ELO_PER_NAT * math.sqrt(max(float(var), 0.0))
            ratings[name] = (elo, elo - half, elo + half)
    return ratings
