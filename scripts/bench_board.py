#!/usr/bin/env python3
"""Board speed: random 9x9 Go games in moves per second, zero9 against minigo and OpenSpiel.

The workload, the same for every board: from the empty board, each move asks for the list of
legal moves, picks one at random among those that do not fill a single-point own eye (pass
only when nothing else is left), and plays it to get a *new* position (copy-and-play, as the
search does). A game ends after two passes.

- zero9: ``GoPosition.legal_moves`` / ``is_eye`` / ``play`` (positional superko, no move cap).
- zero9 readable: the same calls on :mod:`zero9.games.go_simple`, the plain-Python board written
  for reading (flood fill, no incremental state): what the fast board's bitboards buy.
- minigo: the pure-Python board that PettingZoo ships (``pettingzoo/classic/go/go_base.py`` is a
  copy of minigo's go.py): ``all_legal_moves`` / ``is_eyeish`` / ``play_move``. ``pip install pettingzoo``.
- OpenSpiel: its C++ Go through pybind (simple ko): ``legal_actions`` / ``clone`` +
  ``apply_action``; the eye test reads ``observation_tensor``. ``pip install open-spiel``.

The rounds alternate between the boards so that load from other processes on a shared machine
falls on all of them alike. The work per move is the same for every board (one legal list, the
same random choice and eye test, one copy-and-play) and the games come out as long (moves /
games in the table); zero9 alone checks positional superko (minigo: simple ko), so if anything
the comparison errs against zero9. Prints a table, then the ratio to OpenSpiel and, last,
``fast / readable board: X.XXx`` and ``speedup vs minigo: X.XXx``.

    python scripts/bench_board.py [--seconds 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import time
from collections.abc import Callable

from zero9.games.go import Go
from zero9.games.go_simple import SimpleGo

SIZE = 9


def _pick(moves: list[int], pass_move, is_eye: Callable[[object], bool], rng: random.Random):
    """A random move among ``moves`` that does not fill an own eye; pass when nothing else is left."""
    while moves:
        i = rng.randrange(len(moves))
        m = moves[i]
        if m != pass_move and not is_eye(m):
            return m
        moves[i] = moves[-1]
        moves.pop()
    return pass_move


def zero9_game(rng: random.Random, engine: type[Go] = Go) -> int:
    game = engine(SIZE, move_cap=0)
    pos = game.new_position()
    n = 0
    while not pos.is_terminal():
        m = _pick(pos.legal_moves(), game.pass_action, lambda p, pos=pos: pos.is_eye(p, pos.to_play), rng)
        pos = pos.play(m)
        n += 1
    return n


def minigo_runner() -> Callable[[random.Random], int] | str:
    os.environ["BOARD_SIZE"] = str(SIZE)  # minigo reads the board size at import
    try:
        from pettingzoo.classic.go import go_base as minigo
    except ImportError as e:
        return f"minigo skipped: pettingzoo not installed ({e}); pip install pettingzoo"
    if minigo.N != SIZE:
        return f"minigo skipped: go_base was imported earlier with N={minigo.N}"
    coords = [(i, j) for i in range(SIZE) for j in range(SIZE)] + [None]

    def game(rng: random.Random) -> int:
        pos = minigo.Position(komi=7.5)
        n = 0
        while not pos.is_game_over():
            legal = pos.all_legal_moves().nonzero()[0].tolist()
            def is_eye(a: int, pos=pos) -> bool:
                return minigo.is_eyeish(pos.board, coords[a]) == pos.to_play

            m = _pick(legal, SIZE * SIZE, is_eye, rng)
            pos = pos.play_move(coords[m])
            n += 1
        return n

    return game


def openspiel_runner() -> Callable[[random.Random], int] | str:
    try:
        import pyspiel
    except ImportError as e:
        return f"OpenSpiel skipped: open-spiel not installed ({e}); pip install open-spiel"
    game = pyspiel.load_game("go", {"board_size": SIZE, "max_game_length": 100000})
    nn = SIZE * SIZE
    nbrs = [[q for q in (p - SIZE, p + SIZE) if 0 <= q < nn]
            + [q for q in (p - 1, p + 1) if 0 <= q < nn and q // SIZE == p // SIZE] for p in range(nn)]
    diags = [[(y + dy) * SIZE + x + dx for dy in (-1, 1) for dx in (-1, 1)
              if 0 <= y + dy < SIZE and 0 <= x + dx < SIZE] for y, x in (divmod(p, SIZE) for p in range(nn))]

    def game_fn(rng: random.Random) -> int:
        state = game.new_initial_state()
        n = 0
        while not state.is_terminal():
            obs = None
            me = state.current_player()  # 0 black, 1 white: planes 0 and 1 of the observation

            def is_eye(p: int, state=state, me=me) -> bool:  # Leela Zero's eye test, as zero9's is_eye
                nonlocal obs
                if obs is None:
                    obs = state.observation_tensor()
                if any(obs[me * nn + q] != 1.0 for q in nbrs[p]):
                    return False
                bad = sum(obs[(1 - me) * nn + q] == 1.0 for q in diags[p])
                return bad == 0 if len(nbrs[p]) < 4 else bad < 2

            m = _pick(state.legal_actions(), nn, is_eye, rng)
            state = state.clone()
            state.apply_action(m)
            n += 1
        return n

    return game_fn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=20.0, help="total time, shared among the boards")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    boards: dict[str, Callable[[random.Random], int]] = {
        "zero9": zero9_game, "zero9 readable (go_simple)": lambda rng: zero9_game(rng, SimpleGo)}
    notes = []
    for name, make in (("minigo (PettingZoo)", minigo_runner), ("OpenSpiel C++", openspiel_runner)):
        r = make()
        if isinstance(r, str):
            notes.append(r)
        else:
            boards[name] = r
    # zero9 again with the cyclic garbage collector off, to show what gc costs on this workload.
    boards["zero9, gc frozen+disabled"] = zero9_game

    rngs = {name: random.Random(args.seed) for name in boards}
    moves = dict.fromkeys(boards, 0)
    games = dict.fromkeys(boards, 0)
    spent = dict.fromkeys(boards, 0.0)
    slice_s = 1.0
    deadline = time.perf_counter() + args.seconds
    while time.perf_counter() < deadline or min(games.values()) == 0:
        for name, fn in boards.items():
            no_gc = "gc" in name
            if no_gc:
                gc.collect()
                gc.freeze()
                gc.disable()
            t0 = time.perf_counter()
            while True:
                moves[name] += fn(rngs[name])
                games[name] += 1
                if time.perf_counter() - t0 >= slice_s / len(boards):
                    break
            spent[name] += time.perf_counter() - t0
            if no_gc:
                gc.enable()
                gc.unfreeze()

    for note in notes:
        print(note)
    rate = {name: moves[name] / spent[name] for name in boards}
    print(f"random {SIZE}x{SIZE} games, legal list + eye-avoiding random choice + copy-and-play "
          f"(load {os.getloadavg()[0]:.2f})")
    print(f"{'board':<28}{'games':>8}{'moves':>10}{'moves/s':>12}{'vs zero9':>10}")
    for name in boards:
        ratio = rate[name] / rate["zero9"]
        print(f"{name:<28}{games[name]:>8}{moves[name]:>10}{rate[name]:>12,.0f}{ratio:>9.2f}x")
    print(f"fast / readable board: {rate['zero9'] / rate['zero9 readable (go_simple)']:.2f}x")
    if "OpenSpiel C++" in rate:
        print(f"zero9 / OpenSpiel C++: {rate['zero9'] / rate['OpenSpiel C++']:.2f}x")
    if "minigo (PettingZoo)" in rate:
        print(f"speedup vs minigo: {rate['zero9'] / rate['minigo (PettingZoo)']:.2f}x")
    else:
        print("speedup vs minigo: n/a (minigo not installed)")


if __name__ == "__main__":
    main()
