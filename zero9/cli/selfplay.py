"""``zero9 selfplay``: play games with a net and write training chunks and SGFs.

The library is :mod:`zero9.learn.selfplay`; this is its command line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from zero9.learn.selfplay import add_selfplay_arguments, play_selfplay, selfplay_config
from zero9.nn.checkpoint import load_net
from zero9.nn.net import resolve_device
from zero9.util.interrupts import StopRequested, stop_signals
from zero9.util.runlock import RunLock


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--net", required=True, help="net file (.pt checkpoint or Leela Zero weights)")
    parser.add_argument("--games", type=int, default=100, help="games to play")
    parser.add_argument("--out", default="selfplay", help="folder for chunks/ and sgf/ (default ./selfplay)")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--seed", type=int, default=None)
    add_selfplay_arguments(parser)


def run(args: argparse.Namespace) -> int:
    device = str(resolve_device(args.device))
    _, meta = load_net(args.net, device="cpu")  # fail here, not in a worker, on a bad file
    config = selfplay_config(args, seed=args.seed)
    out = Path(args.out)
    sgf_dir = None if args.no_sgf else out / "sgf"
    with RunLock(out), stop_signals():
        try:
            stats = play_selfplay(args.net, args.games, config, out / "chunks", sgf_dir, workers=args.workers,
                                  device=device, lz_dir=out / "lz_chunks" if args.lz_chunks else None)
        except StopRequested as e:
            print(f"{e}: stopped; every finished game is in {out / 'chunks'} (games in flight were dropped)")
            return 0
    s = stats.as_dict()
    print(f"{stats.games} games, {stats.positions} positions with net {meta['hash']} "
          f"in {stats.seconds:.1f}s: "
          f"{s['moves_per_s']:.1f} moves/s, {s['evals_per_s']:.0f} net evaluations/s "
          f"(batch {s['mean_batch']:.1f}), mean length {s['mean_length']:.1f}; results {stats.wins}")
    return 0
