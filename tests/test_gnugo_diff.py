"""Differential test: zero9's Go rules against GNU Go 3.8 over GTP, move by move, on both boards.

Random 9x9 games are played through both (random moves that do not fill an own single-point
eye, an occasional pass). After every move the stones, the set of legal moves of the side to
move and the capture counts must agree; games that end with two passes and no dead stones
(``final_status_list dead`` empty) must also agree on the final score. GNU Go runs with area
scoring and positional superko, as zero9.

Only games that *finished* are scored: both last passes forced (no move left that does not
fill an own eye). After an early voluntary pass GNU Go's ``final_score`` still counts the
territory it expects on the open board, while Tromp-Taylor counts an empty region only when it
reaches one colour alone, so the two rightly differ there.

Each test runs on both engines of ``make_game('go', engine=...)``: the fast bitboard board and
the readable one of zero9.games.go_simple.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pytest

from zero9.arena.gtpclient import GTPClient
from zero9.games import BLACK, GO_ENGINES, WHITE, IllegalMove, make_game, point_to_vertex

SIZE = 9
COLOUR = {BLACK: "black", WHITE: "white"}
ENGINES = pytest.mark.parametrize("engine", list(GO_ENGINES))


def gnugo_rules_command(gnugo: str) -> list[str]:
    # Level 0: the rules do not depend on the level, and final_status_list gets much faster.
    return [gnugo, "--mode", "gtp", "--level", "0", "--boardsize", str(SIZE), "--chinese-rules",
            "--positional-superko"]


def score_value(result: str) -> float:
    """'B+3.5' -> 3.5, 'W+31.0' -> -31.0, '0' -> 0.0 (GNU Go writes integer margins as '31.0')."""
    if result in ("0", "Draw"):
        return 0.0
    side, margin = result.split("+")
    return float(margin) * (1 if side.upper() == "B" else -1)


def _vertices(reply: str) -> set[str]:
    return {v.upper() for v in reply.split()}


def random_move(pos, rng: random.Random, pass_rate: float) -> tuple[int, bool]:
    """A random legal move that does not fill an own eye, and whether it is a forced pass
    (nothing else left). With probability ``pass_rate`` a voluntary pass instead."""
    moves = [m for m in pos.legal_moves() if m != pos.game.pass_action]
    if rng.random() < pass_rate:
        return pos.game.pass_action, False
    while moves:
        i = rng.randrange(len(moves))
        if not pos.is_eye(moves[i], pos.to_play):
            return moves[i], False
        moves[i] = moves[-1]
        moves.pop()
    return pos.game.pass_action, True


def play_checked_games(gnugo: str, games: int, seed: int, komi: float = 7.5, engine: str = "fast") -> dict:
    """Play ``games`` random games through zero9 (on ``engine``'s board) and GNU Go; returns counts and
    the mismatches found."""
    rng = random.Random(seed)
    game = make_game("go", SIZE, komi=komi, move_cap=0, engine=engine)
    stats = {"games": 0, "moves": 0, "scored": 0, "superko_moves_seen": 0, "mismatches": []}
    # final_status_list runs GNU Go's life-and-death reading: allow it time on a loaded machine
    with GTPClient(gnugo_rules_command(gnugo), timeout=180) as gg:
        gg.send(f"komi {komi}")
        for g in range(games):
            gg.send("clear_board")
            pos = game.new_position()
            forced: list[bool] = []
            while True:
                where = f"seed {seed} game {g} move {pos.move_number}"
                mine = {c: _stone_vertices(pos.stones(c)) for c in (BLACK, WHITE)}
                for c in (BLACK, WHITE):
                    theirs = _vertices(gg.send(f"list_stones {COLOUR[c]}"))
                    if theirs != mine[c]:
                        stats["mismatches"].append(f"{where}: {COLOUR[c]} stones {sorted(mine[c] ^ theirs)}")
                    caps = int(gg.send(f"captures {COLOUR[c]}"))
                    if caps != pos.captures[c]:
                        stats["mismatches"].append(f"{where}: {COLOUR[c]} captures {pos.captures[c]} "
                                                   f"vs {caps}")
                if pos.is_terminal():
                    break
                legal = {game.action_to_vertex(m) for m in pos.legal_moves() if m != game.pass_action}
                theirs = _vertices(gg.send(f"all_legal {COLOUR[pos.to_play]}"))
                if legal != theirs:
                    stats["mismatches"].append(f"{where}: legal moves differ on {sorted(legal ^ theirs)}"
                                               f"\n{pos}")
                empty = {point_to_vertex(p, SIZE) for p in range(SIZE * SIZE)} - mine[BLACK] - mine[WHITE]
                stats["superko_moves_seen"] += sum(1 for v in empty - legal if "superko" in _why(pos, v))
                move, was_forced = random_move(pos, rng, pass_rate=0.02)
                forced.append(was_forced)
                gg.send(f"play {COLOUR[pos.to_play]} {game.action_to_vertex(move)}")
                pos = pos.play(move)
                stats["moves"] += 1
            stats["games"] += 1
            if all(forced[-2:]) and not gg.send("final_status_list dead").split():
                stats["scored"] += 1
                theirs = gg.send("final_score")
                if score_value(theirs) != score_value(pos.result_string()):
                    stats["mismatches"].append(f"seed {seed} game {g}: score {pos.result_string()} "
                                               f"vs {theirs}\n{pos}")
    return stats


def _stone_vertices(stones: int) -> set[str]:
    """The vertices of a bitboard of stones."""
    return {point_to_vertex(p, SIZE) for p in range(SIZE * SIZE) if stones >> p & 1}


def _why(pos, vertex: str) -> str:
    try:
        pos.play(pos.game.vertex_to_action(vertex))
    except IllegalMove as e:
        return e.reason
    return ""


def run_parallel(gnugo: str, games: int, workers: int = 2, seed: int = 2024, engine: str = "fast") -> dict:
    """Split the games over several GNU Go processes (each one its own seed)."""
    share = [games // workers + (i < games % workers) for i in range(workers)]
    with ThreadPoolExecutor(workers) as pool:
        parts = list(pool.map(lambda i: play_checked_games(gnugo, share[i], seed + i, engine=engine),
                              range(workers)))
    total = {k: sum(p[k] for p in parts) for k in ("games", "moves", "scored", "superko_moves_seen")}
    total["mismatches"] = [m for p in parts for m in p["mismatches"]]
    return total


def _report(stats: dict) -> str:
    return (f"{stats['games']} games, {stats['moves']} moves, {stats['scored']} scored, "
            f"{len(stats['mismatches'])} mismatches:\n" + "\n".join(stats["mismatches"][:5]))


@ENGINES
def test_random_games_match_gnugo(gnugo_path, engine):
    stats = run_parallel(gnugo_path, games=100, engine=engine)
    print(_report(stats))
    assert stats["games"] == 100
    assert stats["scored"] >= 50  # most random games end with nothing dead: the score is checked on those
    assert stats["mismatches"] == [], _report(stats)


@ENGINES
def test_integer_komi_scores_match_gnugo(gnugo_path, engine):
    stats = play_checked_games(gnugo_path, games=10, seed=7, komi=0.0, engine=engine)
    assert stats["scored"] >= 5
    assert stats["mismatches"] == [], _report(stats)


@pytest.mark.slow
@ENGINES
def test_many_random_games_match_gnugo(gnugo_path, engine):
    stats = run_parallel(gnugo_path, games=2000, seed=99, engine=engine)
    print(_report(stats))
    assert stats["games"] == 2000
    assert stats["mismatches"] == [], _report(stats)


def _replay_in_gnugo(gg: GTPClient, pos) -> None:
    moves = []
    p = pos
    while p.parent is not None:
        moves.append((p.parent.to_play, p.last_move))
        p = p.parent
    gg.send("clear_board")
    for colour, move in reversed(moves):
        gg.send(f"play {COLOUR[colour]} {pos.game.action_to_vertex(move)}")


@ENGINES
def test_hand_made_positions_match_gnugo(gnugo_path, engine):
    """The seki and triple-ko positions of test_go: GNU Go allows exactly the same moves."""
    from test_go import SEKI_BLACK, SEKI_WHITE, setup, triple_ko_position

    seki = setup(make_game("go", 9, komi=0.0, engine=engine), SEKI_BLACK, SEKI_WHITE)
    triple, superko_point = triple_ko_position(make_game("go", 9, engine=engine))
    with GTPClient(gnugo_rules_command(gnugo_path), timeout=30) as gg:
        for pos in (seki, seki.play(81), triple):
            _replay_in_gnugo(gg, pos)
            theirs = _vertices(gg.send(f"all_legal {COLOUR[pos.to_play]}"))
            mine = {pos.game.action_to_vertex(m) for m in pos.legal_moves()[:-1]}
            assert theirs == mine
        assert gg.send(f"is_legal white {triple.game.action_to_vertex(superko_point)}") == "0"
        assert triple.game.action_to_vertex(superko_point) not in mine
