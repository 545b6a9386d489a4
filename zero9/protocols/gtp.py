"""``zero9 gtp``: the Go Text Protocol (version 2) on stdin/stdout, as Leela Zero speaks it.

Vocabulary:

- **command line**: one line of input: an optional numeric **id**, a command name and
  its **arguments**. Comments (``#`` to the end of the line), control characters and
  a trailing CR are removed first; an empty line is ignored.
- **reply**: ``=id text`` on success, ``?id message`` on failure, then an empty line.
  A failing command never changes the engine's state: each handler checks all its
  arguments before it touches anything.
- **state**: the game (Go or Gomoku, size, komi), the **setup** stones (handicap or an
  SGF's AB/AW) and the **history**, a list of positions, one per move the client
  played or we generated; ``undo`` pops it.
- **filler pass**: zero9 positions are built only by moves, so a stone for the side
  *not* to move (a handicap stone, ``play w`` when black is to move) is preceded by a
  pass of the side to move. Fillers live inside the position chain; ``undo`` and
  ``move_history`` treat a move and its filler as one step. (Gomoku has no pass, so
  there the colour must be the side to move.)
- **stream command**: ``lz-analyze`` and ``lz-genmove_analyze`` reply ``=id`` at once,
  then ``info move ...`` lines while the search runs (tags, lines and the verbose table:
  :mod:`zero9.protocols.gtp_analysis`). ``lz-analyze`` runs in a thread until the next
  input line arrives or the ``-v`` visit limit is reached (Leela Zero's rules); the
  empty line that ends the reply goes out when it stops, and the line that stopped it
  is then executed as usual.
- **strict values**: every number from the client or the command line passes a check
  of :mod:`zero9.protocols.gtp_options` before anything changes.
- **resumed game**: Go ends after two passes, but GTP play goes on (Leela Zero has no
  game end): ``play`` / ``genmove`` on such a position first replace it in the history
  by :meth:`GoPosition.resume`, the same position with the pass count restarted.
- **training record**: each ``genmove`` keeps (position, root visit shares), which
  ``dump_training`` writes as a Leela Zero chunk; a new game clears it.
- **smarter passing**: without ``-d``, Leela Zero's rule (see :meth:`GTPEngine._smarter_pass`).
- **leelaz version**: ``version`` answers :data:`LEELAZ_VERSION`, the Leela Zero release
  whose command line and GTP zero9 follows, because Lizzie and autogtp compare it; the
  start-up :data:`BANNER` names zero9's own version too.
- **time control** (:class:`Clock`): absolute, Canadian byo-yomi (``time_settings``)
  or Japanese byo-yomi (``kgs-time_settings byoyomi``); ``time_left`` updates it.
  Each ``genmove`` gets a **budget** in seconds; the search also keeps its visit cap.

:class:`GTPEngine` maps one command line to one reply (testable without any
subprocess); :func:`serve` is the thin stdin/stdout loop around it.
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import torch

from zero9 import __version__
from zero9.games import (
    BLACK,
    COLOUR_NAMES,
    WHITE,
    Game,
    IllegalMove,
    Position,
    add_game_arguments,
    game_from_args,
    make_game,
    opponent,
    parse_colour,
)
from zero9.games.display import board_to_text
from zero9.games.sgf import read_sgf, save_sgf, split_collection, write_sgf
from zero9.learn.selfplay import add_selfplay_arguments, play_selfplay, selfplay_config
from zero9.learn.supervised import game_chunk, game_positions
from zero9.nn import features
from zero9.nn.checkpoint import default_net_path
from zero9.nn.chunks import ChunkData, write_lz_chunk
from zero9.protocols.gtp_analysis import (
    AnalyzeTags,
    RestrictedRoot,
    info_line,
    parse_analyze_tags,
    verbose_table,
)
from zero9.protocols.gtp_options import (
    MAX_LAG_CS,
    MAX_SECONDS,
    MAX_STONES,
    MAX_VISITS,
    SETTINGS,
    GTPFailure,
    float_value,
    int_value,
    parse_setoption,
)
from zero9.search.player import MoveStats, NetMismatch, NetSource, SearchPlayer
from zero9.settings import PlayConfig

MIN_SIZE, MAX_SIZE = 5, 19
PROTOCOL_VERSION = "2"
ENGINE_NAME = "zero9"
# The Leela Zero release whose command line and GTP zero9 follows. ``version`` answers it, because
# Lizzie (needs >= 0.15) and autogtp (compares with the server's minimum) read it as leelaz's.
LEELAZ_VERSION = "0.17"
BANNER = f"zero9 {__version__} (Leela Zero {LEELAZ_VERSION} compatible)"

# Leela Zero's command list (what makes sense on small boards) plus GNU Go's regression
# helpers; the order is the order of list_commands.
COMMANDS = [
    "protocol_version", "name", "version", "quit", "known_command", "list_commands",
    "boardsize", "clear_board", "komi", "play", "genmove", "undo", "showboard",
    "final_score", "final_status_list", "time_settings", "time_left", "kgs-time_settings",
    "kgs-genmove_cleanup", "fixed_handicap", "place_free_handicap", "set_free_handicap",
    "loadsgf", "printsgf", "last_move", "move_history", "heatmap", "lz-analyze",
    "lz-genmove_analyze", "lz-setoption", "dump_training", "dump_supervised", "is_legal", "all_legal",
    "list_stones", "captures", "autotrain",
]
GO_ONLY = {"final_status_list", "kgs-genmove_cleanup", "fixed_handicap", "place_free_handicap",
           "set_free_handicap", "captures", "komi", "dump_training", "dump_supervised"}


@dataclass
class Reply:
    """What one command line produced: a finished reply, or a stream to run."""

    text: str = ""
    stream: Callable[[Callable[[str], None], threading.Event], None] | None = None
    interruptible: bool = False  # lz-analyze: stopped by the next input line


# ----------------------------------------------------------------------------- parsing


def clean_line(line: str) -> str:
    """The command text of a raw line: no comment, no control characters, tabs as spaces."""
    line = line.split("#", 1)[0]
    line = "".join(" " if c == "\t" else c for c in line if c == "\t" or ord(c) >= 32 and ord(c) != 127)
    return line.strip()


def parse_command(line: str) -> tuple[str, str, list[str]] | None:
    """(id text, command name, arguments) of a raw line; None for an empty or comment line."""
    words = clean_line(line).split()
    if not words:
        return None
    ident = ""
    if words[0].isdigit():
        ident, words = words[0], words[1:]
    if not words:
        return ident, "", []
    return ident, words[0].lower(), words[1:]


def _colour_arg(text: str) -> int:
    try:
        return parse_colour(text)
    except ValueError as e:
        raise GTPFailure(str(e)) from None


def _nargs(args: list[str], lo: int, hi: int | None = None, usage: str = "") -> None:
    hi = lo if hi is None else hi
    if not lo <= len(args) <= hi:
        raise GTPFailure(f"wrong number of arguments: usage {usage}".strip())


# ----------------------------------------------------------------------------- handicap


def fixed_handicap_points(size: int, stones: int) -> list[int]:
    """The GTP standard handicap points (the same as GNU Go's) for ``stones`` on ``size``."""
    limit = 0 if size < 7 else 4 if size == 7 or size % 2 == 0 else 9
    if not 2 <= stones <= limit:
        raise GTPFailure(f"invalid handicap: {stones} stones on {size}x{size} (2..{limit} allowed)"
                         if limit else f"invalid handicap: no fixed handicap on {size}x{size}")
    d = 2 if size < 13 else 3
    far, mid = size - 1 - d, size // 2

    def pt(x: int, y: int) -> int:
        return y * size + x

    corners = [pt(d, d), pt(far, far), pt(d, far), pt(far, d)]
    sides = [pt(d, mid), pt(far, mid)]
    edges = [pt(mid, d), pt(mid, far)]
    centre = [pt(mid, mid)] if stones % 2 else []
    if stones <= 4:
        return corners[:stones]
    if stones <= 5:
        return corners + centre
    if stones <= 7:
        return corners + sides + centre
    return corners + sides + edges + centre


# ----------------------------------------------------------------------------- time


@dataclass
class Clock:
    """A GTP time control and each colour's remaining time (seconds)."""

    kind: str = "none"  # 'none', 'absolute', 'canadian' or 'byoyomi'
    main: float = 0.0
    byo_time: float = 0.0
    byo_stones: int = 0  # canadian: stones per period; byoyomi: number of periods
    left: dict[int, tuple[float, int]] = field(default_factory=dict)  # colour -> (seconds, stones)
    lag: float = 0.2  # safety margin for the pipes and the GUI

    @classmethod
    def canadian(cls, main: float, byo_time: float, byo_stones: int) -> Clock:
        """GTP ``time_settings``: byo_time > 0 with 0 stones means no time limit."""
        if byo_time > 0 and byo_stones == 0:
            return cls()
        kind = "absolute" if byo_time == 0 else "canadian"
        return cls(kind, main, byo_time, byo_stones)

    def set_left(self, colour: int, seconds: float, stones: int) -> None:
        self.left[colour] = (seconds, stones)

    def budget(self, colour: int, empty_points: int) -> float | None:
        """Seconds to spend on this move, or None for no limit."""
        if self.kind == "none":
            return None
        seconds, stones = self.left.get(colour, (self.main, 0))
        if stones > 0 or seconds <= 0 and self.kind != "absolute":
            # In byo-yomi: Canadian spreads the period over its stones, Japanese uses one period.
            period = seconds if seconds > 0 else self.byo_time
            per_move = period / max(stones, 1) if self.kind == "canadian" else period
            return max(0.05, 0.85 * per_move - self.lag)
        moves_left = max(8, empty_points // 3)  # small boards: most games end well before the board fills
        share = seconds / moves_left
        if self.kind == "canadian":
            share += 0.5 * self.byo_time / max(self.byo_stones, 1)
        elif self.kind == "byoyomi":
            share += 0.5 * self.byo_time
        return max(0.05, share - self.lag)

    def spend(self, colour: int, elapsed: float) -> None:
        """Our own bookkeeping between ``time_left`` updates (clients need not send any)."""
        if self.kind == "none":
            return
        seconds, stones = self.left.get(colour, (self.main, 0))
        seconds -= elapsed
        if stones > 0:
            stones -= 1
            if stones == 0 and self.kind == "canadian":
                seconds, stones = self.byo_time, self.byo_stones
        elif seconds <= 0 and self.kind in ("canadian", "byoyomi"):
            seconds, stones = self.byo_time, self.byo_stones
        self.left[colour] = (seconds, stones)


# ----------------------------------------------------------------------------- engine


@dataclass
class EngineOptions:
    """Leela Zero's command-line knobs, as the engine uses them."""

    visits: int | None = None
    playouts: int | None = None
    resignpct: float = -1.0  # -1: Leela Zero's default (10%); 0: never resign
    randomcnt: int = 0
    randomvisits: int = 0  # random moves only among those with more visits than this
    randomtemp: float = 1.0  # pick ~ visits ** (1 / randomtemp)
    noise: bool = False
    seed: int | None = None
    threads: int = 1
    ponder: bool = False
    quiet: bool = False
    dumbpass: bool = False  # -d: no smarter passing (self-play)
    lagbuffer: int = 20  # centiseconds kept back from each move's time
    device: str = "auto"
    weights: str | None = None

    @property
    def resign_threshold(self) -> float | None:
        return 0.10 if self.resignpct < 0 else None if self.resignpct == 0 else self.resignpct / 100.0


class GTPEngine:
    """The GTP state machine: ``execute(line)`` -> :class:`Reply`."""

    def __init__(self, game: Game, source: NetSource, options: EngineOptions | None = None,
                 log: TextIO | None = None):
        self.options = options or EngineOptions()
        self.source = source
        self.log = log
        self.quit = False
        self.clock = Clock(lag=self.options.lagbuffer / 100.0)
        self.rng = random.Random(self.options.seed)
        self.handlers: dict[str, Callable[[list[str]], str | Reply]] = {
            name: getattr(self, "cmd_" + name.replace("-", "_")) for name in COMMANDS
        }
        if self.options.seed is not None:
            random.seed(self.options.seed)
            np.random.seed(self.options.seed % 2**32)
        self._set_game(game)

    # -- state -------------------------------------------------------------------------------------

    def _set_game(self, game: Game, setup: list[tuple[int, int]] | None = None) -> None:
        """New game (size, komi or rules) and an empty board; builds the search player."""
        # The net's random symmetries come from the seed too, so that -s N repeats genmove.
        evaluator = self.source.evaluator(game, np.random.default_rng(self.options.seed))
        self.game = game
        self.player = self._make_player(game, evaluator)
        self._reset(setup or [])

    def _make_player(self, game: Game, evaluator):
        o = self.options
        # Leela Zero: -v and -p both off means its default; ours is PlayConfig's visits.
        visits = o.visits if o.visits or o.playouts else PlayConfig.visits
        # randomcnt is the engine's (see _random_move): Leela Zero's temperature and minimum visits.
        return SearchPlayer(game, evaluator, visits=visits or None, playouts=o.playouts or None,
                            noise=o.noise, randomcnt=0, resign_threshold=o.resign_threshold, seed=o.seed)

    def _reset(self, setup: list[tuple[int, int]]) -> None:
        position = self.game.new_position()
        for colour, point in setup:
            position = _play_as(position, colour, point)
        self.setup = list(setup)
        self.history: list[Position] = [position]
        self.training: list[tuple[Position, np.ndarray]] = []  # (position, visit shares) per genmove

    @property
    def position(self) -> Position:
        return self.history[-1]

    def _steps(self) -> list[list[tuple[int, int]]]:
        """Each history step as the (colour, action) moves it took, fillers included."""
        steps = []
        for before, after in zip(self.history, self.history[1:], strict=False):
            moves = []
            p = after
            while p is not before:
                moves.append((opponent(p.to_play), p.last_move))
                p = p.parent
            steps.append(list(reversed(moves)))
        return steps

    def _rebuild(self, game: Game) -> None:
        """Replay setup and history under a new game object (komi changed)."""
        steps = self._steps()
        self._set_game(game, self.setup)
        for moves in steps:
            position = self._resumed()
            for colour, action in moves:
                position = _play_as(position, colour, action)
            self.history.append(position)

    def _vertex(self, text: str) -> int:
        try:
            return self.game.vertex_to_action(text)
        except ValueError as e:
            raise GTPFailure(str(e)) from None

    def _push(self, colour: int, action: int) -> None:
        try:
            self.history.append(_play_as(self.position, colour, action))
        except IllegalMove as e:
            raise GTPFailure(str(e)) from None

    def _go_only(self, name: str) -> None:
        if self.game.name != "go":
            raise GTPFailure(f"{name} is for Go only")

    # -- the protocol ------------------------------------------------------------------------------

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
        _nargs(args, 0, usage="protocol_version")
        return PROTOCOL_VERSION

    def cmd_name(self, args: list[str]) -> str:
        _nargs(args, 0, usage="name")
        return ENGINE_NAME

    def cmd_version(self, args: list[str]) -> str:
        _nargs(args, 0, usage="version")
        return LEELAZ_VERSION  # what Lizzie and autogtp compare; the banner names zero9's own version

    def cmd_quit(self, args: list[str]) -> str:
        self.quit = True
        return ""

    def _commands(self) -> list[str]:
        return [c for c in COMMANDS if self.game.name == "go" or c not in GO_ONLY]

    def cmd_known_command(self, args: list[str]) -> str:
        _nargs(args, 1, usage="known_command NAME")
        return "true" if args[0].lower() in self._commands() else "false"

    def cmd_list_commands(self, args: list[str]) -> str:
        _nargs(args, 0, usage="list_commands")
        return "\n".join(self._commands())

    # -- setting up --------------------------------------------------------------------------------

    def cmd_boardsize(self, args: list[str]) -> str:
        _nargs(args, 1, usage="boardsize N")
        size = int_value(args[0], "board size")
        if not MIN_SIZE <= size <= MAX_SIZE:
            raise GTPFailure(f"unacceptable size: {size} (zero9 plays {MIN_SIZE}..{MAX_SIZE})")
        params = {**self.game.to_dict(), "size": size}
        params.pop("move_cap", None)  # the cap scales with the board
        try:
            game = make_game(**params)
        except ValueError as e:
            raise GTPFailure(f"unacceptable size: {e}") from None
        try:
            self.source.check(game)
        except NetMismatch as e:
            # GUIs that ignore the '?' (Lizzie) still show the engine's stderr: say it there too.
            self._say(f"zero9: {e}; set the GUI's board size to {self.game.size}")
            raise
        self._set_game(game)
        return ""

    def cmd_clear_board(self, args: list[str]) -> str:
        _nargs(args, 0, usage="clear_board")
        self._reset([])
        return ""

    def cmd_komi(self, args: list[str]) -> str:
        _nargs(args, 1, usage="komi K")
        limit = self.game.size * self.game.size
        komi = float_value(args[0], "komi", -limit, limit)
        if self.game.name != "go":
            return ""  # harmless for Gomoku: GUIs send it anyway
        if komi != self.game.komi:
            self._rebuild(make_game(**{**self.game.to_dict(), "komi": komi}))
        return ""

    def cmd_fixed_handicap(self, args: list[str]) -> str:
        self._go_only("fixed_handicap")
        _nargs(args, 1, usage="fixed_handicap N")
        points = fixed_handicap_points(self.game.size, int_value(args[0], "handicap"))
        return self._place_handicap(points)

    def cmd_place_free_handicap(self, args: list[str]) -> str:
        self._go_only("place_free_handicap")
        _nargs(args, 1, usage="place_free_handicap N")
        stones = int_value(args[0], "handicap")
        n = self.game.size
        if not 2 <= stones <= n * n - 1:
            raise GTPFailure(f"invalid handicap: {stones}")
        try:
            points = fixed_handicap_points(n, stones)
        except GTPFailure:
            # Beyond the standard layouts: the net's favourite points for black on an empty board.
            policy, _ = self.source.raw_policy(self.game.new_position(), 0)
            points = [int(p) for p in np.argsort(-policy[: n * n], kind="stable")[:stones]]
        return self._place_handicap(points)

    def cmd_set_free_handicap(self, args: list[str]) -> str:
        self._go_only("set_free_handicap")
        if len(args) < 2:
            raise GTPFailure("wrong number of arguments: usage set_free_handicap V1 V2 ...")
        points = [self._vertex(a) for a in args]
        if self.game.pass_action in points or len(set(points)) != len(points):
            raise GTPFailure("bad handicap: pass or a repeated vertex")
        return self._place_handicap(points)

    def _place_handicap(self, points: list[int]) -> str:
        if len(self.history) > 1 or self.setup or self.position.board_array().any():
            raise GTPFailure("board not empty")
        self._reset([(BLACK, p) for p in points])
        return " ".join(self.game.action_to_vertex(p) for p in points)

    # -- moves -------------------------------------------------------------------------------------

    def _resumed(self) -> Position:
        """The current position, play going on after two passes (Leela Zero keeps playing)."""
        position = self.position
        if _resumable(position):
            position = position.resume()
            self.history[-1] = position  # same content; the next move's parent is this object
        return position

    def cmd_play(self, args: list[str]) -> str:
        _nargs(args, 2, usage="play COLOUR VERTEX")
        colour, action = _colour_arg(args[0]), self._vertex(args[1])
        if action == self.game.pass_action and _at_move_cap(self.position):
            return ""  # the game is over at the cap: a controller's pass changes nothing (_at_move_cap)
        terminal = self.position
        self._resumed()
        try:
            self._push(colour, action)
        except GTPFailure:
            self.history[-1] = terminal  # a refused move changes nothing
            raise
        return ""

    def cmd_undo(self, args: list[str]) -> str:
        _nargs(args, 0, usage="undo")
        if len(self.history) < 2:
            raise GTPFailure("cannot undo")
        self.history.pop()
        return ""

    def _prepare_genmove(self, colour: int) -> Position:
        """The position to search from, with a filler pass if ``colour`` is not to move."""
        position = self.position
        if _resumable(position):
            position = position.resume()
        if position.is_terminal():
            raise GTPFailure("game over")
        if colour != position.to_play:
            try:
                position = _filler(position)
            except IllegalMove as e:
                raise GTPFailure(str(e)) from None
        return position

    def _genmove(self, colour: int, cleanup: bool = False, tags: AnalyzeTags | None = None,
                 on_stats: Callable | None = None, on_searched: Callable | None = None) -> str:
        if _at_move_cap(self.position):
            self._say(f"zero9: move cap {self.game.move_cap} reached: the game is scored as it stands; pass")
            return "pass"
        self._prepare_genmove(colour)  # fail before resuming a finished game
        self._resumed()
        position = self._prepare_genmove(colour)
        root = RestrictedRoot(position, tags) if tags is not None and tags.restricted else position
        if root is not position:
            self.player.reset()  # restrictions change the root's moves: no tree reuse (as Leela Zero)
        empty = int((position.board_array() == 0).sum())
        budget = self.clock.budget(colour, empty)
        start = time.monotonic()
        decision = self.player.choose(root, time_s=budget, on_stats=on_stats,
                                      stats_interval_s=tags.interval_s if tags else 0.1)
        self.clock.spend(colour, time.monotonic() - start)
        stats = self.player.root_stats()
        if root is not position:
            self.player.reset()
        if on_searched is not None:
            on_searched(stats)
        self._say_stats(stats)
        action = self._random_move(position, stats, decision.action)
        if cleanup and action == self.game.pass_action:
            action = self._cleanup_move(position, stats)
        elif decision.resign:
            self._record(position)
            return "resign"
        elif self.game.name == "go" and not self.options.dumbpass:
            action = self._smarter_pass(position, action, stats)
        self._record(position)
        self.history.append(position.play(action))
        return self.game.action_to_vertex(action)

    def _random_move(self, position: Position, stats, best: int) -> int:
        """Leela Zero's ``randomcnt``: early moves drawn ~ visits^(1/randomtemp), above ``randomvisits``."""
        o = self.options
        if position.move_number >= o.randomcnt or not stats:
            return best
        pool = [s for s in stats if s.visits > o.randomvisits]
        if not pool:
            return best
        top = max(s.visits for s in pool)
        weights = [(s.visits / top) ** (1.0 / o.randomtemp) for s in pool]
        return self.rng.choices(pool, weights)[0].action

    def _smarter_pass(self, position: Position, action: int, stats) -> int:
        """Leela Zero without ``-d`` (UCTSearch::get_best_move): never pass into a loss, pass out a win.

        The score is what passing now would leave (Tromp-Taylor, our view); the lines on stderr
        are Leela Zero's.
        """
        pass_action = self.game.pass_action
        score = (1 if position.to_play == BLACK else -1) * position.score()
        by_action = {s.action: s for s in stats}
        if action == pass_action:
            alternative = self._non_pass_move(position, stats)
            if score < 0:
                self._say("Passing loses :-(")
                if alternative is not None:
                    self._say("Avoiding pass because it loses.")
                    return alternative
                self._say("No alternative to passing.")
            elif score > 0:
                self._say("Passing wins :-)")
            else:
                self._say("Passing draws :-|")
                if alternative is not None and by_action[alternative].winrate > 0.5:
                    self._say("Avoiding pass because there could be a winning alternative.")
                    return alternative
            return action
        if position.last_move == pass_action:  # the opponent passed: should we end the game?
            if score < 0:
                self._say("Passing loses, I'll play on.")
            elif score > 0:
                self._say("Passing wins, I'll pass out.")
                return pass_action
            else:
                self._say("Passing draws, make it depend on evaluation.")
                chosen = by_action.get(action)
                if chosen is not None and chosen.winrate < 0.5:
                    return pass_action
        return action

    def _non_pass_move(self, position: Position, stats) -> int | None:
        """The most visited move that is not a pass and does not fill an own eye, if any."""
        for s in sorted(stats, key=lambda s: -s.visits):
            if s.action != self.game.pass_action and not position.is_eye(s.action, position.to_play):
                return s.action
        return None

    def _cleanup_move(self, position: Position, stats) -> int:
        """kgs-genmove_cleanup: the most visited move that is not a pass and does not fill an own eye."""
        choice = self._non_pass_move(position, stats)
        if choice is not None:
            return choice
        candidates = [a for a in position.legal_moves()
                      if a != self.game.pass_action and not position.is_eye(a, position.to_play)]
        return random.choice(candidates) if candidates else self.game.pass_action

    def _record(self, position: Position) -> None:
        """Keep the searched position and its visit shares for ``dump_training``."""
        shares = np.zeros(self.game.num_actions, np.float32)
        for s in self.player.root_stats():
            shares[s.action] = s.visits
        if shares.sum() > 0:
            self.training.append((position, shares / shares.sum()))

    def cmd_genmove(self, args: list[str]) -> str:
        _nargs(args, 1, usage="genmove COLOUR")
        return self._genmove(_colour_arg(args[0]))

    def cmd_kgs_genmove_cleanup(self, args: list[str]) -> str:
        self._go_only("kgs-genmove_cleanup")
        _nargs(args, 1, usage="kgs-genmove_cleanup COLOUR")
        return self._genmove(_colour_arg(args[0]), cleanup=True)

    # -- analysis ----------------------------------------------------------------------------------

    def _say(self, text: str) -> None:
        """A diagnostic line on stderr (nothing with -q)."""
        if self.log is not None:
            print(text, file=self.log, flush=True)

    def _say_stats(self, stats) -> None:
        if self.log is not None and stats:
            visits = sum(s.visits for s in stats)
            self._say(verbose_table(stats, self.game) + f"\n\n{visits} visits\n")

    def _tags(self, args: list[str]) -> AnalyzeTags:
        return parse_analyze_tags(args, self.position)

    def _info(self, stats: list[MoveStats], root: Position, tags: AnalyzeTags) -> str:
        """The info line; ``minmoves`` pads it with unvisited moves in the net's prior order."""
        stats = list(stats)
        if len(stats) < tags.min_moves:
            plain = getattr(root, "unwrapped", root)
            policy, _ = self.source.raw_policy(plain, 0)
            seen = {s.action for s in stats}
            for a in sorted((a for a in root.legal_moves() if a not in seen), key=lambda a: -policy[a]):
                if len(stats) >= tags.min_moves:
                    break
                stats.append(MoveStats(a, self.game.action_to_vertex(a), 0, 0.0, float(policy[a]), 0.0,
                                       float("nan"), 0.0, float("nan"), [a]))
        return info_line(stats, self.game, tags.min_moves)

    def cmd_lz_analyze(self, args: list[str]) -> Reply:
        tags = self._tags(args)
        finished = self.position.is_terminal() and not _resumable(self.position)
        position = self.position if finished else self._prepare_genmove(tags.colour)
        root = RestrictedRoot(position, tags) if tags.restricted else position
        limit = self.options.visits or None  # -v bounds lz-analyze, as in Leela Zero

        def run(write: Callable[[str], None], stop: threading.Event) -> None:
            if position.is_terminal():
                stop.wait()
                return
            if root is not position:
                self.player.reset()
            printed = False

            def on_stats(stats) -> None:
                nonlocal printed
                line = self._info(stats, root, tags)
                if tags.interval_cs and line:
                    printed = True
                    write(line + "\n")

            # interval 0: nothing while searching (Leela Zero); otherwise at least one line at the end
            self.player.analyze(root, on_stats, tags.interval_s or 3600.0, stop, max_visits=limit)
            if tags.interval_cs and not printed:
                on_stats(self.player.root_stats())
            self._say_stats(self.player.root_stats())
            if root is not position:
                self.player.reset()

        # With a visit limit the reply ends by itself when the limit is reached.
        return Reply(stream=run, interruptible=True)

    def cmd_lz_genmove_analyze(self, args: list[str]) -> Reply:
        tags = self._tags(args)
        position = self._prepare_genmove(tags.colour)  # fail now, before the '=' goes out
        root = RestrictedRoot(position, tags) if tags.restricted else position

        def run(write: Callable[[str], None], stop: threading.Event) -> None:
            printed = False

            def on_stats(stats) -> None:
                nonlocal printed
                line = self._info(stats, root, tags)
                if line:
                    printed = True
                    write(line + "\n")

            if not tags.interval_cs:
                write(f"play {self._genmove(tags.colour, tags=tags)}\n")
                return
            def at_least_once(stats) -> None:  # Leela Zero posts one line even after a short search
                if not printed:
                    on_stats(stats)

            move = self._genmove(tags.colour, tags=tags, on_stats=on_stats, on_searched=at_least_once)
            write(f"play {move}\n")

        return Reply(stream=run)

    def cmd_heatmap(self, args: list[str]) -> str:
        _nargs(args, 0, 1, usage="heatmap [SYMMETRY]")
        sym = int_value(args[0], "symmetry", 0, 7) if args else 0
        position = self.position
        policy, winrate = self.source.raw_policy(position, sym)
        n = self.game.size
        board = position.board_array()
        rows = []
        for y in range(n - 1, -1, -1):
            cells = [int(policy[y * n + x] * 1000) if board[y * n + x] == 0 else 0 for x in range(n)]
            rows.append(" ".join(f"{c:3d}" for c in cells))
        if self.game.pass_action is not None:
            rows.append(f"pass: {int(policy[self.game.pass_action] * 1000)}")
        rows.append(f"winrate: {winrate:f}")
        return "\n" + "\n".join(rows)

    def cmd_lz_setoption(self, args: list[str]) -> str:
        """``lz-setoption name NAME value VALUE``: checked in full (gtp_options), then applied."""
        name, text = parse_setoption(args)
        setting = SETTINGS[name]
        value = setting.parse(text)
        where, _, key = setting.target.partition(":")
        if where == "player":
            if key in ("visits", "playouts"):
                setattr(self.options, key, value or None)
            self.player.set_option(key, value if value != 0 or key not in ("visits", "playouts", "time")
                                   else None)
        elif where == "options":
            setattr(self.options, key, value)
            if key == "resignpct":
                self.player.set_option("resign", self.options.resign_threshold)
            elif key == "lagbuffer":
                self.clock.lag = value / 100.0
        return ""

    # -- scoring and inspection --------------------------------------------------------------------

    def cmd_showboard(self, args: list[str]) -> str:
        _nargs(args, 0, usage="showboard")

        return "\n" + board_to_text(self.position).rstrip("\n")

    def cmd_final_score(self, args: list[str]) -> str:
        _nargs(args, 0, usage="final_score")
        position = self.position
        if self.game.name != "go":
            return position.result_string() if position.is_terminal() else "0"
        score = position.score()
        return "0" if score == 0 else f"{'B' if score > 0 else 'W'}+{abs(score):g}"

    def cmd_final_status_list(self, args: list[str]) -> str:
        self._go_only("final_status_list")
        _nargs(args, 1, usage="final_status_list alive|dead|seki")
        status = args[0].lower()
        if status not in ("alive", "dead", "seki"):
            raise GTPFailure(f"bad status {args[0]!r}: expected alive, dead or seki")
        if status != "alive":
            return ""  # Tromp-Taylor: every stone on the board is alive
        board = self.position.board_array()
        return " ".join(self.game.action_to_vertex(int(p)) for p in np.nonzero(board)[0])

    def cmd_is_legal(self, args: list[str]) -> str:
        _nargs(args, 2, usage="is_legal COLOUR VERTEX")
        colour, action = _colour_arg(args[0]), self._vertex(args[1])
        try:
            _play_as(self.position, colour, action)
        except IllegalMove:
            return "0"
        return "1"

    def cmd_all_legal(self, args: list[str]) -> str:
        _nargs(args, 1, usage="all_legal COLOUR")
        colour = _colour_arg(args[0])
        position = self.position
        if colour != position.to_play:
            try:
                position = _filler(position)
            except IllegalMove:
                return ""
        pass_action = self.game.pass_action
        return " ".join(self.game.action_to_vertex(a) for a in position.legal_moves() if a != pass_action)

    def cmd_list_stones(self, args: list[str]) -> str:
        _nargs(args, 1, usage="list_stones COLOUR")
        colour = _colour_arg(args[0])
        board = self.position.board_array()
        return " ".join(self.game.action_to_vertex(int(p)) for p in np.nonzero(board == colour)[0])

    def cmd_captures(self, args: list[str]) -> str:
        self._go_only("captures")
        _nargs(args, 1, usage="captures COLOUR")
        return str(self.position.captures[_colour_arg(args[0])])

    def cmd_last_move(self, args: list[str]) -> str:
        _nargs(args, 0, usage="last_move")
        if len(self.history) < 2:
            raise GTPFailure("no previous move known")
        p = self.position
        return f"{COLOUR_NAMES[opponent(p.to_play)]} {self.game.action_to_vertex(p.last_move)}"

    def cmd_move_history(self, args: list[str]) -> str:
        """Leela Zero's form: the most recent move first, ``colour vertex`` per line."""
        _nargs(args, 0, usage="move_history")
        lines = []
        for step in reversed(self._steps()):
            colour, action = step[-1]
            lines.append(f"{COLOUR_NAMES[colour]} {self.game.action_to_vertex(action)}")
        return "\n".join(lines)

    # -- time --------------------------------------------------------------------------------------

    def cmd_time_settings(self, args: list[str]) -> str:
        _nargs(args, 3, usage="time_settings MAIN BYO_TIME BYO_STONES")
        main = int_value(args[0], "main time", 0, MAX_SECONDS)
        byo = int_value(args[1], "byo-yomi time", 0, MAX_SECONDS)
        stones = int_value(args[2], "byo-yomi stones", 0, MAX_STONES)
        self._set_clock(Clock.canadian(main, byo, stones))
        return ""

    def _set_clock(self, clock: Clock) -> None:
        clock.lag = self.options.lagbuffer / 100.0
        self.clock = clock

    def cmd_kgs_time_settings(self, args: list[str]) -> str:
        if not args:
            raise GTPFailure("usage: kgs-time_settings none|absolute|byoyomi|canadian ...")
        kind, rest = args[0].lower(), args[1:]
        shapes = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}
        if kind not in shapes:
            raise GTPFailure(f"unknown time system {args[0]!r}")
        _nargs(rest, shapes[kind], usage=f"kgs-time_settings {kind}" + " N" * shapes[kind])
        what = ["main time", "byo-yomi time", "periods" if kind == "byoyomi" else "byo-yomi stones"]
        nums = [int_value(a, w, 0, MAX_STONES if w in ("periods", "byo-yomi stones") else MAX_SECONDS)
                for a, w in zip(rest, what, strict=False)]
        if kind == "none":
            self._set_clock(Clock())
        elif kind == "absolute":
            self._set_clock(Clock("absolute", nums[0]))
        elif kind == "byoyomi":
            self._set_clock(Clock("byoyomi", nums[0], nums[1], nums[2]))
        else:
            self._set_clock(Clock.canadian(nums[0], nums[1], nums[2]))
        return ""

    def cmd_time_left(self, args: list[str]) -> str:
        _nargs(args, 3, usage="time_left COLOUR SECONDS STONES")
        colour = _colour_arg(args[0])
        seconds = int_value(args[1], "time left", -MAX_SECONDS, MAX_SECONDS)
        stones = int_value(args[2], "stones", 0, MAX_STONES)
        self.clock.set_left(colour, seconds, stones)
        return ""

    # -- files -------------------------------------------------------------------------------------

    def cmd_loadsgf(self, args: list[str]) -> str:
        _nargs(args, 1, 2, usage="loadsgf FILE [MOVE_NUMBER]")
        upto = int_value(args[1], "move number", 1) if len(args) == 2 else None
        try:
            record = read_sgf(args[0])
        except ValueError as e:
            raise GTPFailure(str(e)) from None
        if record.game.name != self.game.name:
            raise GTPFailure(f"{args[0]} is a {record.game.name} game; this engine plays {self.game.name}")
        if record.game.size != self.game.size or getattr(record.game, "komi", None) != getattr(
                self.game, "komi", None):
            game = record.game
            if game.name == "go":
                game = make_game("go", game.size, komi=game.komi)
            self.source.check(game)
        else:
            game = self.game
        # Build it all aside first: a bad file must leave the current game untouched.
        actions = record.moves if upto is None else record.moves[: upto - 1]
        try:
            position = game.new_position()
            for colour, point in record.setup:
                position = _play_as(position, colour, point)
            history = [position]
            for colour, action in actions:
                history.append(_play_as(history[-1], colour, action))
        except IllegalMove as e:
            raise GTPFailure(f"bad SGF file {args[0]}: {e}") from None
        if game is not self.game:
            self._set_game(game)
        self.setup, self.history = list(record.setup), history
        self.training = []
        return ""

    def cmd_printsgf(self, args: list[str]) -> str:
        _nargs(args, 0, 1, usage="printsgf [FILE]")
        moves = [m for step in self._steps() for m in step]
        result = self.position.result_string() if self.position.is_terminal() else ""
        text = write_sgf(self.game, moves, result, setup=self.setup,
                         properties={"PB": ENGINE_NAME, "PW": ENGINE_NAME})
        if args:
            try:
                save_sgf(args[0], text)
            except OSError as e:
                raise GTPFailure(f"cannot write {args[0]}: {e.strerror}") from None
            return ""
        return text.rstrip("\n")

    # -- training ----------------------------------------------------------------------------------

    def cmd_dump_training(self, args: list[str]) -> str:
        """Leela Zero's ``dump_training WINNER FILE``: this game's searched positions as ``FILE.0.gz``."""
        self._go_only("dump_training")
        _nargs(args, 2, usage="dump_training b|w FILE")
        winner = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}.get(args[0].lower())
        if winner is None:
            raise GTPFailure(f"bad winner {args[0]!r}: expected b or w")
        if not self.training:
            raise GTPFailure("no training data: no genmove since the game started")
        positions = [p for p, _ in self.training]
        to_play = np.array([p.to_play for p in positions], dtype=np.int8)
        data = ChunkData(features.encode_batch(positions).astype(np.uint8), to_play,
                         np.stack([shares for _, shares in self.training]),
                         np.where(to_play == winner, 1.0, -1.0).astype(np.float32), None, self.game.to_dict())
        return self._write_chunk(args[1], data)

    def cmd_dump_supervised(self, args: list[str]) -> str:
        """Leela Zero's ``dump_supervised SGF FILE``: the SGF's games as ``FILE.0.gz`` (one-hot policies)."""
        self._go_only("dump_supervised")
        _nargs(args, 2, usage="dump_supervised SGF FILE")
        try:
            trees = split_collection(Path(args[0]).read_bytes())
        except OSError as e:
            raise GTPFailure(f"cannot read {args[0]}: {e.strerror}") from None
        parts = []
        for tree in trees:
            parsed = game_positions(tree, self.game)
            if isinstance(parsed, str) or parsed[2] not in (BLACK, WHITE):
                continue  # Leela Zero also skips games it cannot use (wrong size, no winner)
            parts.append(game_chunk(*parsed, self.game))
        if not parts:
            raise GTPFailure(f"no usable {self.game.size}x{self.game.size} game with a winner in {args[0]}")
        reply = self._write_chunk(args[1], ChunkData.concatenate(parts))
        self._say(f"Dumped {sum(len(p) for p in parts)} training positions.")
        return reply

    def _write_chunk(self, name: str, data: ChunkData) -> str:
        path = f"{name}.0.gz"  # Leela Zero's OutputChunker: BASENAME.<chunk number>.gz
        try:
            write_lz_chunk(path, data)
        except OSError as e:
            raise GTPFailure(f"cannot write {path}: {e.strerror}") from None
        return ""

    def cmd_autotrain(self, args: list[str]) -> str:
        """leelaz-ninenine's ``autotrain BASENAME N``: N self-play games, training data under BASENAME/."""
        _nargs(args, 2, usage="autotrain BASENAME GAMES")
        games = int_value(args[1], "games", 1)
        if self.source.path is None:
            raise GTPFailure("autotrain needs a net file (-w FILE): self-play workers load the net from it")

        parser = argparse.ArgumentParser()
        add_selfplay_arguments(parser)
        argv = ["--visits", str(self.options.visits)] if self.options.visits else []
        config = selfplay_config(parser.parse_args(argv), seed=self.options.seed)
        out = Path(args[0])
        try:
            stats = play_selfplay(self.source.path, games, config, out, out / "sgf", workers=1,
                                  device=self.options.device if self.options.device != "auto" else "cpu",
                                  progress=False)
        except (OSError, ValueError) as e:
            raise GTPFailure(f"autotrain failed: {e}") from None
        return f"{stats.games} games, {stats.positions} positions written to {out}"


