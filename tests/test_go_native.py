"""zero9.games.go_native, Go's rules compiled by numba, against its twin zero9.games.go.

The differential test plays seeded random games on :class:`zero9.games.go.Go` and, at every
position, asks the native functions the same questions: the legal actions (with the game's
earlier board hashes all in the sorted ``seen``, then split between ``seen`` and ``path``, with
stale hashes past ``npath`` that must be ignored), the stones, hash change and captures of the
move played (and, now and then, of every legal point), and the Tromp-Taylor score. Long games on
5x5 bring the captures, kos and superko refusals the test counts and insists on.

Speed (not a test): ``python3 tests/test_go_native.py`` runs :func:`speed_check`, which times
go_legal and go_play called in a numba loop (200,000 calls, best of 3) at moves 20, 50 and 80 of
a random 9x9 game, the history split 10 in ``path`` and the rest in ``seen``; go_play plays each
legal point in turn on a fresh copy of the board, the copy's time taken off. On the 2-core
development machine (another process busy on the other core): go_legal 0.7 / 0.95 / 0.8 us
(62 / 33 / 9 legal points), go_play 0.03-0.05 us.
"""

from __future__ import annotations

import random
import time

import numba
import numpy as np
import pytest
from test_go import triple_ko_position

from zero9.games.game import BLACK, WHITE, IllegalMove
from zero9.games.go import Go, GoPosition, geometry
from zero9.games.go_native import board_hash_of, go_area_score, go_legal, go_play, go_tables

# (size, move cap, games): 5x5 with a long cap for many repetitions, 7x7 and 9x9 as played, and the
# start of a 19x19 game (more than 255 points).
GAMES = [(5, 150, 100), (7, 120, 25), (9, None, 15), (19, 80, 2)]
PASS_RATE = 0.03
EYE_FILL_RATE = 0.2  # how often the random player may fill its own eye (captures, repetitions)


def random_move(pos: GoPosition, rng: random.Random) -> int:
    """A random legal action: rarely a pass, mostly not into its own eye."""
    legal = pos.legal_moves()
    points = legal[:-1]
    if not points or rng.random() < PASS_RATE:
        return legal[-1]
    for _ in range(4):
        a = rng.choice(points)
        if not pos.is_eye(a, pos.to_play) or rng.random() < EYE_FILL_RATE:
            return a
    return rng.choice(points)


def earlier_hashes(pos: GoPosition) -> list[int]:
    """The board hashes of the game's positions before ``pos``, newest first."""
    out, p = [], pos.parent
    while p is not None:
        out.append(p.board_hash)
        p = p.parent
    return out


def u64(values) -> np.ndarray:
    return np.array(values, np.uint64)


class Native:
    """The buffers a caller keeps for one board size."""

    def __init__(self, size: int):
        self.t = go_tables(size)
        nn = self.t.nn
        self.scratch = np.zeros(2 * nn, np.int32)
        self.out = np.full(nn + 1, -7, np.int32)
        self.none = np.zeros(0, np.uint64)

    def legal(self, stones, colour, board_hash, seen, path, npath) -> list[int]:
        t = self.t
        n = go_legal(stones, colour, np.uint64(board_hash), t.nbrs, t.zobrist, seen, path, npath,
                     self.scratch, self.out)
        assert not self.scratch[:t.nn].any(), "go_legal left marks behind"
        return self.out[:n].tolist()

    def play(self, stones, action, colour) -> tuple[int, int]:
        xor, captured = go_play(stones, action, colour, self.t.nbrs, self.t.zobrist, self.scratch)
        assert not self.scratch[:self.t.nn].any(), "go_play left marks behind"
        return int(xor), captured


def check_play(nat: Native, pos: GoPosition, stones: np.ndarray, action: int) -> int:
    """go_play of ``action`` agrees with ``pos.play``; returns the stones it captured."""
    child = pos.play(action)
    after = stones.copy()
    xor, captured = nat.play(after, action, pos.to_play)
    assert np.array_equal(after, child.board_array().astype(np.int8))
    assert pos.board_hash ^ xor == child.board_hash
    c = pos.to_play
    assert captured == child.captures[c] - pos.captures[c]
    return captured


