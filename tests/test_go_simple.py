"""zero9.games.go_simple, the readable Go board, against the fast one (zero9.games.go).

The differential test plays seeded random games on both boards at once and compares, after every
move: the stones, the side to move, the move counts, both hashes, the captures, the legal moves,
the reason each illegal move is refused (occupied, suicide, superko), the eye test, the score,
the ownership and, at the end, the result. The random player mostly keeps out of its own eyes (as
self-play's does) but sometimes fills one, which brings the captures and board repetitions that
superko is about; small boards with a long move cap bring more of them.
"""

from __future__ import annotations

import pickle
import random
from pathlib import Path

import numpy as np
import pytest
from test_go import setup, triple_ko_position
from test_player import tiny_net

from zero9.games import BLACK, WHITE, IllegalMove, go_simple, make_game
from zero9.games.go import Go
from zero9.games.go_simple import SimpleGo, SimpleGoPosition
from zero9.games.sgf import parse_sgf, write_sgf
from zero9.nn import features
from zero9.search.evaluator import NetEvaluator
from zero9.search.player import SearchPlayer
from zero9.settings import PlayConfig

# (size, move cap, games): 9x9 as played, and small boards with a long cap for many repetitions.
DIFFERENTIAL_GAMES = [(9, None, 400), (7, 200, 300), (5, 100, 300)]
PASS_RATE = 0.02  # a voluntary pass now and then
EYE_FILL_RATE = 0.1  # how often the random player may fill its own eye
RESIGN_RATE = 0.001  # per move: a few games end by resignation


def assert_same(fast, simple, where: str) -> None:
    """Every observable of the two positions agrees (the legal moves included)."""
    for name in ("to_play", "move_number", "passes", "last_move", "hash", "board_hash", "captures", "black",
                 "white"):
        assert getattr(fast, name) == getattr(simple, name), f"{name} differs at {where}\n{fast}"
    assert np.array_equal(fast.board_array(), simple.board_array()), f"stones differ at {where}\n{fast}"
    assert fast.is_terminal() == simple.is_terminal(), f"end of game differs at {where}\n{fast}"
    assert fast.legal_moves() == simple.legal_moves(), f"legal moves differ at {where}\n{fast}"
    assert np.array_equal(fast.ownership(), simple.ownership()), f"ownership differs at {where}\n{fast}"
    assert fast.score() == simple.score(), f"score differs at {where}\n{fast}"
    if fast.is_terminal():
        assert (fast.winner(), fast.result_string()) == (simple.winner(), simple.result_string()), where


def refusal(position, action: int) -> str:
    """The reason ``position`` refuses ``action`` ('' if it plays it)."""
    try:
        position.play(action)
    except IllegalMove as e:
        return e.reason
    return ""


def random_move(position, rng: random.Random) -> int:
    """A random legal move; mostly not into an own eye, pass when nothing else is left."""
    moves = position.legal_moves()[:-1]
    if rng.random() < PASS_RATE:
        return position.game.pass_action
    rng.shuffle(moves)
    fill_eyes = rng.random() < EYE_FILL_RATE
    return next((m for m in moves if fill_eyes or not position.is_eye(m, position.to_play)),
                position.game.pass_action)


def play_both(size: int, move_cap: int | None, games: int, seed: int) -> dict[str, int]:
    """Play ``games`` random games on both boards, comparing them after every move; returns counts."""
    rng = random.Random(seed)
    fast_game, simple_game = Go(size, move_cap=move_cap), SimpleGo(size, move_cap=move_cap)
    counts = {"games": 0, "moves": 0, "occupied": 0, "suicide": 0, "superko": 0, "resigned": 0}
    for g in range(games):
        fast, simple = fast_game.new_position(), simple_game.new_position()
        while True:
            where = f"{size}x{size} seed {seed} game {g} move {fast.move_number}"
            assert_same(fast, simple, where)
            if fast.is_terminal():
                break
            # every empty point that is not a legal move is refused by both, for the same reason
            legal = set(fast.legal_moves())
            for p in np.flatnonzero(fast.board_array() == 0).tolist():
                if p not in legal:
                    reason = refusal(fast, p)
                    assert reason and refusal(simple, p) == reason, f"{where}: point {p}"
                    counts[reason.split()[0]] += 1
            occupied = np.flatnonzero(fast.board_array()).tolist()
            if occupied:
                p = rng.choice(occupied)
                assert refusal(fast, p) == refusal(simple, p) == "occupied", where
                counts["occupied"] += 1
            if rng.random() < RESIGN_RATE:
                fast, simple = fast.resign(), simple.resign()
                counts["resigned"] += 1
                continue
            move = random_move(fast, rng)
            if move != fast_game.pass_action:
                assert fast.is_eye(move, fast.to_play) == simple.is_eye(move, simple.to_play), where
            fast, simple = fast.play(move), simple.play(move)
            counts["moves"] += 1
        counts["games"] += 1
    return counts


