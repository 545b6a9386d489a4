"""``zero9 ratings DIR``: the command line of :mod:`zero9.arena.ratings`."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from zero9.arena.ratings import format_table, plot_ratings, rate_folder

ANCHOR, ANCHOR_ELO = "random", 0.0  # Leela Zero's convention: random play is 0 Elo


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", help="folder searched (recursively) for SGF games")
    parser.add_argument("--anchor", default=ANCHOR, help=f"player pinned at --anchor-elo (default {ANCHOR})")
    parser.add_argument("--anchor-elo", type=float, default=ANCHOR_ELO,
                        help=f"the anchor's Elo (default {ANCHOR_ELO:g})")
    parser.add_argument("--chart", help="PNG chart path (default DIR/ratings.png; 'none' for no chart)")


def run(args: argparse.Namespace) -> int:
    try:
        ratings, games, skipped = rate_folder(args.dir, args.anchor, args.anchor_elo)
    except ValueError as e:
        print(f"zero9 ratings: {e}", file=sys.stderr)
        return 2
    for line in skipped:
        print(f"skipped {line}", file=sys.stderr)
    print(f"{len(games)} games, {len(ratings)} players"
          + ("" if args.anchor in ratings else f" ('{args.anchor}' did not play: "
             "the alphabetically first player of each group is the anchor)"))
    print(format_table(ratings, games))
    if (args.chart or "").lower() != "none":
        finite = {k: (_finite(r[0]), _finite(r[1]), _finite(r[2])) for k, r in ratings.items()}
        chart = plot_ratings(finite, args.chart or Path(args.dir) / "ratings.png")
        print(f"chart: {chart}")
    return 0


def _finite(x: float) -> float:
    """An unbounded interval end (a player who won or lost every game) drawn at 0."""
    return x if math.isfinite(x) else 0.0
