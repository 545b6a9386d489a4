"""``zero9 match A B``: the command line of :mod:`zero9.arena.match` (player specs: zero9.arena.players)."""

from __future__ import annotations

import argparse
import sys

from zero9.arena.levels import LEVELS
from zero9.arena.match import play_match
from zero9.arena.openings import read_openings
from zero9.arena.players import DEFAULT_MOVE_TIMEOUT, DEFAULT_TURN_TIME, EngineOptions, parse_info
from zero9.cli.common import add_game_arguments, add_threat_arguments, game_from_args
from zero9.settings import PlayConfig, SearchConfig

GAMES = 10  # a match's games unless --games says otherwise
PLAYER_FORMS = ("net file[@visits], random, uniform:V, mcts:N, level:NAME (" + ", ".join(LEVELS)
                + "), gnugo:L, pachi:N, 'gtp:COMMAND LINE', 'pbrain:[KEY=VALUE ...] COMMAND LINE' "
                "or gomokubench:LEVEL")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", help=f"player A: {PLAYER_FORMS}")
    parser.add_argument("b", help="player B (same forms)")
    parser.add_argument("--games", type=int, default=GAMES, help=f"number of games (default {GAMES})")
    add_game_arguments(parser)
    parser.add_argument("--visits", type=int, default=PlayConfig.visits,
                        help=f"visits per move of zero9 nets (default {PlayConfig.visits})")
    parser.add_argument("--parallel", type=int, default=1,
                        help="games played at once (worker processes; default 1)")
    parser.add_argument("--sgf-dir", help="write one SGF per game (and events.log) here")
    parser.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"),
                        help="stop early once an SPRT of ELO0 against ELO1 decides (alpha = beta = 0.05)")
    parser.add_argument("--move-timeout", type=float, default=DEFAULT_MOVE_TIMEOUT,
                        help=f"seconds an external engine may take per move before it forfeits "
                        f"(default {DEFAULT_MOVE_TIMEOUT:g})")
    parser.add_argument("--turn-time", type=float, default=DEFAULT_TURN_TIME,
                        help=f"seconds per move pbrain brains are told they have (INFO timeout_turn, "
                        f"default {DEFAULT_TURN_TIME:g})")
    parser.add_argument("--game-time", type=float, default=0.0,
                        help="seconds each player has for all its moves of a game (default 0 = no game "
                        "clock); running out loses on time")
    parser.add_argument("--pbrain-info", action="append", default=[], metavar="KEY=VALUE",
                        help="send INFO KEY VALUE to every pbrain brain (repeatable), e.g. max_node=10000")
    add_threat_arguments(parser)
    search = parser.add_argument_group("search of zero9 nets")
    search.add_argument("--c-puct", type=float, default=SearchConfig.c_puct,
                        help=f"PUCT exploration constant (default {SearchConfig.c_puct:g})")
    search.add_argument("--fpu-reduction", type=float, default=SearchConfig.fpu_reduction,
                        help=f"first-play urgency reduction (default {SearchConfig.fpu_reduction:g})")
    search.add_argument("--batch-size", type=int, default=PlayConfig.batch_size,
                        help=f"leaves per net call, with virtual loss (default {PlayConfig.batch_size}; "
                        "1: one leaf at a time)")
    search.add_argument("--lcb", action="store_true",
                        help="choose the move by its lower confidence bound (Leela Zero's), not by visits")
    parser.add_argument("--pachi", help="the Pachi binary for pachi:N players (default $ZERO9_PACHI, "
                        "then pachi on PATH)")
    parser.add_argument("--openings", help="file of openings, one per line as moves (H8 I9 ...): each is "
                        "played twice, colours swapped (docs/cli-match.md)")
    parser.add_argument("--max-moves", type=int, help="adjudicate a game after this many moves")
    parser.add_argument("--seed", type=int, help="random seed")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto for zero9 nets (default cpu)")


def engines_from_args(args: argparse.Namespace) -> EngineOptions:
    """The engine options of ``zero9 match``'s command line; ValueError for a bad one."""
    for option, value in (("--turn-time", args.turn_time), ("--game-time", args.game_time)):
        if value < 0:
            raise ValueError(f"{option} must be >= 0 seconds, got {value:g}")
    if args.c_puct <= 0:
        raise ValueError(f"--c-puct must be > 0, got {args.c_puct:g}")
    if args.fpu_reduction < 0:
        raise ValueError(f"--fpu-reduction must be >= 0, got {args.fpu_reduction:g}")
    if args.batch_size < 1:
        raise ValueError(f"--batch-size must be >= 1, got {args.batch_size}")
    if args.game_time and args.game_time < args.turn_time:
        raise ValueError(f"--game-time {args.game_time:g} s is shorter than one "
                         f"--turn-time {args.turn_time:g} s")
    return EngineOptions(pachi=args.pachi, pbrain_info=tuple(parse_info(args.pbrain_info, "--pbrain-info")),
                         turn_time=args.turn_time, game_time=args.game_time, threats=args.threats,
                         threat_reading=args.threat_reading, c_puct=args.c_puct,
                         fpu_reduction=args.fpu_reduction, batch_size=args.batch_size, lcb=args.lcb)


def run(args: argparse.Namespace) -> int:
    try:
        game = game_from_args(args)
        if args.games < 1:
            raise ValueError(f"--games must be >= 1, got {args.games}")
        engines = engines_from_args(args)
        openings = read_openings(args.openings, game) if args.openings else None
        result = play_match(args.a, args.b, game, args.games, parallel=args.parallel, visits=args.visits,
                            seed=args.seed, device=args.device, sgf_dir=args.sgf_dir,
                            sprt=tuple(args.sprt) if args.sprt else None, move_timeout=args.move_timeout,
                            max_moves=args.max_moves, log=sys.stdout, engines=engines, openings=openings)
    except ValueError as e:
        print(f"zero9 match: {e}", file=sys.stderr)
        return 2
    print(result.summary(*(args.sprt or (None, None))))
    return 0
