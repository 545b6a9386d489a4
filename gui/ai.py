"""The AI's jobs for the window: which one the state calls for, and what each result changes.

Vocabulary:

- **scheduling**: once a frame (and after each input) :meth:`AiJobs.schedule` asks
  :meth:`AiJobs.wanted` for the most urgent job the model's state calls for (a review,
  a teaching check, the AI's move, a hint, the net's evaluation, the quick pass over a
  loaded line, a live analysis) and submits it to the worker unless it already runs.
- **handlers**: one method per job kind (``took_move``, ``took_hint``...), chosen
  from the explicit table ``handlers``; each drops a result whose position is no longer
  on the line (after an undo, say) and stores the rest in the node's analysis.

- **the model** (:class:`AiModel`): what the jobs read and change of the window's state,
  named and typed; :class:`gui.model.PlayModel` is the one that has it.

The job functions themselves are :mod:`gui.jobs`'s; the state is :class:`gui.model.PlayModel`'s.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from gui import jobs
from gui.coach import Coach, judge_job, plural
from gui.engine import Engine, Result, Worker
from gui.history import GameTree, Node
from gui.jobs import Analysis
from gui.settings import Settings
from zero9.arena.levels import Level, level_playing
from zero9.games import Game, IllegalMove, Position


class AiModel(Protocol):
    """The window's state as the AI jobs see it: what they read, the fields they set, the calls they make."""

    # read and set by the jobs
    engine: Engine | None
    loading: Settings | None  # settings waiting for their engine
    loading_then: tuple | None  # (game, tree, record) to show once it is ready
    engine_failed: bool
    failed_settings: Settings | None
    live_visits: int
    last_reply_s: float | None
    ended: tuple[Any, Position] | None  # (node, resigned position)
    auto: bool
    ai_request: Position | None  # the position the player asked the AI to move from
    hint_request: Position | None  # the position the player asked a hint for
    overlays: dict[str, bool]
    # read only
    worker: Worker
    coach: Coach
    tree: GameTree
    rng: np.random.Generator

    @property
    def settings(self) -> Settings: ...
    @property
    def game(self) -> Game: ...
    @property
    def message(self) -> str: ...
    @property
    def history(self) -> list[Position]: ...
    @property
    def position(self) -> Position: ...
    @property
    def at_end(self) -> bool: ...
    @property
    def ai(self) -> int: ...

    def say(self, text: str, level: str = "info") -> None: ...
    def result_text(self, names: bool = True) -> str: ...
    def analysis_at(self, index: int | None = None) -> Analysis: ...
    def show_count(self) -> bool: ...
    def begin(self, settings: Settings, game: Game, loaded: tuple | None = None) -> None: ...
    def play_position(self, pos: Position) -> None: ...
    def node_of(self, pos: Position) -> Node | None: ...


def _analysis(node: Node) -> Analysis:
    if node.analysis is None:
        node.analysis = Analysis()
    return node.analysis


