"""The GTP engine of ``zero9 gtp``: one command line in, one reply out, through the command tables.

:class:`GTPEngine` builds the engine's objects once (the state, the move policy, the analysis
streams), hands each command group the ones it needs, and joins the groups' tables; the
administrative commands (``name``, ``version``, ``list_commands``...) are its own group here.

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
from typing import TextIO

from zero9 import __version__
from zero9.games import Game, Position
from zero9.protocols.gtp.clock import Clock
from zero9.protocols.gtp.commands import CommandTable, Handler, join_tables
from zero9.protocols.gtp.core import ENGINE_NAME, CoreCommands
from zero9.protocols.gtp.kata import KataCommands
from zero9.protocols.gtp.leelaz import LeelaZeroCommands
from zero9.protocols.gtp.loop import Reply, parse_command
from zero9.protocols.gtp.moves import MoveCommands, MovePolicy
from zero9.protocols.gtp.options import GTPFailure, nargs
from zero9.protocols.gtp.state import EngineState, LeelaZeroOptions
from zero9.protocols.gtp.streams import AnalysisStreams
from zero9.protocols.gtp.training import TrainingCommands
from zero9.search.player import NetMismatch, NetSource, SearchPlayer

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

__all__ = ["BANNER", "COMMANDS", "GO_ONLY", "LEELAZ_VERSION", "LeelaZeroOptions", "GTPEngine"]


class AdminCommands:
    """``protocol_version``, ``name``, ``version``, ``quit``, ``known_command``, ``list_commands``."""

    def __init__(self, state: EngineState):
        self.state = state

    def commands(self) -> CommandTable:
        return {
            "protocol_version": self.cmd_protocol_version, "name": self.cmd_name,
            "version": self.cmd_version, "quit": self.cmd_quit,
            "known_command": self.cmd_known_command, "list_commands": self.cmd_list_commands,
        }

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
        self.state.quit = True
        return ""

    def _commands(self) -> list[str]:
        return [c for c in COMMANDS if self.state.game.name == "go" or c not in GO_ONLY]

    def cmd_known_command(self, args: list[str]) -> str:
        nargs(args, 1, usage="known_command NAME")
        return "true" if args[0].lower() in self._commands() else "false"

    def cmd_list_commands(self, args: list[str]) -> str:
        nargs(args, 0, usage="list_commands")
        return "\n".join(self._commands())


class GTPEngine:
    """The GTP state machine: ``execute(line)`` -> :class:`Reply`, through the command groups' tables.

    ``state``, ``policy`` and ``streams`` are the engine's objects; the properties below are
    the state's, for callers that inspect a session (tests, ``zero9 gtp``'s warm-up).
    """

    def __init__(self, game: Game, source: NetSource, options: LeelaZeroOptions | None = None,
                 log: TextIO | None = None):
        self.state = EngineState(game, source, options, log)
        self.policy = MovePolicy(self.state)
        self.streams = AnalysisStreams(self.state, self.policy)
        self.handlers: dict[str, Handler] = join_tables([
            AdminCommands(self.state),
            CoreCommands(self.state),
            MoveCommands(self.state, self.policy),
            LeelaZeroCommands(self.state, self.policy, self.streams),
            KataCommands(self.state, self.streams),
            TrainingCommands(self.state),
        ])
        if set(self.handlers) != set(COMMANDS):  # list_commands must offer exactly what is handled
            listed, handled = set(COMMANDS), set(self.handlers)
            raise AssertionError(f"GTP commands without a handler: {sorted(listed - handled)}; "
                                 f"handled but not listed: {sorted(handled - listed)}")

    # -- the state, for callers that inspect a session -------------------------------------------------

    @property
    def quit(self) -> bool:
        return self.state.quit

    @property
    def game(self) -> Game:
        return self.state.game

    @property
    def position(self) -> Position:
        return self.state.position

    @property
    def history(self) -> list[Position]:
        return self.state.history

    @property
    def setup(self) -> list[tuple[int, int]]:
        return self.state.setup

    @property
    def player(self) -> SearchPlayer:
        return self.state.player

    @property
    def clock(self) -> Clock:
        return self.state.clock

    @property
    def options(self) -> LeelaZeroOptions:
        return self.state.options

    @property
    def source(self) -> NetSource:
        return self.state.source

    @property
    def log(self) -> TextIO | None:
        return self.state.log

    # -- commands ------------------------------------------------------------------------------------

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
