"""zero9.games.gomoku: wins in every direction, on every edge and corner, overlines, draws, bad input."""

from __future__ import annotations

import pickle
import random

import pytest

from zero9.games import BLACK, EMPTY, WHITE, Game, IllegalMove, Position, make_game
from zero9.games.gomoku import Gomoku, GomokuPosition

DIRECTIONS = [(1, 0), (0, 1), (1, 1), (1, -1)]


def place(game: Gomoku, black: list[int], white: list[int]) -> GomokuPosition:
    """Alternate black and white stones (same count, or one more black)."""
    assert len(black) - len(white) in (0, 1)
    pos = game.new_position()
    for i, b in enumerate(black):
        pos = pos.play(b)
        if i < len(white):
            pos = pos.play(white[i])
    return pos


def far_points(game: Gomoku, avoid: set[int], count: int, seed: int = 0) -> list[int]:
    """``count`` filler points off ``avoid``, spread out (too few to make a line of their own)."""
    rng = random.Random(seed)
    cells = [p for p in range(game.size * game.size) if p not in avoid]
    rng.shuffle(cells)
    return cells[:count]


def line(game: Gomoku, x: int, y: int, dx: int, dy: int, length: int) -> list[int] | None:
    n = game.size
    pts = []
    for i in range(length):
        xx, yy = x + i * dx, y + i * dy
        if not (0 <= xx < n and 0 <= yy < n):
            return None
        pts.append(yy * n + xx)
    return pts


def test_game_parameters_and_interface():
    g = Gomoku()
    assert (g.size, g.connect, g.variant, g.num_actions, g.pass_action) == (15, 5, "freestyle", 225, None)
    assert isinstance(g, Game) and isinstance(g.new_position(), Position)
    assert make_game(**g.to_dict()) == g
    assert make_game("gomoku", 9, connect=4, variant="Standard") == Gomoku(9, 4, "standard")
    assert pickle.loads(pickle.dumps(g)) == g and hash(g) == hash(Gomoku())
    assert g.action_to_vertex(0) == "A1" and g.vertex_to_action("P15") == 224
    with pytest.raises(ValueError, match="no pass"):
        g.vertex_to_action("pass")


