"""``zero9 gtp``: the Go Text Protocol (version 2) on stdin/stdout, as Leela Zero and KataGo speak it.

:class:`GTPEngine` maps one command line to one reply (testable without any subprocess);
:func:`zero9.protocols.gtp_loop.serve` is the thin stdin/stdout loop around it, and
``zero9.cli.gtp`` its command line. The engine is its state and its command groups, one
module each:

- :mod:`~zero9.protocols.gtp_loop`: lines, replies, streams, overlong lines;
- :mod:`~zero9.protocols.gtp_state`: game, setup stones, history, filler passes, options;
- :mod:`~zero9.protocols.gtp_clock`: time controls and each move's budget;
- :mod:`~zero9.protocols.gtp_options`: strict values (every number a client sends);
- :mod:`~zero9.protocols.gtp_core`: setup, handicap, time, inspection, SGF files;
- :mod:`~zero9.protocols.gtp_moves`: ``play``, ``undo``, ``genmove`` and its move policy;
- :mod:`~zero9.protocols.gtp_leelaz`: Leela Zero's ``lz-analyze`` & co (tags and lines:
  :mod:`~zero9.protocols.gtp_analysis`);
- :mod:`~zero9.protocols.gtp_kata`: KataGo's ``kata-analyze`` & co, rules, scoring from ownership;
- :mod:`~zero9.protocols.gtp_training`: ``dump_training``, ``dump_supervised``, ``autotrain``.

Vocabulary:

- **leelaz version**: ``version`` answers :data:`LEELAZ_VERSION`, the Leela Zero release
  whose command line and GTP zero9 follows, because Lizzie and autogtp compare it; the
  start-up :data:`BANNER` names zero9's own version too.
- **command list** (:data:`COMMANDS`): Leela Zero's commands (what makes sense on small
  boards), GNU Go's regression helpers and KataGo's extensions, in ``list_commands``
  order; :data:`GO_ONLY` are not offered for Gomoku.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TextIO

from zero9 import __version__
from zero9.games import Game
from zero9.protocols.gtp_core import ENGINE_NAME, CoreCommands
from zero9.protocols.gtp_kata import KataCommands
from zero9.protocols.gtp_leelaz import LeelaZeroCommands
from zero9.protocols.gtp_loop import Reply, parse_command
from zero9.protocols.gtp_moves import MoveCommands
from zero9.protocols.gtp_options import GTPFailure, nargs
from zero9.protocols.gtp_state import EngineOptions, EngineState
from zero9.protocols.gtp_training import TrainingCommands
from zero9.search.player import NetMismatch, NetSource

PROTOCOL_VERSION = "2"
# The Leela Zero release whose command line and GTP zero9 follows. ``version`` answers it, because
# Lizzie (needs >= 0.15) and autogtp (compares with the server's minimum) read it as leelaz's.
LEELAZ_VERSION = "0.17"
BANNER = f"zero9 {__version__} (Leela Zero {LEELAZ_VERSION} compatible)"

COMMANDS = [
    "protocol_version", "name", "version", "quit", "known_command", "list_commands",
    "boardsize", "clear_board", "komi", "play", "genmove", "undo", "showboard",
    "final_score", "final_status_list", "time_settings", "time_left", "kgs-time_settings",
    "kgs-genmove_cleanup", "fixed_handicap", "place_free_handicap", "set_free_handicap",
    "loadsgf", "printsgf", "last_move", "move_history", "heatmap", "lz-analyze",
    "lz-genmove_analyze", "lz-setoption", "dump_training", "dump_supervised", "is_legal", "all_legal",
    "list_stones", "captures", "autotrain", "kata-analyze", "kata-genmove_analyze", "kata-get-rules",
    "kata-set-rules", "cputime",
]
GO_ONLY = {"final_status_list", "kgs-genmove_cleanup", "fixed_handicap", "place_free_handicap",
           "set_free_handicap", "captures", "komi", "dump_training", "dump_supervised",
           "kata-get-rules", "kata-set-rules"}

__all__ = ["BANNER", "COMMANDS", "LEELAZ_VERSION", "EngineOptions", "GTPEngine"]


class GTPEngine(CoreCommands, MoveCommands, LeelaZeroCommands, KataCommands, TrainingCommands, EngineState):
    """The GTP state machine: ``execute(line)`` -> :class:`Reply`; ``cmd_NAME`` handles command NAME."""

    def __init__(self, game: Game, source: NetSource, options: EngineOptions | None = None,
                 log: TextIO | None = None):
        self.handlers: dict[str, Callable[[list[str]], str | Reply]] = {
            name: getattr(self, "cmd_" + name.replace("-", "_")) for name in COMMANDS
        }
        super().__init__(game, source, options, log)

    def execute(self, line: str) -> Reply | None:
        """One command line -> its reply; None for lines GTP ignores (empty, comments)."""
        parsed = parse_command(line)
        if parsed is None:
            return None
        ident, name, args = parsed
        handler = self.handlers.get(name)
        if handler is None:
            return Reply(f"?{ident} unknown command\n\n")
        try:
            result = handler(args)
        except (GTPFailure, NetMismatch) as e:
            return Reply(f"?{ident} {e}\n\n")
        if isinstance(result, Reply):
            result.text = f"={ident}\n"
            return result
        return Reply(f"={ident} {result}\n\n")

    def handle(self, line: str, stream_seconds: float = 0.5) -> str:
        """``execute`` for scripts and tests: a stream command runs for ``stream_seconds`` then stops."""
        reply = self.execute(line)
        if reply is None:
            return ""
        if reply.stream is None:
            return reply.text
        out: list[str] = [reply.text]
        stop = threading.Event()
        if reply.interruptible:
            timer = threading.Timer(stream_seconds, stop.set)
            timer.start()
            reply.stream(out.append, stop)
            timer.cancel()
        else:
            reply.stream(out.append, stop)
        return "".join(out) + "\n"

    # -- administrative ----------------------------------------------------------------------------

    def cmd_protocol_version(self, args: list[str]) -> str:
        nargs(args, 0, usage="protocol_version")
        return PROTOCOL_VERSION

    def cmd_name(self, args: list[str]) -> str:
        nargs(args, 0, usage="name")
        return ENGINE_NAME

    def cmd_version(self, args: list[str]) -> str:
        nargs(args, 0, usage="version")
        return LEELAZ_VERSION  # what Lizzie and autogtp compare; the banner names zero9's own version

    def cmd_quit(self, args: list[str]) -> str:
        self.quit = True
        return ""

    def _commands(self) -> list[str]:
        return [c for c in COMMANDS if self.game.name == "go" or c not in GO_ONLY]

    def cmd_known_command(self, args: list[str]) -> str:
        nargs(args, 1, usage="known_command NAME")
        return "true" if args[0].lower() in self._commands() else "false"

    def cmd_list_commands(self, args: list[str]) -> str:
        nargs(args, 0, usage="list_commands")
        return "\n".join(self._commands())
