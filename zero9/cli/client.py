"""``zero9 client URL``: the options of zero9's autogtp, then :class:`zero9.distributed.client.Client`."""

from __future__ import annotations

import argparse
from pathlib import Path

from zero9.distributed.client import RETRIES, Client


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", metavar="URL", help="the server with this client's credential, as the teacher "
                        "gives it: http://192.168.1.10:8000/c/CREDENTIAL")
    parser.add_argument("-g", "--gamesNum", "--games", dest="games", type=int, default=4,
                        help="self-play games played at once (batched through one net)")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--leaves", type=int, default=8, help="leaves per game per net call")
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "zero9" / "client"),
                        help="folder for downloaded nets and pending uploads")
    parser.add_argument("-k", "--keep-sgf", default=None, metavar="DIR",
                        help="also save every game's SGF here")
    parser.add_argument("--single", action="store_true", help="do one task, then exit")
    parser.add_argument("--max-games", type=int, default=None, help="exit after this many games")
    parser.add_argument("--timeout", type=float, default=None, metavar="MIN",
                        help="exit after this many minutes (the game in progress is finished first; no "
                             "wait or request goes past it)")
    parser.add_argument("--retries", type=int, default=RETRIES,
                        help="failed tries in a row (server down, bad answers) before giving up")


def run(args: argparse.Namespace) -> int:
    if args.games < 1:
        raise ValueError(f"-g must be >= 1, got {args.games}")
    keep = Path(args.keep_sgf) if args.keep_sgf else None
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    client = Client(args.url, Path(args.cache), args.games, args.device, args.leaves, keep, args.retries)
    return client.run(args.max_games, args.single, args.timeout)
