"""zero9.nn.features: Leela Zero's 18 Go planes, the Gomoku planes, and the 8 symmetries as a group."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from zero9.games import BLACK, WHITE, make_game
from zero9.games.go import Go
from zero9.games.gomoku import Gomoku
from zero9.nn import planes_fast
from zero9.nn.features import (
    GO_HISTORY,
    encode,
    encode_batch,
    inverse_symmetry,
    num_planes,
    transform_planes,
    transform_policy,
)


def test_num_planes():
    assert num_planes(Go(9)) == 18 and num_planes(Gomoku(15)) == 5


def test_go_planes_are_leela_zeros():
    g = Go(9)
    moves = ["E5", "C3", "G7", "pass", "D4", "F6", "B2", "H8", "A1", "J9"]
    history = [g.new_position()]
    for m in moves:
        history.append(history[-1].play(g.vertex_to_action(m)))
    pos = history[-1]
    assert pos.to_play == BLACK
    x = encode(pos)
    assert x.shape == (18, 9, 9) and x.dtype == np.float32
    for t in range(8):
        past = history[-1 - t].board_array().reshape(9, 9)
        assert np.array_equal(x[t], past == BLACK), t  # side to move (black) at T=-t
        assert np.array_equal(x[8 + t], past == WHITE), t
    assert (x[16] == 1).all() and (x[17] == 0).all()
    # row r of a plane is board row y=r from the bottom: E5 is x=4, y=4; C3 (white) x=2, y=2
    assert x[0, 4, 4] == 1 and x[8, 2, 2] == 1 and x[0].reshape(-1)[g.vertex_to_action("E5")] == 1
    # white to move: the planes swap colours and plane 17 is set
    w = encode(history[-2])
    assert history[-2].to_play == WHITE
    assert np.array_equal(w[0], history[-2].board_array().reshape(9, 9) == WHITE)
    assert (w[16] == 0).all() and (w[17] == 1).all()


def test_go_history_before_the_start_is_zero():
    g = Go(9)
    pos = g.new_position().play(40).play(41)
    x = encode(pos)
    assert x[0].sum() == 1 and x[8].sum() == 1  # current: black E5, white F5
    assert x[1].sum() == 1 and x[9].sum() == 0  # one move ago: black E5 only
    assert x[2:8].sum() == 0 and x[10:16].sum() == 0
    empty = encode(g.new_position())
    assert empty[:16].sum() == 0 and (empty[16] == 1).all()


def test_gomoku_planes():
    g = Gomoku(9)
    pos = g.play_moves(["E5", "D4", "C3"])
    x = encode(pos)
    assert x.shape == (5, 9, 9)
    assert pos.to_play == WHITE
    assert x[0, 3, 3] == 1 and x[0].sum() == 1  # white's own stone D4
    assert x[1, 4, 4] == 1 and x[1, 2, 2] == 1 and x[1].sum() == 2
    assert x[2, 2, 2] == 1 and x[2].sum() == 1  # last move C3
    assert (x[3] == 0).all() and (x[4] == 1).all()
    start = encode(g.new_position())
    assert start[2].sum() == 0 and (start[3] == 1).all() and (start[4] == 1).all()


def test_encode_batch():
    g = Go(9)
    ps = [g.new_position(), g.new_position().play(3)]
    for batch in (encode_batch, planes_fast.encode_batch):  # the plain loop and its fast twin
        b = batch(ps)
        assert b.shape == (2, 18, 9, 9) and np.array_equal(b[1], encode(ps[1]))
        with pytest.raises(ValueError):
            batch([])
    gomoku, turn = [Gomoku(9).new_position().play(40)], np.array([3])
    assert np.array_equal(planes_fast.encode_batch(gomoku, turn), encode_batch(gomoku, turn))


def random_game(game, rng, moves: int) -> list:
    """The positions of a random game from its start (passes, captures, both colours to move)."""
    line = [game.new_position()]
    while not line[-1].is_terminal() and len(line) <= moves:
        legal = list(line[-1].legal_moves())
        line.append(line[-1].play(legal[int(rng.integers(len(legal)))]))
    return line


@pytest.mark.parametrize("engine", ["fast", "simple"])
def test_the_fast_go_planes_equal_the_plain_loop_over_random_games(engine):
    # the twins: encode (a plain loop over the history) and planes_fast.encode_batch (bits, a gather)
    rng = np.random.default_rng(5)
    game = make_game("go", 7, engine=engine)
    positions = [random_game(game, rng, int(rng.integers(0, 60)))[-1] for _ in range(40)]
    syms = rng.integers(0, 8, len(positions))
    plain = np.stack([transform_planes(encode(p), int(s)) for p, s in zip(positions, syms, strict=True)])
    assert np.array_equal(planes_fast.encode_batch(positions, syms), plain)
    assert np.array_equal(encode_batch(positions, syms), plain)
    # a whole game at once (the server's check of uploads): the stone planes of every position
    for size in (5, 9):
        line = random_game(make_game("go", size), rng, 90)
        expected = np.stack([encode(p)[:16] for p in line]).astype(np.uint8)
        assert np.array_equal(planes_fast.game_stone_planes(line), expected)
        assert np.array_equal(planes_fast.game_stone_planes(line[:3]), expected[:3])
    with pytest.raises(ValueError, match="consecutive"):
        planes_fast.game_stone_planes(line[1:])  # not from the start
    with pytest.raises(ValueError, match="consecutive"):
        planes_fast.game_stone_planes([line[0], line[2]])
    assert planes_fast.HISTORY == GO_HISTORY


@pytest.mark.parametrize("order", ["newest first", "shuffled"])
def test_the_kept_histories_do_not_depend_on_the_order_positions_are_asked(order):
    # a loaded game's positions are analysed in any order (review, the window): the newest first walks
    # 8 back and stops; the older positions on that walk must not keep a history cut off there
    rng = np.random.default_rng(11)
    line = random_game(make_game("go", 7), rng, 40)
    asked = line[::-1] if order == "newest first" else [line[i] for i in rng.permutation(len(line))]
    for position in asked:
        planes_fast.encode_batch([position])
    assert all(np.array_equal(planes_fast.encode_batch([p])[0], encode(p)) for p in line)


def test_symmetries_form_the_dihedral_group():
    rng = np.random.default_rng(0)
    x = rng.random((3, 7, 7))
    images = [transform_planes(x, s) for s in range(8)]
    assert np.array_equal(images[0], x)
    for i, j in itertools.combinations(range(8), 2):  # 8 different transforms
        assert not np.array_equal(images[i], images[j])
    for s in range(8):
        assert np.array_equal(transform_planes(transform_planes(x, s), inverse_symmetry(s)), x)
        assert np.array_equal(transform_planes(transform_planes(x, inverse_symmetry(s)), s), x)
    # closed under composition: every composition is one of the 8
    for a, b in itertools.product(range(8), repeat=2):
        composed = transform_planes(transform_planes(x, a), b)
        assert sum(np.array_equal(composed, im) for im in images) == 1


@pytest.mark.parametrize("size, with_pass", [(9, True), (7, False), (15, False)])
def test_planes_and_policy_transform_consistently(size, with_pass):
    nn = size * size
    rng = np.random.default_rng(size)
    for s in range(8):
        for point in rng.choice(nn, 5, replace=False):
            plane = np.zeros((size, size), np.float32)
            plane.reshape(-1)[point] = 1
            policy = np.zeros(nn + with_pass, np.float32)
            policy[point] = 1
            if with_pass:
                policy[-1] = 0.5
            tp = transform_policy(policy, s, size)
            assert np.array_equal(tp[:nn], transform_planes(plane, s).reshape(-1))
            if with_pass:
                assert tp[-1] == 0.5  # pass stays pass
            back = transform_policy(tp, inverse_symmetry(s), size)
            assert np.array_equal(back, policy)
    batch = rng.random((4, nn + with_pass))
    there = transform_policy(batch, 5, size)
    assert np.array_equal(transform_policy(there, inverse_symmetry(5), size), batch)


def test_symmetries_agree_with_the_board():
    """Transforming the input of a position equals the input of the transformed game."""
    g = Go(9)
    moves = ["E5", "C3", "G7", "D4", "F6"]
    pos = g.play_moves(moves)
    for s in range(8):
        def move_image(v: str, s=s) -> int:
            one_hot = np.zeros(g.num_actions, np.float32)
            one_hot[g.vertex_to_action(v)] = 1
            return int(np.argmax(transform_policy(one_hot, s, 9)))

        other = g.play_moves([move_image(m) for m in moves])
        assert np.array_equal(transform_planes(encode(pos), s), encode(other))


def test_bad_input():
    with pytest.raises(ValueError, match="symmetry"):
        transform_planes(np.zeros((3, 3)), 8)
    with pytest.raises(ValueError, match="symmetry"):
        inverse_symmetry(-1)
    with pytest.raises(ValueError, match="N, N"):
        transform_planes(np.zeros((3, 4)), 1)
    with pytest.raises(ValueError, match="does not fit"):
        transform_policy(np.zeros(80), 1, 9)
