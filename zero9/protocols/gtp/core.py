"""The core GTP commands of ``zero9 gtp``: setting up a game, the clock, inspecting the board, SGF files.

Vocabulary:

- **setup**: ``boardsize``, ``clear_board``, ``komi`` and the handicap commands. A new
  size checks first that the net serves it; a new komi replays the history under the
  new game. **Fixed handicap** points are GTP's standard ones (the same as GNU Go's);
  ``place_free_handicap`` beyond them takes the net's favourite points.
- **inspection**: ``showboard``, ``list_stones``, ``captures``, ``is_legal``,
  ``all_legal``, ``last_move``, ``move_history`` (Leela Zero's form: newest first).
- **time**: ``time_settings``, ``kgs-time_settings``, ``time_left`` set the
  :class:`~zero9.protocols.gtp.clock.Clock`.
- **SGF files**: ``loadsgf FILE [MOVE_NUMBER]`` reads a regular file of at most
  :data:`zero9.games.sgf.MAX_SGF_BYTES` (no FIFO, no device: ``zero9.games.sgf.read_sgf``),
  its setup stones (``AB``/``AW``, handicap) and main line up to that move, all aside
  first so a bad file leaves the game untouched; ``printsgf [FILE]`` writes the game.
"""

from __future__ import annotations

import numpy as np

from zero9.games import BLACK, COLOUR_NAMES, Game, IllegalMove, make_game, opponent
from zero9.games.display import board_to_text
from zero9.games.sgf import read_sgf, save_sgf, write_sgf
from zero9.protocols.gtp.clock import Clock
from zero9.protocols.gtp.commands import CommandTable
from zero9.protocols.gtp.options import (
    MAX_SECONDS,
    MAX_STONES,
    GTPFailure,
    colour_arg,
    float_value,
    int_value,
    nargs,
)
from zero9.protocols.gtp.state import EngineState, filler, go_game, go_rules, play_as
from zero9.search.player import NetMismatch

MIN_SIZE, MAX_SIZE = 5, 19
ENGINE_NAME = "zero9"


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


