"""The window's state: the game tree, what the AI knows, and the inputs that change them.

Vocabulary:

- **settings**: what the player chooses before a game (:class:`gui.settings.Settings`):
  game, size, the **human**'s colour, the level and visits, komi, the net file, the clock.
- **tree** (:mod:`gui.history`): the game's variation tree; the **line** shown is
  ``history`` (``history[i]`` is after ``i`` moves of it) and the **cursor** is the
  index on the board. Playing at an earlier move starts a branch; the later moves stay.
- **ended**: a position reached by resigning at the cursor's node. It is kept apart
  from the tree because a resignation is not a move (no SGF node); a game that ends by
  two passes or five in a row simply has a terminal position in the tree.
- **auto**: whether the AI answers by itself when it is its turn at the end of the
  line. It is off after loading an SGF (so you can browse first) and on after each of
  your moves.
- **players**: who played each colour, as the result names them: ``you`` and ``the AI``
  in your games, the SGF's ``PB``/``PW`` in a loaded one (``own_game`` is False until you
  play a move in it), so a loaded game is never described as if you had played it.
- **analysis**: what the AI knows about each node (:class:`gui.jobs.Analysis`); the AI's
  jobs (:mod:`gui.jobs`) fill it in on the worker thread, and :meth:`PlayModel.update`
  hands each result to :class:`gui.ai.AiJobs`, whose table names one handler per kind.
- **coach** (:mod:`gui.coach`): the review of the line and the teaching game.
- **overlays**: the teaching layers the view draws on top of the board, each on or
  off: ``winrate`` (bar and graph), ``candidates``, ``policy`` (heatmap),
  ``variation`` (the principal variation as numbered ghost stones) and ``territory``
  (the ownership estimate, Go).
- **message**: one line for the player, ``'info'`` or ``'error'``. Every refused
  input (an occupied point, ko, a click while the AI thinks) sets one.

The model never touches pygame: the controller (``gui/app.py``) calls its methods
for each input and :meth:`PlayModel.update` once a frame; the view reads it.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from gui.ai import AiJobs
from gui.clock import GameClock
from gui.coach import BAD_CLASSES, Coach, describe_reviewed, plural
from gui.engine import Engine, Worker, build_engine
from gui.history import GameTree, Node, replay, setup_stones
from gui.jobs import Analysis
from gui.players import Players, loaded_text
from gui.scoring import counted_result_of
from gui.settings import Settings
from gui.sgfio import Record, open_game, save_sgf
from zero9.arena.review import opening_length
from zero9.games import BLACK, COLOUR_NAMES, EMPTY, WHITE, Game, IllegalMove, Position, opponent

OVERLAYS = ("winrate", "candidates", "policy", "variation", "territory")


class PlayModel:
    """Game state + AI control for the window. All methods run on the event loop's thread."""

    def __init__(self, settings: Settings, engine: Engine | None = None, worker: Worker | None = None):
        self.settings = settings
        self.worker = worker or Worker()
        self.game: Game = settings.make_game()
        self.tree = GameTree(self.game.new_position())
        self.ended: tuple[Any, Position] | None = None  # (node, resigned position)
        self.auto = True
        self.whose = Players()  # whose game: yours, or a loaded one's players (gui/players.py)
        self.whose.start_own(settings.human)
        self.clock = GameClock(*settings.clock) if settings.clock else None
        self.lost_on_time = False
        self.overlays = {name: name == "winrate" for name in OVERLAYS}
        self.message, self.message_level = "", "info"
        self.alert: str | None = None  # a whole error in a box until dismissed (a file that cannot be used)
        self.engine: Engine | None = engine
        self.loading: Settings | None = None  # settings waiting for their engine
        self.loading_then: tuple | None = None  # (game, tree, record) to show once it is ready (a loaded SGF)
        self.engine_failed = False
        self.failed_settings: Settings | None = None  # a new game whose net was refused (setup reopens)
        self.live_visits = 0
        self.last_reply_s: float | None = None
        self.ai_request: Position | None = None
        self.hint_request: Position | None = None
        self.sgf_path: Path | None = None
        self.rng = np.random.default_rng()  # the weaker levels' draw among the best moves
        self.coach = Coach()
        self.jobs = AiJobs(self)
        if engine is None:
            self._load_engine(settings)
        else:
            self.say(f"{self.describe()} — {self._turn_text()}")

    # ---- what the view asks -------------------------------------------------------------------

    @property
    def history(self) -> list[Position]:
        """The line shown, from the start to the end of its branch."""
        return self.tree.positions

    @property
    def cursor(self) -> int:
        return self.tree.cursor

    @property
    def position(self) -> Position:
        """The position on the board (at the cursor; the resigned one when the game ended there)."""
        if self.ended is not None and self.ended[0] is self.tree.node:
            return self.ended[1]
        return self.tree.node.position

    @property
    def ai(self) -> int:
        return opponent(self.settings.human)

    @property
    def at_end(self) -> bool:
        return self.cursor == len(self.tree.line) - 1

    @property
    def over(self) -> bool:
        return self.position.is_terminal()

    @property
    def thinking(self) -> bool:
        """The AI is choosing its move (clicks are refused until it is done)."""
        running = self.worker.running
        return running is not None and running[0] == "move"

    @property
    def busy_text(self) -> str:
        """What the AI is doing, for the status line ('' when idle)."""
        return "loading the net…" if self.loading is not None else self.jobs.busy_text()

    def analysis_at(self, index: int | None = None) -> Analysis:
        node = self.tree.line[self.cursor if index is None else index]
        return node.analysis or Analysis()

    def reviewed(self) -> list[dict] | None:
        return self.coach.reviewed(self.history)

    def review_at(self, index: int) -> dict | None:
        return self.coach.review_at(self.history, index)

    @property
    def teaching(self) -> bool:
        return self.coach.teaching

    @property
    def teach_note(self) -> Any:
        return self.coach.teach_note

    def black_winrates(self) -> list[float | None]:
        """Black's win rate after each move of the line (None where the AI has not looked)."""
        line = self.history
        reviewed = self.coach.black_winrates(line)
        if reviewed is not None:
            return reviewed
        out: list[float | None] = []
        for i, pos in enumerate(line):
            wr = self.analysis_at(i).winrate
            out.append(None if wr is None else (wr if pos.to_play == BLACK else 1.0 - wr))
        return out

    def black_score_leads(self) -> list[float | None]:
        """Black's score lead after each move of the line (None where no analysis gave one)."""
        reviewed = self.coach.black_scores(self.history)
        if reviewed is not None:
            return reviewed
        out: list[float | None] = []
        for i, pos in enumerate(self.history):
            lead = self.analysis_at(i).score_lead
            out.append(None if lead is None else (lead if pos.to_play == BLACK else -lead))
        return out

    def actions(self) -> list[int]:
        return [p.last_move for p in self.history[1:] if p.last_move is not None]  # (every one has one)

    def result_text(self, names: bool = True) -> str:
        text = self.whose.result_text(self.position, self.settings.human, names, counted_result_of(self))
        return text.replace("+R", "+T") if self.lost_on_time and self.ended is not None else text

    @property
    def own_game(self) -> bool:
        return self.whose.own_game

    @property
    def players(self) -> dict[int, str]:
        return self.whose.names

    def player_name(self, colour: int) -> str:
        return self.whose.name(colour)

    def describe(self) -> str:
        s = self.settings
        game = f"Go {s.size}x{s.size}, komi {s.komi:g}" if s.game == "go" else f"Gomoku {s.size}x{s.size}"
        if not self.own_game:
            return f"{game}; {self.player_name(BLACK)} vs {self.player_name(WHITE)}"
        return f"{game}; you play {COLOUR_NAMES[s.human]}"

    def show_count(self) -> bool:
        """Draw the count: a Go game that ended by passes (a resignation has no count)."""
        return self.game.name == "go" and self.over and self.ended is None

    # ---- inputs -------------------------------------------------------------------------------

    def say(self, text: str, level: str = "info") -> None:
        self.message, self.message_level = text, level

    def warn(self, text: str) -> None:
        """An error shown whole: in the alert box (until dismissed) and on the message line."""
        self.say(text, "error")
        self.alert = text

    def click(self, point: int) -> bool:
        """The human plays ``point`` at the cursor. Returns whether it was played; sets a message if not."""
        if not self._may_move():
            return False
        if self.position.board_array()[point] != EMPTY:
            self.say(f"{self.game.action_to_vertex(point)} is occupied: choose an empty point", "error")
            return False
        return self._human_plays(point)

    def pass_move(self) -> bool:
        if self.game.pass_action is None:
            self.say(f"{self.game.name} has no pass", "error")
            return False
        if not self._may_move():
            return False
        return self._human_plays(self.game.pass_action)

    def resign(self) -> bool:
        if not self._may_move():
            return False
        self.ended = (self.tree.node, self.tree.node.position.resign())
        self.say(self.result_text())
        return True

    def undo(self) -> bool:
        """Take back your last move and the AI's reply to it (stopping the AI if it is thinking)."""
        if self.loading is not None:
            self.say("wait: the net is loading", "error")
            return False
        self._cancel_jobs()
        self.coach.teach_note = None
        ended = self.ended
        if ended is not None and ended[0] is self.tree.node and ended[1].to_play == self.settings.human:
            self.ended = None  # your resignation is the move taken back
            self.say("took back your resignation")
            self.jobs.schedule()
            return True
        self.ended = None
        line = self.history[: self.cursor + 1]
        keep = len(line)
        while keep > 1 and line[keep - 2].to_play == self.ai:
            keep -= 1
        if keep > 1 and line[keep - 2].to_play == self.settings.human:
            if self.at_end:
                self.tree.cut_after(keep - 2)  # the moves taken back are gone
            self.tree.goto(keep - 2)
            self._after_change(f"took back to move {keep - 2}")
            return True
        self.say("nothing of yours to take back", "error")
        self.jobs.schedule()
        return False

    def stop(self) -> None:
        """Stop thinking: the AI plays the best move it has found so far; analysis and hints stop."""
        running = self.worker.running
        if running is None:
            self.say("the AI is not thinking")
            return
        if running[0] == "review":
            self.coach.request = None  # its result, if any comes, is dropped
        if running[0] == "analyze":
            node = self.node_of(running[1])
            if node is not None:
                self._analysis(node).done = True
        self.worker.cancel_running()
        self.say("stopped: the AI plays its best move so far" if running[0] == "move" else "stopped")

    def hint(self) -> None:
        pos = self.position
        if pos.is_terminal() or self.thinking or self.loading is not None:
            self.say("no hint now", "error")
            return
        self.hint_request = pos
        self.say("looking for a hint…")
        self.jobs.schedule()

    def ai_move(self) -> None:
        """Let the AI play the side to move at the cursor (to continue a loaded game, say)."""
        if self.thinking or self.loading is not None:
            self.say("wait: the AI is busy", "error")
            return
        if self.over:
            self.say(self.result_text(), "error")
            return
        self._take_over()
        self.auto = True
        self.ai_request = self.tree.node.position
        self.jobs.schedule()

    def swap_sides(self) -> None:
        if self.thinking:
            self.say("wait: the AI is thinking (Stop makes it move now)", "error")
            return
        self.settings = replace(self.settings, human=self.ai)
        if self.own_game:
            self.whose.start_own(self.settings.human, keep_file=True)
        self.auto = True
        self.say(f"you now play {COLOUR_NAMES[self.settings.human]}")
        self.jobs.schedule()

    def start_review(self) -> None:
        """Review the line from the start to its last move (a background job with progress)."""
        if self.thinking or self.loading is not None:
            self.say("wait: the AI is busy", "error")
            return
        if len(self.history) < 2:
            self.say("nothing to review yet: play some moves or load an SGF", "error")
            return
        self.coach.start(self.history)
        self.say(f"reviewing {plural(len(self.history) - 1, 'move')} at "
                 f"{plural(self.coach.review_visits, 'visit')} each…")
        self.jobs.schedule()

    def set_teaching(self, on: bool | None = None) -> None:
        """Teaching game on or off (toggles when ``on`` is None)."""
        on = not self.coach.teaching if on is None else on
        self.say(self.coach.set_teaching(on, self.history[-1]))
        self.jobs.schedule()

    def toggle(self, overlay: str) -> None:
        if overlay not in self.overlays:
            raise ValueError(f"unknown overlay {overlay!r}: expected one of {', '.join(OVERLAYS)}")
        self.overlays[overlay] = not self.overlays[overlay]
        self.jobs.schedule()

    def navigate(self, index: int) -> None:
        """Show history[index] (clamped); playing there later starts a branch."""
        if self.thinking:
            self.say("wait: the AI is thinking (Stop makes it move now)", "error")
            return
        index = max(0, min(len(self.history) - 1, index))
        if index != self.cursor:
            self.tree.goto(index)
            self.auto = False  # browsing never makes the AI move; a move of yours (or AI move) does
            self.hint_request = None
            self._say_where()
            self.jobs.schedule()

    def switch_branch(self, step: int) -> None:
        """Show the next (1) or previous (-1) variation at the cursor's move."""
        if self.thinking:
            self.say("wait: the AI is thinking (Stop makes it move now)", "error")
            return
        if not self.tree.switch(step):
            self.say("no other variation here", "error")
            return
        self.auto = False
        which, count = self.tree.siblings()
        self.say(f"variation {which} of {count} at move {self.cursor}")
        self.jobs.schedule()

    def delete_branch(self) -> None:
        """Delete the cursor's move and everything after it (the variation it starts)."""
        if self.thinking or self.loading is not None:
            self.say("wait: the AI is busy", "error")
            return
        number = self.cursor
        if not self.tree.delete_branch():
            self.say("nothing to delete at the start", "error")
            return
        self._cancel_jobs()
        self.ended = None
        self.say(f"deleted move {number} and the moves after it")
        self.jobs.schedule()

    def new_game(self, settings: Settings | None = None) -> bool:
        """Start a game with ``settings`` (a new net is loaded first when the game or net changed)."""
        settings = settings or self.settings
        try:
            game = settings.make_game()
        except (ValueError, TypeError) as e:
            self.say(f"cannot start that game: {e}", "error")
            return False
        self._cancel_jobs()
        if self.loading is not None and self.loading.engine_key() == settings.engine_key():
            self.loading = settings  # that engine is on its way: start with these settings when it is
            self.loading_then = None
            return True
        if self.engine is None or settings.engine_key() != self.settings.engine_key() or self.engine_failed:
            self._load_engine(settings)
            return True
        self.begin(settings, game)
        return True

    def save(self, path: str | Path) -> Path | None:
        """Save the whole tree (the line shown as the main line, the others as SGF variations)."""
        pos = self.ended[1] if self.ended is not None else self.history[-1]
        result = pos.result_string() if pos.is_terminal() else self.whose.file_result
        result = result.replace("+R", "+T") if self.lost_on_time and self.ended is not None else result
        start = self.tree.root.position
        lines = [self.actions()] + [a for a in self.tree.all_lines() if a != self.actions()]
        record = Record(self.game.to_dict(), lines[0], result, self.players.get(BLACK, ""),
                        self.players.get(WHITE, ""), variations=lines[1:], setup=setup_stones(start),
                        first=start.to_play)
        if self.own_game:
            ai = f"zero9 ({plural(self.settings.visits, 'visit')})"
            record.black, record.white = self.whose.for_saving(self.settings.human, ai)
        try:
            saved = save_sgf(path, record)
        except (OSError, ValueError) as e:
            self.warn(f"cannot save {path}: {getattr(e, 'strerror', None) or e}")
            return None
        self.sgf_path = saved
        self.say(f"saved {saved}")
        return saved

    def load(self, path: str | Path) -> bool:
        """Load an SGF's tree; the cursor goes to the main line's end, the AI waiting (browse, then play)."""
        try:
            game, tree, record = open_game(path)
        except (ValueError, TypeError) as e:
            self.warn(f"cannot load {path}: {e}" if str(path) not in str(e) else str(e))
            return False
        self._cancel_jobs()
        d = game.to_dict()
        komi = d.get("komi", self.settings.komi)
        settings = replace(self.settings, game=game.name, size=game.size, komi=komi)
        then = (game, tree, record)
        if self.loading is not None and self.loading.engine_key() == settings.engine_key():
            self.loading, self.loading_then = settings, then  # its net is on its way already
        elif settings.engine_key() != self.settings.engine_key() or self.engine is None:
            self._load_engine(settings, then=then)
        else:
            self.begin(settings, game, then)
        self.sgf_path = Path(path)
        return True

    # ---- the frame tick -----------------------------------------------------------------------

    def update(self) -> None:
        """Take the worker's results and start whatever job the current state needs. Once a frame."""
        for result in self.worker.poll():
            self.jobs.take(result)
        self._run_clock()
        self.jobs.schedule()

    def _run_clock(self) -> None:
        """The side to move's time runs while your game is live at the end of its line."""
        if self.clock is None:
            return
        live = self.own_game and self.at_end and self.ended is None and not self.over and self.loading is None
        lost = self.clock.update(self.position.to_play if live else None, time.monotonic())
        if lost is not None:
            self._cancel_jobs()
            self.ended, self.lost_on_time = (self.tree.node, self.tree.node.position.resign()), True
            self.say(f"{self.player_name(lost)} ran out of time. {self.result_text()}")

    # ---- internals ----------------------------------------------------------------------------

    def _turn_text(self) -> str:
        pos = self.position
        if pos.is_terminal():
            return self.result_text()
        who = "your" if pos.to_play == self.settings.human else "the AI's"
        return f"{COLOUR_NAMES[pos.to_play]} to play ({who} turn)"

    def _say_where(self) -> None:
        index = self.cursor
        reviewed = self.review_at(index + 1)
        if reviewed is not None and reviewed["class"] in BAD_CLASSES:
            self.say(describe_reviewed(reviewed), "error" if reviewed["class"] == "blunder" else "info")
            return
        which, count = self.tree.siblings()
        branch = f" (variation {which} of {count})" if count > 1 else ""
        self.say(f"move {index} of {len(self.history) - 1}{branch}"
                 + ("" if self.at_end else ": click to play from here (a new variation), or press AI move"))

    def _may_move(self) -> bool:
        if self.loading is not None:
            self.say("wait: the net is loading", "error")
            return False
        if self.thinking:
            self.say("wait: the AI is thinking (press Stop to make it move now)", "error")
            return False
        pos = self.position
        if pos.is_terminal():
            self.say(f"{self.result_text()}. Undo or start a new game", "error")
            return False
        if pos.to_play != self.settings.human:
            self.say(
                f"it is the AI's turn here ({COLOUR_NAMES[pos.to_play]}): press AI move, or Swap sides",
                "error",
            )
            return False
        return True

    def _take_over(self) -> None:
        """You play on in a loaded game: from here on it is your game against the AI."""
        self.whose.take_over(self.settings.human)

    def _human_plays(self, action: int) -> bool:
        try:
            new = self.position.play(action)
        except IllegalMove as e:
            self.say(str(e), "error")
            return False
        self._take_over()
        self.play_position(new)
        self.auto = True
        vertex = self.game.action_to_vertex(action)
        self.say(self.result_text() if new.is_terminal() else f"you played {vertex}")
        self.jobs.schedule()
        return True

    def play_position(self, pos: Position) -> None:
        """``pos``, one move after the cursor's, becomes the cursor's position (the clock moves on)."""
        self.ended, self.lost_on_time = None, False
        if self.clock is not None and self.at_end:
            self.clock.moved(opponent(pos.to_play))
        self.tree.play(pos)

    def _after_change(self, text: str) -> None:
        self._analysis(self.tree.node).hint = None
        self.say(text)
        self.jobs.schedule()

    def node_of(self, pos: Position) -> Node | None:
        """The node of the line shown whose position is ``pos``; None once it left the line."""
        index = self.tree.index_of(pos)
        return None if index is None else self.tree.line[index]

    @staticmethod
    def _analysis(node: Any) -> Analysis:
        if node.analysis is None:
            node.analysis = Analysis()
        return node.analysis

    def _cancel_jobs(self) -> None:
        self.ai_request = self.hint_request = self.coach.request = None
        self.worker.drop_pending()
        self.worker.cancel_running()

    def _load_engine(self, settings: Settings, then: tuple | None = None) -> None:
        try:
            game = settings.make_game()
        except (ValueError, TypeError) as e:
            self.say(f"cannot start that game: {e}", "error")
            return
        self.loading, self.loading_then = settings, then
        self.engine_failed = False
        self.worker.submit(
            "engine",
            (settings, game),
            lambda progress: build_engine(game, settings.net, settings.visits),
        )
        self.say("loading the net…")

    def begin(self, settings: Settings, game: Game, loaded: tuple | None = None) -> None:
        """Show a new game (``loaded`` None) or a loaded one (``(game, tree, record)``)."""
        self.settings, self.game = settings, game
        if self.engine is not None and hasattr(self.engine.player, "visits"):
            self.engine.player.play.visits = settings.visits
        self.ended, self.lost_on_time = None, False
        self.auto = loaded is None
        self.last_reply_s = None
        self.clock = GameClock(*settings.clock) if settings.clock else None
        if loaded is None:
            self.tree = GameTree(game.new_position())
            self.whose.start_own(settings.human)
            self.coach.forced = 0
            self.say(f"new game: {self.describe()} — {self._turn_text()}")
        else:
            _, self.tree, record = loaded
            self.whose.start_loaded(record.black, record.white, record.result)
            self.coach.forced = opening_length(record.parsed) if record.parsed is not None else 0
            self.say(loaded_text(len(self.history) - 1, len(record.variations), record.result))
        self.jobs.schedule()


__all__ = ["Analysis", "OVERLAYS", "PlayModel", "replay", "WHITE"]
