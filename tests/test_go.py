"""zero9.games.go: hand-made positions for what random games rarely reach, and the Game interface."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

from zero9.games import BLACK, EMPTY, WHITE, Game, IllegalMove, Position, make_game
from zero9.games.go import Go, GoPosition


def setup(game: Go, black: list[str], white: list[str], to_play: int = BLACK) -> GoPosition:
    """A position with these stones, reached by alternate moves (passes fill the gaps)."""
    pos = game.new_position()
    black, white = list(black), list(white)
    while black or white:
        stones = black if pos.to_play == BLACK else white
        pos = pos.play(game.vertex_to_action(stones.pop(0)) if stones else game.pass_action)
    if pos.to_play != to_play:
        pos = pos.play(game.pass_action)
    assert pos.passes < 2
    return pos


def v(game: Go, text: str) -> int:
    return game.vertex_to_action(text)


def stones_text(pos: GoPosition) -> dict[int, set[str]]:
    arr = pos.board_array()
    return {c: {pos.game.action_to_vertex(p) for p in np.flatnonzero(arr == c)} for c in (BLACK, WHITE)}


# ---- the game object ---------------------------------------------------------------------------------


def test_game_parameters_and_interface():
    g = Go()
    assert (g.size, g.komi, g.move_cap, g.num_actions, g.pass_action) == (9, 7.5, 162, 82, 81)
    assert isinstance(g, Game) and isinstance(g.new_position(), Position)
    assert Go(13, move_cap=0).move_cap == 0
    assert make_game(**g.to_dict()) == g
    assert hash(Go(9)) == hash(Go(9, 7.5)) and Go(9) != Go(9, 6.5)
    assert pickle.loads(pickle.dumps(g)) == g


@pytest.mark.parametrize("kwargs, match", [
    ({"size": 4}, "board size"), ({"size": 20}, "board size"), ({"size": 9.0}, "board size"),
    ({"size": True}, "board size"), ({"komi": "x"}, "komi"), ({"komi": float("nan")}, "komi"),
    ({"move_cap": -1}, "move cap"),
])
def test_bad_parameters_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Go(**kwargs)


def test_vertices_follow_gtp():
    g = Go(19)
    assert g.action_to_vertex(0) == "A1"
    assert g.action_to_vertex(8) == "J1"  # I is skipped
    assert g.action_to_vertex(19 * 19 - 1) == "T19"
    assert g.action_to_vertex(g.pass_action) == "pass"
    assert g.vertex_to_action("d4") == 3 * 19 + 3
    assert g.vertex_to_action("PASS") == g.pass_action
    for a in range(g.num_actions):
        assert g.vertex_to_action(g.action_to_vertex(a)) == a
    for bad in ("I5", "Z1", "A0", "A20", "", "44", "D"):
        with pytest.raises(ValueError):
            g.vertex_to_action(bad)
    with pytest.raises(ValueError, match="bad action"):
        g.action_to_vertex(g.num_actions)


# ---- rules -------------------------------------------------------------------------------------------


def test_capture_updates_board_counts_and_hash():
    g = Go(9)
    pos = setup(g, ["D5", "E6", "E4"], ["E5"])
    assert pos.to_play == BLACK
    after = pos.play(v(g, "F5"))
    assert "E5" not in stones_text(after)[WHITE]
    assert after.captures == {BLACK: 1, WHITE: 0}
    assert after.board_array()[v(g, "E5")] == EMPTY
    assert after.hash != pos.hash and after.board_hash != pos.board_hash
    # white playing back into the hole would be suicide; for black it is a legal point
    assert not after.is_legal(v(g, "E5")) and after.play(g.pass_action).is_legal(v(g, "E5"))
    assert pos.board_array()[v(g, "E5")] == WHITE  # the parent is untouched


def test_multi_group_capture_in_one_move():
    g = Go(9)
    # two separate white stones on the edge whose last liberty is the same point, B1
    pos = setup(g, ["A2", "C2", "D1"], ["A1", "C1"])
    after = pos.play(v(g, "B1"))
    assert stones_text(after)[WHITE] == set()
    assert after.captures[BLACK] == 2
    assert v(g, "A1") not in after.legal_moves()  # white would be suicide there now
    assert {v(g, "A1"), v(g, "C1")} <= set(after.play(g.pass_action).legal_moves())


def test_occupied_and_suicide_raise_illegal_move_and_change_nothing():
    g = Go(9)
    pos = setup(g, ["A2", "B1"], ["E5"], to_play=WHITE)
    before = (pos.black, pos.white, pos.hash, pos.legal_moves())
    with pytest.raises(IllegalMove, match="A1: suicide"):
        pos.play(v(g, "A1"))
    with pytest.raises(IllegalMove, match="E5: occupied"):
        pos.play(v(g, "E5"))
    assert not pos.is_legal(v(g, "A1"))
    assert v(g, "A1") not in pos.legal_moves()
    assert (pos.black, pos.white, pos.hash, pos.legal_moves()) == before


def test_suicide_of_several_stones_is_illegal_but_capturing_is_not():
    g = Go(9)
    # white C1 would leave A1-B1-C1 without a liberty and capture nothing
    pos = setup(g, ["A2", "B2", "C2", "D1"], ["A1", "B1"], to_play=WHITE)
    with pytest.raises(IllegalMove, match="suicide"):
        pos.play(v(g, "C1"))
    assert v(g, "C1") not in pos.legal_moves()
    # black filling C1 captures the two white stones instead
    bpos = pos.play(g.pass_action)
    after = bpos.play(v(g, "C1"))
    assert after.captures[BLACK] == 2 and stones_text(after)[WHITE] == set()


def test_snapback():
    g = Go(9)
    # Classic snapback on the edge: white captures one stone, black recaptures three.
    black = ["A3", "B3", "C3", "D2", "D1", "B1"]  # B1 is the throw-in
    white = ["A2", "B2", "C2", "A1"]
    pos = setup(g, black, white, to_play=WHITE)
    take = pos.play(v(g, "C1"))  # white captures the throw-in B1
    assert take.captures[WHITE] == 1
    back = take.play(v(g, "B1"))  # black plays back into B1 and captures the whole white group
    assert back.captures[BLACK] == 5
    assert stones_text(back)[WHITE] == set()


def test_simple_ko_immediate_retake_is_illegal_then_legal_after_a_threat():
    g = Go(9)
    pos = setup(g, ["D5", "E6", "E4"], ["E5", "F6", "F4", "G5"])
    ko = pos.play(v(g, "F5"))  # black takes the ko
    assert ko.captures[BLACK] == 1
    assert not ko.is_legal(v(g, "E5"))
    with pytest.raises(IllegalMove, match="E5: superko"):
        ko.play(v(g, "E5"))
    threat = ko.play(v(g, "A9")).play(v(g, "J1"))
    assert threat.is_legal(v(g, "E5"))
    assert threat.play(v(g, "E5")).captures[WHITE] == 1


def _ko_shape(ox: int, oy: int, black_can_capture: bool) -> tuple[list, list]:
    """Stones (x, y) of a ko whose point is (ox+1, oy+1) or (ox+2, oy+1); black takes first if asked."""
    black = [(ox + 1, oy + 2), (ox, oy + 1), (ox + 1, oy)]
    white = [(ox + 2, oy + 2), (ox + 3, oy + 1), (ox + 2, oy)]
    if black_can_capture:
        white.append((ox + 1, oy + 1))
    else:
        black.append((ox + 2, oy + 1))
    return black, white


def triple_ko_position(g: Go | None = None) -> tuple[GoPosition, int]:
    """Three kos; five captures in turn lead to a position where white's retake of ko 3
    would recreate the board before the first capture. Returns (position, that retake).
    ``g``: a 9x9 game (default the fast board's)."""
    g = g or Go(9)
    black, white = [], []
    for ox, oy, bcc in [(0, 0, True), (5, 0, False), (0, 5, True)]:
        b, w = _ko_shape(ox, oy, bcc)
        black += b
        white += w
    pos = setup(g, [g.action_to_vertex(y * 9 + x) for x, y in black],
                [g.action_to_vertex(y * 9 + x) for x, y in white])
    assert pos.to_play == BLACK
    # ko 1: black takes at (2,1); ko 2: white takes at (6,1); ko 3: black takes at (2,6);
    # then white retakes ko 1 at (1,1) and black retakes ko 2 at (7,1).
    for x, y in [(2, 1), (6, 1), (2, 6), (1, 1), (7, 1)]:
        pos = pos.play(y * 9 + x)
    return pos, 6 * 9 + 1


def test_triple_ko_is_stopped_by_positional_superko():
    pos, last = triple_ko_position()
    g = pos.game
    start = pos.parent.parent.parent.parent.parent.board_hash
    assert pos.to_play == WHITE
    assert last not in pos.legal_moves()
    with pytest.raises(IllegalMove, match="superko"):
        pos.play(last)
    # it is not a simple-ko retake: black took ko 3 two moves before
    assert pos.parent.parent.last_move == 6 * 9 + 2 and pos.last_move != 6 * 9 + 2
    # and the board really would repeat: the same stones as before the cycle
    assert pos.board_hash ^ g_zobrist(g, BLACK, 6 * 9 + 2) ^ g_zobrist(g, WHITE, last) == start
    # every other move (and pass) stays legal
    assert len(pos.legal_moves()) == len([a for a in range(g.num_actions) if pos.is_legal(a)])


def g_zobrist(g: Go, colour: int, point: int) -> int:
    from zero9.games.go import geometry

    return geometry(g.size).zobrist[colour][point]


def test_pass_is_always_legal_and_two_passes_end_the_game():
    g = Go(9)
    pos = g.new_position()
    assert pos.is_legal(g.pass_action) and pos.legal_moves()[-1] == g.pass_action
    p1 = pos.play(g.pass_action)
    assert not p1.is_terminal() and p1.passes == 1 and p1.to_play == WHITE
    assert p1.hash != pos.hash and p1.board_hash == pos.board_hash  # side to move is in the hash
    p2 = p1.play(g.pass_action)
    assert p2.is_terminal() and p2.legal_moves() == [] and not p2.is_legal(g.pass_action)
    with pytest.raises(IllegalMove, match="game over"):
        p2.play(0)
    assert p2.result_string() == "W+7.5" and p2.winner() == WHITE
    assert p2.result_value(WHITE) == 1.0 and p2.result_value(BLACK) == -1.0
    # a stone resets the pass count
    assert p1.play(0).passes == 0


def test_move_cap_ends_the_game_and_is_scored():
    g = Go(5, komi=0.5, move_cap=3)
    pos = g.play_moves(["C3", "pass", "B2"])
    assert pos.is_terminal() and pos.legal_moves() == []
    assert pos.result_string() == "B+24.5"  # two black stones own the whole empty board
    with pytest.raises(IllegalMove, match="game over"):
        pos.play(0)
    assert Go(9).move_cap == 162


def test_resignation():
    g = Go(9)
    pos = g.play_moves(["E5"])
    r = pos.resign()
    assert r.is_terminal() and r.result_string() == "B+R" and r.winner() == BLACK
    assert r.result_value(WHITE) == -1.0 and r.legal_moves() == []
    assert g.new_position().resign().result_string() == "W+R"
    assert not pos.is_terminal()  # the original is untouched


def test_results_need_a_finished_game():
    pos = Go(9).new_position()
    for f in (pos.winner, pos.result_string):
        with pytest.raises(ValueError, match="not over"):
            f()


def test_tromp_taylor_scoring_and_ownership():
    g = Go(5, komi=0.0)
    # black wall on column B, white on column D: A and C/E regions
    pos = setup(g, ["B1", "B2", "B3", "B4", "B5"], ["D1", "D2", "D3", "D4", "D5"])
    # column A (5) reaches only black, column E (5) only white, column C touches both: neutral
    assert pos.score() == (5 + 5) - (5 + 5) == 0
    own = pos.ownership()
    assert own[g.vertex_to_action("A3")] == BLACK and own[g.vertex_to_action("E3")] == WHITE
    assert own[g.vertex_to_action("C3")] == EMPTY and own[g.vertex_to_action("B3")] == BLACK
    end = pos.play(g.pass_action).play(g.pass_action)
    assert end.result_string() == "0" and end.winner() == EMPTY and end.result_value(BLACK) == 0.0
    assert Go(5, komi=-1.0).play_moves(["C3", "pass", "pass"]).result_string() == "B+26"
    assert Go(5, komi=2.5).play_moves(["pass", "C3", "pass", "pass"]).result_string() == "W+27.5"
    assert Go(9).new_position().score() == -7.5


# A corner seki: the inner black group (A1-A3, B3) and the white group (C1-C3) share the two
# liberties B1 and B2, and have no other; whoever plays there first is captured.
#   5 . . . . .
#   4 O O X X .
#   3 X X O X .
#   2 X . O X .
#   1 X . O X .
#     A B C D E
SEKI_BLACK = ["A1", "A2", "A3", "B3", "C4", "D4", "D3", "D2", "D1"]
SEKI_WHITE = ["C1", "C2", "C3", "A4", "B4", "J9", "J8", "J7", "J6"]


def test_seki_points_are_neutral_and_self_atari_is_legal():
    g = Go(9, komi=0.0)
    pos = setup(g, SEKI_BLACK, SEKI_WHITE)
    own = pos.ownership()
    assert own[v(g, "B1")] == EMPTY and own[v(g, "B2")] == EMPTY
    assert own[v(g, "A1")] == BLACK and own[v(g, "C1")] == WHITE
    for p in (pos, pos.play(g.pass_action)):
        assert {v(g, "B1"), v(g, "B2")} <= set(p.legal_moves())  # self-atari, not suicide
    # black filling a shared liberty is captured at once
    after = pos.play(v(g, "B2")).play(v(g, "B1"))
    assert after.captures[WHITE] == 5 and stones_text(after)[BLACK] == {"C4", "D4", "D3", "D2", "D1"}
    end = pos.play(g.pass_action).play(g.pass_action)
    b_area = 9 + 0  # black stones; no empty region reaches only black
    w_area = 9 + 0
    assert end.score() == pytest.approx(b_area - w_area + _only_reaching(end))


def _only_reaching(pos: GoPosition) -> float:
    """Empty points counted by Tromp-Taylor for black minus for white, counted the slow way."""
    n = pos.game.size
    arr = pos.board_array()
    seen, total = set(), 0
    for start in range(n * n):
        if arr[start] != EMPTY or start in seen:
            continue
        region, border, todo = {start}, set(), [start]
        while todo:
            p = todo.pop()
            y, x = divmod(p, n)
            for q in [(y + dy) * n + x + dx for dy, dx in ((1, 0), (-1, 0), (0, 1), (0, -1))
                      if 0 <= y + dy < n and 0 <= x + dx < n]:
                if arr[q] == EMPTY and q not in region:
                    region.add(q)
                    todo.append(q)
                elif arr[q] != EMPTY:
                    border.add(int(arr[q]))
        seen |= region
        if border == {BLACK}:
            total += len(region)
        elif border == {WHITE}:
            total -= len(region)
    return total


def test_is_eye_matches_leela_zero():
    g = Go(9)
    pos = setup(g, ["A2", "B1"], ["J9"])
    assert pos.is_eye(v(g, "A1"), BLACK) and not pos.is_eye(v(g, "A1"), WHITE)
    centre = setup(g, ["D5", "F5", "E4", "E6"], ["D4", "J9"])
    assert centre.is_eye(v(g, "E5"), BLACK)  # one bad diagonal is fine in the centre
    false_eye = setup(g, ["D5", "F5", "E4", "E6"], ["D4", "F6"])
    assert not false_eye.is_eye(v(g, "E5"), BLACK)  # two are not
    edge = setup(g, ["D1", "F1", "E2"], ["D2"])
    assert not edge.is_eye(v(g, "E1"), BLACK)  # on the edge, none is allowed
    assert not centre.is_eye(v(g, "D5"), BLACK)  # occupied


# ---- properties over random games ------------------------------------------------------------------


def _random_game(g: Go, rng: random.Random):
    pos = g.new_position()
    yield pos
    while not pos.is_terminal():
        moves = pos.legal_moves()
        pos = pos.play(rng.choice(moves[:-1]) if len(moves) > 1 and rng.random() < 0.97 else g.pass_action)
        yield pos


def test_legal_moves_agree_with_play_on_every_point():
    rng = random.Random(5)
    for size in (5, 7, 9):
        g = Go(size, move_cap=0)
        for _ in range(6 if size < 9 else 2):
            for pos in _random_game(g, rng):
                legal = set(pos.legal_moves())
                by_play = {a for a in range(g.num_actions) if pos.is_legal(a)}
                assert legal == by_play, (pos.move_number, legal ^ by_play)


def test_incremental_state_matches_a_fresh_replay_and_pickles():
    rng = random.Random(9)
    g = Go(7, move_cap=0)
    positions = list(_random_game(g, rng))
    for pos in positions[:: max(1, len(positions) // 15)] + [positions[-1]]:
        copy = pickle.loads(pickle.dumps(pos))
        assert copy.hash == pos.hash and copy.move_number == pos.move_number
        assert np.array_equal(copy.board_array(), pos.board_array())
        assert copy.legal_moves() == pos.legal_moves() and copy.captures == pos.captures
        # liberties: every group's liberty bitboard is its empty neighbours
        geo = pos._geo
        empty = geo.full & ~(pos.black | pos.white)
        for st, lb in (t for t in pos._groups if t is not None):
            assert lb == geo.neighbours(st) & empty
            same = pos.black if st & pos.black else pos.white
            assert st & same == st and geo.flood(st & -st, same) == st  # one colour, a whole chain
        # stones of groups with one liberty ("weak", for the legal-move shifts): side to move's, other's
        mine = pos.black if pos.to_play == BLACK else pos.white
        groups = [t for t in pos._groups if t is not None]
        for stones, weak in zip((mine, (pos.black | pos.white) ^ mine), pos._weak, strict=True):
            assert weak == sum(st for st, lb in groups if st & stones and lb.bit_count() == 1)
        # every stone belongs to the group its id names
        for p in geo.points(pos.black | pos.white):
            assert pos._groups[pos._gid_at[p]][0] >> p & 1


def test_sibling_positions_share_history_without_mixing_it():
    # A search tree plays many moves from one position; each child (captures included, which
    # start a new superko segment from a shared history) must match the same game replayed alone.
    rng = random.Random(3)
    g = Go(7, move_cap=0)
    positions = list(_random_game(g, rng))
    for pos in positions[10:-1:7]:
        children = [pos.play(a) for a in pos.legal_moves()]
        for child in children[::3] + [c for c in children if c.captures != pos.captures]:
            replayed = pickle.loads(pickle.dumps(child))  # built from scratch by replaying the moves
            assert child.legal_moves() == replayed.legal_moves()
            grandchildren = [child.play(a) for a in child.legal_moves()[::5]]
            for gc in grandchildren:
                assert gc.legal_moves() == pickle.loads(pickle.dumps(gc)).legal_moves()


def test_bitboard_to_point_list_on_every_size():
    from zero9.games.go import geometry

    rng = random.Random(4)
    for n in (5, 9, 13, 19):  # 4, 11, 22 and 46 bytes: the generated per-byte code covers them all
        geo = geometry(n)
        for b in [0, geo.full] + [rng.getrandbits(n * n) & rng.getrandbits(n * n) for _ in range(50)]:
            expected = [p for p in range(n * n) if b >> p & 1]
            assert geo.points(b) == expected and geo.points_and_pass(b) == expected + [n * n]
            assert geo.few_points(b) == expected
            actions = geo.actions(b | geo.pass_bit)  # the search's array form, pass included
            assert actions.dtype == np.intp and actions.tolist() == expected + [n * n]


def test_legal_actions_array_is_the_legal_move_list():
    for n in (5, 9, 16):  # 16x16: the pass bit starts a byte of its own
        game = Go(n)
        rng = random.Random(n)
        pos = game.new_position()
        while not pos.is_terminal():
            assert pos.legal_actions().tolist() == pos.legal_moves()
            pos = pos.play(rng.choice(pos.legal_moves()))
        assert pos.legal_actions().tolist() == pos.legal_moves() == []


def test_hash_includes_side_to_move_and_is_stable_across_processes():
    g = Go(9)
    a = g.play_moves(["E5", "pass"])
    b = g.play_moves(["E5"])
    assert a.board_hash == b.board_hash and a.hash != b.hash
    # transpositions give the same hash
    assert g.play_moves(["C3", "D4", "E5"]).hash == g.play_moves(["E5", "D4", "C3"]).hash
    assert g.play_moves(["E5"]).hash == Go(9).play_moves(["E5"]).hash


def test_bad_actions_raise():
    g = Go(9)
    pos = g.new_position()
    for bad in (-1, 82, 1000, "E5", None, 1.5):
        with pytest.raises(IllegalMove, match="not a point"):
            pos.play(bad)
        assert not pos.is_legal(bad)
    assert pos.play(np.int64(40)).last_move == 40


# ---- display and the demo command --------------------------------------------------------------


def test_board_text_marks_the_last_move():
    from zero9.games.display import board_to_text

    g = Go(5)
    text = board_to_text(g.play_moves(["A1", "E5"]))
    lines = text.splitlines()
    assert lines[0].split() == list("ABCDE")
    assert lines[1] == "5 . . . .(O)"  # top row first, last move in parentheses
    assert lines[-1] == "1 X . . . ."
    assert "(X)" in board_to_text(g.play_moves(["C3"])) and "(" not in board_to_text(g.new_position())
    assert str(g.play_moves(["A1"])) == board_to_text(g.play_moves(["A1"]))


def test_demo_command_plays_a_game(capsys):
    from zero9.cli import main

    # --random: the rules' own demo, without the shipped net's search (slow on a loaded CPU)
    assert main(["demo", "--random", "--seed", "3", "--moves-shown", "0"]) == 0
    out = capsys.readouterr().out
    assert "9x9" in out and "random" in out and "(seed 3)" in out and "1.B " in out
    last = out.strip().splitlines()[-1]
    assert last.startswith("result ") and "Tromp-Taylor score" in last
    assert main(["demo", "--random", "--game", "gomoku", "--size", "9", "--seed", "1", "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("result ")
    assert main(["demo", "--size", "3"]) == 2
    assert "board size" in capsys.readouterr().err
