"""``zero9 trainer URL RUN_DIR``: the options, then :class:`zero9.distributed.trainer.Trainer`."""

from __future__ import annotations

import argparse
from pathlib import Path

from zero9.distributed.trainer import Trainer
from zero9.nn.net import resolve_device
from zero9.settings import TrainOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    d = TrainOptions()
    parser.add_argument("url", metavar="URL", help="the server, e.g. http://127.0.0.1:8000")
    parser.add_argument("run_dir", metavar="RUN_DIR",
                        help="the server's run directory (its chunks/ are the data)")
    parser.add_argument("--api-key", default=None, help="the server's key (default: read RUN_DIR/api_key)")
    parser.add_argument("--steps", type=int, default=d.steps, help="training steps per candidate")
    parser.add_argument("--min-games", type=int, default=100, help="new games before the next round")
    parser.add_argument("--rounds", type=int, default=None, help="stop after this many candidates")
    parser.add_argument("--timeout", type=float, default=None, metavar="MIN", help="stop after MIN minutes")
    parser.add_argument("--batch-size", type=int, default=d.batch_size)
    parser.add_argument("--lr", type=float, default=d.lr)
    parser.add_argument("--window", type=float, default=d.window, help="share of the newest positions")
    parser.add_argument("--window-min", type=int, default=d.window_min)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--seed", type=int, default=None)


def run(args: argparse.Namespace) -> int:
    opts = TrainOptions(steps=args.steps, batch_size=args.batch_size, lr=args.lr, window=args.window,
                        window_min=args.window_min, seed=args.seed, device=str(resolve_device(args.device)))
    trainer = Trainer(args.url, Path(args.run_dir), opts, args.api_key)
    return trainer.run(args.rounds, args.min_games, args.timeout)
