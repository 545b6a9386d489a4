"""``zero9 convert IN OUT``: the command line of :mod:`zero9.nn.convert`."""

from __future__ import annotations

import argparse

from zero9.nn.convert import convert


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="a zero9 checkpoint (.pt) or Leela Zero weights (.txt / .txt.gz)")
    parser.add_argument("output", help="where to write: .pt, or .txt / .txt.gz for Leela Zero text")
    parser.add_argument("--size", type=int, default=None,
                        help="refuse an input net for another board size (e.g. --size 9)")
    parser.add_argument("--komi", type=float, default=None,
                        help="komi recorded in a .pt made from a Leela Zero Go file (default 7.5)")
    parser.add_argument("--drop-ownership", action="store_true",
                        help="write Leela Zero text from a net with an ownership head (the head is lost)")


def run(args: argparse.Namespace) -> int:
    try:
        meta = convert(args.input, args.output, args.size, args.komi, args.drop_ownership)
    except (ValueError, FileNotFoundError) as e:
        print(f"zero9 convert: {e}")
        return 1
    game = meta["game"]
    print(f"wrote {args.output}: {game.get('game')} {game.get('size')}x{game.get('size')}, "
          f"{meta['blocks']} blocks x {meta['filters']} filters, hash {meta['hash']}")
    return 0