def _resumable(position: Position) -> bool:
    """A Go game ended by two passes: GTP play goes on from it (Leela Zero has no game end)."""
    return position.is_terminal() and getattr(position, "passes", 0) >= 2


def _at_move_cap(position: Position) -> bool:
    """A Go game that reached its move cap (``Go.move_cap``), neither passed out nor resigned.

    Leela Zero has no cap; a controller that does not know ours (autogtp) asks for more moves.
    The engine then passes without playing on: the game stays scored as it stands, and two
    such passes end the controller's game (``zero9 server`` accepts the two trailing passes).
    """
    cap = getattr(position.game, "move_cap", 0)
    # (a resignation cannot come after the cap: a finished game cannot be resigned)
    return (bool(cap) and position.is_terminal() and position.move_number >= cap
            and getattr(position, "passes", 0) < 2)


def _filler(position: Position) -> Position:
    """A pass for the side to move, so that the other colour moves next."""
    game = position.game
    if game.pass_action is None:
        raise IllegalMove("pass", f"it is {COLOUR_NAMES[position.to_play]}'s turn ({game.name} has no pass)")
    if getattr(position, "passes", 0) >= 1:
        raise IllegalMove("pass", "a second filler pass would end the game")
    return position.play(game.pass_action)


def _play_as(position: Position, colour: int, action: int) -> Position:
    """``position`` after ``colour`` plays ``action``, with a filler pass if ``colour`` is not to move."""
    if colour != position.to_play:
        position = _filler(position)
    return position.play(action)


