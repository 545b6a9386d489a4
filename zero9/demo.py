"""``zero9 demo``: play a quick random game on the console and print it as it goes.

Vocabulary: a **random player** picks uniformly among the legal moves, except that in Go it
never fills one of its own single-point eyes (so games end by two passes instead of filling
every eye) and passes only when nothing else is left. The **result** is Tromp-Taylor's for Go,
and n-in-a-row (or a draw on a full board) for Gomoku.
"""

from __future__ import annotations

import argparse
import random
import sys

from zero9.display import board_to_text
from zero9.game import Position, make_game


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", choices=("go", "gomoku"), default="go", help="which game (default go)")
    parser.add_argument("--size", type=int, default=None, help="board size (default 9 for Go, 15 for Gomoku)")
    parser.add_argument("--komi", type=float, default=7.5, help="Go: komi (default 7.5)")
    parser.add_argument("--seed", type=int, default=None, help="random seed, for a repeatable game")
    parser.add_argument("--moves-shown", type=int, default=10, metavar="K",
                        help="print the board every K moves (0: only at the end; default 10)")
    parser.add_argument("--quiet", action="store_true", help="print only the result")


def random_move(position: Position, rng: random.Random) -> int:
    """A random legal move; in Go one that does not fill an own eye, and pass only as a last resort."""
    moves = position.legal_moves()
    pass_action = position.game.pass_action
    if pass_action is not None:
        moves = [m for m in moves if m != pass_action]
    while moves:
        i = rng.randrange(len(moves))
        m = moves[i]
        if pass_action is None or not position.is_eye(m, position.to_play):
            return m
        moves[i] = moves[-1]
        moves.pop()
    return pass_action


def play_random_game(game, rng: random.Random, on_move=None) -> Position:
    """Play a random game to the end; ``on_move(position)`` is called after every move."""
    pos = game.new_position()
    while not pos.is_terminal():
        pos = pos.play(random_move(pos, rng))
        if on_move is not None:
            on_move(pos)
    return pos


def run(args: argparse.Namespace) -> int:
    params = {"komi": args.komi} if args.game == "go" else {}
    try:
        game = make_game(args.game, args.size, **params)
        if args.moves_shown < 0:
            raise ValueError(f"bad --moves-shown {args.moves_shown}: expected 0 or more")
    except ValueError as e:
        print(f"zero9 demo: error: {e}", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    if not args.quiet:
        print(f"random {game.name} game on {game.size}x{game.size} (seed {seed})")
    line: list[str] = []

    def show(pos: Position) -> None:
        if args.quiet:
            return
        colour = "B" if pos.to_play == 2 else "W"
        line.append(f"{pos.move_number}.{colour} {game.action_to_vertex(pos.last_move)}")
        if len(line) == 8:
            print("  ".join(line))
            line.clear()
        if args.moves_shown and pos.move_number % args.moves_shown == 0 and not pos.is_terminal():
            if line:
                print("  ".join(line))
                line.clear()
            print(board_to_text(pos) + "\n")

    final = play_random_game(game, rng, show)
    if not args.quiet:
        if line:
            print("  ".join(line))
        print(board_to_text(final))
    text = f"result {final.result_string()} after {final.move_number} moves"
    if game.name == "go":
        text += f" (Tromp-Taylor score {final.score():+g}, komi {game.komi:g})"
    print(text)
    return 0
