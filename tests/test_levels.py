"""Named AI levels: the weakened choice, the level spec, and a real level playing on the shipped net."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from zero9.arena.levels import LEVELS, Level, choose_weakened, find_level
from zero9.arena.match import play_match
from zero9.arena.players import make_player
from zero9.games import make_game

ROOT = Path(__file__).resolve().parents[1]


def test_levels_are_named_weakest_first_and_found_in_any_case():
    names = [level.name for level in LEVELS.values()]
    assert names == ["Beginner", "Casual", "Club", "Strong", "Max"]
    visits = [level.visits for level in LEVELS.values()]
    assert visits == sorted(visits)
    assert find_level(" CLUB ").name == "Club"
    with pytest.raises(ValueError, match="unknown level 'grandmaster': expected one of Beginner, Casual"):
        find_level("grandmaster")
    with pytest.raises(ValueError, match="visits and top_k"):
        Level("x", visits=0)


def test_weakened_choice_keeps_to_the_top_k_and_never_an_illegal_move():
    rng = np.random.default_rng(0)
    visits = np.array([0, 50, 30, 15, 5, 0, 0], dtype=float)
    priors = np.array([0.0, 0.3, 0.3, 0.2, 0.1, 0.1, 0.0])  # action 0 and 6 illegal
    level = Level("t", 8, top_k=3, temperature=1.0)
    picks = [choose_weakened(visits, priors, level, rng) for _ in range(3000)]
    counts = np.bincount(picks, minlength=7)
    assert set(np.flatnonzero(counts)) == {1, 2, 3}
    assert counts[1] > counts[2] > counts[3] > 0  # the weights follow visits and priors
    greedy = Level("g", 8, top_k=3, temperature=0.0)
    assert {choose_weakened(visits, priors, greedy, rng) for _ in range(50)} == {1}
    # One visit (the policy alone): unvisited moves are ranked by prior, illegal ones never drawn.
    only_priors = np.zeros(7)
    picks = {choose_weakened(only_priors, priors, Level("b", 1, top_k=8, temperature=1.0), rng)
             for _ in range(500)}
    assert picks == {1, 2, 3, 4, 5}


def test_a_level_plays_full_games_through_the_player_factory():
    game = make_game("go", 9, komi=7.5)
    agent = make_player("level:beginner", game, seed=3)
    assert agent.name == "level:beginner"
    result = play_match("level:beginner", "random", game, 2, seed=3, max_moves=40)
    assert result.wins + result.losses + result.draws == 2
    with pytest.raises(ValueError, match="no shipped net for go 7x7"):
        make_player("level:club", make_game("go", 7))


def test_level_table_script_plays_the_ladder_and_prints_the_table(tmp_path):
    """scripts/level_table.py on its first pair with 2 games: matches through zero9 match, then Elo."""
    command = [sys.executable, str(ROOT / "scripts" / "level_table.py"), "--out", str(tmp_path),
               "--pairs", "1", "--games", "2"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(list((tmp_path / "level_beginner-vs-random").glob("*.sgf"))) == 2
    assert "2 games, 0 skipped" in done.stdout
    rows = [line for line in done.stdout.splitlines() if line.startswith("| level:beginner |")]
    assert rows and "| random | 0 |" in done.stdout, done.stdout


def test_a_level_and_its_visits_are_named_in_one_place():
    """Issue 43: the window, `zero9 play` and the AI's choice all ask zero9.arena.levels which level a
    number of visits is: the chosen level while it plays at them, else the weakest that does (Beginner
    and Casual both search 1 visit: after Casual, 1 visit stays Casual), else custom."""
    from zero9.arena.levels import LEVELS, level_playing, name_for_visits

    assert level_playing("club", LEVELS["club"].visits) is LEVELS["club"]
    assert level_playing("club", 17) is None and level_playing("nonsense", 1) is None
    assert name_for_visits("casual", 1) == "casual" and name_for_visits("club", 1) == "beginner"
    assert name_for_visits("beginner", LEVELS["strong"].visits) == "strong"
    assert name_for_visits("strong", 123) == "custom"
