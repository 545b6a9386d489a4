"""``zero9 autotrain``: its options, the settings they make, and which loop runs them.

The alternating loop (:class:`zero9.learn.loop.autotrain.AutoTrain`: self-play, then training)
on one device; the concurrent one (:class:`zero9.learn.loop.concurrent.ConcurrentAutoTrain`: a
trainer beside self-play, every GPU) on a host with two GPUs or more, or with ``--concurrent``
(:func:`zero9.learn.loop.autotrain.concurrent_by_default`). Both take settings, not the parsed
options: :func:`loop_settings` turns the command line into them, after :func:`fill_defaults` has
filled the options the command left out from the machine's recipe
(:func:`zero9.settings.autotrain_recipe`: on a CUDA GPU 9x9 Go's measured recipe, else the
laptop's defaults).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from zero9.arena.gtpclient import find_gnugo
from zero9.cli.common import add_game_arguments, add_training_arguments, game_from_args, train_options
from zero9.cli.selfplay import add_selfplay_arguments, selfplay_config
from zero9.learn.cluster.node import SHARING
from zero9.learn.loop.autotrain import AutoTrain, concurrent_by_default, run_loop
from zero9.learn.loop.concurrent import ConcurrentAutoTrain
from zero9.learn.loop.nets import NetShape
from zero9.nn.heads import HEAD_KINDS
from zero9.nn.net import resolve_device
from zero9.settings import AutotrainConfig, NetConfig, autotrain_recipe

# The options a machine's recipe may set (zero9.settings.autotrain_recipe); left out of a command, each
# takes the recipe's value, else the option's own default. The net's shape on a resumed run is the run's.
RECIPE_OPTIONS = ("blocks", "filters", "gumbel", "visits", "pcr", "opening_moves", "games_per_gen",
                  "games_parallel", "leaves", "workers", "steps", "batch_size", "window_min", "eval_games",
                  "rate_every", "anchors")
RUN_SHAPE = ("blocks", "filters")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    d = AutotrainConfig()
    parser.add_argument("--dir", required=True, help="run directory (created, or resumed if it exists)")
    g = parser.add_argument_group("game and net (fixed when the run is created)")
    add_game_arguments(g)
    g.add_argument("--blocks", type=int, default=NetConfig.run_blocks, help="residual blocks")
    g.add_argument("--filters", type=int, default=NetConfig.run_filters, help="filters per conv")
    g.add_argument("--ownership", action=argparse.BooleanOptionalAction, default=None,
                   help="Go: KataGo's ownership head as an auxiliary target (default: on for Go; it won "
                        "33-7 at equal compute, docs/training-the-shipped-nets.md)")
    g.add_argument("--score-head", action="store_true",
                   help="Go with ownership: a score-lead head too, learnt from the ownership target and komi "
                        "(a run keeps it for life; its held-out error is logged beside the ownership sum's)")
    g.add_argument("--heads", default=NetShape.heads, choices=HEAD_KINDS,
                   help="fixed: the heads' fully connected layers fit the run's board only (Leela Zero's); "
                        "pooled: size-independent heads (KataGo's global pooling), the run's nets play every "
                        "board size (the run itself plays and trains on --size)")
    g.add_argument("--init-from", default=None, metavar="NET",
                   help="start from this net's conv tower (heads rebuilt when the board differs, or fixed "
                        "heads go into pooled ones)")
    loop = parser.add_argument_group("loop")
    loop.add_argument("--generations", type=int, default=None, help="stop after this many rounds in all")
    loop.add_argument("--hours", type=float, default=None,
                      help="stop within this many hours: no round starts that would end past them (as long "
                           "as the last round of its kind took)")
    loop.add_argument("--games-per-gen", type=int, default=d.games_per_gen,
                      help="self-play games per round")
    loop.add_argument("--device", default=d.device, help="auto, cpu or cuda")
    loop.add_argument("--seed", type=int, default=None)
    loop.add_argument("--gate", action="store_true", help="promote only candidates that pass an SPRT match")
    loop.add_argument("--gate-games", type=int, default=d.gate_games,
                      help="most games of a gating match")
    loop.add_argument("--eval-games", type=int, default=d.eval_games,
                      help="rating games per opponent per round (0: no rating)")
    loop.add_argument("--rate-every", type=int, default=d.rate_every, metavar="K",
                      help="rate the candidate of every K-th round only (rating games cost a share of each "
                           "round: on a GPU run, rate less often and with more --eval-games)")
    loop.add_argument("--eval-visits", type=int, default=None,
                      help="net visits in rating/gate games (default --visits)")
    loop.add_argument("--anchors", default=None,
                      help="comma-separated anchors: random, mcts:N (pure MCTS, N playouts), gnugo[:level] "
                           "(default: random,mcts:100 ; Go adds gnugo:1 when installed)")
    loop.add_argument("--no-plots", action="store_true",
                      help="draw no plots (else: after a round, at most once a minute, and at the end)")
    loop.add_argument("--ray", default=None, metavar="auto|ADDRESS",
                      help="self-play and rating games on a Ray cluster (auto: the running one, else a local "
                           "one); --workers is then actors per node (0: one per CPU). See docs/ray.md")
    loop.add_argument("--ray-server", default=AutotrainConfig.ray_server, choices=SHARING,
                      help="with --ray: which nodes hold the net once, in a node server their actors share "
                           "(auto: GPU nodes; on: every node; off: none, each actor loads its own copy)")
    loop.add_argument("--straddle", action=argparse.BooleanOptionalAction, default=False,
                      help="the workers' games in flight when a round has its games go on into the next "
                           "round with its net, so no round waits for its longest games (default off: a tiny "
                           "run learned less per round with it; see docs/cli-autotrain.md)")
    loop.add_argument("--concurrent", action=argparse.BooleanOptionalAction, default=None,
                      help="train beside self-play: a trainer process follows the window while the games go "
                           "on, and each net plays from the next round on (default: on with 2 or more GPUs; "
                           "--concurrent forces it on one device, a CPU too). See docs/cli-autotrain.md")
    loop.add_argument("--gpus", type=int, default=d.gpus, metavar="N",
                      help="CUDA: self-play on the first N GPUs, one inference server each (0: all)")
    loop.add_argument("--train-device", default=None, metavar="DEVICE",
                      help="concurrent mode: the trainer's device (default: the last GPU, or the CPU)")
    loop.add_argument("--threads", type=int, default=d.threads,
                      help="torch CPU threads per process (0: training 1 for small nets, else one per core; "
                           "self-play workers share the cores)")
    tr = parser.add_argument_group("training")
    add_training_arguments(tr, d.steps, "training steps per round")
    # Playout cap randomisation is on in the loop (None: 0.25 with PUCT, off with --gumbel): at equal
    # compute it beat full searches on every move 36-4 (docs/runs/ab, 9x9 Gomoku, 8 minutes each).
    add_selfplay_arguments(parser, {"pcr": None})
    own = {name: parser.get_default(name) for name in RECIPE_OPTIONS}
    laptop = " ".join(_flag(name, value) for name, value in own.items() if value is not None)
    parser.epilog = ("Options a command leaves out take the machine's recipe: on a CUDA GPU, 9x9 Go takes "
                     "the measured recipe of the shipped net (10x64, Gumbel 32, 1,024 games and 400 steps "
                     f"x 512 a round ...), elsewhere {laptop}. The run prints every choice at its start and "
                     "keeps them in config.json (docs/cli-autotrain.md).")
    # None marks an option the command leaves out: the machine's recipe fills it (fill_defaults)
    parser.set_defaults(recipe_base=own, **{name: None for name in RECIPE_OPTIONS})


def fill_defaults(args: argparse.Namespace, cores: int | None = None) -> dict[str, Any]:
    """Fill each recipe option the command left out: from the run (a resumed run's net shape), the
    machine's recipe (:func:`zero9.settings.autotrain_recipe`), or the option's own default; print the
    choices, and return them for config.json (``{"recipe", "device", "cores", "options", "from"}``)."""
    cores = cores or os.cpu_count() or 1
    device = str(resolve_device(args.device))
    size = args.size or (9 if args.game == "go" else 15)
    name, recipe = autotrain_recipe(args.game, size, device.split(":")[0], cores)
    stored = _run_net(args.dir)
    base = args.recipe_base
    del args.recipe_base
    options, source = {}, {}
    for option in RECIPE_OPTIONS:
        given = getattr(args, option)
        if given is not None:
            value, where = given, "flag"
        elif option in RUN_SHAPE and option in stored:
            value, where = stored[option], "run"
        elif option in recipe:
            value, where = recipe[option], "recipe"
        else:
            value, where = base[option], "default"
        if option == "anchors" and where == "recipe" and "gnugo" in value and not find_gnugo():
            value, where = None, "default (GNU Go is not installed)"
        setattr(args, option, value)
        options[option], source[option] = value, where
    shown = " ".join(_flag(option, value) for option, value in options.items() if value is not None)
    print(f"autotrain on {device} with {cores} cores: recipe {name} (each option given on the command "
          f"line wins; docs/cli-autotrain.md)\n  {shown}")
    for label, kind in (("given on the command line", "flag"), ("the run's own", "run")):
        named = [f"--{o.replace('_', '-')}" for o, where in source.items() if where == kind]
        if named:
            print(f"  {label}: {', '.join(named)}")
    for option, where in source.items():
        if where.startswith("default ("):  # the recipe's choice could not be kept: say why
            print(f"  --{option.replace('_', '-')}: {where}")
    return {"recipe": name, "device": device, "cores": cores, "options": options, "from": source}


def _run_net(run_dir: str) -> dict[str, Any]:
    """A resumed run's net shape (config.json's ``net``), {} for a new run or an unreadable config."""
    try:
        return dict(json.loads((Path(run_dir) / "config.json").read_text()).get("net", {}))
    except (OSError, ValueError, AttributeError):
        return {}  # AutoTrain reads the config again and names what is wrong with it


def _flag(option: str, value: Any) -> str:
    name = "--" + option.replace("_", "-")
    if isinstance(value, bool):
        return name if value else "--no-" + name[2:]
    return f"{name} {value:g}" if isinstance(value, float) else f"{name} {value}"


def loop_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The loop's keyword arguments from the parsed options: the run directory, its game and net
    shape, the loop's, self-play's and training's settings, and the options as given."""
    recipe = fill_defaults(args) if hasattr(args, "recipe_base") else None
    anchors = None if args.anchors is None else tuple(a.strip() for a in args.anchors.split(",") if a.strip())
    config = AutotrainConfig(
        games_per_gen=args.games_per_gen, steps=args.steps, gate_games=args.gate_games,
        eval_games=args.eval_games, generations=args.generations, hours=args.hours, gate=args.gate,
        rate_every=args.rate_every, eval_visits=args.eval_visits, anchors=anchors, plots=not args.no_plots,
        ray=args.ray, ray_server=args.ray_server, straddle=args.straddle, concurrent=args.concurrent,
        gpus=args.gpus,
        train_device=args.train_device, threads=args.threads, workers=args.workers, sgf=not args.no_sgf,
        lz_chunks=args.lz_chunks, device=args.device, seed=args.seed)
    net = NetShape(blocks=args.blocks, filters=args.filters, ownership=args.ownership,
                   score=args.score_head, init_from=args.init_from, heads=args.heads)
    selfplay = selfplay_config(args)  # before vars(args): it fills in --pcr's default
    return {"run_dir": args.dir, "game": game_from_args(args), "net": net, "config": config,
            "selfplay": selfplay, "train": train_options(args, args.device),
            "command": dict(vars(args), recipe=recipe)}


def make_loop(args: argparse.Namespace) -> AutoTrain:
    """The loop the options ask for: concurrent with ``--concurrent`` (or 2+ GPUs), else alternating."""
    settings = loop_settings(args)
    loop_class = ConcurrentAutoTrain if concurrent_by_default(settings["config"]) else AutoTrain
    return loop_class(**settings)


def run(args: argparse.Namespace) -> int:
    return run_loop(make_loop(args))
