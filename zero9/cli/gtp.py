"""``zero9 gtp``'s command line: Leela Zero 0.17's flags, the engine they build, ``--benchmark``.

Every leelaz 0.17 flag is accepted, so a tool's leelaz command line works with only the
program name changed (docs/cli-gtp.md says what each flag means in zero9). Values pass the
same checks as GTP options (:mod:`zero9.protocols.gtp.options`).
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from zero9.cli.common import add_game_arguments, game_from_args
from zero9.nn.checkpoint import default_net_path
from zero9.protocols.gtp import BANNER, GTPEngine
from zero9.protocols.gtp.loop import serve
from zero9.protocols.gtp.options import MAX_LAG_CS, MAX_STONES, MAX_VISITS, GTPFailure, float_value, int_value
from zero9.protocols.gtp.state import LeelaZeroOptions
from zero9.search.player import NetMismatch, NetSource
from zero9.settings import PlayConfig
from zero9.util.threads import choose_torch_threads


def _checked(parse, *bounds, **kw) -> Callable[[str], Any]:
    """An argparse type from a gtp_options check: the same ranges on the command line as in GTP."""
    def convert(text: str):
        try:
            return parse(text, "value", *bounds, **kw)
        except GTPFailure as e:
            raise argparse.ArgumentTypeError(str(e).removeprefix("value ")) from None
    return convert


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Leela Zero 0.17's command line (see docs/cli-gtp.md for what each flag means in zero9)."""
    count = _checked(int_value, 0, MAX_VISITS)
    parser.add_argument("-w", "--weights",
                        help="net file: Leela Zero text (.txt, .gz) or zero9 checkpoint (default: the "
                        "shipped net in example-data/ for the game and size; 'uniform': no net)")
    parser.add_argument("-g", "--gtp", action="store_true", help="accepted: zero9 gtp always speaks GTP")
    parser.add_argument("-v", "--visits", type=count, help="visits per move (0 or absent: 400)")
    parser.add_argument("-p", "--playouts", type=count, help="playouts per move (0: no limit)")
    parser.add_argument("-r", "--resignpct", type=_checked(int_value, -1, 100), default=-1,
                        help="resign when the winrate is below this %% (-1: 10%%, 0: never)")
    parser.add_argument("-m", "--randomcnt", type=_checked(int_value, 0, MAX_STONES), default=0,
                        help="play the first N moves in proportion to visits (variety)")
    parser.add_argument("--randomvisits", type=count, default=0,
                        help="random moves only among those with more than N visits")
    parser.add_argument("--randomtemp", type=_checked(float_value, None, 100, above=0), default=1.0,
                        help="temperature of the random moves (pick ~ visits^(1/T))")
    parser.add_argument("-n", "--noise", action="store_true", help="Dirichlet noise at the root")
    parser.add_argument("-s", "--seed", type=_checked(int_value, 0, 2**64 - 1), help="random seed")
    parser.add_argument("-d", "--dumbpass", action="store_true", help="no smarter passing (self-play)")
    parser.add_argument("--tromp-taylor", action="store_true",
                        help="final_score counts every stone on the board, as Leela Zero does (for "
                             "autogtp: its training targets and the server's count); default: dead stones "
                             "removed, as GNU Go counts")
    parser.add_argument("-t", "--threads", type=_checked(int_value, 0, 256), default=None,
                        help="torch threads (0: torch's default; default: OMP_NUM_THREADS if set, else "
                             "1 for the search's small batches, zero9.util.threads)")
    parser.add_argument("-b", "--lagbuffer", type=_checked(int_value, 0, MAX_LAG_CS), default=20,
                        help="centiseconds kept back from each move's time (pipes, GUI)")
    parser.add_argument("-l", "--logfile", help="append the GTP input and output to this file")
    parser.add_argument("-q", "--quiet", action="store_true", help="no diagnostics on stderr")
    parser.add_argument("--noponder", action="store_true", help="accepted; zero9 never ponders")
    parser.add_argument("--timemanage", choices=("auto", "on", "off", "fast", "no_pruning"), default="auto",
                        help="accepted; zero9 spends the clock's budget per move")
    parser.add_argument("--benchmark", action="store_true",
                        help="search the empty board (-v, default 3200 visits), print the speed, exit")
    parser.add_argument("--tune-only", action="store_true", help="load the net, print the banner, exit")
    parser.add_argument("--full-tuner", action="store_true", help="accepted; nothing to tune")
    parser.add_argument("--batchsize", type=_checked(int_value, 0, 1024), default=0,
                        help="leaves per net call (0: the search's default)")
    parser.add_argument("--precision", choices=("single", "half", "auto"), default="auto",
                        help="accepted; CUDA always runs bf16 autocast")
    parser.add_argument("--gpu", type=_checked(int_value, 0, 64), action="append",
                        help="accepted; --device picks the device")
    parser.add_argument("--cpu-only", action="store_true", help="run on the CPU (as --device cpu)")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    add_game_arguments(parser)