class AiJobs:
    """Schedules the model's AI jobs and applies their results to it."""

    def __init__(self, model: AiModel):
        self.m = model
        self.handlers = {
            "engine": self._took_engine, "move": self._took_move, "hint": self._took_hint,
            "eval": self._took_eval, "analyze": self._took_analyze, "sketch": self._took_sketch,
            "count": self._took_count,
            "review": self._took_review, "teach": self._took_teach,
        }
        self.sketched: dict[int, Position] = {}  # the lines' last positions already sketched, by id()

    def take(self, result: Result) -> None:
        self.handlers[result.kind](result)

    def busy_text(self) -> str:
        """The job running (or waiting) in words: 'AI thinking… 120 visits', 'reviewing… 32/64 visits'."""
        running = self.m.worker.running or self.m.worker.pending
        if running is None:
            return ""
        live = self.m.live_visits
        visits = f" {plural(live, 'visit')}" if live else ""
        review = self.m.coach
        return {
            "move": f"AI thinking…{visits}",
            "hint": f"finding a hint…{visits}",
            "analyze": f"analysing…{visits}",
            "eval": "evaluating…",
            "sketch": "a quick look at the game…",
            "count": "counting…",
            "review": f"reviewing… {review.review_progress}/{plural(review.review_visits, 'visit')}",
            "teach": "checking your move…",
            "engine": "loading the net…",
        }.get(running[0], "")

    # ---- results, one handler per job kind ------------------------------------------------------

    def _took_engine(self, result: Result) -> None:
        settings, game = result.tag
        if self.m.loading is None or self.m.loading.engine_key() != settings.engine_key():
            return  # another game was asked for while this net loaded; its engine comes next
        settings, then, self.m.loading, self.m.loading_then = self.m.loading, self.m.loading_then, None, None
        if then:
            game = then[0]
        if result.error:
            self.m.engine_failed = self.m.engine is None
            self.m.failed_settings = settings
            self.m.say(result.error, "error")
            return
        self.m.engine = result.value
        self.m.begin(settings, game, then)
        if self.m.engine.uniform:
            size = f"{game.size}x{game.size}"
            self.m.say(f"{self.m.engine.label} (no shipped net for {game.name} {size}): the AI "
                     f"searches without a net, so it plays weakly — {self.m.message}", "error")

    def _took_move(self, result: Result) -> None:
        if result.progress:
            self._progress(result)
            return
        self.m.live_visits = 0
        pos = result.tag
        if pos is not self.m.tree.node.position or self.m.ended is not None or pos.is_terminal():
            return  # undone or replaced while it thought
        if result.error:
            self.m.say(f"the AI failed: {result.error}", "error")
            self.m.auto = False
            return
        decision, seconds = result.value
        a = _analysis(self.m.tree.node)
        jobs.store_search(a, decision)
        self.m.last_reply_s = seconds
        if getattr(decision, "resign", False):
            self.m.ended = (self.m.tree.node, pos.resign())
            self.m.say(f"the AI resigns. {self.m.result_text()}")
            return
        action = int(decision.action)
        try:
            new = pos.play(action)
        except IllegalMove as e:  # a search bug must not take the window down
            self.m.say(f"the AI chose an illegal move: {e}", "error")
            self.m.auto = False
            return
        self.m.play_position(new)
        vertex = self.m.game.action_to_vertex(action)
        self.m.say(self.m.result_text() if new.is_terminal() else f"the AI played {vertex} ({seconds:.1f} s)")

    def _took_hint(self, result: Result) -> None:
        if result.progress:
            self._progress(result)
            return
        self.m.live_visits = 0
        node = self.m.node_of(result.tag)
        self.m.hint_request = None
        if node is None:
            return
        if result.error:
            self.m.say(f"no hint: {result.error}", "error")
            return
        a = _analysis(node)
        found = result.value
        jobs.store_analysis(a, found, quick=False)
        a.hint = found.best.move if found.best is not None else None
        if a.hint is None:
            self.m.say("no hint: the search found no move", "error")
            return
        wr = "" if a.winrate is None else f" (your win rate {100 * a.winrate:.0f}%)"
        self.m.say(f"hint: {self.m.game.action_to_vertex(a.hint)}{wr}")

    def _analysis_for(self, result: Result, failure: str) -> Analysis | None:
        """The analysis ``result`` belongs to; None if its move is gone or it failed (``failure`` is said)."""
        node = self.m.node_of(result.tag)
        if node is None:
            return None
        a = _analysis(node)
        if result.error:
            a.done = True
            self.m.say(f"{failure}: {result.error}", "error")
            return None
        return a

    def _took_eval(self, result: Result) -> None:
        a = self._analysis_for(result, "the net failed")
        if a is None:
            return
        jobs.store_analysis(a, result.value, quick=False)

    def _took_analyze(self, result: Result) -> None:
        a = self._analysis_for(result, "analysis failed")
        if a is None:
            return
        stats = jobs.move_stats(result.value)
        if stats:
            a.candidates = stats
            a.visits = sum(s.visits for s in stats)
            self.m.live_visits = a.visits
            wr = jobs.best_winrate(stats)
            a.winrate, a.quick = (wr, False) if wr is not None else (a.winrate, a.quick)
        if not result.progress:
            # Cut short by another job (the quick pass, a hint): not done, so it resumes when wanted
            # again; Stop marks it done itself before cancelling.
            a.done = a.done or not result.cancelled
            self.m.live_visits = 0

    def _took_sketch(self, result: Result) -> None:
        """The quick pass over a line: win rates, score leads and ownership where none is known yet."""
        if result.progress or result.error:
            return
        positions, analyses = result.value
        for pos, found in zip(positions, analyses, strict=True):
            node = self.m.node_of(pos)
            if node is not None:
                jobs.store_analysis(_analysis(node), found, quick=True)

    def _took_count(self, result: Result) -> None:
        a = self._analysis_for(result, "the count failed")
        if a is not None:
            a.statuses, a.final_board = result.value

    def _took_review(self, result: Result) -> None:
        if result.progress:
            self.m.coach.review_progress = int(result.value)
            return
        text = self.m.coach.take_review(result.tag, result.value, result.error)
        if text is not None:
            self.m.say(text, "error" if result.error else "info")
            self.m.overlays["winrate"] = True

    def _took_teach(self, result: Result) -> None:
        if result.progress:
            return
        pos = result.tag
        if pos is not self.m.history[-1] or result.error:
            if result.error:
                self.m.say(f"could not check your move: {result.error}", "error")
            return
        text = self.m.coach.take_teach(self.m.game, len(self.m.history) - 1, pos, result.value[0])
        if text is not None:
            self.m.auto = False  # the AI waits: Undo to try again, AI move to play on
            self.m.say(text, "error")

    def _progress(self, result: Result) -> None:
        stats = jobs.move_stats(result.value)
        self.m.live_visits = sum(s.visits for s in stats)
        node = self.m.node_of(result.tag)
        if node is not None and stats:
            a = _analysis(node)
            a.candidates, a.visits = stats, self.m.live_visits
            wr = jobs.best_winrate(stats)
            a.winrate = wr if wr is not None else a.winrate

    # ---- job scheduling -------------------------------------------------------------------------

    def schedule(self) -> None:
        """Submit the job the state calls for, unless it is already running or waiting."""
        if self.m.engine is None or self.m.loading is not None:
            return
        want = self.wanted()
        running, pending = self.m.worker.running, self.m.worker.pending
        if running is not None and running[0] == "move":
            return  # the AI's move is never pre-empted; undo and new game cancel it explicitly
        if want is None:
            if (running is not None and running[0] in jobs.BACKGROUND_JOBS and running[0] != "sketch"
                    and running[1] is not self.m.position):
                self.m.worker.cancel_running()
            self.m.worker.drop_pending()
            return
        kind, pos = want
        for job in (running, pending):
            if job is not None and job[0] == kind and job[1] is pos:
                return
        self.m.worker.submit(kind, pos, *self._job(kind, pos))

    def wanted(self) -> tuple[str, Position] | None:
        """The job the state calls for now, most urgent first."""
        end = self.m.history[-1]
        if self.m.coach.request is not None:
            return "review", self.m.coach.request[-1]
        if self.m.at_end and self.m.coach.needs_check(end, self.m.settings.human, self.m.ended is not None):
            return "teach", end
        node_pos = self.m.tree.node.position
        if self.m.ai_request is not None:
            if self.m.ai_request is node_pos and self.m.ended is None:
                return "move", node_pos
            self.m.ai_request = None
        m = self.m
        if m.auto and m.at_end and m.ended is None and not end.is_terminal() and end.to_play == m.ai:
            return "move", end
        return self._wanted_analysis()

    def _wanted_analysis(self) -> tuple[str, Position] | None:
        """Hint, the net's look at the position shown, the quick pass over the line, a live search."""
        m = self.m
        pos = m.position
        a = m.analysis_at()
        if m.show_count() and a.statuses is None and not a.done:
            return "count", pos
        if not pos.is_terminal():
            if m.hint_request is not None:
                if m.hint_request is pos:
                    return "hint", pos
                m.hint_request = None
            if a.policy is None and not a.done:
                return "eval", pos
        end = m.history[-1]
        if m.overlays["winrate"] and self.sketched.get(id(end)) is not end and self._unsketched():
            return "sketch", end
        searching = m.overlays["candidates"] or m.overlays["variation"]
        if searching and not pos.is_terminal() and not a.done and a.visits < self.teaching_visits():
            return "analyze", pos
        return None

    def _unsketched(self) -> list[Position]:
        """The line's positions without a win rate (or, for Go, a score lead): the quick pass's work."""
        engine = self.m.engine
        assert engine is not None  # jobs are scheduled only once an engine is loaded (schedule)
        go = self.m.game.name == "go" and getattr(engine.analyser, "has_ownership", False)
        line = self.m.tree.line
        return [n.position for n in line
                if n.analysis is None or n.analysis.winrate is None or (go and n.analysis.score_lead is None)]

    def _level(self) -> Level | None:
        """The named level the AI plays at; None for a custom number of visits (the best move)."""
        return level_playing(self.m.settings.level, self.m.settings.visits)

    def _job(self, kind: str, pos: Position) -> tuple:
        """(job, cancel) for the worker."""
        engine = self.m.engine
        assert engine is not None  # jobs are scheduled only once an engine is loaded (schedule)
        player = engine.player
        if kind in ("move", "hint"):
            self.m.live_visits = 0
        if kind == "move":
            return jobs.move_job(player, pos, self._level(), self.m.rng)
        if kind == "hint":
            return jobs.hint_job(engine.analyser or player.evaluator, pos, self.teaching_visits())
        analyser = engine.analyser or player.evaluator
        if kind == "eval":
            return jobs.eval_job(analyser, pos)
        if kind == "count":
            return jobs.count_job(engine.net, pos)
        if kind == "sketch":
            self.sketched[id(pos)] = pos
            return jobs.sketch_job(analyser, self._unsketched())
        net = engine.net if engine.net is not None else "uniform"
        if kind == "review":
            assert self.m.coach.request is not None  # wanted() asks for a review only for a request
            return judge_job(net, self.m.coach.request, self.m.coach.review_visits, self.m.coach.forced)
        if kind == "teach":
            assert pos.parent is not None  # the move to check: one after another position
            return judge_job(net, [pos.parent, pos], self.m.coach.teach_visits)
        return jobs.analyze_job(player, pos, self.teaching_visits())

    def teaching_visits(self) -> int:
        """Visits for the overlays and the hint: the level's, but never fewer than
        :data:`gui.jobs.TEACHING_VISITS` (a Beginner AI plays from 1 visit; its hints should not)."""
        return max(self.m.settings.visits, jobs.TEACHING_VISITS)
