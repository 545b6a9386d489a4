"""Options that several subcommands share: naming a game, Gomoku's threat reading, training.

Each ``add_*`` adds options to a parser (or an argument group); each ``*_from_args`` turns
the parsed options into what the library takes: a :class:`zero9.games.Game`, a
:class:`zero9.settings.TrainOptions`. Defaults come from :mod:`zero9.settings` and
:func:`zero9.games.make_game`, never from a number of their own.
"""

from __future__ import annotations

import argparse

from zero9.games import Game, make_game
from zero9.search.threats import READINGS
from zero9.settings import ADAM_LR, PlayConfig, TrainOptions

Parser = argparse.ArgumentParser | argparse._ArgumentGroup


def add_game_arguments(parser: Parser) -> None:
    """``--game``, ``--size``, ``--komi`` and ``--connect``: every command's way to name a game."""
    parser.add_argument("--game", default="go", choices=["go", "gomoku"], help="the rules (default go)")
    parser.add_argument("--size", type=int, default=None, help="board size (default 9 for Go, 15 for Gomoku)")
    parser.add_argument("--komi", type=float, default=None, help="Go: komi (default 7.5)")
    parser.add_argument("--connect", type=int, default=None,
                        help="Gomoku: stones in a row to win (default 5)")


def game_from_args(args: argparse.Namespace, size: int | None = None) -> Game:
    """The game that :func:`add_game_arguments`' options name (``size``, when given, instead of
    ``--size``); ValueError for an option of the other game."""
    if args.game != "go" and args.komi is not None:
        raise ValueError("--komi is for Go only")
    if args.game != "gomoku" and args.connect is not None:
        raise ValueError("--connect is for Gomoku only")
    params = {k: v for k, v in (("komi", args.komi), ("connect", args.connect)) if v is not None}
    return make_game(args.game, size or args.size, **params)


def add_threat_arguments(parser: Parser) -> None:
    """``--threats`` and ``--threat-reading``: every command that plays Gomoku with a net."""
    parser.add_argument("--threats", action=argparse.BooleanOptionalAction, default=PlayConfig.threats,
                        help="Gomoku: zero9 nets prove forced wins and spoil the opponent's beside the "
                        "search (zero9/search/threats.py; default off)")
    parser.add_argument("--threat-reading", choices=READINGS, default=PlayConfig.threat_reading,
                        help="what --threats reads at the root: vct (fours and threes) or vcf (fours "
                        f"only); default {PlayConfig.threat_reading}")


def add_training_arguments(group: Parser, steps: int, steps_help: str) -> None:
    """The training options that ``zero9 train`` and ``zero9 autotrain`` share, defaults from TrainOptions."""
    d = TrainOptions()
    group.add_argument("--steps", type=int, default=steps, help=steps_help)
    group.add_argument("--batch-size", type=int, default=d.batch_size)
    group.add_argument("--lr", type=float, default=None,
                       help=f"learning rate (default {d.lr:g} SGD, {ADAM_LR:g} Adam)")
    group.add_argument("--optimizer", default=d.optimizer, choices=["sgd", "adam"])
    group.add_argument("--window", type=float, default=d.window, help="share of the newest positions")
    group.add_argument("--window-min", type=int, default=d.window_min,
                       help="window at least this many positions")
    group.add_argument("--window-max", type=int, default=d.window_max,
                       help="window at most this many positions")
    group.add_argument("--downsample", type=int, default=d.downsample,
                       help="keep 1 position in N (0: automatic)")
    group.add_argument("--warmup", type=int, default=d.warmup, help="warm-up steps (-1: min(200, steps/4))")
    group.add_argument("--compile", action=argparse.BooleanOptionalAction, default=d.compile,
                       help="torch.compile the losses' forward and backward (default: on CUDA only; on an "
                            "H200 a 10x64 Go net trained 63.9 steps/s instead of 50.9, after a compile "
                            "paid once per process)")
    group.add_argument("--score-weight", type=float, default=d.score_weight, metavar="W",
                       help="the score head's loss weight, when the net has one (default %(default)s)")
    group.add_argument("--max-bad-share", type=float, default=d.max_bad_share, metavar="SHARE",
                       help="skip unreadable chunk files, naming each, but stop when more than this share "
                            "of the window's files are (default %(default)s)")


def train_options(args: argparse.Namespace, device: str) -> TrainOptions:
    """TrainOptions from the options :func:`add_training_arguments` added (and ``--seed``)."""
    lr = args.lr if args.lr is not None else (TrainOptions.lr if args.optimizer == "sgd" else ADAM_LR)
    return TrainOptions(steps=args.steps, batch_size=args.batch_size, lr=lr, optimizer=args.optimizer,
                        window=args.window, window_min=args.window_min, window_max=args.window_max,
                        downsample=args.downsample, warmup=args.warmup, seed=args.seed, device=device,
                        max_bad_share=args.max_bad_share, compile=args.compile,
                        score_weight=args.score_weight)
