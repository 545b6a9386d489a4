"""``zero9 server RUN_DIR``: the options of Leela Zero's server, then :mod:`zero9.distributed.web`."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
from pathlib import Path

from zero9.distributed.config import (
    SERVER_EXTRA_HINT,
    SPRT_ELO1,
    Limits,
    TaskOptions,
    missing_server_packages,
)
from zero9.games import add_game_arguments, game_from_args


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR", help="folder for the database, nets, games and chunks")
    add_game_arguments(parser)
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (0.0.0.0: every interface, for a class network)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--db", default=None, help="database URL (default: sqlite RUN_DIR/server.db; "
                                                   "or postgresql://user@host/dbname)")
    parser.add_argument("--net", default=None,
                        help="start net (.pt or Leela Zero weights) for an empty server")
    parser.add_argument("--blocks", type=int, default=6, help="residual blocks of a random start net")
    parser.add_argument("--filters", type=int, default=32, help="filters of a random start net")
    d = TaskOptions()
    t = parser.add_argument_group("task options (what every client plays with)")
    t.add_argument("--visits", type=int, default=d.visits)
    t.add_argument("--playouts", type=int, default=d.playouts, help="0: no playout limit, visits decide")
    t.add_argument("--randomcnt", type=int, default=d.randomcnt, help="first moves chosen by visit share")
    t.add_argument("--resign-pct", type=int, default=d.resign_pct, help="resign below this winrate (percent)")
    t.add_argument("--noise", action=argparse.BooleanOptionalAction, default=d.noise,
                   help="Dirichlet noise at the root of self-play games")
    g = parser.add_argument_group("gating and limits")
    g.add_argument("--match-games", type=int, default=400, help="games after which an undecided match fails")
    g.add_argument("--match-in-flight", type=int, default=20, help="match tasks outstanding at once")
    g.add_argument("--elo1", type=float, default=SPRT_ELO1, help="SPRT's elo1 (Leela Zero: 35)")
    limits = Limits()
    g.add_argument("--rate-limit", type=float, default=limits.requests_per_minute,
                   help="requests per minute per client address (0: none)")
    g.add_argument("--max-body", type=int, default=limits.body, help="largest request body in bytes")
    parser.add_argument("--workers", type=int, default=1,
                        help="web server processes (one per core serves the most uploads)")


def server_settings(args: argparse.Namespace) -> dict:
    """The :class:`Server` arguments the command line names, as JSON (worker processes get them so)."""
    game = game_from_args(args)
    if game.name != "go":
        raise ValueError("the Leela Zero protocol carries Go games (its training chunks are Go-only)")
    options = TaskOptions(args.visits, args.playouts, args.resign_pct, args.randomcnt, args.noise)
    limits = Limits(body=args.max_body, requests_per_minute=args.rate_limit)
    return {"run_dir": args.run_dir, "game": game.to_dict(), "options": dataclasses.asdict(options),
            "db_url": args.db, "limits": dataclasses.asdict(limits), "match_games": args.match_games,
            "match_in_flight": args.match_in_flight, "elo1": args.elo1}

def run(args: argparse.Namespace) -> int:
    missing = missing_server_packages()
    if missing:
        print(f"zero9 server: needs the server extra ({', '.join(missing)} missing): {SERVER_EXTRA_HINT}",
              file=sys.stderr)
        return 2
    from zero9.distributed.server import Server
    from zero9.distributed.web import LOG_FORMAT, serve

    settings = server_settings(args)
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    server = Server.from_settings(settings, sweep=True)
    best = server.ensure_start_net(args.net, args.blocks, args.filters)
    print(f"zero9 server: best network {best[:8]}; http://{args.host}:{args.port}/ ; "
          f"trainer API key in {Path(args.run_dir) / 'api_key'}", flush=True)
    serve(server, settings, args.host, args.port, args.workers)
    return 0