class CoreCommands:
    """Setup, time, inspection and SGF commands."""

    def __init__(self, state: EngineState):
        self.state = state

    def commands(self) -> CommandTable:
        return {
            "boardsize": self.cmd_boardsize,
            "clear_board": self.cmd_clear_board,
            "komi": self.cmd_komi,
            "fixed_handicap": self.cmd_fixed_handicap,
            "place_free_handicap": self.cmd_place_free_handicap,
            "set_free_handicap": self.cmd_set_free_handicap,
            "showboard": self.cmd_showboard,
            "is_legal": self.cmd_is_legal,
            "all_legal": self.cmd_all_legal,
            "list_stones": self.cmd_list_stones,
            "captures": self.cmd_captures,
            "last_move": self.cmd_last_move,
            "move_history": self.cmd_move_history,
            "time_settings": self.cmd_time_settings,
            "kgs-time_settings": self.cmd_kgs_time_settings,
            "time_left": self.cmd_time_left,
            "loadsgf": self.cmd_loadsgf,
            "printsgf": self.cmd_printsgf,
        }

    def cmd_boardsize(self, args: list[str]) -> str:
        nargs(args, 1, usage="boardsize N")
        size = int_value(args[0], "board size")
        if not MIN_SIZE <= size <= MAX_SIZE:
            raise GTPFailure(f"unacceptable size: {size} (zero9 plays {MIN_SIZE}..{MAX_SIZE})")
        params = {**self.state.game.to_dict(), "size": size}
        params.pop("move_cap", None)  # the cap scales with the board
        try:
            game = make_game(**params)
        except ValueError as e:
            raise GTPFailure(f"unacceptable size: {e}") from None
        try:
            self.state.source.check(game)
        except NetMismatch as e:
            # GUIs that ignore the '?' (Lizzie) still show the engine's stderr: say it there too.
            self.state.say(f"zero9: {e}; set the GUI's board size to {self.state.game.size}")
            raise
        self.state.set_game(game)
        return ""

    def cmd_clear_board(self, args: list[str]) -> str:
        nargs(args, 0, usage="clear_board")
        self.state.reset([])
        return ""

    def cmd_komi(self, args: list[str]) -> str:
        nargs(args, 1, usage="komi K")
        limit = self.state.game.size * self.state.game.size
        komi = float_value(args[0], "komi", -limit, limit)
        if self.state.game.name != "go":
            return ""  # harmless for Gomoku: GUIs send it anyway
        if komi != go_game(self.state.game).komi:
            self.state.rebuild(make_game(**{**self.state.game.to_dict(), "komi": komi}))
        return ""

    def cmd_fixed_handicap(self, args: list[str]) -> str:
        self.state.require_go("fixed_handicap")
        nargs(args, 1, usage="fixed_handicap N")
        points = fixed_handicap_points(self.state.game.size, int_value(args[0], "handicap"))
        return self._place_handicap(points)

    def cmd_place_free_handicap(self, args: list[str]) -> str:
        self.state.require_go("place_free_handicap")
        nargs(args, 1, usage="place_free_handicap N")
        stones = int_value(args[0], "handicap")
        n = self.state.game.size
        if not 2 <= stones <= n * n - 1:
            raise GTPFailure(f"invalid handicap: {stones}")
        try:
            points = fixed_handicap_points(n, stones)
        except GTPFailure:
            # Beyond the standard layouts: the net's favourite points for black on an empty board.
            policy, _ = self.state.source.raw_policy(self.state.game.new_position(), 0)
            points = [int(p) for p in np.argsort(-policy[: n * n], kind="stable")[:stones]]
        return self._place_handicap(points)

    def cmd_set_free_handicap(self, args: list[str]) -> str:
        self.state.require_go("set_free_handicap")
        if len(args) < 2:
            raise GTPFailure("wrong number of arguments: usage set_free_handicap V1 V2 ...")
        points = [self.state.vertex(a) for a in args]
        if self.state.game.pass_action in points or len(set(points)) != len(points):
            raise GTPFailure("bad handicap: pass or a repeated vertex")
        return self._place_handicap(points)

    def _place_handicap(self, points: list[int]) -> str:
        if len(self.state.history) > 1 or self.state.setup or self.state.position.board_array().any():
            raise GTPFailure("board not empty")
        self.state.reset([(BLACK, p) for p in points])
        return " ".join(self.state.game.action_to_vertex(p) for p in points)

    def cmd_showboard(self, args: list[str]) -> str:
        nargs(args, 0, usage="showboard")

        return "\n" + board_to_text(self.state.position).rstrip("\n")

    def cmd_is_legal(self, args: list[str]) -> str:
        nargs(args, 2, usage="is_legal COLOUR VERTEX")
        colour, action = colour_arg(args[0]), self.state.vertex(args[1])
        try:
            play_as(self.state.position, colour, action)
        except IllegalMove:
            return "0"
        return "1"

    def cmd_all_legal(self, args: list[str]) -> str:
        nargs(args, 1, usage="all_legal COLOUR")
        colour = colour_arg(args[0])
        position = self.state.position
        if colour != position.to_play:
            try:
                position = filler(position)
            except IllegalMove:
                return ""
        game = self.state.game
        return " ".join(game.action_to_vertex(a) for a in position.legal_moves() if a != game.pass_action)

    def cmd_list_stones(self, args: list[str]) -> str:
        nargs(args, 1, usage="list_stones COLOUR")
        colour = colour_arg(args[0])
        board = self.state.position.board_array()
        return " ".join(self.state.game.action_to_vertex(int(p)) for p in np.nonzero(board == colour)[0])

    def cmd_captures(self, args: list[str]) -> str:
        self.state.require_go("captures")
        nargs(args, 1, usage="captures COLOUR")
        return str(go_rules(self.state.position).captures[colour_arg(args[0])])

    def cmd_last_move(self, args: list[str]) -> str:
        nargs(args, 0, usage="last_move")
        if len(self.state.history) < 2:
            raise GTPFailure("no previous move known")
        p = self.state.position
        assert p.last_move is not None  # a position after the first came from a move
        return f"{COLOUR_NAMES[opponent(p.to_play)]} {self.state.game.action_to_vertex(p.last_move)}"

    def cmd_move_history(self, args: list[str]) -> str:
        """Leela Zero's form: the most recent move first, ``colour vertex`` per line."""
        nargs(args, 0, usage="move_history")
        lines = []
        for step in reversed(self.state.steps()):
            colour, action = step[-1]
            lines.append(f"{COLOUR_NAMES[colour]} {self.state.game.action_to_vertex(action)}")
        return "\n".join(lines)

    def cmd_time_settings(self, args: list[str]) -> str:
        nargs(args, 3, usage="time_settings MAIN BYO_TIME BYO_STONES")
        main = int_value(args[0], "main time", 0, MAX_SECONDS)
        byo = int_value(args[1], "byo-yomi time", 0, MAX_SECONDS)
        stones = int_value(args[2], "byo-yomi stones", 0, MAX_STONES)
        self.state.set_clock(Clock.canadian(main, byo, stones))
        return ""

    def cmd_kgs_time_settings(self, args: list[str]) -> str:
        if not args:
            raise GTPFailure("usage: kgs-time_settings none|absolute|byoyomi|canadian ...")
        kind, rest = args[0].lower(), args[1:]
        shapes = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}
        if kind not in shapes:
            raise GTPFailure(f"unknown time system {args[0]!r}")
        nargs(rest, shapes[kind], usage=f"kgs-time_settings {kind}" + " N" * shapes[kind])
        what = ["main time", "byo-yomi time", "periods" if kind == "byoyomi" else "byo-yomi stones"]
        nums = [int_value(a, w, 0, MAX_STONES if w in ("periods", "byo-yomi stones") else MAX_SECONDS)
                for a, w in zip(rest, what, strict=False)]
        if kind == "none":
            self.state.set_clock(Clock())
        elif kind == "absolute":
            self.state.set_clock(Clock("absolute", nums[0]))
        elif kind == "byoyomi":
            self.state.set_clock(Clock("byoyomi", nums[0], nums[1], nums[2]))
        else:
            self.state.set_clock(Clock.canadian(nums[0], nums[1], nums[2]))
        return ""

    def cmd_time_left(self, args: list[str]) -> str:
        nargs(args, 3, usage="time_left COLOUR SECONDS STONES")
        colour = colour_arg(args[0])
        seconds = int_value(args[1], "time left", -MAX_SECONDS, MAX_SECONDS)
        stones = int_value(args[2], "stones", 0, MAX_STONES)
        self.state.clock.set_left(colour, seconds, stones)
        return ""

    def cmd_loadsgf(self, args: list[str]) -> str:
        nargs(args, 1, 2, usage="loadsgf FILE [MOVE_NUMBER]")
        upto = int_value(args[1], "move number", 1) if len(args) == 2 else None
        try:
            record = read_sgf(args[0])
        except ValueError as e:  # not a regular file, too large, unreadable, bad: the message names it
            raise GTPFailure(str(e)) from None
        playing = self.state.game.name
        if record.game.name != playing:
            raise GTPFailure(f"{args[0]} is a {record.game.name} game; this engine plays {playing}")
        game = self._game_of(record.game)
        # Build it all aside first: a bad file must leave the current game untouched.
        actions = record.moves if upto is None else record.moves[: upto - 1]
        try:
            position = game.new_position()
            for colour, point in record.setup:
                position = play_as(position, colour, point)
            history = [position]
            for colour, action in actions:
                history.append(play_as(history[-1], colour, action))
        except IllegalMove as e:
            raise GTPFailure(f"bad SGF file {args[0]}: {e}") from None
        if game is not self.state.game:
            self.state.set_game(game)
        self.state.setup, self.state.history = list(record.setup), history
        self.state.training = []
        return ""

    def _game_of(self, recorded: Game) -> Game:
        """The game to play an SGF's record in: ours, or a new one of its size and komi the net serves."""
        if recorded.size == self.state.game.size and getattr(recorded, "komi", None) == getattr(
                self.state.game, "komi", None):
            return self.state.game
        if recorded.name != "go":
            game = recorded
        else:
            game = make_game("go", recorded.size, komi=go_game(recorded).komi)
        self.state.source.check(game)
        return game

    def cmd_printsgf(self, args: list[str]) -> str:
        nargs(args, 0, 1, usage="printsgf [FILE]")
        moves = [m for step in self.state.steps() for m in step]
        result = self.state.position.result_string() if self.state.position.is_terminal() else ""
        text = write_sgf(self.state.game, moves, result, setup=self.state.setup,
                         properties={"PB": ENGINE_NAME, "PW": ENGINE_NAME})
        if args:
            try:
                save_sgf(args[0], text)
            except OSError as e:
                raise GTPFailure(f"cannot write {args[0]}: {e.strerror}") from None
            return ""
        return text.rstrip("\n")