# ----------------------------------------------------------------------------- the loop


class _Writer:
    """Whole replies to the output, one at a time (the analysis thread writes too)."""

    def __init__(self, out: TextIO, transcript: TextIO | None = None):
        self.out = out
        self.transcript = transcript
        self.lock = threading.Lock()

    def __call__(self, text: str) -> None:
        with self.lock:
            try:
                self.out.write(text)
                self.out.flush()
            except (BrokenPipeError, ValueError):
                pass  # the client went away; the loop ends at EOF
            self.log(text)

    def log(self, text: str) -> None:
        """-l FILE: everything in and out, flushed at once (Leela Zero reopens its log per command)."""
        if self.transcript is not None:
            self.transcript.write(text)
            self.transcript.flush()


def serve(engine: GTPEngine, inp: TextIO, out: TextIO, transcript: TextIO | None = None) -> int:
    """Read commands until ``quit`` or EOF; returns the exit status. ``transcript`` logs both ways."""
    write = _Writer(out, transcript)
    pending: str | None = None
    while not engine.quit:
        line = pending if pending is not None else inp.readline()
        pending = None
        if line == "":
            break
        write.log(line if line.endswith("\n") else line + "\n")
        try:
            reply = engine.execute(line)
        except Exception as e:  # a bug must not kill a GUI's engine: report it and go on
            ident = (parse_command(line) or ("", "", []))[0]
            reply = Reply(f"?{ident} internal error: {type(e).__name__}: {e}\n\n")
        if reply is None:
            continue
        write(reply.text)
        if reply.stream is None:
            continue
        stop = threading.Event()
        worker = threading.Thread(target=_run_stream, args=(reply, write, stop), daemon=True)
        worker.start()
        if reply.interruptible:
            pending = inp.readline()  # any input stops the analysis
            stop.set()
        worker.join()
        if pending == "":
            break
    return 0


