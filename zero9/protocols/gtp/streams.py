"""The analysis streams of ``zero9 gtp``: analyses in rounds, their lines, and moves chosen from one.

Every number comes from :func:`zero9.search.analysis.analyse_many` (score lead, ownership, one
entry per root move); :mod:`zero9.protocols.kata_format` writes it as KataGo does and
:mod:`zero9.protocols.gtp.analysis` as Leela Zero does. Values are the side to move's.

Vocabulary:

- **analysis rounds**: the search runs in rounds of doubling visits on one evaluator (its
  cache makes a round cost little more than its new visits); a line goes out after each
  round once the interval has passed, so lines come at least an interval apart. ``-v N``
  (or ``lz-setoption name visits``) stops the rounds at N visits and the reply ends by
  itself, as ``lz-analyze``'s does (Leela Zero's rule); without it analysis runs until the
  next input line.
- **line writer** (:data:`LineWriter`): an analysis and its tags -> one line of output:
  KataGo's (:meth:`AnalysisStreams.kata_line`) or Leela Zero's with ownership
  (:meth:`AnalysisStreams.lz_line`).
- **analysed genmove** (:meth:`AnalysisStreams.genmove_analysed`, ``kata-genmove_analyze``):
  one analysis at the engine's visits, its line, then the best move through the same move
  policy as ``genmove`` (:class:`~zero9.protocols.gtp.moves.MovePolicy`: random opening
  moves, smarter passing, the resign threshold). Unlike ``genmove`` it searches to its visits
  whatever the clock, and its positions are not kept for ``dump_training``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from zero9.games import Game, Position
from zero9.protocols.gtp.analysis import AnalyzeTags, info_line
from zero9.protocols.gtp.loop import Reply
from zero9.protocols.gtp.moves import MovePolicy
from zero9.protocols.gtp.state import EngineState, Evaluator, resumable
from zero9.protocols.kata_format import gtp_info, gtp_ownership, move_fields
from zero9.search.analysis import MoveInfo, PositionAnalysis, analyse_many, make_evaluator
from zero9.search.evaluator import UniformEvaluator
from zero9.search.player import MoveStats

FIRST_ROUND_VISITS = 16

LineWriter = Callable[[PositionAnalysis, AnalyzeTags], str]


class AnalysisStreams:
    """Analyses of the engine's position in rounds, as the streams of ``kata-analyze`` & co."""

    def __init__(self, state: EngineState, policy: MovePolicy):
        self.state = state
        self.policy = policy

    def evaluator(self) -> Evaluator:
        """A fresh evaluator for one analysis (seeded by -s: the same commands give the same numbers)."""
        st = self.state
        if st.source.net is None:
            return UniformEvaluator(st.game)
        return make_evaluator(st.source.net, st.options.seed)

    def _root_filter(self, position: Position, tags: AnalyzeTags | None) -> list[int] | None:
        """The root moves ``tags`` allow (None: all), for the analysis' ``allow``."""
        if tags is None or not tags.restricted:
            return None
        pass_action = self.state.game.pass_action
        keep = [a for a in position.legal_moves()
                if not tags.is_avoided(position.to_play, a, position.move_number, pass_action)]
        return keep or None

    def analyse(self, position: Position, visits: int, evaluator: Evaluator, tags: AnalyzeTags | None = None,
                stop: threading.Event | None = None) -> PositionAnalysis:
        """One analysis of ``position`` at ``visits``, within the moves ``tags`` allow."""
        allow = self._root_filter(position, tags)
        on_step = (lambda: stop.is_set()) if stop is not None else None
        return analyse_many([position], evaluator, visits, self.state.options.seed, allow=[allow],
                            on_step=on_step)[0]

    def kata_line(self, analysis: PositionAnalysis, tags: AnalyzeTags) -> str:
        """KataGo's ``info move ...`` line of an analysis, with ownership when asked."""
        moves = analysis.moves[: tags.max_moves] if tags.max_moves else analysis.moves
        vertex = self.state.game.action_to_vertex
        line = " ".join(gtp_info(move_fields(m, vertex, 1.0, tags.pv_visits)) for m in moves)
        return self._with_ownership(line, analysis, tags)

    def lz_line(self, analysis: PositionAnalysis, tags: AnalyzeTags) -> str:
        """Leela Zero's info line of an analysis (lz-analyze with ownership)."""
        game = self.state.game
        stats = [move_stats(m, game) for m in analysis.moves]
        if tags.max_moves:
            stats = stats[: tags.max_moves]
        return self._with_ownership(info_line(stats, game), analysis, tags)

    def _with_ownership(self, line: str, analysis: PositionAnalysis, tags: AnalyzeTags) -> str:
        if tags.ownership and analysis.ownership is not None:
            return f"{line} {gtp_ownership(analysis.ownership, self.state.game.size)}".strip()
        return line

    def stream(self, tags: AnalyzeTags, line: LineWriter) -> Reply:
        """The stream of an analyze command in rounds (see the module docstring)."""
        st = self.state
        finished = st.position.is_terminal() and not resumable(st.position)
        position = st.position if finished else st.prepare_genmove(tags.colour)
        limit = st.options.visits or None  # -v bounds analysis, as in Leela Zero

        def run(write: Callable[[str], None], stop: threading.Event) -> None:
            if position.is_terminal():
                stop.wait()
                return
            evaluator = self.evaluator()
            visits, last, printed = min(FIRST_ROUND_VISITS, limit or FIRST_ROUND_VISITS), -1e9, False
            while not stop.is_set():
                analysis = self.analyse(position, visits, evaluator, tags, stop)
                now = time.monotonic()
                done = limit is not None and visits >= limit
                due = now - last >= tags.interval_s or done  # a bounded analysis ends on its last line
                if tags.interval_cs and due and not (stop.is_set() and printed):
                    write(line(analysis, tags) + "\n")
                    last, printed = now, True
                if done:
                    return
                visits = visits * 2 if limit is None else min(visits * 2, limit)

        return Reply(stream=run, interruptible=True)

    def genmove_analysed(self, tags: AnalyzeTags, write: Callable[[str], None]) -> str:
        """genmove from one analysis at the engine's visits; its line goes out first."""
        st = self.state
        game = st.game
        st.resumed()
        position = st.prepare_genmove(tags.colour)
        visits = st.player.play.visits or st.player.play.playouts or 1
        start = time.monotonic()
        analysis = self.analyse(position, visits, self.evaluator(), tags)
        st.clock.spend(tags.colour, time.monotonic() - start)
        if tags.interval_cs or tags.ownership:
            write(self.kata_line(analysis, tags) + "\n")
        stats = [move_stats(m, game) for m in analysis.moves]
        best = analysis.best.move if analysis.best else game.pass_action
        threshold = st.options.resign_threshold
        if threshold is not None and analysis.best and analysis.best.winrate < threshold:
            return "resign"
        assert best is not None  # Gomoku's analysis always has a best move: the game is not over
        action = self.policy.random_move(position, stats, best)
        if game.name == "go" and not st.options.dumbpass:
            action = self.policy.smarter_pass(position, action, stats)
        st.history.append(position.play(action))
        return game.action_to_vertex(action)


def move_stats(info: MoveInfo, game: Game) -> MoveStats:
    """An analysis' move as the search player's MoveStats (what the move policy and LZ lines read)."""
    return MoveStats(info.move, game.action_to_vertex(info.move), info.visits, info.winrate, info.prior,
                     info.lcb, info.value, 0.0, float("nan"), list(info.pv))
