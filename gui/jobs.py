"""The AI's work for the window: what it knows about a position, and the jobs that find it out.

Vocabulary:

- **analysis** (:class:`Analysis`): what the AI knows about one position of the game
  tree: the side to move's **win rate** (0..1), the **candidates** (``MoveStats`` from
  a search, best first), the **policy** (the net's prior per action), a **hint**, and
  for Go the **score lead** and **ownership** (from :mod:`zero9.search.analysis`, when
  the net has those heads). ``quick`` marks a win rate from the net alone (the quick
  pass over a loaded game), which any search replaces.
- **job kinds** (:data:`JOB_KINDS`): ``engine`` (load a net), ``move`` (the AI's move),
  ``hint``, ``eval`` (the net's policy and value), ``analyze`` (a live search of the
  position shown), ``sketch`` (the quick pass: the net's value of every position of the
  line, so a loaded game's graph is drawn at once), ``count`` (the dead stones of a Go game
  ended by passes, by :func:`zero9.games.aftermath.dead_stones`, the playout GNU Go's
  ``--score aftermath`` uses and ``final_status_list`` answers with), ``review`` and ``teach``
  (:mod:`gui.coach`). :data:`BACKGROUND_JOBS` may be dropped when the board moves on.
  ``eval`` and ``sketch`` call :mod:`zero9.search.analysis` (the one "analyse a position" API,
  shared with ``zero9 review`` and the GTP engine), so the window's score lead and ownership
  are its numbers.
- a **job** is ``job(progress) -> value`` run on :class:`gui.engine.Worker`'s thread,
  with a **cancel** function; the builders here return that pair.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from zero9.arena.levels import Level, weakened_action
from zero9.games import Position
from zero9.games.aftermath import dead_stones
from zero9.search.analysis import analyse, analyse_many
from zero9.search.evaluator import steady_evaluator

JOB_KINDS = ("engine", "move", "hint", "eval", "analyze", "sketch", "count", "review", "teach")
BACKGROUND_JOBS = ("eval", "analyze", "hint", "sketch")
PROGRESS_INTERVAL_S = 0.25
TEACHING_VISITS = 200  # the fewest visits behind the candidates, the variation and a hint
SKETCH_VISITS = 8  # per position in the quick pass over a loaded line: a rough graph in seconds


@dataclass
class Analysis:
    winrate: float | None = None  # side to move's chance to win
    visits: int = 0  # visits of the search behind ``candidates``
    candidates: list = field(default_factory=list)
    policy: np.ndarray | None = None
    hint: int | None = None
    done: bool = False  # the search was stopped or finished: do not restart it
    quick: bool = False  # the win rate is the net's alone (the quick pass), not a search's
    score_lead: float | None = None  # side to move's lead in points (Go, from the analysis API)
    ownership: np.ndarray | None = None  # [size*size], +1 = the side to move owns the point
    statuses: dict | None = None  # a finished Go game: point -> alive / dead / seki (the aftermath)
    final_board: np.ndarray | None = None  # the aftermath playout's last board (who filled each dame)


def move_stats(value: Any) -> list:
    """MoveStats list from whatever a job returned (a Decision, a list), best first."""
    if value is None:
        return []
    stats = getattr(value, "stats", value)
    return sorted(stats or [], key=lambda s: -s.visits)


def best_winrate(stats: list) -> float | None:
    """The most-visited move's win rate (Lizzie's number); None before any visit (unvisited moves are nan)."""
    for s in stats:
        if s.visits > 0 and math.isfinite(s.winrate):
            return float(s.winrate)
    return None


def winrate_of(decision: Any) -> float | None:
    """The side to move's win rate from a search: its best move's, else the root's (a Decision's)."""
    wr = best_winrate(move_stats(decision))
    if wr is None and isinstance(getattr(decision, "winrate", None), float):
        wr = decision.winrate
    return wr


def store_search(a: Analysis, decision: Any) -> None:
    """Keep a search's candidates and win rate in ``a``."""
    stats = move_stats(decision)
    if stats:
        a.candidates = stats
        a.visits = sum(s.visits for s in stats)
    wr = winrate_of(decision)
    if wr is not None:
        a.winrate, a.quick = wr, False


# ---- job builders: each returns (job, cancel) ----------------------------------------------------


def move_job(player: Any, pos: Position, level: Level | None, rng: np.random.Generator) -> tuple:
    """The AI chooses a move at ``pos`` (drawn among its best few when ``level`` says so)."""

    def search(progress: Callable) -> Any:
        started = time.monotonic()
        decision = player.choose(pos, on_stats=progress, stats_interval_s=PROGRESS_INTERVAL_S)
        if level is not None:
            decision = replace(decision, action=weakened_action(player, pos, decision, level, rng))
        return decision, time.monotonic() - started

    return search, player.stop


def hint_job(analyser: Any, pos: Position, visits: int) -> tuple:
    """The move a search of ``visits`` would play for you (:func:`zero9.search.analysis.analyse`)."""
    stop = threading.Event()

    def search(progress: Callable) -> Any:
        return analyse_many([pos], analyser, visits, on_step=stop.is_set)[0]

    return search, stop.set


def eval_job(analyser: Any, pos: Position) -> tuple:
    """The net's own look at ``pos`` (no search): policy, win rate and, for Go, score lead and ownership."""

    def evaluate(progress: Callable) -> Any:
        return analyse(pos, analyser, 0)

    return evaluate, None


def store_analysis(a: Analysis, found: Any, quick: bool) -> None:
    """Keep a :class:`zero9.search.analysis.PositionAnalysis` in ``a`` (a search's win rate stays)."""
    if found.policy is not None and not found.terminal:
        a.policy = np.clip(found.policy, 0.0, None)  # illegal moves are -1 there
    if a.winrate is None or (a.quick and not quick) or (a.visits == 0 and not quick):
        a.winrate, a.quick = found.winrate, quick
    if found.score_lead is not None:
        a.score_lead = found.score_lead
    if found.ownership is not None and not found.terminal:  # a finished one's is the rules' count
        a.ownership = found.ownership


def analyze_job(player: Any, pos: Position, visits: int) -> tuple:
    """A live search of ``pos`` up to ``visits``, posting its statistics as it goes."""
    stop = threading.Event()

    def analyze(progress: Callable) -> list:
        player.analyze(pos, progress, PROGRESS_INTERVAL_S, stop, max_visits=visits)
        return player.root_stats()

    return analyze, stop.set


def count_job(net: Any, pos: Position) -> tuple:
    """The aftermath of a Go game ended by passes: ``(statuses, final board)`` (see :mod:`gui.scoring`).

    The net is seen without random symmetries, as ``final_status_list`` sees it, so a finished
    game always gets the same count.
    """

    def count(progress: Callable) -> tuple[dict, np.ndarray]:
        return dead_stones(pos, steady_evaluator(net, pos.game))

    return count, None


def sketch_job(analyser: Any, positions: list[Position]) -> tuple:
    """The quick pass: every position searched at :data:`SKETCH_VISITS`, all in shared net calls.

    Returns ``(positions, analyses)``; the analyses are :mod:`zero9.search.analysis`'s.
    """
    stop = threading.Event()

    def sketch(progress: Callable) -> tuple[list[Position], list]:
        return positions, analyse_many(positions, analyser, SKETCH_VISITS, on_step=stop.is_set)

    return sketch, stop.set


__all__ = [
    "Analysis", "BACKGROUND_JOBS", "JOB_KINDS", "analyze_job", "best_winrate", "count_job", "eval_job",
    "hint_job",
    "move_job", "move_stats", "sketch_job", "store_analysis", "store_search", "winrate_of",
]