def make_engine(args: argparse.Namespace, log: TextIO | None = sys.stderr) -> GTPEngine:
    """The engine that ``zero9 gtp`` runs, from parsed arguments."""
    game = game_from_args(args)
    uniform = (args.weights or "").lower() == "uniform"
    path = None if uniform else args.weights or default_net_path(game.name, game.size)
    threads = choose_torch_threads(args.batchsize or PlayConfig.batch_size, args.threads)
    device = "cpu" if args.cpu_only else args.device
    source = NetSource(path, device=device, warn=not (args.quiet or uniform or log is None))
    if source.net is not None and source.net.size != game.size and args.size is None:
        # A net file decides the size when none was asked for.
        game = game_from_args(args, size=source.net.size)
    options = LeelaZeroOptions(visits=args.visits, playouts=args.playouts, resignpct=args.resignpct,
                            randomcnt=args.randomcnt, randomvisits=args.randomvisits,
                            randomtemp=args.randomtemp,
                            noise=args.noise, seed=args.seed, threads=threads, ponder=not args.noponder,
                            quiet=args.quiet, dumbpass=args.dumbpass, tromp_taylor=args.tromp_taylor,
                            lagbuffer=args.lagbuffer, device=device,
                            weights=None if path is None else str(path))
    try:
        engine = GTPEngine(game, source, options, log=None if args.quiet else log)
    except (GTPFailure, NetMismatch) as e:
        raise SystemExit(f"zero9 gtp: {e}") from None
    if args.batchsize:
        engine.player.set_option("batch_size", args.batchsize)
    return engine


def benchmark(engine: GTPEngine, visits: int, out: TextIO) -> None:
    """Leela Zero's ``--benchmark``: one search of the empty board, then the speed."""
    engine.player.set_option("visits", visits)
    start = time.monotonic()
    engine.player.choose(engine.game.new_position())
    seconds = time.monotonic() - start
    done = sum(s.visits for s in engine.player.root_stats())
    print(f"{done} visits, {seconds:.2f} s, {done / max(seconds, 1e-9):.0f} n/s", file=out, flush=True)


def run(args: argparse.Namespace) -> int:
    if not args.quiet or args.tune_only:
        # autogtp reads the version after "Leela Zero " on stdout of --tune-only (as leelaz prints it
        # outside GTP mode); in GTP mode stdout is the protocol's, so the banner goes to stderr.
        print(BANNER, file=sys.stdout if args.tune_only or args.benchmark else sys.stderr, flush=True)
    try:
        engine = make_engine(args)
    except (FileNotFoundError, ValueError) as e:
        print(f"zero9 gtp: {e}", file=sys.stderr)
        return 2
    if args.tune_only:
        return 0  # nothing to tune: the net loaded, so the engine would start
    if args.benchmark:
        benchmark(engine, args.visits or 3200, sys.stdout)
        return 0
    # Bytes that are not UTF-8 become U+FFFD instead of an exception; universal newlines eat CR.
    inp = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    if not args.logfile:
        return serve(engine, inp, sys.stdout)
    try:
        with open(args.logfile, "a", encoding="utf-8") as transcript:
            return serve(engine, inp, sys.stdout, transcript)
    except OSError as e:
        print(f"zero9 gtp: cannot open log file {args.logfile}: {e.strerror}", file=sys.stderr)
        return 2
