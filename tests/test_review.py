"""zero9 review: a real game with a planted blunder, reviewed by the shipped net's search.

tests/data/gomoku9-planted-blunder.sgf (9x9 Gomoku, five in a row): Black builds an open
three C5-D5-E5; White's move 6 (A9) ignores it instead of blocking at B5 or F5, and Black
wins two moves later. The review must flag that move as a blunder and name a block.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from zero9.arena.review import (
    Thresholds,
    black_winrates,
    line_from_record,
    review_game,
    review_player,
    summarise,
)
from zero9.games import make_game, play_moves
from zero9.games.sgf import parse_sgf, read_sgf, write_sgf

ROOT = Path(__file__).resolve().parents[1]
PLANTED = ROOT / "tests" / "data" / "gomoku9-planted-blunder.sgf"
KEYS = {"move_number", "color", "move", "best_move", "winrate_before", "winrate_after", "winrate_loss",
        "class", "pv"}


def zero9(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "zero9", *argv], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


def test_thresholds_classify_and_refuse_a_bad_order():
    t = Thresholds()
    assert [t.classify(x) for x in (0.0, 0.049, 0.05, 0.1, 0.199, 0.2, 0.9)] == [
        "good", "good", "inaccuracy", "mistake", "mistake", "blunder", "blunder"]
    with pytest.raises(ValueError, match="thresholds must rise"):
        Thresholds(0.2, 0.1, 0.3)


def test_review_finds_the_planted_blunder_and_names_the_block():
    record = read_sgf(PLANTED)
    player = review_player(record.game, None, visits=48, seed=1)
    review = review_game(record, player)
    moves = review["moves"]
    assert len(moves) == 9 and all(set(m) == KEYS for m in moves)
    blunder = moves[5]
    assert (blunder["move_number"], blunder["color"], blunder["move"]) == (6, "W", "A9")
    assert blunder["class"] == "blunder", blunder
    assert blunder["best_move"] in ("B5", "F5"), blunder  # the two blocks of the open three
    assert blunder["pv"][0] == blunder["best_move"]
    assert blunder["winrate_after"] < 0.1 < blunder["winrate_before"]
    # No other white move is a blunder, and Black (who played well) made none.
    assert [m["move_number"] for m in moves if m["class"] == "blunder"] == [6]
    assert review["summary"]["W"]["blunder"] == 1 and review["summary"]["B"]["blunder"] == 0
    assert review["summary"]["B"]["moves"] == 5 and review["summary"]["W"]["moves"] == 4
    # The last move wins: Black's winrate after it is exactly 1 (a finished position is its result).
    assert moves[-1]["winrate_after"] == 1.0 and black_winrates(moves)[-1] == 1.0


def test_summary_counts_classes_loss_and_match_rate():
    moves = [
        {"color": "B", "move": "C3", "best_move": "C3", "winrate_loss": 0.0, "class": "good"},
        {"color": "W", "move": "D4", "best_move": "E5", "winrate_loss": 0.3, "class": "blunder"},
        {"color": "B", "move": "E5", "best_move": "F5", "winrate_loss": 0.06, "class": "inaccuracy"},
    ]
    s = summarise(moves)
    assert s["B"] == {"moves": 2, "good": 1, "inaccuracy": 1, "mistake": 0, "blunder": 0,
                      "average_loss": 0.03, "match_rate": 0.5}
    assert s["W"]["blunder"] == 1 and s["W"]["match_rate"] == 0.0


def test_line_from_record_refuses_setup_stones_and_moves_out_of_turn():
    go = make_game("go", 9, komi=7.5)
    text = "(;GM[1]FF[4]SZ[9]KM[7.5]AB[cc];W[dd])"
    with pytest.raises(ValueError, match="setup stones"):
        line_from_record(parse_sgf(text), "h.sgf")
    with pytest.raises(ValueError, match="move 2 is by B but W was to play"):
        line_from_record(parse_sgf("(;GM[1]FF[4]SZ[9]KM[7.5];B[cc];B[dd])"), "t.sgf")
    with pytest.raises(ValueError, match="no moves"):
        line_from_record(parse_sgf(write_sgf(go, [])), "e.sgf")


def test_review_command_writes_json_and_plot_for_a_go_game(tmp_path):
    go = make_game("go", 9, komi=7.5)
    position = play_moves(go, "E5 C3 D3 C4 G5 pass pass".split())
    game_file = tmp_path / "short.sgf"
    game_file.write_text(write_sgf(go, position, position.result_string(), properties={"PB": "a", "PW": "b"}))
    out = tmp_path / "out"
    done = zero9("review", str(game_file), "--visits", "16", "--out", str(out), "--seed", "2",
                 "--thresholds", "4", "8", "15")
    assert done.returncode == 0, done.stderr
    review = json.loads((out / "short-review.json").read_text())
    assert [m["move"] for m in review["moves"]] == ["E5", "C3", "D3", "C4", "G5", "pass", "pass"]
    assert review["thresholds"] == {"inaccuracy": 0.04, "mistake": 0.08, "blunder": 0.15}
    for m in review["moves"]:
        assert set(m) == KEYS and 0 <= m["winrate_after"] <= 1 and 0 <= m["winrate_before"] <= 1
        assert m["winrate_loss"] == pytest.approx(max(0, m["winrate_before"] - m["winrate_after"]), abs=2e-4)
    assert (out / "short-review.png").stat().st_size > 5000
    assert "B a: moves 4" in done.stdout and "W b: moves 3" in done.stdout
    assert "review: 100%" in done.stderr  # the progress bar


def test_review_command_names_bad_input(tmp_path):
    missing = zero9("review", str(tmp_path / "nope.sgf"))
    assert missing.returncode == 2 and "nope.sgf" in missing.stderr and "Traceback" not in missing.stderr
    odd = tmp_path / "odd.sgf"
    odd.write_text("(;GM[4]FF[4]SZ[11];B[ee];W[ff])")
    no_net = zero9("review", str(odd))
    assert no_net.returncode == 2 and "no shipped net for gomoku 11x11" in no_net.stderr
    bad = zero9("review", str(PLANTED), "--thresholds", "20", "10", "5")
    assert bad.returncode == 2 and "thresholds must rise" in bad.stderr
