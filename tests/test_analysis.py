"""zero9.search.analysis with the shipped 9x9 Go net (ownership head) and the shipped 9x9 Gomoku net."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from zero9.games import BLACK, WHITE, make_game
from zero9.nn import features
from zero9.nn.checkpoint import load_net
from zero9.search import analysis
from zero9.search.analysis import ILLEGAL_POLICY, analyse, analyse_many, make_evaluator
from zero9.search.evaluator import NetEvaluator
from zero9.search.puct import Tree, run_simulations

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def go_net():
    return load_net(ROOT / "example-data" / "go_9x9_best.pt", device="cpu")[0]


@pytest.fixture(scope="module")
def go9():
    return make_game("go", 9, komi=7.5)


def test_ownership_is_the_nets_head_mapped_back_from_its_symmetry(go_net, go9):
    position = go9.play_moves(["E5", "C4", "G4", "D6"])  # Black to move
    planes = features.encode(position)[None]
    _, _, direct = go_net.predict(planes, ownership=True)
    evaluator = NetEvaluator(go_net, rng=np.random.default_rng(3), with_ownership=True)
    owned = evaluator.ownership([position])
    # the evaluator saw it under a random symmetry: the same points, within the net's symmetry error
    assert np.corrcoef(owned[0], direct[0])[0, 1] > 0.95
    assert owned[0][go9.vertex_to_action("C4")] < -0.5  # White's stone, Black (to move) loses it
    assert owned[0][go9.vertex_to_action("G4")] > 0.5


def test_without_the_flag_or_the_head_there_is_no_ownership(go_net, go9):
    assert NetEvaluator(go_net).ownership([go9.new_position()]) is None
    with pytest.raises(ValueError, match="cache"):
        NetEvaluator(go_net, cache_size=0, with_ownership=True)


def test_a_childs_evaluations_are_its_visits_and_order_0_is_the_move_played(go_net, go9):
    position = go9.play_moves(["E5", "C4", "G4", "D6"])
    evaluator = make_evaluator(go_net, seed=2)
    result = analyse(position, evaluator, 80, leaves_per_tree=4)
    assert result.visits == 80
    assert sum(m.visits for m in result.moves) == 80
    # the same search through puct alone plays order 0
    tree = Tree(position)
    run_simulations(tree, make_evaluator(go_net, seed=2), 81, batch_size=1)
    assert [m.order for m in result.moves] == list(range(len(result.moves)))
    assert result.moves[0].visits == max(m.visits for m in result.moves)
    # subtree evaluation counts equal the visit counts of the root's children
    tree = Tree(position)
    evaluator = make_evaluator(go_net, seed=5)
    run_simulations(tree, evaluator, 60, batch_size=4)
    sums = analysis._subtree_sums(tree.root, evaluator)
    root = tree.root
    for i, child in root.children.items():
        if root.n[i] > 0:
            assert sums[id(child)].count == root.n[i]
    assert sums[id(root)].count == 1 + root.total


def test_scores_and_views(go_net, go9):
    position = go9.play_moves(["E5", "C4", "G4", "D6"])
    result = analyse(position, go_net, 60, seed=1)
    assert result.to_move == BLACK
    assert result.score_lead is not None and result.score_stdev is not None
    assert all(m.score_lead is not None for m in result.moves)
    assert result.ownership.shape == (81,) and np.all(np.abs(result.ownership) <= 1)
    # the raw score is the ownership sum minus komi (Black gives it)
    raw_own = make_evaluator(go_net, seed=1).ownership([position])[0]
    assert result.raw_score_lead == pytest.approx(float(raw_own.sum()) - 7.5, abs=1e-3)
    # White to move sees it from the other side: its lead adds komi
    white = analyse(position.play(go9.vertex_to_action("E6")), go_net, 0, seed=1)
    assert white.to_move == WHITE
    white_own = make_evaluator(go_net, seed=1).ownership([position.play(go9.vertex_to_action("E6"))])[0]
    assert white.score_lead == pytest.approx(float(white_own.sum()) + 7.5, abs=1e-3)
    assert white.moves == [] and white.visits == 0


def test_policy_marks_illegal_moves_and_keeps_the_nets_numbers(go_net, go9):
    position = go9.play_moves(["E5", "C4"])
    result = analyse(position, go_net, 0, seed=0)
    assert result.policy.shape == (82,)
    assert result.policy[go9.vertex_to_action("E5")] == ILLEGAL_POLICY
    legal = result.policy >= 0
    assert legal.sum() == 80  # 79 empty points and pass
    assert result.policy[legal].sum() == pytest.approx(1.0, abs=0.02)


def test_a_finished_game_is_worth_the_rules_count(go_net, go9):
    position = go9.play_moves(["E5", "pass", "pass"])
    result = analyse(position, go_net, 50, seed=0)
    assert result.terminal and result.moves == [] and result.to_move == WHITE
    assert result.score_lead == pytest.approx(-(81 - 7.5))  # Black owns the board: White is 73.5 behind
    assert result.winrate == 0.0


def test_a_won_endgame_scores_close_to_the_count(go_net, go9):
    """A settled position: Black walls off columns A-E (45 points), White F-J (36)."""
    moves = []
    for y in range(1, 10):
        moves += [f"E{y}", f"F{y}"]
    position = go9.play_moves(moves)  # Black to move
    result = analyse(position, go_net, 60, seed=0)
    board = result.ownership.reshape(9, 9)
    assert (board[:, :5] > 0.3).all() and (board[:, 5:] < -0.3).all()
    # the net's ownership is timid on empty points (0.5-0.8, not 1): docs/score-calibration.md
    assert result.score_lead == pytest.approx(45 - 36 - 7.5, abs=8.0)


def test_allow_and_avoid_restrict_the_root(go_net, go9):
    position = go9.play_moves(["E5", "C4"])
    allow = [go9.vertex_to_action(v) for v in ("C6", "G3")]
    result = analyse(position, go_net, 30, seed=0, allow=allow)
    assert {m.move for m in result.moves} <= set(allow) and sum(m.visits for m in result.moves) == 30
    avoid = [go9.vertex_to_action(v) for v in ("E3", "D3", "F3", "C3", "G3", "D4", "E4", "F4")]
    result = analyse(position, go_net, 30, seed=0, avoid=avoid)
    assert not {m.move for m in result.moves} & set(avoid)
    with pytest.raises(ValueError, match="no legal move"):
        analyse(position, go_net, 10, seed=0, allow=[go9.vertex_to_action("E5")])


def test_analyse_many_is_repeatable_and_batches(go_net, go9):
    line = [go9.new_position()]
    for v in ("E5", "C4", "G4", "D6", "C7"):
        line.append(line[-1].play(go9.vertex_to_action(v)))
    evaluator = make_evaluator(go_net, seed=4)
    first = analyse_many(line, evaluator, 40)
    assert [a.visits for a in first] == [40] * len(line)
    assert evaluator.calls < 40 * len(line) / 8  # shared calls, not one tree at a time
    again = analyse_many(line, go_net, 40, seed=4)
    again2 = analyse_many(line, go_net, 40, seed=4)
    assert [a.moves[0].move for a in again] == [a.moves[0].move for a in again2]
    assert [a.score_lead for a in again] == [a.score_lead for a in again2]


def test_gomoku_has_winrates_and_no_scores():
    game = make_game("gomoku", 9)
    net = load_net(ROOT / "example-data" / "gomoku_9x9_best.pt", device="cpu")[0]
    position = game.new_position().play(40)
    result = analyse(position, net, 30, seed=0)
    assert result.score_lead is None and result.ownership is None
    assert result.moves and all(m.score_lead is None for m in result.moves)
    assert 0 <= result.winrate <= 1


def test_a_score_head_gives_the_score_where_the_net_has_one(go9):
    """A net with a score head (zero9.nn.net, score=True): its lead, not the ownership sum, is the score."""
    import torch

    from zero9.nn.heads import make_net

    torch.manual_seed(0)
    net = make_net(go9, blocks=1, filters=8, ownership=True, score=True).eval()
    position = go9.play_moves(["E5", "C4", "G4"])  # White to move
    _, _, own, head = net.predict(features.encode(position)[None], ownership=True)
    evaluator = NetEvaluator(net, random_symmetry=False, with_ownership=True)
    result = analyse(position, evaluator, 0)
    assert result.raw_score_lead == pytest.approx(float(head[0]) * 81, abs=1e-3)
    assert result.raw_score_lead != pytest.approx(float(own[0].sum()) + 7.5, abs=1e-3)
    searched = analyse(position, NetEvaluator(net, random_symmetry=False, with_ownership=True), 20)
    assert all(m.score_lead is not None for m in searched.moves) and searched.score_lead is not None


def test_a_score_head_answers_at_its_own_komi_and_the_lead_moves_to_the_positions(go9, tmp_path):
    """The planes carry no komi: a head trained at 7.5 read at komi 6.5 gives Black one point more."""
    import torch

    from zero9.games import make_game
    from zero9.nn.checkpoint import load_checkpoint, save_checkpoint
    from zero9.nn.heads import make_net

    torch.manual_seed(0)
    net = make_net(go9, blocks=1, filters=8, ownership=True, score=True).eval()
    assert net.config["score_komi"] == 7.5
    leads = {}
    for komi in (7.5, 6.5):
        game = make_game("go", 9, komi=komi)
        for moves in (["E5", "C4"], ["E5", "C4", "G4"]):  # Black, then White to move
            position = game.play_moves(moves)
            evaluator = NetEvaluator(net, random_symmetry=False, with_ownership=True)
            leads[komi, len(moves)] = analyse(position, evaluator, 0).raw_score_lead
    assert leads[6.5, 2] == pytest.approx(leads[7.5, 2] + 1, abs=1e-4)  # Black to move gives less
    assert leads[6.5, 3] == pytest.approx(leads[7.5, 3] - 1, abs=1e-4)  # White to move gets less
    save_checkpoint(tmp_path / "six.pt", make_net(make_game("go", 9, komi=6), 1, 8, True, score=True),
                    {"game": make_game("go", 9, komi=6).to_dict()})
    assert load_checkpoint(tmp_path / "six.pt").net.score_komi == 6.0
    bad = torch.load(tmp_path / "six.pt", weights_only=False)
    bad["config"]["score_komi"] = "lots"
    torch.save(bad, tmp_path / "bad.pt")
    with pytest.raises(ValueError, match="score_komi is 'lots', not a komi"):
        load_checkpoint(tmp_path / "bad.pt")