def test_tables_are_go_geometry():
    for size in (5, 9, 19):
        geo, t = geometry(size), go_tables(size)
        assert (t.size, t.nn, t.white_to_move) == (size, size * size, geo.zobrist_white_to_move)
        assert t.nbrs.dtype == np.int32 and t.nbrs.shape == (t.nn, 4)
        assert [tuple(q for q in row if q >= 0) for row in t.nbrs.tolist()] == geo.nbrs
        assert t.zobrist.dtype == np.uint64 and t.zobrist.shape == (3, t.nn)
        assert not t.zobrist[0].any()
        assert [int(k) for k in t.zobrist[BLACK]] == geo.zobrist[BLACK]
        assert [int(k) for k in t.zobrist[WHITE]] == geo.zobrist[WHITE]
        assert go_tables(size) is t
        with pytest.raises(ValueError):
            t.zobrist[1, 0] = 0


def test_random_games_match_go():
    """Legal actions, play and score agree with zero9.games.go at every position of random games."""
    rng = random.Random(2024)
    positions = captures = big_captures = superko_positions = refused = path_tests = path_refusals = quiet = 0
    for size, cap, games in GAMES:
        nat = Native(size)
        nn = nat.t.nn
        for _ in range(games):
            pos = Go(size, move_cap=cap).new_position()
            while not pos.is_terminal():
                positions += 1
                stones = pos.board_array().astype(np.int8)
                c = pos.to_play
                history = earlier_hashes(pos)
                want = pos.legal_actions().tolist()
                assert nat.legal(stones, c, pos.board_hash, u64(sorted(history)), nat.none, 0) == want
                # Every earlier board in one of the two lists; stale boards past npath must not count.
                k = rng.randint(0, min(len(history), 12))
                fresh = [pos.board_hash, *history[:k]]
                stale = [pos.play(a).board_hash for a in want[:-1]] if positions % 5 == 0 else [7]
                path = u64(fresh + stale)
                older = u64(sorted(history[k:]))
                assert nat.legal(stones, c, pos.board_hash, older, path, len(fresh)) == want
                path_tests += k > 0
                path_refusals += nat.legal(stones, c, pos.board_hash, older, path, 0) != want
                # Without history: the empty points less the suicides. What superko takes away is a repeat.
                plain = nat.legal(stones, c, pos.board_hash, nat.none, nat.none, 0)
                gone = sorted(set(plain) - set(want))
                assert set(want) <= set(plain)
                for a in gone:
                    with pytest.raises(IllegalMove, match="superko"):
                        pos.play(a)
                superko_positions += bool(gone)
                quiet += sum(nat.play(stones.copy(), a, c)[1] == 0 for a in gone)  # captures nothing
                refused += len(gone)
                if positions % 7 == 0:
                    empty = np.flatnonzero(stones == 0).tolist()
                    for a in sorted(set(empty) - set(plain)):
                        with pytest.raises(IllegalMove, match="suicide"):
                            pos.play(a)
                    for a in want[:-1]:
                        check_play(nat, pos, stones, a)
                    assert board_hash_of(stones, nat.t) == pos.board_hash
                if positions % 10 == 0:
                    assert go_area_score(stones, nat.t.nbrs, pos.game.komi, nat.scratch) == pos.score()
                a = random_move(pos, rng)
                if a != nn:
                    got = check_play(nat, pos, stones, a)
                    captures += got
                    big_captures += got >= 2
                pos = pos.play(a)
            stones = pos.board_array().astype(np.int8)
            assert go_area_score(stones, nat.t.nbrs, pos.game.komi, nat.scratch) == pos.score()
            assert not nat.scratch[:nn].any()
    # The games must really have exercised the rules this module is about.
    assert positions > 12000 and path_tests > 10000
    assert captures > 6000 and big_captures > 600
    assert superko_positions > 80 and refused >= superko_positions and path_refusals > 20
    assert quiet > 5  # a move that captures nothing can repeat a board too


