"""``zero9 ratings``: SGFs in a folder -> BayesElo-style ratings with random at 0, and a chart."""

import random

import pytest

from zero9.arena.elo import score_from_elo
from zero9.arena.ratings import rate_folder, read_games, result_score
from zero9.cli import main
from zero9.games import BLACK, WHITE, make_game
from zero9.games.sgf import write_sgf


def write_games(folder, truth: dict[str, float], per_pair: int, seed: int = 5) -> int:
    rng = random.Random(seed)
    game = make_game("go", 9)
    names = sorted(truth)
    n = 0
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for k in range(per_pair):
                black, white = (a, b) if k % 2 == 0 else (b, a)
                black_wins = rng.random() < score_from_elo(truth[black] - truth[white])
                result = "B+R" if black_wins else "W+3.5"
                text = write_sgf(game, [(BLACK, 40), (WHITE, 81), (BLACK, 81)], result,
                                 properties={"PB": black, "PW": white})
                sub = folder / ("deep" if n % 3 == 0 else "")
                sub.mkdir(exist_ok=True)
                (sub / f"g{n}.sgf").write_text(text)
                n += 1
    return n


def test_result_strings():
    assert result_score("B+R") == 1 and result_score("W+0.5") == 0 and result_score("0") == 0.5
    assert result_score("Draw") == 0.5 and result_score("") is None and result_score("Void") is None


def test_ratings_recover_the_order_with_random_pinned_at_zero(tmp_path):
    truth = {"random": 0.0, "uniform:8": 150.0, "gnugo:1": 600.0}
    n = write_games(tmp_path, truth, 120)
    (tmp_path / "junk.sgf").write_text("not an sgf")
    unfinished = write_sgf(make_game("go", 9), [(BLACK, 3)], properties={"PB": "random", "PW": "gnugo:1"})
    (tmp_path / "unfinished.sgf").write_text(unfinished)
    games, skipped = read_games(tmp_path)
    assert len(games) == n and len(skipped) == 2
    ratings, _, _ = rate_folder(tmp_path)
    assert ratings["random"] == (0.0, 0.0, 0.0)
    for name, elo in truth.items():
        estimate, lo, hi = ratings[name]
        assert lo <= elo <= hi, (name, ratings[name])
    assert ratings["random"][0] < ratings["uniform:8"][0] < ratings["gnugo:1"][0]


def test_cli_prints_a_table_and_writes_the_chart(tmp_path, capsys):
    write_games(tmp_path, {"random": 0.0, "net": 300.0}, 20)
    chart = tmp_path / "chart.png"
    assert main(["ratings", str(tmp_path), "--chart", str(chart)]) == 0
    out = capsys.readouterr().out
    assert "random" in out and "net" in out and "95% interval" in out
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_empty_or_missing_folder_is_a_clear_error(tmp_path, capsys):
    assert main(["ratings", str(tmp_path)]) == 2
    assert "no rated games" in capsys.readouterr().err
    with pytest.raises(ValueError, match="not a folder"):
        read_games(tmp_path / "missing")
