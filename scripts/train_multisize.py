"""Self-play and train one size-independent Gomoku net on several board sizes (default 15x15 and 20x20).

The loop is :mod:`zero9.learn.loop.multisize`; this is its command line. A run directory resumes at
its round. The self-play options are ``zero9 autotrain``'s (``--visits``, ``--pcr``,
``--games-parallel``, ``--workers``: processes, 0 = one per core, ...). On the CPU, a tiny
demonstration (docs/cli-pbrain.md):

    nice python scripts/train_multisize.py --dir /tmp/ms --blocks 2 --filters 16 --rounds 3 \\
        --games 8 --visits 32 --steps 300 --batch-size 64 --threads 1 --seed 1

On a GPU host, from the shipped 15x15 net's tower (each worker process holds the net on the GPU):

    python scripts/train_multisize.py --dir runs/gomoku-multi --device cuda --workers 15 \\
        --init example-data/gomoku_15x15_best.pt --rounds 40 --games 256 --visits 160 \\
        --steps 600 --batch-size 512 --window-min 30000
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from zero9.cli.selfplay import add_selfplay_arguments, selfplay_config  # noqa: E402
from zero9.games import make_game  # noqa: E402
from zero9.learn.loop.multisize import MultiSizeOptions, run_multisize  # noqa: E402
from zero9.settings import ADAM_LR, TrainOptions  # noqa: E402


def sizes_arg(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(t) for t in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sizes wants sizes separated by commas (15,20), not {text!r}") \
            from None
    if not sizes:
        raise argparse.ArgumentTypeError("--sizes is empty")
    return sizes


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    tr = TrainOptions()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", required=True, help="run directory (resumed when it holds net.pt)")
    p.add_argument("--sizes", type=sizes_arg, default=(15, 20), help="board sizes, first = the net's own")
    p.add_argument("--variant", default="freestyle", choices=["freestyle", "standard", "renju"])
    p.add_argument("--rounds", type=int, default=1, help="rounds in all (a resumed run continues to this)")
    p.add_argument("--games", type=int, default=16, help="self-play games per size per round")
    p.add_argument("--steps", type=int, default=200, help="training steps per round, shared by the sizes")
    p.add_argument("--blocks", type=int, default=2)
    p.add_argument("--filters", type=int, default=16)
    p.add_argument("--init", help="start from this net file: one with pooled heads goes on; a fixed-head "
                   "net (e.g. example-data/gomoku_15x15_best.pt) gives its tower to new pooled heads")
    p.add_argument("--distill-games", type=int, default=0, help="with --init from a fixed-head net: its "
                   "self-play games (at --fast-visits), whose positions teach the new heads its policy and "
                   "value")
    p.add_argument("--distill-steps", type=int, default=0, help="steps of that teaching, the tower frozen")
    p.add_argument("--batch-size", type=int, default=tr.batch_size)
    p.add_argument("--optimizer", default=tr.optimizer, choices=["sgd", "adam"])
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--window", type=float, default=tr.window)
    p.add_argument("--window-min", type=int, default=tr.window_min)
    p.add_argument("--device", default="auto")
    p.add_argument("--threads", type=int, default=0, help="torch threads here (0: torch's default)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--quiet", action="store_true")
    add_selfplay_arguments(p, {"pcr": None})  # autotrain's: PCR 0.25 for PUCT when the visits allow it
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.threads > 0:
        import torch

        torch.set_num_threads(args.threads)
    lr = args.lr if args.lr is not None else (TrainOptions.lr if args.optimizer == "sgd" else ADAM_LR)
    selfplay = selfplay_config(args, seed=args.seed)
    workers = args.workers or os.cpu_count() or 1
    train = TrainOptions(batch_size=args.batch_size, optimizer=args.optimizer, lr=lr, window=args.window,
                         window_min=args.window_min, seed=args.seed, device=args.device)
    opts = MultiSizeOptions(sizes=args.sizes, rounds=args.rounds, games=args.games, steps=args.steps,
                            workers=workers, selfplay=selfplay, sgf=not args.no_sgf, train=train,
                            distill_games=args.distill_games, distill_steps=args.distill_steps,
                            progress=not args.quiet)
    game = make_game("gomoku", args.sizes[0], connect=5, variant=args.variant)
    rows = run_multisize(args.dir, game, opts, blocks=args.blocks, filters=args.filters, device=args.device,
                         init=args.init)
    for row in rows:
        print(json.dumps({k: row[k] for k in ("round", "size", "net")} | {
            "fit": [round(row["before"]["fit"]["total"], 4), round(row["after"]["fit"]["total"], 4)],
            "test": [round(row[w]["test"]["total"], 4) for w in ("before", "after") if "test" in row[w]]}))
    return 0


if __name__ == "__main__":
    from zero9.util.logs import configure_logging

    configure_logging()  # the library logs its progress lines (no CLI here to set that up)
    sys.exit(main())