def test_differential_random_games_agree_after_every_move():
    total: dict[str, int] = {}
    for i, (size, cap, games) in enumerate(DIFFERENTIAL_GAMES):
        counts = play_both(size, cap, games, seed=2000 + i)
        print(size, counts)
        total = {k: total.get(k, 0) + v for k, v in counts.items()}
    print("total", total)
    assert total["games"] >= 1000
    # the games reach what the rules are about, often enough to count
    assert total["superko"] >= 200 and total["suicide"] >= 1000 and total["resigned"] >= 1


def test_readable_board_is_at_most_360_lines():
    # (its own game class, Zobrist keys and result, so that it imports nothing of the fast board)
    lines = Path(go_simple.__file__).read_text().splitlines()
    assert len(lines) <= 360, f"go_simple.py has {len(lines)} lines"


def test_make_game_picks_the_engine_and_round_trips():
    simple = make_game("go", 7, komi=5.5, engine="simple")
    assert isinstance(simple, SimpleGo) and isinstance(simple.new_position(), SimpleGoPosition)
    assert simple.to_dict() == {"game": "go", "size": 7, "komi": 5.5, "move_cap": 98, "engine": "simple"}
    assert make_game(**simple.to_dict()) == simple and simple != Go(7, komi=5.5)
    assert type(make_game("go", 7)) is Go and "engine" not in make_game("go", 7).to_dict()
    with pytest.raises(ValueError, match="unknown Go engine 'slow'"):
        make_game("go", 9, engine="slow")
    with pytest.raises(ValueError, match="board size"):
        make_game("go", 4, engine="simple")
    # positions pickle (as moves, replayed) and SGF records keep the engine
    pos = simple.play_moves(["C3", "D4", "pass", "E5"])
    copy = pickle.loads(pickle.dumps(pos))
    assert type(copy) is SimpleGoPosition and copy.hash == pos.hash and copy.move_number == 4
    assert copy.legal_moves() == pos.legal_moves()
    record = parse_sgf(write_sgf(simple, [p.last_move for p in (pos.parent.parent.parent, pos.parent.parent,
                                                                 pos.parent, pos)]))
    assert record.game == simple


def test_bad_moves_are_refused_the_same_way():
    for game in (Go(5), SimpleGo(5)):
        pos = game.play_moves(["C3"])
        for bad in (-1, 26, 2.0, True, "C3"):
            with pytest.raises(IllegalMove, match="not a point or pass"):
                pos.play(bad)
        assert pos.play(np.int64(0)).last_move == 0
        over = pos.resign()
        assert over.result_string() == "B+R" and over.winner() == BLACK
        with pytest.raises(IllegalMove, match="game over"):
            over.play(0)
        with pytest.raises(IllegalMove, match="game over"):
            over.resign()
        assert over.legal_moves() == [] and not over.is_legal(game.pass_action)
        with pytest.raises(ValueError, match="not over"):
            pos.winner()


def test_triple_ko_is_refused_by_superko_on_the_readable_board():
    pos, retake = triple_ko_position(SimpleGo(9))
    assert isinstance(pos, SimpleGoPosition)
    assert retake not in pos.legal_moves()
    with pytest.raises(IllegalMove, match="superko"):
        pos.play(retake)


def test_same_moves_give_the_same_input_planes_and_search():
    fast_game, simple_game = Go(9), SimpleGo(9)
    rng = random.Random(11)
    fast, simple = fast_game.new_position(), simple_game.new_position()
    for _ in range(40):  # long enough for the 8 history positions and some captures
        assert np.array_equal(features.encode(fast), features.encode(simple))
        move = random_move(fast, rng)
        fast, simple = fast.play(move), simple.play(move)
    # the same net and search on both boards: the same statistics and move
    net = tiny_net(fast_game)
    decisions = []
    for game, pos in ((fast_game, fast), (simple_game, simple)):
        evaluator = NetEvaluator(net, random_symmetry=False)
        player = SearchPlayer(game, evaluator, PlayConfig(visits=60, batch_size=4), seed=3)
        decision = player.choose(pos)
        decisions.append((decision.action, [(s.action, s.visits) for s in decision.stats]))
    assert decisions[0] == decisions[1]
    assert decisions[1][0] in simple.legal_moves()


def test_seki_and_scoring_on_the_readable_board():
    from test_go import SEKI_BLACK, SEKI_WHITE

    g = SimpleGo(9, komi=0.0)
    pos = setup(g, SEKI_BLACK, SEKI_WHITE)
    assert pos.ownership()[g.vertex_to_action("B1")] == 0  # the shared liberties are nobody's
    end = pos.play(g.pass_action).play(g.pass_action)
    assert end.is_terminal() and end.result_string() == setup(Go(9, komi=0.0), SEKI_BLACK, SEKI_WHITE).play(
        81).play(81).result_string()
    assert SimpleGo(5, komi=-1.0).play_moves(["C3", "pass", "pass"]).result_string() == "B+26"
    assert SimpleGo(9).new_position().score() == -7.5
    assert pos.captures == {BLACK: 0, WHITE: 0}
