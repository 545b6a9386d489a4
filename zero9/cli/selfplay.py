"""``zero9 selfplay``: play games with a net and write training chunks and SGFs.

The library is :mod:`zero9.learn.selfplay.pool`; this is its command line, and the self-play options
it shares with ``zero9 autotrain`` (:func:`add_selfplay_arguments`, read back into a
:class:`zero9.settings.SelfPlayConfig` by :func:`selfplay_config`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from zero9.learn.selfplay.pool import play_selfplay
from zero9.nn.checkpoint import load_net
from zero9.nn.net import resolve_device
from zero9.settings import PCR_SHARE, SearchConfig, SelfPlayConfig
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


def add_selfplay_arguments(parser: argparse.ArgumentParser, defaults: dict | None = None) -> None:
    """The self-play options shared by ``zero9 selfplay`` and ``zero9 autotrain``."""
    c = SelfPlayConfig()
    d = {"visits": c.visits, "workers": 0, "games_parallel": c.parallel_games, "leaves": c.leaves_per_tree,
         "randomcnt": c.randomcnt, "resign_threshold": c.resign_threshold,
         "no_resign_share": c.no_resign_share, "pcr": c.full_search_share, "fast_visits": c.fast_visits,
         "opening_moves": c.opening_moves, "opening_visits": c.opening_visits}
    d.update(defaults or {})
    g = parser.add_argument_group("self-play")
    g.add_argument("--visits", type=int, default=d["visits"], help="visits per recorded move (LZ -v)")
    g.add_argument("--workers", type=int, default=d["workers"], help="worker processes (0: one per core)")
    g.add_argument("--games-parallel", type=int, default=d["games_parallel"],
                   help="games in flight per worker (G)")
    g.add_argument("--leaves", type=int, default=d["leaves"], help="leaves per game per net call (K)")
    g.add_argument("--randomcnt", type=int, default=d["randomcnt"],
                   help="first M moves chosen in proportion to visits (LZ -m)")
    g.add_argument("--no-noise", action="store_true", help="no Dirichlet noise at the root")
    g.add_argument("--resign-threshold", type=float, default=d["resign_threshold"],
                   help="resign below this winrate (negative: never)")
    g.add_argument("--no-resign-share", type=float, default=d["no_resign_share"],
                   help="share of games that never resign (measures false resignations)")
    pcr_default = "1" if d["pcr"] == 1.0 else "0.25; 1 with --gumbel or --visits <= --fast-visits"
    g.add_argument("--pcr", type=float, default=d["pcr"], metavar="SHARE",
                   help="playout cap randomisation: share of moves with a full, recorded search "
                        f"(1 = off; default here: {pcr_default})")
    g.add_argument("--fast-visits", type=int, default=d["fast_visits"], help="visits of PCR's fast moves")
    g.add_argument("--opening-moves", type=int, default=d["opening_moves"],
                   help="cheap random opening: unrecorded moves up to a random move number below this")
    g.add_argument("--opening-visits", type=int, default=d["opening_visits"], help="visits of opening moves")
    g.add_argument("--move-cap", type=int, default=None, help="stop games after this many moves")
    g.add_argument("--gumbel", action=argparse.BooleanOptionalAction, default=False,
                   help="Gumbel root search instead of PUCT + noise")
    g.add_argument("--gumbel-actions", type=int, default=c.gumbel_actions,
                   help="root actions Gumbel search samples")
    g.add_argument("--in-flight", type=int, default=c.in_flight, choices=(1, 2),
                   help="batches each worker keeps in flight with the inference server (2: it searches "
                        "half its games while the GPU evaluates the other half's)")
    g.add_argument("--eval-cache", type=int, default=c.eval_cache, metavar="N",
                   help="entries of each worker's evaluator cache (0: none; a hit reuses an evaluation "
                        "made under another random symmetry)")
    g.add_argument("--no-sgf", action="store_true", help="write no SGF files (sgfmill not needed)")
    g.add_argument("--lz-chunks", action="store_true", help="also write Leela Zero text chunks (Go)")


def selfplay_config(args: argparse.Namespace, seed: int | None = None) -> SelfPlayConfig:
    """A :class:`SelfPlayConfig` from the parsed options; ValueError for impossible values."""

    for name in ("visits", "games_parallel", "leaves", "fast_visits", "opening_visits"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.pcr is None:  # autotrain's default: PCR for PUCT (it won its A/B), off for Gumbel (not measured)
        args.pcr = 1.0 if args.gumbel or args.fast_visits >= args.visits else PCR_SHARE
    if not 0 < args.pcr <= 1:
        raise ValueError(f"--pcr must be in (0, 1], got {args.pcr}")
    if args.pcr < 1 and args.fast_visits >= args.visits:
        raise ValueError(f"--fast-visits ({args.fast_visits}) must be below --visits ({args.visits}) "
                         f"with --pcr {args.pcr:g}: fast moves are the cheap ones (--pcr 1 turns them off)")
    if getattr(args, "eval_cache", 0) < 0:
        raise ValueError(f"--eval-cache must be >= 0 (0: no cache), got {args.eval_cache}")
    if not 0 <= args.no_resign_share <= 1:
        raise ValueError(f"--no-resign-share must be in [0, 1], got {args.no_resign_share}")
    return SelfPlayConfig(
        visits=args.visits,
        parallel_games=args.games_parallel,
        leaves_per_tree=args.leaves,
        search=SearchConfig(noise=not args.no_noise),
        randomcnt=args.randomcnt,
        resign_threshold=None if args.resign_threshold < 0 else args.resign_threshold,
        no_resign_share=args.no_resign_share,
        full_search_share=args.pcr,
        fast_visits=args.fast_visits,
        opening_moves=args.opening_moves,
        opening_visits=args.opening_visits,
        move_cap=args.move_cap,
        gumbel=args.gumbel,
        gumbel_actions=args.gumbel_actions,
        in_flight=getattr(args, "in_flight", SelfPlayConfig.in_flight),
        eval_cache=getattr(args, "eval_cache", SelfPlayConfig.eval_cache),
        seed=seed,
    )
