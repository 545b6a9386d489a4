"""``zero9 pbrain``: the command line of the Gomocup brain (:mod:`zero9.protocols.pbrain`).

The brain exits with ``os._exit`` once the manager's ``END`` (or the end of its input) has been
answered and stdout and stderr are flushed: the interpreter's own shutdown, mostly torch's
teardown, took 0.3-1.0 s, and a manager may kill a brain that is slow to go (the protocol's
example limit is 1 s). The brain writes no files, so nothing is lost by skipping it.
"""

from __future__ import annotations

import argparse
import io
import os
import sys

import torch

from zero9.cli.common import add_threat_arguments
from zero9.nn.checkpoint import default_net_path
from zero9.protocols.pbrain import PbrainEngine, serve
from zero9.search.player import NetSource
from zero9.settings import PlayConfig


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-w", "--weights", help="Gomoku net file (default: the shipped net for the size, "
                        "else uniform priors; 'uniform': no net)")
    parser.add_argument("-v", "--visits", type=int, default=PlayConfig.visits,
                        help=f"visits per move (default {PlayConfig.visits}; the time limit may stop the "
                        "search sooner)")
    parser.add_argument("-s", "--seed", type=int, help="random seed")
    parser.add_argument("-t", "--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda (default auto)")
    parser.add_argument("--size", type=int, default=15,
                        help="board size whose shipped net is the default (default 15)")
    add_threat_arguments(parser)


def run(args: argparse.Namespace) -> int:
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    uniform = (args.weights or "").lower() == "uniform"
    path = None if uniform else args.weights or default_net_path("gomoku", args.size)
    try:
        source = NetSource(path, device=args.device, warn=not uniform)
    except (FileNotFoundError, ValueError) as e:
        print(f"zero9 pbrain: {e}", file=sys.stderr)
        return 2
    engine = PbrainEngine(source, visits=args.visits, seed=args.seed, threats=args.threats,
                          threat_reading=args.threat_reading)
    inp = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    code = serve(engine, inp, sys.stdout)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
