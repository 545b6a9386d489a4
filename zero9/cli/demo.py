"""``zero9 demo``: the command line of :mod:`zero9.arena.demo`."""

from __future__ import annotations

import argparse
import random
import sys

from zero9.arena.demo import MOVES_SHOWN, play_demo
from zero9.cli.common import add_game_arguments, game_from_args
from zero9.settings import PlayConfig
from zero9.util.threads import choose_torch_threads


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_game_arguments(parser)
    parser.add_argument("--seed", type=int, default=None, help="random seed, for a repeatable game")
    parser.add_argument("--moves-shown", type=int, default=MOVES_SHOWN, metavar="K",
                        help=f"print the board every K moves (0: only at the end; default {MOVES_SHOWN})")
    parser.add_argument("--quiet", action="store_true", help="print only the result")
    parser.add_argument("--random", action="store_true", help="random players instead of the shipped net")
    parser.add_argument("--net", default=None, help="net file (default: the shipped net)")
    parser.add_argument("--visits", type=int, default=PlayConfig.quick_visits,
                        help=f"visits per net move (default {PlayConfig.quick_visits})")


def run(args: argparse.Namespace) -> int:
    try:
        game = game_from_args(args)
        if args.moves_shown < 0:
            raise ValueError(f"bad --moves-shown {args.moves_shown}: expected 0 or more")
        seed = args.seed if args.seed is not None else random.randrange(1 << 30)
        if not args.random:
            choose_torch_threads(PlayConfig.batch_size)
        play_demo(game, seed, use_net=not args.random, net_path=args.net, visits=args.visits,
                  moves_shown=args.moves_shown, quiet=args.quiet)
    except (OSError, ValueError) as e:
        print(f"zero9 demo: error: {e}", file=sys.stderr)
        return 2
    return 0
