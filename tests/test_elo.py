"""Elo maths: conversions, Wilson intervals, SPRT decisions and Bradley-Terry ratings."""

import math
import random

import pytest

from zero9.arena.elo import (
    bayeselo,
    elo_from_score,
    elo_interval,
    score_from_elo,
    sprt,
    sprt_bounds,
    win_rate_interval,
)


def test_elo_score_round_trip_and_known_values():
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(0.75) == pytest.approx(190.848, abs=1e-3)
    assert score_from_elo(400) == pytest.approx(10 / 11)
    for elo in (-600, -35, 0, 35, 600):
        assert elo_from_score(score_from_elo(elo)) == pytest.approx(elo)
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf
    with pytest.raises(ValueError, match="score"):
        elo_from_score(1.5)


def test_wilson_interval_matches_the_textbook_figures():
    p, lo, hi = win_rate_interval(7, 3, 0)
    assert p == 0.7
    assert lo == pytest.approx(0.3968, abs=1e-4) and hi == pytest.approx(0.8922, abs=1e-4)
    # Draws count half: 5 wins 5 draws is the same score as 7.5 of 10.
    assert win_rate_interval(5, 0, 5)[0] == 0.75
    assert win_rate_interval(0, 0, 0) == (0.5, 0.0, 1.0)
    with pytest.raises(ValueError, match="wins"):
        win_rate_interval(-1, 0, 0)


def test_elo_interval_brackets_the_estimate_and_is_infinite_for_a_perfect_score():
    elo, lo, hi = elo_interval(30, 20, 10)
    assert lo < elo < hi
    assert elo == pytest.approx(elo_from_score(35 / 60))
    elo, lo, hi = elo_interval(10, 0, 0)
    assert elo == math.inf and hi == math.inf and 100 < lo < 300
    elo, lo, hi = elo_interval(0, 10, 0)
    assert elo == -math.inf and lo == -math.inf


def test_sprt_decides_both_ways_and_waits_when_unclear():
    lower, upper = sprt_bounds(0.05, 0.05)
    assert upper == pytest.approx(math.log(19)) and lower == pytest.approx(-math.log(19))
    assert sprt(0, 0, 0) == (0.0, lower, upper, None)
    assert sprt(10, 8, 2)[3] is None
    llr, _, _, decision = sprt(300, 100, 0, elo0=0, elo1=35)
    assert decision == "H1" and llr > upper
    llr, _, _, decision = sprt(100, 300, 0, elo0=0, elo1=35)
    assert decision == "H0" and llr < lower
    # A win is evidence for H1, a loss against it.
    assert sprt(11, 10, 0)[0] > sprt(10, 10, 0)[0] > sprt(10, 11, 0)[0]
    with pytest.raises(ValueError, match="elo1"):
        sprt(1, 1, 0, elo0=35, elo1=0)


def _simulate(true_elo: dict[str, float], games_per_pair: int, seed: int = 1):
    rng = random.Random(seed)
    names = sorted(true_elo)
    games = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            expected = score_from_elo(true_elo[a] - true_elo[b])
            for _ in range(games_per_pair):
                games.append((a, b, 1 if rng.random() < expected else 0))
    return games


def test_bayeselo_recovers_simulated_ratings_with_random_anchored_at_zero():
    truth = {"random": 0.0, "gen1": 250.0, "gen2": 500.0}
    ratings = bayeselo(_simulate(truth, 400))
    assert ratings["random"] == (0.0, 0.0, 0.0)
    for name, elo in truth.items():
        estimate, lo, hi = ratings[name]
        assert lo <= elo <= hi, (name, ratings[name])
        assert abs(estimate - elo) < 60
    assert ratings["gen1"][0] < ratings["gen2"][0]


def test_bayeselo_prior_keeps_an_unbeaten_player_finite_and_ordered():
    games = [("random", "net", 0)] * 6 + [("net", "gnugo", 0.5)] * 2
    ratings = bayeselo(games, anchor_elo=-100.0)
    assert ratings["random"][0] == -100.0
    assert all(math.isfinite(v) for r in ratings.values() for v in r)
    assert ratings["net"][0] > ratings["random"][0]
    assert ratings["net"][1] < ratings["net"][0] < ratings["net"][2]


def test_bayeselo_rejects_bad_games():
    with pytest.raises(ValueError, match="score"):
        bayeselo([("a", "b", 2)])
    with pytest.raises(ValueError, match="itself"):
        bayeselo([("a", "a", 1)])
