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
  line, so a loaded game's graph is drawn at once), ``review`` and ``teach``
  (:mod:`gui.coach`). :data:`BACKGROUND_JOBS` may be dropped when the board moves on.
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

JOB_KINDS = ("engine", "move", "hint", "eval", "analyze", "sketch", "review", "teach")
BACKGROUND_JOBS = ("eval", "analyze", "hint", "sketch")
PROGRESS_INTERVAL_S = 0.25
SKETCH_BATCH = 16  # positions per net call in the quick pass


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
    reply_s: float | None = None  # how long the AI took to choose the move played from here


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


def hint_job(player: Any, pos: Position) -> tuple:
    def search(progress: Callable) -> Any:
        return player.choose(pos, on_stats=progress, stats_interval_s=PROGRESS_INTERVAL_S)

    return search, player.stop


def eval_job(player: Any, pos: Position) -> tuple:
    """The net's policy and the side to move's win rate (value is -1..1; the window shows 0..1)."""

    def evaluate(progress: Callable) -> tuple[np.ndarray, float]:
        return np.asarray(player.policy(pos), dtype=np.float32), (float(player.value(pos)) + 1.0) / 2.0

    return evaluate, None


def analyze_job(player: Any, pos: Position, visits: int) -> tuple:
    """A live search of ``pos`` up to ``visits``, posting its statistics as it goes."""
    stop = threading.Event()

    def analyze(progress: Callable) -> list:
        player.analyze(pos, progress, PROGRESS_INTERVAL_S, stop, max_visits=visits)
        return player.root_stats()

    return analyze, stop.set


def sketch_job(player: Any, positions: list[Position]) -> tuple:
    """The net's win rate (side to move, 0..1) of each position, batched; a finished one is its result."""
    stop = threading.Event()

    def sketch(progress: Callable) -> list[float]:
        out: list[float] = []
        for start in range(0, len(positions), SKETCH_BATCH):
            if stop.is_set():
                break
            chunk = positions[start:start + SKETCH_BATCH]
            live = [p for p in chunk if not p.is_terminal()]
            values = iter(player.evaluator.evaluate(live)[1] if live else [])
            for p in chunk:
                v = p.result_value(p.to_play) if p.is_terminal() else float(next(values))
                out.append((float(v) + 1.0) / 2.0)
            progress(len(out))
        return out

    return sketch, stop.set


__all__ = [
    "Analysis", "BACKGROUND_JOBS", "JOB_KINDS", "analyze_job", "best_winrate", "eval_job", "hint_job",
    "move_job", "move_stats", "sketch_job", "store_search", "winrate_of",
]