def test_triple_ko_superko_from_seen_or_path():
    """The retake that would repeat the board of five moves back is refused from either list."""
    pos, last = triple_ko_position()
    nat = Native(9)
    stones = pos.board_array().astype(np.int8)
    history = earlier_hashes(pos)
    want = pos.legal_actions().tolist()
    assert last not in want
    assert nat.legal(stones, WHITE, pos.board_hash, u64(sorted(history)), nat.none, 0) == want
    repeat = history[4]  # the board before the cycle's first capture
    rest = sorted(history[:4] + history[5:])
    assert nat.legal(stones, WHITE, pos.board_hash, u64(rest), u64([repeat]), 1) == want
    assert last in nat.legal(stones, WHITE, pos.board_hash, u64(rest), u64([repeat]), 0)
    # The cycle's first capture (black's, five moves back) takes one stone.
    before = pos.parent.parent.parent.parent.parent
    assert check_play(nat, before, before.board_array().astype(np.int8), 1 * 9 + 2) == 1


def test_score_counts_only_regions_reaching_one_colour():
    g = Go(5, komi=0.5)
    nat = Native(5)
    pos = g.new_position()
    for a in [6, 18, 7, 17, 8, 16, 11, 13, 12, 14]:
        pos = pos.play(a)
    stones = pos.board_array().astype(np.int8)
    assert go_area_score(stones, nat.t.nbrs, g.komi, nat.scratch) == pos.score()
    empty = np.zeros(25, np.int8)
    assert go_area_score(empty, nat.t.nbrs, 7.5, nat.scratch) == -7.5


@numba.njit
def _legal_loop(stones, colour, board_hash, nbrs, zobrist, seen, path, npath, scratch, out, reps):
    total = 0
    for _ in range(reps):
        total += go_legal(stones, colour, board_hash, nbrs, zobrist, seen, path, npath, scratch, out)
    return total


@numba.njit
def _play_loop(stones, colour, nbrs, zobrist, scratch, actions, work, reps, play):
    """go_play of each of ``actions`` in turn, on a fresh copy of ``stones`` (``play`` False: only copy)."""
    total = 0
    for r in range(reps):
        work[:] = stones
        if play:
            total += go_play(work, actions[r % actions.shape[0]], colour, nbrs, zobrist, scratch)[1]
    return total


def speed_check(reps: int = 200_000) -> None:
    """Print microseconds per go_legal and per go_play in a numba loop, at moves 20, 50 and 80 of a
    9x9 game, the history split 10 positions of path and the rest in seen (best of 3 runs)."""
    rng = random.Random(5)
    nat = Native(9)
    t = nat.t
    pos = Go(9).new_position()
    for move in (20, 50, 80):
        while pos.move_number < move or pos.is_terminal():
            pos = Go(9).new_position() if pos.is_terminal() else pos.play(random_move(pos, rng))
        stones = pos.board_array().astype(np.int8)
        history = earlier_hashes(pos)
        legal = (stones, pos.to_play, np.uint64(pos.board_hash), t.nbrs, t.zobrist, u64(sorted(history[10:])),
                 u64(history[:10]), 10, nat.scratch, nat.out)
        n = _legal_loop(*legal, 1)
        play = (stones, pos.to_play, t.nbrs, t.zobrist, nat.scratch, nat.out[:n - 1].copy(), stones.copy())
        runs = [(_legal_loop, (*legal, reps)), (_play_loop, (*play, reps, True)),
                (_play_loop, (*play, reps, False))]
        best = [np.inf] * 3
        for _ in range(3):
            for i, (loop, args) in enumerate(runs):
                t0 = time.perf_counter()
                loop(*args)
                best[i] = min(best[i], (time.perf_counter() - t0) / reps * 1e6)
        print(f"9x9 move {move}: {n - 1} legal points, history {len(history)}: go_legal {best[0]:.3f} us, "
              f"go_play {best[1] - best[2]:.3f} us (each legal point in turn, the board copy not counted)")


if __name__ == "__main__":
    speed_check()
