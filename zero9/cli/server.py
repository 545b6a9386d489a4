"""``zero9 server RUN_DIR``: the options of Leela Zero's server, then :mod:`zero9.distributed.web`.

``zero9 server RUN_DIR clients add NAME | list | revoke NAME | accept NAME | drop NAME`` manages the
roster of client credentials (:mod:`zero9.distributed.roster`) and the match results gating holds
(:mod:`zero9.distributed.gating`) instead of serving; it works while the server runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
import time
from pathlib import Path

from zero9.cli.common import add_game_arguments, game_from_args
from zero9.distributed.config import (
    SERVER_EXTRA_HINT,
    Edge,
    Gating,
    Limits,
    TaskOptions,
    missing_server_packages,
    option_problems,
)
from zero9.util.logs import configure_logging


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR", help="folder for the database, nets, games and chunks")
    parser.add_argument("roster", nargs="*", metavar="clients ACTION",
                        help="manage the roster instead of serving: 'clients add NAME' (prints NAME's "
                             "credential), 'clients list', 'clients revoke NAME', and the match results "
                             "held for an improbable record: 'clients accept NAME', 'clients drop NAME'")
    parser.add_argument("--trust-anonymous", action="store_true",
                        help="also give self-play work to clients without a credential (a closed lab "
                             "network only; they never get match games)")
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
    gating = Gating()
    g = parser.add_argument_group("gating (see docs/cli-server.md)")
    g.add_argument("--match-games", type=int, default=gating.match_games,
                   help="games after which an undecided match fails")
    g.add_argument("--match-in-flight", type=int, default=gating.match_in_flight,
                   help="match tasks leased at once")
    g.add_argument("--elo1", type=float, default=gating.elo1, help="SPRT's elo1 (Leela Zero: 35)")
    g.add_argument("--match-lease", type=float, default=gating.lease_minutes, metavar="MIN",
                   help="minutes a match task is leased before it goes back to the pool")
    g.add_argument("--match-tasks-per-client", type=int, default=gating.tasks_per_client,
                   help="match tasks one client may hold at once")
    g.add_argument("--match-share", type=float, default=gating.client_share,
                   help="largest share of one match's games one client may play")
    g.add_argument("--match-min-clients", type=int, default=gating.min_clients,
                   help="roster clients whose games a decision must count (1 for a one-machine class)")
    limits = Limits()
    g = parser.add_argument_group("upload limits")
    g.add_argument("--rate-limit", type=float, default=limits.requests_per_minute,
                   help="requests per minute per client address (0: none)")
    g.add_argument("--max-body", type=int, default=limits.body, help="largest request body in bytes")
    g.add_argument("--min-moves", type=int, default=limits.min_moves, help="shortest game accepted")
    g.add_argument("--client-games-per-hour", type=int, default=limits.client_games_per_hour,
                   help="self-play games one client may upload per hour (0: no quota)")
    edge = Edge()
    g = parser.add_argument_group("connections")
    g.add_argument("--header-timeout", type=float, default=edge.header_seconds, metavar="S",
                   help="seconds a request's headers may take")
    g.add_argument("--body-timeout", type=float, default=edge.body_seconds, metavar="S",
                   help="seconds a request's body may take")
    g.add_argument("--max-connections", type=int, default=edge.max_connections,
                   help="open connections per server process")
    g.add_argument("--max-half-open", type=int, default=edge.max_half_open,
                   help="connections per server process waiting for a request's headers without a "
                        "credential shown; more close the oldest of the address holding the most")
    g.add_argument("--connections-per-address", type=int, default=edge.connections_per_address,
                   help="open connections from one address (0: no limit)")
    g.add_argument("--forwarded-allow-ips", default=edge.forwarded_allow_ips, metavar="IPS",
                   help="reverse proxies whose X-Forwarded-For is believed (default: none)")
    parser.add_argument("--workers", type=int, default=1,
                        help="web server processes (one per core serves the most uploads)")


def server_settings(args: argparse.Namespace) -> dict:
    """The :class:`Server` arguments the command line names, as JSON (worker processes get them so)."""
    game = game_from_args(args)
    if game.name != "go":
        raise ValueError("the Leela Zero protocol carries Go games (its training chunks are Go-only)")
    options = TaskOptions(args.visits, args.playouts, args.resign_pct, args.randomcnt, args.noise)
    problems = option_problems(options.as_task())
    if problems:  # every client would refuse its tasks (zero9.distributed.config.TASK_OPTION_LIMITS)
        raise ValueError("clients would refuse these task options: " + "; ".join(problems))
    limits = Limits(body=args.max_body, requests_per_minute=args.rate_limit, min_moves=args.min_moves,
                    client_games_per_hour=args.client_games_per_hour)
    gating = Gating(elo1=args.elo1, match_games=args.match_games, match_in_flight=args.match_in_flight,
                    lease_minutes=args.match_lease, tasks_per_client=args.match_tasks_per_client,
                    client_share=args.match_share, min_clients=args.match_min_clients)
    return {"run_dir": args.run_dir, "game": game.to_dict(), "options": dataclasses.asdict(options),
            "db_url": args.db, "limits": dataclasses.asdict(limits), "gating": dataclasses.asdict(gating),
            "trust_anonymous": args.trust_anonymous}


def edge_limits(args: argparse.Namespace) -> Edge:
    return Edge(header_seconds=args.header_timeout, body_seconds=args.body_timeout,
                max_connections=args.max_connections, max_half_open=args.max_half_open,
                connections_per_address=args.connections_per_address,
                forwarded_allow_ips=args.forwarded_allow_ips)


def manage_roster(server, words: list[str]) -> int:
    """``clients add NAME`` / ``clients list`` / ``clients revoke NAME`` (see the module docstring)."""
    action, names = (words[1], words[2:]) if len(words) >= 2 and words[0] == "clients" else ("", [])
    if action == "add" and len(names) == 1:
        credential = server.roster.add(names[0])
        print(f"client {names[0]} added; its credential (shown once): {credential}\n"
              f"  zero9 client http://HOST:PORT/c/{credential}/   (autogtp: the same address)")
    elif action == "list" and not names:
        print(f"{'client':<24}{'games':>8}{'match games':>13}  last upload           state")
        for entry in server.status()["clients"]:
            last = (time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry["last_seen"]))
                    if entry["last_seen"] else "never")
            state = "revoked" if entry["revoked"] else ("anonymous" if entry["client"].startswith("anonymous")
                                                         else "active")
            print(f"{entry['client']:<24}{entry['games']:>8}{entry['match_games']:>13}  {last:<21} {state}")
    elif action in ("accept", "drop") and len(names) == 1:
        matches = server.settle_holds(names[0], accept=action == "accept")
        print(f"client {names[0]}: held match results {'accepted' if action == 'accept' else 'dropped'}, "
              f"matches counted again: {matches or 'none (nothing was held)'}")
    elif action == "revoke" and len(names) == 1:
        done = server.revoke_client(names[0])
        print(f"client {names[0]} revoked: {done['chunks_removed']} chunks left the training window, "
              f"matches counted again: {done['matches_recounted'] or 'none'}")
    else:
        raise ValueError(f"unknown roster command {' '.join(words)!r}: use 'clients add NAME', "
                         "'clients list', 'clients revoke NAME', 'clients accept NAME' or "
                         "'clients drop NAME'")
    return 0

def run(args: argparse.Namespace) -> int:
    missing = missing_server_packages()
    if missing:
        print(f"zero9 server: needs the server extra ({', '.join(missing)} missing): {SERVER_EXTRA_HINT}",
              file=sys.stderr)
        return 2
    from zero9.distributed.server import Server
    from zero9.distributed.web import LOG_FORMAT, serve

    settings = server_settings(args)
    configure_logging(LOG_FORMAT, root_level=logging.INFO)  # timestamps and the web stack's lines
    if args.roster:
        return manage_roster(Server.from_settings(settings, sweep=False), args.roster)
    server = Server.from_settings(settings, sweep=True)
    best = server.ensure_start_net(args.net, args.blocks, args.filters)
    print(f"zero9 server: best network {best[:8]}; http://{args.host}:{args.port}/ ; "
          f"trainer API key in {Path(args.run_dir) / 'api_key'}", flush=True)
    serve(server, settings, edge_limits(args), args.host, args.port, args.workers)
    return 0
