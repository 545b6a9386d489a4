"""``zero9 review GAME.sgf``: each move's loss (Go in points, Gomoku in winrate), the mistakes, better moves.

The judging is :func:`zero9.arena.review.review_game` (the window calls it too); this module
reads the arguments, loads the net and writes NAME-review.json, NAME-review.sgf (the game with
a comment per move and the better lines as variations) and NAME-review.png.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tqdm import tqdm

from zero9.arena.review import (
    Thresholds,
    format_report,
    line_from_record,
    plot_review,
    review_game,
    review_sgf,
)
from zero9.games.sgf import MAX_SGF_BYTES, read_sgf
from zero9.nn.checkpoint import default_net_path
from zero9.search.player import NetSource
from zero9.settings import ReviewConfig
from zero9.util.files import atomic_write_text, read_regular_file
from zero9.util.threads import choose_torch_threads


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sgf", help="the game to review (an SGF file of Go or Gomoku, setup stones allowed)")
    parser.add_argument("--net", default=None,
                        help="net file that judges (default: the shipped net for the game and size; "
                             "'uniform' for a net-free search, Gomoku only)")
    parser.add_argument("--visits", type=int, default=ReviewConfig.visits,
                        help=f"visits per position (default {ReviewConfig.visits})")
    parser.add_argument("--thresholds", type=float, nargs="+", default=None, metavar="LOSS",
                        help="losses that start each class, worst first: Go in points, 5 numbers for "
                             "blunder mistake inaccuracy slight tiny (default 12 6 3 1.5 0.5, KaTrain's); "
                             "Gomoku in %% winrate, 3 numbers: blunder mistake inaccuracy (default 20 10 5)")
    parser.add_argument("--forced", type=int, default=None, metavar="N",
                        help="the first N moves were imposed (an opening), not judged (default: the SGF's "
                             "'opening K: N moves' note that zero9 match --openings writes, else 0)")
    parser.add_argument("--out", default=None,
                        help="folder for NAME-review.json, .sgf and .png (default: next to the SGF)")
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG (no matplotlib needed)")
    parser.add_argument("--seed", type=int, default=None, help="random seed of the net's symmetries")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto")


def load_judge(game, net: str | None, device: str = "cpu"):
    """The net that judges ``game``: a file, the shipped net, or ``"uniform"`` (Gomoku only)."""
    if net == "uniform":
        if game.name == "go":
            raise ValueError("a Go review counts points: it needs a net with an ownership head")
        return "uniform"
    path = net or default_net_path(game.name, game.size)
    if path is None:
        raise ValueError(f"no shipped net for {game.name} {game.size}x{game.size}: give --net FILE")
    source = NetSource(path, device=device)
    source.check(game)
    judge = source.net
    assert judge is not None  # a NetSource with a path holds its net
    if game.name == "go" and not judge.config.get("ownership"):
        raise ValueError(f"the net {Path(path).name} has no ownership head, which a Go review counts with")
    return judge


def run(args: argparse.Namespace) -> int:
    if args.visits < 1:
        raise ValueError(f"--visits must be >= 1, got {args.visits}")
    if args.forced is not None and args.forced < 0:
        raise ValueError(f"--forced must be >= 0, got {args.forced}")
    source = Path(args.sgf)
    record = read_sgf(source)
    line_from_record(record, source)  # refuse a bad game before loading a net
    thresholds = None
    if args.thresholds:
        scale = 1.0 if record.game.name == "go" else 0.01
        thresholds = Thresholds.for_game(record.game.name, [t * scale for t in args.thresholds])
    net = load_judge(record.game, args.net, args.device)
    choose_torch_threads(ReviewConfig.leaves_per_tree * len(record.moves))  # every position's leaves at once
    bar = tqdm(total=args.visits, desc="review", unit="visit", file=sys.stderr)
    try:
        review = review_game(record, net, args.visits, args.seed, thresholds,
                             progress=lambda done, total: bar.update(done - bar.n), forced=args.forced)
    finally:
        bar.close()
    out = Path(args.out) if args.out else source.parent
    out.mkdir(parents=True, exist_ok=True)
    data = review.as_dict()
    json_path = out / f"{source.stem}-review.json"
    atomic_write_text(json_path, json.dumps(data, indent=1) + "\n")
    sgf_path = out / f"{source.stem}-review.sgf"
    original = read_regular_file(source, MAX_SGF_BYTES, "SGF file")
    atomic_write_text(sgf_path, review_sgf(data, original))
    print(format_report(data))
    print(f"review: {json_path}")
    print(f"sgf:    {sgf_path}")
    if not args.no_plot:
        print(f"plot:   {plot_review(data, out / f'{source.stem}-review.png')}")
    return 0