@pytest.mark.parametrize("kwargs, match", [
    ({"size": 4}, "board size"), ({"size": 26}, "board size"), ({"connect": 2}, "connect"),
    ({"size": 6, "connect": 7}, "connect"), ({"variant": "caro"}, "variant"), ({"size": "15"}, "board size"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Gomoku(**kwargs)


@pytest.mark.parametrize("size", [6, 9, 15])
def test_win_in_every_direction_from_every_edge_and_corner(size):
    """Every run of five that touches the edge (so corners too), in each direction, with the
    winning stone played at each place in the run: black wins, and one stone less does not."""
    g = Gomoku(size)
    n = size
    checked = 0
    for dx, dy in DIRECTIONS:
        for y in range(n):
            for x in range(n):
                pts = line(g, x, y, dx, dy, 5)
                if pts is None:
                    continue
                ends = [divmod(pts[0], n), divmod(pts[-1], n)]
                if not any(c in (0, n - 1) for yx in ends for c in yx):
                    continue  # keep to runs that touch an edge (the centre is the easy case)
                last = pts[checked % 5]  # the winning stone anywhere in the run
                others = [p for p in pts if p != last]
                white = far_points(g, set(pts), 4, seed=checked)
                pos = place(g, others, white)
                assert not pos.is_terminal()
                won = pos.play(last)
                assert won.is_terminal() and won.winner() == BLACK, (dx, dy, x, y)
                assert won.result_string() == "B+" and won.result_value(BLACK) == 1.0
                assert won.result_value(WHITE) == -1.0 and won.legal_moves() == []
                with pytest.raises(IllegalMove, match="game over"):
                    won.play(far_points(g, set(pts) | set(white), 1, seed=99)[0])
                checked += 1
    assert checked > 0


def test_white_wins_too_and_broken_lines_do_not():
    g = Gomoku(9)
    white_run = [4 * 9 + x for x in range(2, 7)]
    pos = place(g, [0, 8, 72, 80, 20], white_run[:4])
    pos = pos.play(white_run[4])
    assert pos.winner() == WHITE and pos.result_string() == "W+"
    # a gap in the run: no win
    gap = place(g, [0, 1, 2, 3, 5], [30, 40, 50, 60])
    assert not gap.is_terminal()
    # five of mixed colours in a row: no win
    mixed = place(g, [0, 1, 3, 4], [2, 40, 50, 60])
    assert not mixed.is_terminal()


@pytest.mark.parametrize("variant, overline_wins", [("freestyle", True), ("standard", False)])
def test_overline(variant, overline_wins):
    g = Gomoku(15, variant=variant)
    row = [7 * 15 + x for x in range(2, 8)]  # six in a row, the last stone joins two runs
    last = row[3]
    others = [p for p in row if p != last]
    white = far_points(g, set(row), 5)
    pos = place(g, others, white)
    assert not pos.is_terminal()
    after = pos.play(last)
    assert after.is_terminal() is overline_wins
    if not overline_wins:
        assert last not in after.legal_moves() and len(after.legal_moves()) == 225 - 11


def test_standard_exact_five_wins_even_with_an_overline_the_other_way():
    g = Gomoku(15, variant="standard")
    across = [3 * 15 + x for x in range(0, 4)]  # E4 makes exactly five across...
    down = [y * 15 + 4 for y in (0, 1, 2, 4, 5)]  # ...and six down
    white = far_points(g, set(across + down) | {49}, 9, seed=5)
    pos = place(g, across + down, white)
    assert not pos.is_terminal()
    assert pos.play(49).winner() == BLACK
    # without the five across, the six down alone is no win
    assert not place(g, across[1:] + down, white[:8]).play(49).is_terminal()


def test_connect_other_than_five():
    g = Gomoku(7, connect=4)
    pos = place(g, [0, 8, 16], [6, 13, 20])
    assert pos.play(24).winner() == BLACK  # diagonal A1-D4


def test_draw_on_a_full_board():
    g = Gomoku(6, connect=5)
    # a full board without five in a row (rows from y=0 up)
    rows = ["XXOXOX", "XOOOXO", "OXXXOX", "OOOOXX", "OOOOXO", "XXXOXX"]
    moves_b = [y * 6 + x for y, r in enumerate(rows) for x, ch in enumerate(r) if ch == "X"]
    moves_w = [y * 6 + x for y, r in enumerate(rows) for x, ch in enumerate(r) if ch == "O"]
    assert len(moves_b) == len(moves_w) == 18
    pos = g.new_position()
    for b, w in zip(moves_b, moves_w, strict=True):
        pos = pos.play(b).play(w)
    assert pos.is_terminal() and pos.winner() == EMPTY
    assert pos.result_string() == "0" and pos.result_value(BLACK) == 0.0 and pos.legal_moves() == []


def test_illegal_moves_and_immutability():
    g = Gomoku(9)
    pos = g.new_position().play(40)
    with pytest.raises(IllegalMove, match="E5: occupied"):
        pos.play(40)
    for bad in (-1, 81, "E5", None, True):
        with pytest.raises(IllegalMove, match="not a point"):
            pos.play(bad)
        assert not pos.is_legal(bad)
    child = pos.play(0)
    assert pos.board_array()[0] == EMPTY and child.board_array()[0] == WHITE
    assert child.parent is pos and child.last_move == 0 and child.move_number == 2
    assert len(pos.legal_moves()) == 80 and 40 not in pos.legal_moves()
    with pytest.raises(ValueError, match="not over"):
        pos.winner()


def test_resign_hash_and_pickle():
    g = Gomoku(9)
    pos = g.play_moves(["E5", "D4", "C3"])
    r = pos.resign()
    assert r.is_terminal() and r.winner() == BLACK and r.result_string() == "B+R" and not pos.is_terminal()
    assert g.play_moves(["E5", "D4", "C3"]).hash == pos.hash
    assert g.play_moves(["C3", "D4", "E5"]).hash == pos.hash  # transposition
    assert g.play_moves(["E5", "D4"]).hash != g.play_moves(["D4", "E5"]).hash
    copy = pickle.loads(pickle.dumps(pos))
    assert copy.hash == pos.hash and copy.board == pos.board and copy.parent.last_move == pos.parent.last_move
    assert pickle.loads(pickle.dumps(r)).result_string() == "B+R"


def test_random_games_end_and_agree_with_a_slow_checker():
    rng = random.Random(3)
    for variant in ("freestyle", "standard"):
        g = Gomoku(8, connect=5, variant=variant)
        for _ in range(30):
            pos = g.new_position()
            while not pos.is_terminal():
                pos = pos.play(rng.choice(pos.legal_moves()))
            assert pos.winner() == _slow_winner(pos, variant)


def _slow_winner(pos: GomokuPosition, variant: str) -> int:
    """Scan the whole final board for runs (the game stops at the first win, so at most one)."""
    n = pos.game.size
    b = pos.board_array().reshape(n, n)
    for c in (BLACK, WHITE):
        for y in range(n):
            for x in range(n):
                for dx, dy in DIRECTIONS:
                    if 0 <= y - dy < n and 0 <= x - dx < n and b[y - dy, x - dx] == c:
                        continue  # not the start of a run
                    k = 0
                    while 0 <= y + k * dy < n and 0 <= x + k * dx < n and b[y + k * dy, x + k * dx] == c:
                        k += 1
                    if k == 5 or (k > 5 and variant == "freestyle"):
                        return c
    return EMPTY


@pytest.mark.parametrize("size", [5, 20, 25])
def test_sizes_5_to_25_gomocups_20_included(size):
    g = Gomoku(size)
    assert g.num_actions == size * size
    assert g.vertex_to_action(g.action_to_vertex(size * size - 1)) == size * size - 1


def test_exact_five_on_20x20_overline_does_not_win_but_five_does():
    free, exact = Gomoku(20, 5, "freestyle"), Gomoku(20, 5, "standard")
    black = [400 - 20 + x for x in (0, 1, 2, 4, 5)]  # top row, a gap at x=3
    white = [0, 2, 4, 6, 8]
    moves = [m for pair in zip(black, white, strict=True) for m in pair]
    overline = moves + [400 - 20 + 3]  # black fills the gap: six in a row
    assert free.play_moves(overline).is_terminal() and free.play_moves(overline).winner() == 1
    assert not exact.play_moves(overline).is_terminal()
    five = moves[:-2] + [400 - 20 + 3]  # without x=5: exactly five
    assert exact.play_moves(five).winner() == 1


# --- renju: the RIF International Rules of Renju (overline, 4x4, 3x3 forbidden for black) ----------

def renju_board(black, white=(), n=15):
    """A board from (x, y) lists (zero9 points: y*n + x)."""
    board = bytearray(n * n)
    for colour, stones in ((1, black), (2, white)):
        for x, y in stones:
            board[y * n + x] = colour
    return board


def why(black, white=(), at=(7, 7), n=15):
    from zero9.games.renju import forbidden
    return forbidden(renju_board(black, white, n), n, at[1] * n + at[0])


def test_renju_double_three_double_four_and_overline_are_forbidden():
    assert why([(7, 5), (7, 6), (5, 7), (6, 7)]) == "double three"
    assert why([(7, 4), (7, 5), (7, 6), (4, 7), (5, 7), (6, 7)]) == "double four"
    # Two fours on one line: X.X(X)X.X
    assert why([(3, 7), (5, 7), (7, 7), (9, 7)], at=(6, 7)) == "double four"
    assert why([(3, 7), (4, 7), (5, 7), (7, 7), (8, 7)], at=(6, 7)) == "overline"


def test_renju_five_four_three_and_blocked_three_are_allowed():
    assert why([(7, 4), (7, 5), (7, 6), (5, 7), (6, 7)]) is None  # four-three
    # five wins even where the move also makes an overline-free double four
    assert why([(3, 7), (4, 7), (5, 7), (6, 7), (7, 4), (7, 5), (7, 6)]) is None
    assert why([(7, 5), (7, 6), (5, 7), (6, 7)], white=[(4, 7)]) is None  # one three is blocked: X X X (O)
    assert why([(7, 5), (7, 6), (5, 7), (6, 7)], white=[(7, 8)]) is None


def test_renju_a_three_whose_only_straight_four_point_is_forbidden_is_no_three():
    # Horizontal X X (p) with white at (3,7): its only straight-four point is (8,7). With a vertical
    # three through p as well, the move is a double three ...
    base = [(5, 7), (6, 7), (7, 5), (7, 6)]
    assert why(base, white=[(3, 7)]) == "double three"
    # ... unless (8,7) is itself forbidden (here a double four: vertical 8,4..6 and diagonal 5,4 6,5 7,6):
    # then the horizontal line is no three (the rules' recursion) and the move is a single three.
    makers = [(8, 4), (8, 5), (8, 6), (5, 4), (6, 5)]
    assert why(base + makers, white=[(3, 7)], at=(8, 7)) is not None
    assert why(base + makers, white=[(3, 7)]) is None


def test_renju_game_refuses_black_forbidden_moves_white_overline_wins():
    g = Gomoku(15, 5, "renju")
    assert g.to_dict()["variant"] == "renju"
    with pytest.raises(ValueError, match="connect must be 5"):
        Gomoku(15, 4, "renju")
    pt = lambda x, y: y * 15 + x  # noqa: E731
    black = [pt(7, 5), pt(7, 6), pt(5, 7), pt(6, 7)]
    white = [pt(0, 0), pt(14, 0), pt(0, 14), pt(14, 14)]
    pos = g.play_moves([m for pair in zip(black, white, strict=True) for m in pair])
    assert pos.to_play == BLACK and pt(7, 7) not in pos.legal_moves() and not pos.is_legal(pt(7, 7))
    assert pt(7, 7) not in pos.legal_actions().tolist()
    with pytest.raises(IllegalMove, match="forbidden for black in renju"):
        pos.play(pt(7, 7))
    # White may make six: it wins.
    w_row = [pt(x, 10) for x in (0, 1, 2, 4, 5)]
    b_far = [pt(x, 2) for x in (0, 2, 4, 6, 8)]
    pos = g.play_moves([m for pair in zip(b_far, w_row, strict=True) for m in pair] + [pt(10, 2)])
    six = pos.play(pt(3, 10))
    assert six.is_terminal() and six.winner() == WHITE
