"""``zero9 supervised``: SGF games -> training chunks, as Leela Zero's ``dump_supervised``.

The library is :mod:`zero9.learn.training.supervised`; this is its command line.
"""

from __future__ import annotations

import argparse
import sys

from zero9.cli.common import add_game_arguments, game_from_args
from zero9.learn.training.supervised import dump_supervised, format_report, unreadable_files


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sgf", nargs="+", help="SGF files or folders (searched recursively)")
    parser.add_argument("--out", required=True, help="folder for the chunks (e.g. RUN_DIR/chunks/supervised)")
    add_game_arguments(parser)
    parser.add_argument("--games-per-chunk", type=int, default=50)
    parser.add_argument("--npz", action="store_true", help="Go: npz shards (keep draws), not LZ chunks")
    parser.add_argument("--skip-bad", action="store_true",
                        help="exit 0 even when some SGF files were unreadable (they are listed either way)")


def run(args: argparse.Namespace) -> int:
    game = game_from_args(args)
    report = dump_supervised(args.sgf, args.out, game, games_per_chunk=args.games_per_chunk, npz=args.npz)
    for path, reason in report["unreadable"]:
        print(f"unreadable SGF {path}: {reason}", file=sys.stderr)
    print(format_report(report))
    if report["unreadable"] and not args.skip_bad:
        print(f"{unreadable_files(report)} unreadable SGF file(s), listed above: fix or remove them, "
              f"or pass --skip-bad to accept the games that were read", file=sys.stderr)
        return 1
    return 0 if report["games"] else 1
