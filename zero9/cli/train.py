"""``zero9 train``: one training round of a net on the newest window of a run's data.

The library is :mod:`zero9.learn.training.train` (the round, its saved state),
:mod:`zero9.learn.training.window` (the data) and :mod:`zero9.learn.training.losses`; this is the
command: where the net starts
(``--net``, the run's latest trained net, or a fresh one), then one round
(``train round g (-> net g+1)``), saved as ``nets/<hash>.pt`` (with its optimizer state, and
its generation: the start's plus one) and, for Go, Leela Zero weights beside it.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from zero9.cli.common import add_game_arguments, add_training_arguments, game_from_args, train_options
from zero9.learn.loop.nets import write_lz_weights
from zero9.learn.rundir import RunDir
from zero9.learn.training.train import StateHolder, clear_train_state, train_generation
from zero9.nn.checkpoint import game_from_meta, load_checkpoint, load_net, save_checkpoint
from zero9.nn.heads import make_net
from zero9.nn.net import resolve_device
from zero9.settings import NetConfig, TrainOptions
from zero9.util.interrupts import StopRequested, stop_signals
from zero9.util.runlock import RunLock


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", required=True, help="run directory: data from DIR/chunks, nets to DIR/nets")
    parser.add_argument("--data", nargs="+", default=None, help="chunk files or folders (default DIR/chunks)")
    parser.add_argument("--net", default=None,
                        help="net to start from (default: the run's latest trained net, else a fresh one)")
    g = parser.add_argument_group("a fresh net")
    add_game_arguments(g)
    g.add_argument("--blocks", type=int, default=NetConfig.run_blocks, help="residual blocks")
    g.add_argument("--filters", type=int, default=NetConfig.run_filters, help="filters per conv")
    g.add_argument("--ownership", action="store_true", help="Go: add an ownership head")
    g.add_argument("--score-head", action="store_true", help="Go with --ownership: add a score-lead head")
    t = parser.add_argument_group("training")
    add_training_arguments(t, TrainOptions().steps, "steps (leelaz-ninenine: 12000 per round)")
    t.add_argument("--device", default="auto")
    t.add_argument("--seed", type=int, default=None)
    t.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    run_dir = RunDir(args.dir)
    with RunLock(run_dir.root), stop_signals():
        try:
            return train_command(args, run_dir)
        except StopRequested as e:
            print(f"{e}: stopped after a whole step; the training state is in {run_dir.train_state_path}: "
                  f"rerun the same command to continue")
            return 0


def train_command(args: argparse.Namespace, run_dir: RunDir) -> int:
    """``zero9 train`` once its run directory is locked: one round from the newest window, saved."""
    device = resolve_device(args.device)
    opts = train_options(args, str(device))
    start = args.net or (str(run_dir.net_path(run_dir.status()["trainer"]))
                         if run_dir.status().get("trainer") else None)
    optimizer_state, global_step = None, 0
    if start is not None and start.endswith(".pt"):
        ckpt = load_checkpoint(start, device)
        net, meta = ckpt.net, ckpt.meta
        if ckpt.meta.get("optimizer") == opts.optimizer:
            optimizer_state = ckpt.optimizer_state
        global_step = int(meta.get("step") or 0)
    elif start is not None:
        net, meta = load_net(start, device)
    else:
        game = game_from_args(args)
        net = make_net(game, args.blocks, args.filters, ownership=args.ownership,
                       score=args.score_head).to(device)
        meta = {"game": game.to_dict(), "hash": None}
    result = train_generation(run_dir, net, meta, opts, generation=int(meta.get("generation") or 0),
                              optimizer_state=optimizer_state, global_step=global_step,
                              data_paths=[Path(p) for p in args.data] if args.data else None,
                              progress=not args.no_progress)
    new_meta = save_checkpoint(run_dir.nets_dir / ".trained.pt", result.net,
                               {"game": meta["game"], "parent": meta.get("hash"), "step": result.global_step,
                                "generation": int(meta.get("generation") or 0) + 1,
                                "optimizer": opts.optimizer, "train": result.last_train,
                                "test": result.last_test},
                               StateHolder(result.optimizer_state))
    path = run_dir.net_path(new_meta["hash"])
    os.replace(run_dir.nets_dir / ".trained.pt", path)
    print(f"saved {path}")
    write_lz_weights(run_dir, game_from_meta(meta), result.net, new_meta["hash"])  # Go with fixed heads only
    if (lz := run_dir.lz_weights_path(new_meta["hash"])).exists():
        print(f"saved {lz} (Leela Zero weights)")
    clear_train_state(run_dir)
    return 0