def _run_stream(reply: Reply, write: Callable[[str], None], stop: threading.Event) -> None:
    """Run a stream command; the empty line that ends its reply goes out as soon as it is done."""
    try:
        reply.stream(write, stop)
    except Exception as e:
        print(f"zero9: analysis failed: {type(e).__name__}: {e}", file=sys.stderr)
    write("\n")


# ----------------------------------------------------------------------------- command line


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
    parser.add_argument("-t", "--threads", type=_checked(int_value, 0, 256), default=1,
                        help="torch threads (0: torch's default)")
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
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = "cpu" if args.cpu_only else args.device
    source = NetSource(path, device=device, warn=None if args.quiet or uniform else log)
    if source.net is not None and source.net.size != game.size and args.size is None:
        # A net file decides the size when none was asked for.
        game = game_from_args(args, size=source.net.size)
    options = EngineOptions(visits=args.visits, playouts=args.playouts, resignpct=args.resignpct,
                            randomcnt=args.randomcnt, randomvisits=args.randomvisits,
                            randomtemp=args.randomtemp,
                            noise=args.noise, seed=args.seed, threads=args.threads, ponder=not args.noponder,
                            quiet=args.quiet, dumbpass=args.dumbpass, lagbuffer=args.lagbuffer, device=device,
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
