"""``zero9 demo``: play a quick game on the console and print it as it goes.

By default the shipped net for the game and size (``example-data/``) plays both
sides with a short search, printing each move with its win rate; ``--random``
plays a random game instead (also what happens when no net is shipped for the
board).

Vocabulary: a **random player** picks uniformly among the legal moves, except that in Go it
never fills one of its own single-point eyes (so games end by two passes instead of filling
every eye) and passes only when nothing else is left. The **result** is Tromp-Taylor's for Go,
and n-in-a-row (or a draw on a full board) for Gomoku.

The command line (``zero9 demo``) is :mod:`zero9.cli.demo`.
"""

from __future__ import annotations

import random
import sys
from typing import TextIO, cast

import numpy as np

from zero9.games import Game, Position
from zero9.games.display import board_to_text
from zero9.games.go import Go, GoPosition
from zero9.nn.checkpoint import default_net_path
from zero9.search.player import NetSource
from zero9.settings import PlayConfig

MOVES_SHOWN = 10  # print the board every this many moves


def random_move(position: Position, rng: random.Random) -> int:
    """A random legal move; in Go one that does not fill an own eye, and pass only as a last resort."""
    moves = position.legal_moves()
    pass_action = position.game.pass_action
    if pass_action is not None:
        moves = [m for m in moves if m != pass_action]
    while moves:
        i = rng.randrange(len(moves))
        m = moves[i]
        if pass_action is None or not cast(GoPosition, position).is_eye(m, position.to_play):
            return m
        moves[i] = moves[-1]
        moves.pop()
    if pass_action is None:
        raise ValueError("no legal move: the game is over")
    return pass_action


def play_random_game(game, rng: random.Random, on_move=None) -> Position:
    """Play a random game to the end; ``on_move(position)`` is called after every move."""
    pos = game.new_position()
    while not pos.is_terminal():
        pos = pos.play(random_move(pos, rng))
        if on_move is not None:
            on_move(pos)
    return pos


def net_move_chooser(game, net_path: str | None, visits: int, seed: int):
    """A ``choose(position) -> action`` that searches with a net, or None when no net fits the game.

    Returns (chooser, description). The player resigns never: a demo game is played out.
    """

    path = net_path or default_net_path(game.name, game.size)
    if path is None:
        return None, "no shipped net for this game and size"
    source = NetSource(path, device="cpu")
    player = source.player(game, rng=np.random.default_rng(seed),
                           play=PlayConfig(visits=visits, resign_threshold=None), seed=seed)
    meta = source.meta

    def choose(position: Position) -> tuple[int, float]:
        decision = player.choose(position)
        return decision.action, decision.winrate

    return choose, f"net {meta['hash']} ({path}), {visits} visits a move"



def play_demo(game: Game, seed: int, use_net: bool = True, net_path: str | None = None,
              visits: int = PlayConfig.quick_visits, moves_shown: int = MOVES_SHOWN, quiet: bool = False,
              out: TextIO | None = None) -> Position:
    """Play one demo game, printing it to ``out`` as it goes (see the module docstring); the final position.

    ``use_net`` False, or no net for the game and size: random players. ``moves_shown``: print the
    board every that many moves (0: only at the end); ``quiet``: print only the result line.
    ``out``: default stdout.
    """
    out = out or sys.stdout
    rng = random.Random(seed)
    chooser, what = None, "random players"
    if use_net:
        chooser, what = net_move_chooser(game, net_path, visits, seed)
        if chooser is None:
            what = f"random players ({what})"
    if not quiet:
        print(f"{game.name} on {game.size}x{game.size}, {what} (seed {seed})", file=out)
    line: list[str] = []
    winrates: dict[int, float] = {}

    def show(pos: Position) -> None:
        if quiet:
            return
        colour = "B" if pos.to_play == 2 else "W"
        winrate = winrates.get(pos.move_number)
        shown = f" {100 * winrate:.0f}%" if winrate is not None else ""
        line.append(f"{pos.move_number}.{colour} {game.action_to_vertex(cast(int, pos.last_move))}{shown}")
        if len(line) == 8:
            print("  ".join(line), file=out)
            line.clear()
        if moves_shown and pos.move_number % moves_shown == 0 and not pos.is_terminal():
            if line:
                print("  ".join(line), file=out)
                line.clear()
            print(board_to_text(pos) + "\n", file=out)

    if chooser is None:
        final = play_random_game(game, rng, show)
    else:
        final = game.new_position()
        while not final.is_terminal():
            action, winrate = chooser(final)
            winrates[final.move_number + 1] = winrate
            final = final.play(action)
            show(final)
    if not quiet:
        if line:
            print("  ".join(line), file=out)
        print(board_to_text(final), file=out)
    text = f"result {final.result_string()} after {final.move_number} moves"
    if game.name == "go":
        text += f" (Tromp-Taylor score {cast(GoPosition, final).score():+g}, komi {cast(Go, game).komi:g})"
    print(text, file=out)
    return final
