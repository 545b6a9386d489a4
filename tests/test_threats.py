"""Gomoku threat search: fours, VCF, its refutation, proven leaves, and the player using them."""

from __future__ import annotations

import numpy as np

from zero9.games import make_game
from zero9.search.evaluator import UniformEvaluator
from zero9.search.player import NetSource
from zero9.search.threats import (
    ThreatEvaluator,
    find_vcf,
    four_moves,
    refute_vcf,
    threat_move,
    windows,
    winning_points,
)

GAME = make_game("gomoku", 15)
# Black: three down the H file and three along row 7; H7 makes two fours at once.
DOUBLE_FOUR = ["H8", "A1", "H9", "A3", "H10", "A5", "J7", "C1", "K7", "C3", "L7", "C5"]


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


def test_threat_evaluator_marks_proven_leaves_as_wins():
    evaluator = ThreatEvaluator(UniformEvaluator(GAME))
    priors, values = evaluator.evaluate([GAME.play_moves(DOUBLE_FOUR), GAME.play_moves(["H8", "J9"])])
    assert values.tolist() == [1.0, 0.0]
    assert priors.shape == (2, GAME.num_actions)
    assert evaluator.calls == 1  # the wrapped evaluator's counters show through


def test_player_with_threats_wins_and_defends_where_the_plain_search_may_not():
    source = NetSource(None)  # uniform priors: the search alone cannot see fours 3 moves deep at 16 visits
    attack = GAME.play_moves(DOUBLE_FOUR)
    player = source.player(GAME, visits=16, seed=1, threats=True)
    assert vertices([player.choose(attack).action]) == ["H7"]
    defend = GAME.play_moves(DOUBLE_FOUR[:-1])
    move = source.player(GAME, visits=16, seed=1, threats=True).choose(defend).action
    assert find_vcf(defend.play(move)) is None
    plain = [source.player(GAME, visits=16, seed=s, threats=False).choose(defend).action for s in range(5)]
    assert any(find_vcf(defend.play(m)) is not None for m in plain)  # without it, the threat is missed
    go = make_game("go", 9)
    assert source.player(go, visits=8, seed=1, threats=True)._threat_move(go.new_position()) is None
    assert np.isfinite(player.winrate())


def test_pbrain_threats_option_reaches_the_player():
    import argparse

    from zero9.protocols import pbrain

    parser = argparse.ArgumentParser()
    pbrain.add_arguments(parser)
    assert parser.parse_args([]).threats is False
    assert parser.parse_args(["--threats"]).threats is True
    engine = pbrain.PbrainEngine(NetSource(None), visits=8, seed=1, threats=True)
    assert engine._new_player(GAME).threats is True
