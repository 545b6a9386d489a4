"""``zero9 play``: the command line of the window (:mod:`gui.app`).

``zero9 play [--game go|gomoku] [--size N] [--color black|white] [--level NAME | --visits N]
[--komi K] [--net PATH] [--sgf FILE [--move N]]``. Without game options the window opens on
the new-game settings; with any of them (or ``--no-setup``) it starts the game at once. A net
that does not fit the game, or an SGF file the window cannot open (it says why), is refused
here, on the command line, before the window opens.
"""

from __future__ import annotations

import argparse
import os
import sys

from gui.clock import GameClock
from gui.engine import DEFAULT_LEVEL, build_engine
from gui.settings import DEFAULT_KOMI, DEFAULT_SIZES, Settings
from gui.sgfio import open_game
from zero9.arena.levels import LEVELS, name_for_visits
from zero9.games import parse_colour
from zero9.nn.checkpoint import check_net_file
from zero9.settings import PlayConfig
from zero9.util.threads import choose_torch_threads

GAME_OPTIONS = ("game", "size", "color", "level", "visits", "komi", "net", "sgf")


def _level_help() -> str:
    names = []
    for name, level in LEVELS.items():
        choice = "the best move" if level.top_k == 1 else f"one of the best {level.top_k}"
        visits = f"{level.visits} visit{'s' if level.visits != 1 else ''}"
        names.append(f"{name} ({visits}, {choice})")
    return f"AI strength (default {DEFAULT_LEVEL}): " + ", ".join(names)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", choices=["go", "gomoku"], help="the game (default go)")
    sizes = ", ".join(f"{n} for {game}" for game, n in DEFAULT_SIZES.items())
    parser.add_argument("--size", type=int, help=f"board size (default {sizes})")
    parser.add_argument(
        "--color", "--colour", dest="color", help="your colour: black or white (default black)"
    )
    parser.add_argument(
        "--level",
        choices=list(LEVELS),
        help=_level_help(),
    )
    parser.add_argument("--visits", type=int, help="AI visits per move (overrides --level)")
    parser.add_argument("--komi", type=float, help=f"komi for Go (default {DEFAULT_KOMI:g})")
    parser.add_argument(
        "--net", help="net file (.pt or Leela Zero .txt[.gz]); default: the shipped net, if any"
    )
    parser.add_argument("--time", type=float, metavar="MINUTES",
                        help="a game clock: each side's main time in minutes (default: no clock)")
    parser.add_argument("--byo-yomi", type=float, default=30.0, metavar="SECONDS",
                        help="with --time: seconds per byo-yomi period after the main time "
                             "(default 30; 0: none)")
    parser.add_argument("--periods", type=int, default=3, help="with --time: byo-yomi periods (default 3)")
    parser.add_argument("--sgf", help="open this SGF game to continue it")
    parser.add_argument("--move", type=int, help="with --sgf: show this move number (default: the last)")
    parser.add_argument(
        "--no-setup", action="store_true", help="start playing at once, without the settings panel"
    )
    parser.add_argument("--width", type=int, default=1060, help="window width in pixels")
    parser.add_argument("--height", type=int, default=720, help="window height in pixels")


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings from the command line; ValueError with a clear message for bad values."""
    s = Settings()
    if args.game:
        s.game = args.game
        s.size = DEFAULT_SIZES[args.game]
    if args.size is not None:
        s.size = args.size
    if args.color:
        s.human = parse_colour(args.color)
    if args.level:
        s.level, s.visits = args.level, LEVELS[args.level].visits
    if args.visits is not None:
        if args.visits < 1:
            raise ValueError(f"--visits must be at least 1, not {args.visits}")
        s.visits = args.visits
        s.level = name_for_visits(s.level, args.visits)
    if args.komi is not None:
        s.komi = args.komi
    s.net = args.net
    if getattr(args, "time", None) is not None:
        periods = args.periods if args.byo_yomi > 0 else 0
        s.clock = (60.0 * args.time, args.byo_yomi if periods else 0.0, periods)
        GameClock(*s.clock)  # refuse a clock without time here
    s.make_game()  # refuse a bad size here, on the command line
    return s


def run(args: argparse.Namespace) -> int:
    try:
        settings = settings_from_args(args)
    except ValueError as e:
        print(f"zero9 play: {e}", file=sys.stderr)
        return 2
    if args.move is not None and not args.sgf:
        print("zero9 play: --move needs --sgf", file=sys.stderr)
        return 2
    choose_torch_threads(PlayConfig.batch_size)  # the AI's and the analysis' searches: small batches
    engine = None
    if args.net:  # refuse a net that does not fit on the command line, before the window opens
        try:
            check_net_file(args.net)  # absent, a pipe or a device is named as such, not loaded
            engine = build_engine(settings.make_game(), settings.net, settings.visits)
        except (ValueError, OSError) as e:
            print(f"zero9 play: {e}", file=sys.stderr)
            return 2
    if args.sgf:  # a file the window cannot open says why here, not as an empty board
        try:
            open_game(args.sgf)
        except (ValueError, TypeError, OSError) as e:
            print(f"zero9 play: {e}", file=sys.stderr)
            return 2
    show_setup = not args.no_setup and not any(getattr(args, k) is not None for k in GAME_OPTIONS)
    if (
        os.environ.get("SDL_VIDEODRIVER") != "dummy"
        and not os.environ.get("DISPLAY")
        and sys.platform.startswith("linux")
        and not os.environ.get("WAYLAND_DISPLAY")
    ):
        print(
            "zero9 play: no display (DISPLAY is not set); run it on a desktop, or under xvfb-run",
            file=sys.stderr,
        )
        return 2
    from gui.app import App  # pygame: only once the window is wanted

    app = App(
        settings, engine, show_setup=show_setup, size=(args.width, args.height), sgf=args.sgf, move=args.move
    )
    return app.loop()




__all__ = ["GAME_OPTIONS", "add_arguments", "run", "settings_from_args"]
