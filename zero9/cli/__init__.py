"""The ``zero9`` command: one subcommand per module, imported only when chosen.

Each subcommand module defines ``add_arguments(parser)`` and ``run(args) -> int``;
this keeps ``zero9 --help`` instant (no torch import) and lets every module own
its options.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from zero9 import __version__
from zero9.util.logs import configure_logging
from zero9.util.runlock import RunDirBusy, lock_holder

# name -> (module, one-line help). Order is the order shown by --help.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("zero9.cli.demo", "play a quick game on the console (random or with a net) and print it"),
    "play": ("zero9.cli.play", "open the pygame window and play against the AI"),
    "gtp": ("zero9.cli.gtp", "speak GTP on stdin/stdout (Sabaki, Lizzie, GoGui, match tools)"),
    "analysis": ("zero9.cli.analysis", "KataGo's JSON analysis engine on stdin/stdout (KaTrain)"),
    "pbrain": ("zero9.cli.pbrain", "speak the Gomocup (piskvork) protocol for Gomoku managers"),
    "selfplay": ("zero9.cli.selfplay", "play self-play games and write training chunks and SGFs"),
    "train": ("zero9.cli.train", "train a net on the newest window of a run's training data"),
    "supervised": ("zero9.cli.supervised", "SGF games -> training chunks (Leela Zero's dump_supervised)"),
    "autotrain": ("zero9.cli.autotrain", "the resumable loop: self-play, train, gate, promote, rate"),
    "match": ("zero9.cli.match", "play a match between nets or external engines"),
    "review": ("zero9.cli.review", "review a game: each move's loss (Go: points), mistakes, better moves"),
    "ratings": ("zero9.cli.ratings", "maximum-likelihood Elo ratings over the games in a folder"),
    "plot": ("zero9.cli.plot", "plot a run directory's losses, Elo and self-play speed"),
    "rebuild-status": ("zero9.cli.rebuild_status", "write a run's lost status.json again from its files"),
    "convert": ("zero9.cli.convert", "convert between Leela Zero text weights and zero9 checkpoints"),
    "server": ("zero9.cli.server", "hand out tasks and nets, gate candidates (Leela Zero's server)"),
    "client": ("zero9.cli.client", "ask a server for work, play it, upload it (zero9's autogtp)"),
    "trainer": ("zero9.cli.trainer", "train on a server's games and submit candidate nets"),
}


# Commands that own a folder for their whole run (zero9.util.runlock): option, default.
RUN_DIR_OPTIONS: dict[str, tuple[str, str | None]] = {
    "autotrain": ("--dir", None), "train": ("--dir", None), "selfplay": ("--out", "selfplay"),
    "rebuild-status": ("--dir", None)}


def busy_run_dir(name: str, rest: list[str]) -> RunDirBusy | None:
    """The error for a run directory another process holds, found before the command's (slow) import.

    The command still takes the lock itself; this only makes a second process exit at once.
    """
    if name not in RUN_DIR_OPTIONS:
        return None
    option, default = RUN_DIR_OPTIONS[name]
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument(option, default=default)
    folder = getattr(pre.parse_known_args(rest)[0], option.lstrip("-"))
    holder = lock_holder(folder) if folder else None
    return RunDirBusy(Path(folder), holder) if holder is not None else None


def _top_parser() -> argparse.ArgumentParser:
    lines = "\n".join(f"  {name:<11} {text}" for name, (_, text) in COMMANDS.items())
    parser = argparse.ArgumentParser(
        prog="zero9",
        description="AlphaGo Zero / Leela Zero for 9x9 Go and Gomoku, in Python.",
        epilog=f"commands:\n{lines}\n\nRun 'zero9 COMMAND --help' for a command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"zero9 {__version__}")
    parser.add_argument("command", nargs="?", choices=list(COMMANDS), metavar="COMMAND")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        parser = _top_parser()
        args = parser.parse_args(argv[:1])  # handles --help, --version, unknown commands
        parser.print_help()
        return 0 if args.command is None else 2
    name, rest = argv[0], argv[1:]
    busy = busy_run_dir(name, rest)
    if busy is not None:
        print(f"zero9 {name}: error: {busy}", file=sys.stderr)
        return 2
    module_name, text = COMMANDS[name]
    configure_logging()  # the library's progress and warnings, on stderr, for every subcommand
    try:
        module = importlib.import_module(module_name)  # seconds for torch: Ctrl-C may come here too
        parser = argparse.ArgumentParser(prog=f"zero9 {name}", description=text)
        module.add_arguments(parser)
        args = parser.parse_args(rest)
        return int(module.run(args) or 0)
    except (ValueError, OSError) as error:  # bad input or a bad file: a clear line, no traceback
        print(f"zero9 {name}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"zero9 {name}: interrupted", file=sys.stderr)
        return 130
