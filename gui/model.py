"""The window's state: the game, its history, the AI's analysis and the jobs running for it.

Vocabulary:

- **settings**: what the player chooses before a game (:class:`Settings`): game,
  size, the **human**'s colour, the level and visits, komi, the net file.
- **history**: the list of positions from the empty board; ``history[i]`` is after
  ``i`` moves. The **cursor** is the index shown on the board; moving it (arrow
  keys, the slider) browses the game, and playing there cuts off the moves after it.
- **ended**: a terminal position reached by resigning. It is kept apart from the
  history because a resignation is not a move (no SGF node); a game that ends by
  two passes or five in a row simply has a terminal ``history[-1]``.
- **auto**: whether the AI answers by itself when it is its turn at the end of the
  history. It is off after loading an SGF (so you can browse first) and on after
  each of your moves.
- **analysis**: what the AI knows about ``history[i]`` (:class:`Analysis`): the
  side to move's **win rate** (0..1), the **candidates** (``MoveStats`` from a
  search, best first), the **policy** (the net's prior per action) and a **hint**.
- **overlays**: the teaching layers the view draws on top of the board, each on or
  off: ``winrate`` (bar and graph), ``candidates``, ``policy`` (heatmap) and
  ``variation`` (the principal variation as numbered ghost stones).
- **review**: the whole game searched again move by move (:mod:`zero9.arena.review`):
  per move the winrate lost and its class (inaccuracy, mistake, blunder), the better
  move and its line. :attr:`PlayModel.review` holds it while the history still starts
  with the line that was reviewed; the graph and the board show it.
- **teaching game** (KaTrain's teaching mode): with ``teaching`` on, each of your moves
  is checked (the position before and after it searched at ``teach_visits``) before the
  AI answers; a move that loses at least ``teach_threshold`` stops the game with a
  :class:`TeachNote`: what it cost, the better move and its line, and Undo to try again
  (AI move plays on).
- **message**: one line for the player, ``'info'`` or ``'error'``. Every refused
  input (an occupied point, ko, a click while the AI thinks) sets one.

The model never touches pygame: the controller (``gui/app.py``) calls its methods
for each input and :meth:`PlayModel.update` once a frame; the view reads it.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from gui.engine import DEFAULT_LEVEL, LEVELS, Engine, Result, Worker, build_engine
from gui.sgfio import Record, load_sgf, save_sgf
from zero9.arena.levels import LEVELS as AI_LEVELS
from zero9.arena.levels import Level, weakened_action
from zero9.arena.review import Thresholds, black_winrates, review_positions
from zero9.games import BLACK, COLOUR_NAMES, EMPTY, WHITE, Game, IllegalMove, Position, make_game, opponent

OVERLAYS = ("winrate", "candidates", "policy", "variation")
BACKGROUND_JOBS = ("eval", "analyze", "hint")
PROGRESS_INTERVAL_S = 0.25
REVIEW_VISITS = 64  # per position in the window's review: a 60-move game in about a minute on a laptop
TEACH_VISITS = 64
TEACH_THRESHOLD = 0.10  # a teaching game stops at a "mistake" or worse


class Cancelled(ValueError):
    """A review stopped by the player (or by a change of the game)."""


@dataclass
class TeachNote:
    """What a teaching game says about your last move (see the module docstring)."""

    index: int  # history index of the position after your move
    move: int
    best: int | None
    pv: list[int]
    loss: float
    kind: str  # the class: inaccuracy, mistake, blunder


@dataclass
class Settings:
    game: str = "go"
    size: int = 9
    human: int = BLACK
    level: str = DEFAULT_LEVEL
    visits: int = LEVELS[DEFAULT_LEVEL]
    komi: float = 7.5
    net: str | None = None  # None: the shipped net for the game and size

    def make_game(self) -> Game:
        """The game these settings describe; ValueError if the rules module refuses them."""
        if self.game == "go":
            return make_game("go", self.size, komi=self.komi)
        return make_game(self.game, self.size)

    def engine_key(self) -> tuple:
        return (self.game, self.size, self.komi if self.game == "go" else None, self.net or "")


@dataclass
class Analysis:
    winrate: float | None = None  # side to move's chance to win
    visits: int = 0  # visits of the search behind ``candidates``
    candidates: list = field(default_factory=list)
    policy: np.ndarray | None = None
    hint: int | None = None
    done: bool = False  # the search was stopped or finished: do not restart it


def move_stats(value: Any) -> list:
    """MoveStats list from whatever a job returned (a Decision, a list), best first."""
    if value is None:
        return []
    stats = getattr(value, "stats", value)
    return sorted(stats or [], key=lambda s: -s.visits)


def winrate_of(decision: Any) -> float | None:
    """The side to move's win rate from a search: its best move's, else the root's (a Decision's)."""
    wr = best_winrate(move_stats(decision))
    if wr is None and isinstance(getattr(decision, "winrate", None), float):
        wr = decision.winrate
    return wr


def best_winrate(stats: list) -> float | None:
    """The most-visited move's win rate (Lizzie's number); None before any visit (unvisited moves are nan)."""
    for s in stats:
        if s.visits > 0 and math.isfinite(s.winrate):
            return float(s.winrate)
    return None


class PlayModel:
    """Game state + AI control for the window. All methods run on the event loop's thread."""

    def __init__(self, settings: Settings, engine: Engine | None = None, worker: Worker | None = None):
        self.settings = settings
        self.worker = worker or Worker()
        self.game: Game = settings.make_game()
        self.history: list[Position] = [self.game.new_position()]
        self.cursor = 0
        self.ended: Position | None = None
        self.auto = True
        self.analysis: dict[int, Analysis] = {}
        self.overlays = {"winrate": True, "candidates": False, "policy": False, "variation": False}
        self.message, self.message_level = "", "info"
        self.engine: Engine | None = engine
        self.loading: Settings | None = None  # settings waiting for their engine
        self.loading_then: tuple | None = None  # (game, history) to show once it is ready (a loaded SGF)
        self.engine_failed = False
        self.failed_settings: Settings | None = None  # a new game whose net was refused (setup reopens)
        self.think_started: float | None = None
        self.live_visits = 0
        self._ai_request: Position | None = None
        self._hint_request: Position | None = None
        self.sgf_path: Path | None = None
        self.rng = np.random.default_rng()  # the weaker levels' draw among the best moves
        self.review: list[dict] | None = None  # per move (index i-1 is the move to history[i])
        self.review_line: list[Position] = []  # the positions reviewed
        self.review_progress = 0
        self.review_visits = REVIEW_VISITS
        self._review_request: list[Position] | None = None
        self.teaching = False
        self.teach_visits, self.teach_threshold = TEACH_VISITS, TEACH_THRESHOLD
        self.teach_note: TeachNote | None = None
        self._teach_checked: Position | None = None  # the last position whose move was checked
        if engine is None:
            self._load_engine(settings)
        else:
            self.say(f"{self.describe()} — {self._turn_text()}")

    # ---- what the view asks -------------------------------------------------------------------

    @property
    def position(self) -> Position:
        """The position on the board (at the cursor; the resigned one when the game ended so)."""
        if self.ended is not None and self.cursor == len(self.history) - 1:
            return self.ended
        return self.history[self.cursor]

    @property
    def ai(self) -> int:
        return opponent(self.settings.human)

    @property
    def at_end(self) -> bool:
        return self.cursor == len(self.history) - 1

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
        running = self.worker.running or self.worker.pending
        if self.loading is not None:
            return "loading the net…"
        if running is None:
            return ""
        kind = running[0]
        visits = f" {self.live_visits} visits" if self.live_visits else ""
        return {
            "move": f"AI thinking…{visits}",
            "hint": f"finding a hint…{visits}",
            "analyze": f"analysing…{visits}",
            "eval": "evaluating…",
            "review": f"reviewing… {self.review_progress}/{len(self._review_request or [])} positions",
            "teach": "checking your move…",
            "engine": "loading the net…",
        }.get(kind, "")

    def analysis_at(self, index: int | None = None) -> Analysis:
        return self.analysis.get(self.cursor if index is None else index) or Analysis()

    def reviewed(self) -> list[dict] | None:
        """The review's moves while the history still starts with the reviewed line, else None."""
        line = self.review_line
        if self.review is None or len(line) > len(self.history):
            return None
        return self.review if all(a is b for a, b in zip(line, self.history, strict=False)) else None

    def review_at(self, index: int) -> dict | None:
        """The review of the move that leads to ``history[index]`` (None for the start or unreviewed)."""
        moves = self.reviewed()
        return moves[index - 1] if moves and 1 <= index <= len(moves) else None

    def black_winrates(self) -> list[float | None]:
        """Black's win rate after each move of the history (None where the AI has not looked)."""
        moves = self.reviewed()
        if moves:
            return black_winrates(moves) + [None] * (len(self.history) - len(moves) - 1)
        out: list[float | None] = []
        for i, pos in enumerate(self.history):
            wr = self.analysis_at(i).winrate
            out.append(None if wr is None else (wr if pos.to_play == BLACK else 1.0 - wr))
        return out

    def actions(self) -> list[int]:
        return [p.last_move for p in self.history[1:]]

    def result_text(self) -> str:
        pos = self.position
        if not pos.is_terminal():
            return ""
        text = pos.result_string()
        if pos.winner() == EMPTY:
            return f"Game over: draw ({text})"
        who = "you win" if pos.winner() == self.settings.human else "the AI wins"
        return f"Game over: {text} — {who}"

    def describe(self) -> str:
        s = self.settings
        game = f"Go {s.size}x{s.size}, komi {s.komi:g}" if s.game == "go" else f"Gomoku {s.size}x{s.size}"
        return f"{game}; you play {COLOUR_NAMES[s.human]}"

    def show_count(self) -> bool:
        """Draw the Tromp-Taylor count: a Go game that ended by passes (a resignation has no count)."""
        return self.game.name == "go" and self.over and self.ended is None

    # ---- inputs -------------------------------------------------------------------------------

    def say(self, text: str, level: str = "info") -> None:
        self.message, self.message_level = text, level

    def click(self, point: int) -> bool:
        """The human plays ``point`` at the cursor. Returns whether it was played; sets a message if not."""
        if not self._may_move():
            return False
        pos = self.position
        vertex = self.game.action_to_vertex(point)
        if pos.board_array()[point] != EMPTY:
            self.say(f"{vertex} is occupied: choose an empty point", "error")
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
        self._truncate()
        self.ended = self.history[-1].resign()
        self.say(self.result_text())
        return True

    def undo(self) -> bool:
        """Take back your last move and the AI's reply to it (stopping the AI if it is thinking)."""
        if self.loading is not None:
            self.say("wait: the net is loading", "error")
            return False
        self._cancel_jobs()
        self.teach_note = None
        history = list(self.history)
        if self.ended is not None and self.ended.to_play == self.settings.human:
            self.ended = None  # your resignation is the move taken back
            self._after_change(history, "took back your resignation")
            return True
        self.ended = None
        mover = self._mover
        while len(history) > 1 and mover(history) == self.ai:
            history.pop()
        if len(history) > 1 and mover(history) == self.settings.human:
            history.pop()
            self._after_change(history, f"took back to move {len(history) - 1}")
            return True
        self.say("nothing of yours to take back", "error")
        self._schedule()
        return False

    def stop(self) -> None:
        """Stop thinking: the AI plays the best move it has found so far; analysis and hints stop."""
        running = self.worker.running
        if running is None:
            self.say("the AI is not thinking")
            return
        if running[0] == "review":
            self._review_request = None  # its result, if any comes, is dropped
        if running[0] == "analyze":
            idx = self._index_of(running[1])
            if idx is not None:
                self.analysis.setdefault(idx, Analysis()).done = True
        self.worker.cancel_running()
        self.say("stopped: the AI plays its best move so far" if running[0] == "move" else "stopped")

    def hint(self) -> None:
        pos = self.position
        if pos.is_terminal() or self.thinking or self.loading is not None:
            self.say("no hint now", "error")
            return
        self._hint_request = pos
        self.say("looking for a hint…")
        self._schedule()

    def ai_move(self) -> None:
        """Let the AI play the side to move at the cursor (to continue a loaded game, say)."""
        if self.thinking or self.loading is not None:
            self.say("wait: the AI is busy", "error")
            return
        if self.over:
            self.say(self.result_text(), "error")
            return
        self._truncate()
        self.auto = True
        self._ai_request = self.history[-1]
        self._schedule()

    def swap_sides(self) -> None:
        if self.thinking:
            self.say("wait: the AI is thinking (Stop makes it move now)", "error")
            return
        self.settings = replace(self.settings, human=self.ai)
        self.auto = True
        self.say(f"you now play {COLOUR_NAMES[self.settings.human]}")
        self._schedule()

    def start_review(self) -> None:
        """Review the game from the start to its last move (a background job with progress)."""
        if self.thinking or self.loading is not None:
            self.say("wait: the AI is busy", "error")
            return
        if len(self.history) < 2:
            self.say("nothing to review yet: play some moves or load an SGF", "error")
            return
        self._review_request = list(self.history)
        self.review_progress = 0
        self.say(f"reviewing {len(self.history) - 1} moves at {self.review_visits} visits each…")
        self._schedule()

    def set_teaching(self, on: bool | None = None) -> None:
        """Teaching game on or off (toggles when ``on`` is None)."""
        self.teaching = not self.teaching if on is None else on
        self.teach_note = None
        self._teach_checked = self.history[-1]  # moves already played are not judged
        self.say(f"teaching game {'on: each of your moves is checked' if self.teaching else 'off'}")
        self._schedule()

    def toggle(self, overlay: str) -> None:
        if overlay not in self.overlays:
            raise ValueError(f"unknown overlay {overlay!r}: expected one of {', '.join(OVERLAYS)}")
        self.overlays[overlay] = not self.overlays[overlay]
        self._schedule()

    def navigate(self, index: int) -> None:
        """Show history[index] (clamped); playing there later cuts off the moves after it."""
        if self.thinking:
            self.say("wait: the AI is thinking (Stop makes it move now)", "error")
            return
        index = max(0, min(len(self.history) - 1, index))
        if index != self.cursor:
            self.cursor = index
            self._hint_request = None
            reviewed = self.review_at(index + 1)
            if reviewed is not None and reviewed["class"] != "good":
                self.say(describe_reviewed(reviewed), "error" if reviewed["class"] == "blunder" else "info")
            else:
                self.say(
                    f"move {index} of {len(self.history) - 1}"
                    + ("" if self.at_end else ": click to play from here, or press AI move")
                )
            self._schedule()

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
        self._begin(settings, game)
        return True

    def save(self, path: str | Path) -> Path | None:
        pos = self.ended or self.history[-1]
        result = pos.result_string() if pos.is_terminal() else ""
        names = {self.settings.human: "Human", self.ai: f"zero9 ({self.settings.visits} visits)"}
        record = Record(self.game.to_dict(), self.actions(), result, names[BLACK], names[WHITE])
        try:
            saved = save_sgf(path, record)
        except OSError as e:
            self.say(f"cannot save {path}: {e.strerror or e}", "error")
            return None
        self.sgf_path = saved
        self.say(f"saved {saved}")
        return saved

    def load(self, path: str | Path) -> bool:
        """Load an SGF's moves; the cursor goes to the end with the AI waiting (browse, then play)."""
        try:
            record = load_sgf(path)
            game = record.make_game()
            history = replay(game, record.actions, path)
        except (ValueError, TypeError) as e:
            self.say(str(e), "error")
            return False
        self._cancel_jobs()
        d = game.to_dict()
        settings = replace(
            self.settings, game=game.name, size=game.size, komi=d.get("komi", self.settings.komi)
        )
        if self.loading is not None and self.loading.engine_key() == settings.engine_key():
            self.loading, self.loading_then = settings, (game, history)  # its net is on its way already
        elif settings.engine_key() != self.settings.engine_key() or self.engine is None:
            self._load_engine(settings, then=(game, history))
        else:
            self._begin(settings, game, history)
        self.sgf_path = Path(path)
        return True

    # ---- the frame tick -----------------------------------------------------------------------

    def update(self) -> None:
        """Take the worker's results and start whatever job the current state needs. Once a frame."""
        for result in self.worker.poll():
            self._take(result)
        self._schedule()

    # ---- internals ----------------------------------------------------------------------------

    def _turn_text(self) -> str:
        pos = self.position
        if pos.is_terminal():
            return self.result_text()
        who = "your" if pos.to_play == self.settings.human else "the AI's"
        return f"{COLOUR_NAMES[pos.to_play]} to play ({who} turn)"

    @staticmethod
    def _mover(history: list[Position]) -> int:
        return history[-2].to_play

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

    def _human_plays(self, action: int) -> bool:
        try:
            new = self.position.play(action)
        except IllegalMove as e:
            self.say(str(e), "error")
            return False
        self._truncate()
        self._push(new)
        self.auto = True
        self.say(
            self.result_text() if new.is_terminal() else f"you played {self.game.action_to_vertex(action)}"
        )
        self._schedule()
        return True

    def _truncate(self) -> None:
        """Cut the history after the cursor (playing from a browsed position starts a new line)."""
        if not self.at_end:
            del self.history[self.cursor + 1 :]
            self.ended = None
        for i in [i for i in self.analysis if i > self.cursor]:
            del self.analysis[i]

    def _push(self, pos: Position) -> None:
        self.history.append(pos)
        self.cursor = len(self.history) - 1

    def _after_change(self, history: list[Position], text: str) -> None:
        self.history = history
        self.cursor = len(history) - 1
        for i in [i for i in self.analysis if i > self.cursor]:
            del self.analysis[i]
        self.analysis.get(self.cursor, Analysis()).hint = None
        self.say(text)
        self._schedule()

    def _index_of(self, pos: Any) -> int | None:
        for i in range(len(self.history) - 1, -1, -1):
            if self.history[i] is pos:
                return i
        return None

    def _cancel_jobs(self) -> None:
        self._ai_request = self._hint_request = self._review_request = None
        self.worker.drop_pending()
        self.worker.cancel_running()
        self.think_started = None

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

    def _begin(self, settings: Settings, game: Game, history: list[Position] | None = None) -> None:
        self.settings, self.game = settings, game
        if self.engine is not None and hasattr(self.engine.player, "visits"):
            self.engine.player.visits = settings.visits
        self.history = history or [game.new_position()]
        self.cursor = len(self.history) - 1
        self.ended = None
        self.analysis = {}
        self.auto = history is None
        if history is None:
            self.say(f"new game: {self.describe()} — {self._turn_text()}")
        else:
            self.say(
                f"loaded {len(self.history) - 1} moves: browse with the arrow keys or the slider, "
                "then click to play or press AI move"
            )
        self._schedule()

    def _take(self, result: Result) -> None:
        handler = getattr(self, f"_took_{result.kind}")
        handler(result)

    def _took_engine(self, result: Result) -> None:
        settings, game = result.tag
        if self.loading is None or self.loading.engine_key() != settings.engine_key():
            return  # another game was asked for while this net loaded; its engine comes next
        settings, then, self.loading, self.loading_then = self.loading, self.loading_then, None, None
        if then:
            game = then[0]
        if result.error:
            self.engine_failed = self.engine is None
            self.failed_settings = settings
            self.say(result.error, "error")
            return
        self.engine = result.value
        if self.engine.uniform:
            self.say(f"{self.engine.label}: the AI searches without a net, so it plays weakly", "error")
        history = then[1] if then else None
        self._begin(settings, game, history)
        if self.engine.uniform:
            self.message = (
                f"{self.engine.label} (no shipped net for {game.name} {game.size}x{game.size}) — "
                + self.message
            )

    def _took_move(self, result: Result) -> None:
        if result.progress:
            self._progress(result)
            return
        self.think_started = None
        self.live_visits = 0
        pos = result.tag
        if pos is not self.history[-1] or self.ended is not None or pos.is_terminal():
            return  # undone or replaced while it thought
        if result.error:
            self.say(f"the AI failed: {result.error}", "error")
            self.auto = False
            return
        decision = result.value
        idx = len(self.history) - 1
        self._store_search(idx, decision)
        self.cursor = idx
        if getattr(decision, "resign", False):
            self.ended = pos.resign()
            self.say(f"the AI resigns. {self.result_text()}")
            return
        action = int(decision.action)
        try:
            new = pos.play(action)
        except IllegalMove as e:  # a search bug must not take the window down
            self.say(f"the AI chose an illegal move: {e}", "error")
            self.auto = False
            return
        self._push(new)
        vertex = self.game.action_to_vertex(action)
        self.say(self.result_text() if new.is_terminal() else f"the AI played {vertex}")

    def _took_hint(self, result: Result) -> None:
        if result.progress:
            self._progress(result)
            return
        self.live_visits = 0
        idx = self._index_of(result.tag)
        self._hint_request = None
        if idx is None:
            return
        if result.error:
            self.say(f"no hint: {result.error}", "error")
            return
        self._store_search(idx, result.value)
        a = self.analysis[idx]
        a.hint = int(result.value.action)
        wr = "" if a.winrate is None else f" (your win rate {100 * a.winrate:.0f}%)"
        self.say(f"hint: {self.game.action_to_vertex(a.hint)}{wr}")

    def _analysis_for(self, result: Result, failure: str) -> Analysis | None:
        """The analysis ``result`` belongs to; None if its move is gone or it failed (``failure`` is said)."""
        idx = self._index_of(result.tag)
        if idx is None:
            return None
        a = self.analysis.setdefault(idx, Analysis())
        if result.error:
            a.done = True
            self.say(f"{failure}: {result.error}", "error")
            return None
        return a

    def _took_eval(self, result: Result) -> None:
        a = self._analysis_for(result, "the net failed")
        if a is None:
            return
        policy, winrate = result.value
        a.policy = policy
        if a.winrate is None or a.visits == 0:
            a.winrate = winrate

    def _took_analyze(self, result: Result) -> None:
        a = self._analysis_for(result, "analysis failed")
        if a is None:
            return
        stats = move_stats(result.value)
        if stats:
            a.candidates = stats
            a.visits = sum(s.visits for s in stats)
            self.live_visits = a.visits
            a.winrate = best_winrate(stats) if best_winrate(stats) is not None else a.winrate
        if not result.progress:
            a.done = True
            self.live_visits = 0

    def _progress(self, result: Result) -> None:
        stats = move_stats(result.value)
        self.live_visits = sum(s.visits for s in stats)
        idx = self._index_of(result.tag)
        if idx is not None and stats:
            a = self.analysis.setdefault(idx, Analysis())
            a.candidates, a.visits = stats, self.live_visits
            a.winrate = best_winrate(stats) if best_winrate(stats) is not None else a.winrate

    def _store_search(self, idx: int, decision: Any) -> None:
        a = self.analysis.setdefault(idx, Analysis())
        stats = move_stats(decision)
        if stats:
            a.candidates = stats
            a.visits = sum(s.visits for s in stats)
        wr = winrate_of(decision)
        if wr is not None:
            a.winrate = wr

    # ---- job scheduling -------------------------------------------------------------------------

    def _schedule(self) -> None:
        """Submit the job the state calls for, unless it is already running or waiting."""
        if self.engine is None or self.loading is not None:
            return
        want = self._wanted()
        running, pending = self.worker.running, self.worker.pending
        if running is not None and running[0] == "move":
            return  # the AI's move is never pre-empted; undo and new game cancel it explicitly
        if want is None:
            if running is not None and running[0] in BACKGROUND_JOBS and not self._still_useful(running):
                self.worker.cancel_running()
            self.worker.drop_pending()
            return
        kind, pos = want
        for job in (running, pending):
            if job is not None and job[0] == kind and job[1] is pos:
                return
        self.worker.submit(kind, pos, *self._job(kind, pos))

    def _needs_teach_check(self, end: Position) -> bool:
        """A teaching game judges your move before the AI answers it."""
        return (self.teaching and self.ended is None and end is not self._teach_checked
                and end.parent is not None and end.parent.to_play == self.settings.human
                and self.teach_note is None)

    def _still_useful(self, running: tuple) -> bool:
        return running[1] is self.position

    def _wanted(self) -> tuple[str, Position] | None:
        end = self.history[-1]
        if self._review_request is not None:
            return "review", self._review_request[-1]
        if self._needs_teach_check(end):
            return "teach", end
        if self._ai_request is not None:
            if self._ai_request is end and self.ended is None:
                return "move", end
            self._ai_request = None
        if (
            self.auto
            and self.at_end
            and self.ended is None
            and not end.is_terminal()
            and end.to_play == self.ai
        ):
            return "move", end
        pos = self.position
        if pos.is_terminal():
            return None
        if self._hint_request is not None:
            if self._hint_request is pos:
                return "hint", pos
            self._hint_request = None
        a = self.analysis_at()
        if a.policy is None and not a.done:
            return "eval", pos
        searching = self.overlays["candidates"] or self.overlays["variation"]
        if searching and not a.done and a.visits < self.settings.visits:
            return "analyze", pos
        return None

    def _judge_job(self, kind: str, player: Any, pos: Position) -> tuple:
        """(job, cancel) that reviews the requested line, or checks your last move (teaching)."""
        stop = threading.Event()
        if kind == "teach":
            line = [pos.parent, pos]
            visits = self.teach_visits
        else:
            line, visits = self._review_request, self.review_visits
        thresholds = Thresholds()

        def judge(progress: Any) -> list[dict]:
            def step(done: int) -> None:
                if stop.is_set():
                    raise Cancelled("review stopped")
                progress(done)

            return _with_visits(player, visits, lambda: review_positions(player, line, thresholds, step))

        return judge, stop.set

    def _took_review(self, result: Result) -> None:
        if result.progress:
            self.review_progress = int(result.value)
            return
        line, self._review_request = self._review_request, None
        if line is None or line[-1] is not result.tag:
            return  # cancelled or replaced
        if result.error:
            self.say(f"review failed: {result.error}", "error")
            return
        self.review, self.review_line = result.value, line
        counts = {c: sum(m["class"] == c for m in self.review) for c in ("blunder", "mistake", "inaccuracy")}
        self.say(f"review done: {counts['blunder']} blunders, {counts['mistake']} mistakes, "
                 f"{counts['inaccuracy']} inaccuracies; click the graph to jump to a move")
        self.overlays["winrate"] = True

    def _took_teach(self, result: Result) -> None:
        if result.progress:
            return
        pos = result.tag
        if pos is not self.history[-1] or result.error:
            if result.error:
                self.say(f"could not check your move: {result.error}", "error")
            return
        self._teach_checked = pos
        move = result.value[0]
        if move["winrate_loss"] < self.teach_threshold:
            return  # a fine move: the AI answers it
        game = self.game
        self.teach_note = TeachNote(
            len(self.history) - 1, pos.last_move,
            None if move["best_move"] is None else game.vertex_to_action(move["best_move"]),
            [game.vertex_to_action(v) for v in move["pv"]], move["winrate_loss"], move["class"])
        self.auto = False  # the AI waits: Undo to try again, AI move to play on
        better = f"; {move['best_move']} was better" if move["best_move"] else ""
        self.say(f"{move['move']} loses {100 * move['winrate_loss']:.0f}% ({move['class']}){better}. "
                 "Undo to try again, or AI move to play on", "error")

    def _level(self) -> Level | None:
        """The named level the AI plays at; None for a custom number of visits (the best move)."""
        level = AI_LEVELS.get(self.settings.level)
        return level if level is not None and level.visits == self.settings.visits else None

    def _job(self, kind: str, pos: Position) -> tuple:
        """(job, cancel) for the worker."""
        player = self.engine.player
        if kind in ("move", "hint"):
            level = self._level() if kind == "move" else None
            if kind == "move":
                self.think_started = time.monotonic()
            self.live_visits = 0

            def search(progress: Any) -> Any:
                decision = player.choose(pos, on_stats=progress, stats_interval_s=PROGRESS_INTERVAL_S)
                if level is None:
                    return decision
                return replace(decision, action=weakened_action(player, pos, decision, level, self.rng))

            return search, player.stop
        if kind == "eval":
            return (lambda progress: _evaluate(player, pos)), None
        if kind in ("review", "teach"):
            return self._judge_job(kind, player, pos)
        stop = threading.Event()
        target = self.settings.visits

        def analyze(progress: Any) -> list:
            player.analyze(pos, progress, PROGRESS_INTERVAL_S, stop, max_visits=target)
            return player.root_stats()

        return analyze, stop.set


