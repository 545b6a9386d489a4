"""Gomoku threat search: fours, VCF, threes, VCT, their refutation, proven leaves, the player using them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from zero9.games import make_game
from zero9.search.evaluator import UniformEvaluator
from zero9.search.player import NetSource
from zero9.search.threats import (
    ThreatEvaluator,
    find_vcf,
    find_vct,
    four_moves,
    refute_vcf,
    refute_vct,
    threat_move,
    windows,
    winning_points,
)
from zero9.settings import PlayConfig

GAME = make_game("gomoku", 15)
SHIPPED_NET = Path(__file__).resolve().parents[1] / "example-data" / "gomoku_15x15_best.pt"
# Black: three down the H file and three along row 7; H7 makes two fours at once.
DOUBLE_FOUR = ["H8", "A1", "H9", "A3", "H10", "A5", "J7", "C1", "K7", "C3", "L7", "C5"]
# Black: a square of four stones (H8 J8 H10 J10), white's stones far off: a win by threes
SQUARE = ["H8", "A1", "J8", "A3", "H10", "A5", "J10", "C1"]
# White's own double four at O4 (O1-O3 and L4-N4), black's square beside it
SQUARE_AND_WHITE_VCF = ["H8", "O1", "J8", "O2", "H10", "O3", "J10", "L4", "A15", "M4", "C15", "N4"]


def vertices(actions):
    return [GAME.action_to_vertex(a) for a in actions]


def test_windows_cover_every_line_of_five():
    w = windows(15, 5)
    assert w.shape == (2 * 15 * 11 + 2 * 11 * 11, 5)  # rows and columns, then the two diagonals
    assert len({tuple(sorted(r)) for r in w.tolist()}) == len(w)


def test_winning_points_and_four_moves():
    pos = GAME.play_moves(["H8", "A1", "J8", "A2", "K8", "A3", "L8", "B1"])  # black H8-L8 (no I column)
    assert vertices(winning_points(pos, 1)) == ["G8", "M8"]
    assert winning_points(pos, 2) == []
    pos = GAME.play_moves(["H8", "A1", "J8", "A2", "K8", "B1"])
    assert {"G8", "L8"} <= set(vertices(four_moves(pos, 1)))


def test_exact_five_rule_has_no_winning_point_that_would_make_six():
    standard = make_game("gomoku", 15, variant="standard")
    # black G8 H8 J8 K8 _ M8: L8 would make six in a row, which does not win under exact five
    pos = standard.play_moves(["G8", "A1", "H8", "A2", "J8", "A3", "K8", "B1", "M8", "B2"])
    assert "L8" not in [standard.action_to_vertex(a) for a in winning_points(pos, 1)]
    freestyle = GAME.play_moves(["G8", "A1", "H8", "A2", "J8", "A3", "K8", "B1", "M8", "B2"])
    assert "L8" in vertices(winning_points(freestyle, 1))


def test_find_vcf_proves_the_double_four_and_finds_none_without_it():
    pos = GAME.play_moves(DOUBLE_FOUR)
    line = find_vcf(pos)
    assert line is not None and vertices(line)[0] == "H7"
    # play it out: whatever white blocks, black wins
    after = pos.play(line[0]).play(line[1]).play(line[2])
    assert after.is_terminal() and after.winner() == 1
    assert find_vcf(GAME.play_moves(["H8", "J9"])) is None


def test_refute_vcf_blocks_and_threat_move_prefers_our_own_win():
    white_to_move = GAME.play_moves(DOUBLE_FOUR[:-1])  # black threatens the double four at H7
    assert white_to_move.to_play == 2
    assert find_vcf(white_to_move.passed()) is not None
    ranked = [GAME.vertex_to_action(v) for v in ("A9", "B9", "H7")]
    move = refute_vcf(white_to_move, ranked)
    assert move is not None and vertices([move]) != ["A9"]
    assert find_vcf(white_to_move.play(move)) is None
    # with nothing to refute, refute_vcf says None; with our own VCF, threat_move plays it
    assert refute_vcf(GAME.play_moves(["H8", "J9"]), ranked) is None
    assert vertices([threat_move(GAME.play_moves(DOUBLE_FOUR), ranked)]) == ["H7"]


def actions(*points):
    return [GAME.vertex_to_action(v) for v in points]


def play_out(position, line):
    for move in line:
        position = position.play(move)
    return position


def test_find_vct_proves_a_win_by_threes_where_no_vcf_exists():
    pos = GAME.play_moves(SQUARE)
    assert find_vcf(pos) is None  # not a single four on the board
    line = find_vct(pos)
    assert line is not None
    end = play_out(pos, line)  # the defender's first answers, as the line gives them
    assert end.is_terminal() and end.winner() == 1
    # every answer to the first three was read: whatever white plays there, black still wins
    three = pos.play(line[0])
    for answer in actions("F8", "K8", "L8", "E8"):
        assert find_vct(three.play(answer)) is not None, GAME.action_to_vertex(answer)


def test_an_answered_three_is_no_vct():
    # black's two (H8 J8) makes one open three at most: white answers it and black has nothing
    pos = GAME.play_moves(["H8", "A1", "J8", "A3"])
    assert find_vct(pos) is None
    # the open three itself, black to move again: the open four wins
    three = GAME.play_moves(["G8", "A1", "H8", "A3", "J8", "A5"])
    assert vertices(find_vct(three)[:1]) in (["F8"], ["K8"])


def test_the_defenders_fours_refute_a_three():
    pos = GAME.play_moves(SQUARE_AND_WHITE_VCF)
    assert pos.to_play == 1 and find_vcf(pos.passed()) is not None  # white's double four waits
    assert find_vct(pos) is None  # any three of black's is met by white's fours, which come first


def test_find_vct_keeps_to_its_budget():
    pos = GAME.play_moves(SQUARE)
    assert find_vct(pos, budget=0) is None and find_vct(pos, budget=1) is None
    assert find_vct(pos, max_threats=1) is None  # one three is not enough here
    assert find_vct(pos, budget=300) is not None


def test_refute_vct_picks_a_move_that_spoils_the_three():
    # black's split three G8 H8 _ K8: white to move must take J8, F8 or L8
    pos = GAME.play_moves(["G8", "A1", "H8", "A3", "K8"])
    assert find_vct(pos.passed()) is not None
    move = refute_vct(pos, actions("A9", "L8", "J8"))
    assert vertices([move]) == ["L8"]  # the search's best candidate; A9 is none
    assert find_vct(pos.play(move)) is None and find_vcf(pos.play(move)) is None
    assert refute_vct(GAME.play_moves(["H8", "J9"]), actions("A9")) is None  # nothing to refute


def test_a_four_that_only_delays_the_threat_is_no_refutation():
    white = GAME.play_moves(SQUARE[:-1])  # white to move, black's square threatens a VCT
    assert find_vct(white.passed()) is not None
    four = GAME.vertex_to_action("A2")  # A1 A2 A3 _ A5: black must block A4, then the square is still there
    assert four in four_moves(white, 2)
    assert refute_vct(white, [four]) != four


def test_threat_move_plays_our_vct_only_when_it_reads_threes():
    pos = GAME.play_moves(SQUARE)
    line = find_vct(pos)
    assert threat_move(pos, [], reading="vct") == line[0]
    assert threat_move(pos, [], reading="vcf") is None
    with pytest.raises(ValueError, match="threat reading"):
        threat_move(pos, [], reading="vcx")


def test_threat_evaluator_marks_proven_leaves_as_wins():
    evaluator = ThreatEvaluator(UniformEvaluator(GAME))
    priors, values = evaluator.evaluate([GAME.play_moves(DOUBLE_FOUR), GAME.play_moves(["H8", "J9"])])
    assert values.tolist() == [1.0, 0.0]
    assert priors.shape == (2, GAME.num_actions)
    assert evaluator.calls == 1  # the wrapped evaluator's counters show through


def test_player_with_threats_wins_and_defends_where_the_plain_search_may_not():
    source = NetSource(None)  # uniform priors: the search alone cannot see fours 3 moves deep at 16 visits
    attack = GAME.play_moves(DOUBLE_FOUR)
    player = source.player(GAME, play=PlayConfig(visits=16, threats=True), seed=1)
    assert vertices([player.choose(attack).action]) == ["H7"]
    defend = GAME.play_moves(DOUBLE_FOUR[:-1])
    move = source.player(GAME, play=PlayConfig(visits=16, threats=True), seed=1).choose(defend).action
    assert find_vcf(defend.play(move)) is None
    no_threats = PlayConfig(visits=16, threats=False)
    plain = [source.player(GAME, play=no_threats, seed=s).choose(defend).action for s in range(5)]
    assert any(find_vcf(defend.play(m)) is not None for m in plain)  # without it, the threat is missed
    go = make_game("go", 9)
    go_player = source.player(go, play=PlayConfig(visits=8, threats=True), seed=1)
    assert go_player._threat_move(go.new_position()) is None
    assert np.isfinite(player.winrate())


def test_pbrain_threats_option_reaches_the_player():
    import argparse

    from zero9.cli import pbrain
    from zero9.protocols.pbrain import PbrainEngine

    parser = argparse.ArgumentParser()
    pbrain.add_arguments(parser)
    assert parser.parse_args([]).threats is False
    assert parser.parse_args(["--threats"]).threats is True
    engine = PbrainEngine(NetSource(None), visits=8, seed=1, threats=True)
    assert engine._new_player(GAME).play.threats is True


def test_threat_reading_reaches_the_player_from_match_and_pbrain():
    import argparse

    from zero9.arena.players import make_player
    from zero9.cli import match, pbrain
    from zero9.protocols.pbrain import PbrainEngine

    parser = argparse.ArgumentParser()
    match.add_arguments(parser)
    args = parser.parse_args(["a.pt", "b.pt", "--threats", "--threat-reading", "vct"])
    engines = match.engines_from_args(args)
    assert (engines.threats, engines.threat_reading) == (True, "vct")
    assert parser.parse_args(["a.pt", "b.pt"]).threat_reading == "vcf"
    with pytest.raises(SystemExit):
        parser.parse_args(["a.pt", "b.pt", "--threat-reading", "threes"])
    agent = make_player(f"{SHIPPED_NET}@8", GAME, engines=engines)
    agent.new_game(GAME)
    assert (agent.player.play.threats, agent.player.play.threat_reading) == (True, "vct")

    parser = argparse.ArgumentParser()
    pbrain.add_arguments(parser)
    assert parser.parse_args(["--threats"]).threat_reading == "vcf"
    engine = PbrainEngine(NetSource(None), visits=8, seed=1, threats=True, threat_reading="vct")
    assert engine._new_player(GAME).play.threat_reading == "vct"
    with pytest.raises(ValueError, match="threat reading"):
        NetSource(None).player(GAME, play=PlayConfig(threat_reading="vcx"))