def describe_reviewed(move: dict) -> str:
    """One line about a reviewed move: 'move 6 (W A9): blunder, lost 46%; better F5 (F5 B5 A5)'."""
    text = f"move {move['move_number']} ({move['color']} {move['move']}): {move['class']}, " \
           f"lost {100 * move['winrate_loss']:.0f}%"
    if move["best_move"] and move["best_move"] != move["move"]:
        text += f"; better {move['best_move']} ({' '.join(move['pv'][:6])})"
    return text


def _with_visits(player: Any, visits: int, work: Any) -> Any:
    """Run ``work()`` with the player's visits set to ``visits`` (and put back after)."""
    kept = player.visits
    player.visits = visits
    try:
        return work()
    finally:
        player.visits = kept


def _evaluate(player: Any, pos: Position) -> tuple[np.ndarray, float]:
    """The net's policy and the side to move's win rate (value is -1..1; the window shows 0..1)."""
    return np.asarray(player.policy(pos), dtype=np.float32), (float(player.value(pos)) + 1.0) / 2.0


def replay(game: Game, actions: list[int], source: Any = "the record") -> list[Position]:
    """Positions from the empty board through ``actions``; ValueError naming the move that is illegal."""
    history = [game.new_position()]
    for number, action in enumerate(actions, start=1):
        try:
            history.append(history[-1].play(action))
        except IllegalMove as e:
            raise ValueError(f"{source}: move {number} cannot be played: {e}") from e
        if history[-1].is_terminal() and number < len(actions):
            raise ValueError(f"{source}: the game is over after move {number} but has more moves")
    return history


__all__ = ["Analysis", "OVERLAYS", "PlayModel", "Settings", "replay", "WHITE"]
