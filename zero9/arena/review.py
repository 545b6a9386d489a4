"""Game review: what each move of a game cost, judged from the search of the position before it.

Vocabulary:

- **the judge**: one search per position of the game (``visits`` each), all positions of the
  game searched at once with their leaves in shared net calls
  (:func:`zero9.search.analysis.analyse_many`). ``review_game`` is the one function that
  ``zero9 review`` and the window call: the same game, visits and seed give the same numbers.
- **best move**: the move the search of the position before the move would play (its
  ``order`` 0). **played move**: the move of the game.
- **before / after** (the mover's view): *before* is the best move's value in that search,
  *after* the played move's value **in the same tree** (its own visits: no second, noisy
  search to subtract). A played move the search hardly visited (fewer than
  ``min_played_visits``) is judged by a search of the position it made instead (with
  ``played_search_share`` of the visits: a value to read, not a move to choose). So the
  best move loses exactly 0, and two searches' noise never makes a best move a mistake.
- **loss**: Go: **points lost**, ``score before - score after`` (score lead: the net's
  ownership sum, :mod:`zero9.search.analysis`); the winrate loss stays beside it. Gomoku:
  **winrate lost**. Never below 0 (a move the search scores above its own choice is no loss).
- **noise**: a loss below the measured search noise (``noise_points`` / ``noise_winrate``
  of :class:`zero9.settings.ReviewConfig`: two reviews of the same games with different
  seeds, ``scripts/bench_review.py --noise``) is never flagged (class ``good``).
- **decided** (Go): a move after which the game stays decided for the judge (the mover's
  winrate at least ``decided`` of :class:`zero9.settings.ReviewConfig`, or at most one minus
  it, before and after the move) is not flagged (class ``good``; its numbers stay): there the
  net's score is least reliable, and most of its point losses were noise by KataGo's count
  (docs/runs/go9-strong).
- **class**: Go by points lost with KaTrain's default thresholds (12, 6, 3, 1.5, 0.5):
  ``blunder``, ``mistake``, ``inaccuracy``, ``slight``, ``tiny``, else ``good``; Gomoku by
  winrate lost (20 %, 10 %, 5 %): ``blunder``, ``mistake``, ``inaccuracy``, else ``good``.
- **the count** (Go): a pass that ends the game (the second pass in a row), played or the
  best move, is judged by the finished game's count with its dead stones off
  (:func:`zero9.games.aftermath.count_finished`, the count of ``final_score`` and the
  window), not by the search's terminal value, which counts every stone on the board
  (Tromp-Taylor): a game whose players pass with dead stones left (GNU Go does) would
  otherwise have its last pass called a blunder. ``Review.count`` is that count of a game
  ended by passes ("W+2.5"), and how many stones it took off.
- **forced**: moves that were not the player's choice are never judged (class ``forced``):
  setup and handicap stones are not moves at all (the line starts after them), and the
  opening moves of a match played ``--openings`` (zero9's SGFs say so in the root's
  ``GC[opening K: N moves]``) or the first ``forced`` moves the caller names.
- **review** (:class:`Review`): per move a dict (``move_number`` 1 = first move, ``color``,
  ``move``, ``best_move``, ``score_before``/``score_after``/``points_lost`` (Go; None for
  Gomoku), ``winrate_before``/``winrate_after``/``winrate_loss``, ``class``, ``pv`` (the
  best line), ``played_visits``, ``searched_again``); per player a summary (moves judged,
  count per class, average loss, match rate with the best move). ``as_dict()`` is the JSON
  ``zero9 review`` writes; :func:`review_sgf` writes the review into a copy of the SGF
  (a comment per move, the better line as a variation), :func:`plot_review` the graph.
"""

from __future__ import annotations

__all__ = ["Review", "Thresholds", "black_scores", "black_winrates", "format_report", "line_from_record",
           "opening_length", "plot_review", "review_game", "review_sgf", "stays_decided", "summarise"]

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from zero9.arena.review_output import black_scores, black_winrates, format_report, plot_review, review_sgf
from zero9.games import BLACK, WHITE, Position
from zero9.games.aftermath import Count, count_finished
from zero9.games.go import GoPosition
from zero9.games.sgf import SgfRecord, start_position
from zero9.search.analysis import PositionAnalysis, analyse_many
from zero9.search.evaluator import NetEvaluator, UniformEvaluator, steady_evaluator
from zero9.settings import ReviewConfig

COLOUR_LETTER = {BLACK: "B", WHITE: "W"}
GO_CLASSES = ("blunder", "mistake", "inaccuracy", "slight", "tiny")  # worst first, as the thresholds
GOMOKU_CLASSES = ("blunder", "mistake", "inaccuracy")
FORCED = "forced"
_OPENING_NOTE = re.compile(r"opening \d+: (\d+) moves?")


@dataclass(frozen=True)
class Thresholds:
    """The smallest loss of each class, worst class first (points for Go, winrate 0..1 for Gomoku)."""

    bounds: tuple[float, ...] = ReviewConfig.points
    names: tuple[str, ...] = GO_CLASSES
    unit: str = "points"

    def __post_init__(self):
        if len(self.bounds) != len(self.names):
            raise ValueError(f"{len(self.bounds)} thresholds for the {len(self.names)} classes "
                             f"{', '.join(self.names)}")
        if any(b <= 0 for b in self.bounds) or list(self.bounds) != sorted(self.bounds, reverse=True):
            raise ValueError(f"thresholds must fall from {self.names[0]} to {self.names[-1]} and stay "
                             f"above 0, got {', '.join(f'{b:g}' for b in self.bounds)}")

    @classmethod
    def for_game(cls, game_name: str, bounds: Sequence[float] | None = None) -> Thresholds:
        if game_name == "go":
            return cls(tuple(bounds or ReviewConfig.points), GO_CLASSES, "points")
        return cls(tuple(bounds or ReviewConfig.winrate), GOMOKU_CLASSES, "winrate")

    def classify(self, loss: float) -> str:
        passed = (name for name, bound in zip(self.names, self.bounds, strict=True) if loss >= bound)
        return next(passed, "good")

    @property
    def classes(self) -> tuple[str, ...]:
        """Every class, mildest first."""
        return ("good", *reversed(self.names))


@dataclass
class Review:
    """A reviewed game (see the module docstring)."""

    game: dict
    black: str
    white: str
    result: str
    visits: int
    seed: int | None
    thresholds: Thresholds
    noise: float  # losses below this (the unit of the thresholds) are never flagged
    moves: list[dict[str, Any]]
    summary: dict[str, dict[str, Any]] = field(default_factory=dict)
    setup: list[tuple[int, int]] = field(default_factory=list)
    count: dict[str, Any] | None = None  # Go ended by passes: {"result": "W+2.5", "dead": 3}

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["thresholds"] = {"unit": self.thresholds.unit,
                             **dict(zip(self.thresholds.names, self.thresholds.bounds, strict=True))}
        out.pop("setup")
        return out


def review_game(source: SgfRecord | Sequence[Position], net, visits: int = ReviewConfig.visits,
                seed: int | None = None, thresholds: Thresholds | None = None,
                progress: Callable[[int, int], None] | None = None, forced: int | None = None,
                config: ReviewConfig | None = None) -> Review:
    """Review a game: an SGF record or its line of positions (each the one before after a move).

    ``net``: a net (its evaluator is built with ``seed``), an evaluator, or ``"uniform"``.
    ``forced``: the first moves that were not the players' choice (default: an SGF's opening
    note, else 0). ``progress(done, total)``: after each net call (``done`` of ``total`` visits).
    """
    config = config or ReviewConfig()
    line = line_from_record(source) if isinstance(source, SgfRecord) else list(source)
    if len(line) < 2:
        raise ValueError("the game has no moves to review")
    game = line[0].game
    thresholds = thresholds or Thresholds.for_game(game.name)
    if forced is None:
        forced = opening_length(source) if isinstance(source, SgfRecord) else 0
    evaluator = _evaluator(net, game, seed)
    judged = [i for i in range(len(line) - 1) if i >= forced]
    before = dict(zip(judged, _analyse(line, judged, evaluator, visits, seed, config, progress), strict=True))
    again = [i for i in judged if _needs_own_search(before[i], _played(line[i + 1]), config)]
    own_visits = max(config.min_played_visits, round(visits * config.played_search_share))
    after = dict(zip(again, analyse_many([line[i + 1] for i in again], evaluator, own_visits, seed,
                                         leaves_per_tree=config.leaves_per_tree), strict=True))
    noise = _noise(game.name, visits, config)
    count = _Counter(getattr(evaluator, "net", None))
    decided = config.decided if thresholds.unit == "points" else None
    moves = [_judge_move(line, i, before.get(i), after.get(i), thresholds, noise, count, decided)
             for i in range(len(line) - 1)]
    record = source if isinstance(source, SgfRecord) else None
    final = count(line[-1]) if _ended_by_passes(line[-1]) else None
    return Review(game.to_dict(), record.black if record else "", record.white if record else "",
                  record.result if record else "", visits, seed, thresholds, noise, moves,
                  summarise(moves, thresholds), list(record.setup) if record else [],
                  None if final is None else {"result": final.result, "dead": final.dead})


class _Counter:
    """The count of each finished position asked for, found once (a playout of the judging net)."""

    def __init__(self, net):
        self.net = net
        self.found: dict[tuple[bytes, int], Count] = {}

    def __call__(self, finished: Position) -> Count:
        key = finished.board_array().tobytes(), finished.to_play
        if key not in self.found:
            go = cast(GoPosition, finished)  # only finished Go games are counted
            self.found[key] = count_finished(go, steady_evaluator(self.net, finished.game))
        return self.found[key]


def _ended_by_passes(position: Position) -> bool:
    return position.game.name == "go" and position.is_terminal() and getattr(position, "passes", 0) >= 2


def _ending_pass(position: Position) -> Position | None:
    """The finished position a pass here makes (Go, after a pass), else None."""
    if position.game.name != "go" or position.is_terminal() or getattr(position, "passes", 0) < 1:
        return None
    ended = position.play(cast(int, position.game.pass_action))  # Go has a pass
    return ended if _ended_by_passes(ended) else None


def _evaluator(net, game, seed: int | None):
    if isinstance(net, str) and net == "uniform":
        return UniformEvaluator(game)
    if hasattr(net, "evaluate"):
        return net
    return NetEvaluator(net, rng=np.random.default_rng(seed), with_ownership=True)


def _analyse(line: list[Position], judged: list[int], evaluator, visits: int, seed: int | None,
             config: ReviewConfig, progress: Callable[[int, int], None] | None) -> list[PositionAnalysis]:
    """The searches of the positions before the judged moves, all at once.

    ``progress(done, visits)`` after each net call: about ``done`` of the ``visits`` of every
    position are in (each call gives each position up to ``leaves_per_tree`` visits).
    """
    steps = [0]

    def on_step() -> None:
        steps[0] += 1
        if progress is not None:
            progress(min(visits, steps[0] * config.leaves_per_tree), visits)

    positions = [line[i] for i in judged]
    if not config.batched:  # the reference scripts/bench_review.py measures the batching against
        return [analyse_many([p], evaluator, visits, seed, leaves_per_tree=config.leaves_per_tree)[0]
                for p in positions]
    return analyse_many(positions, evaluator, visits, seed,
                        leaves_per_tree=config.leaves_per_tree, on_step=on_step if progress else None)


def _needs_own_search(analysis: PositionAnalysis, played: int, config: ReviewConfig) -> bool:
    if analysis.terminal or not analysis.moves or analysis.moves[0].move == played:
        return False
    info = analysis.move_info(played)
    return info is None or info.visits < config.min_played_visits


def _noise(game_name: str, visits: int, config: ReviewConfig) -> float:
    base = config.noise_points if game_name == "go" else config.noise_winrate
    return base * math.sqrt(config.noise_visits / max(visits, 1))


def _judge_move(line: list[Position], i: int, before: PositionAnalysis | None,
                after: PositionAnalysis | None, thresholds: Thresholds, noise: float,
                count: Callable[[Position], Count], decided: float | None = None) -> dict[str, Any]:
    """One move's entry (see the module docstring)."""
    position, made = line[i], line[i + 1]
    game = position.game
    played = _played(made)
    entry: dict[str, Any] = {"move_number": i + 1, "color": COLOUR_LETTER[position.to_play],
                             "move": game.action_to_vertex(played)}
    if before is None or not before.moves:
        entry.update(best_move=None, score_before=None, score_after=None, points_lost=None,
                     winrate_before=None, winrate_after=None, winrate_loss=None, pv=[],
                     played_visits=0, searched_again=False, **{"class": FORCED})
        return entry
    best = before.moves[0]
    info = before.move_info(played)
    wr_before, score_before = best.winrate, best.score_lead
    ended = _ending_pass(position) if game.pass_action in (best.move, played) else None
    counted = None if ended is None else _mover_view(count(ended).score, position.to_play)
    if counted is not None and best.move == game.pass_action:
        wr_before, score_before = counted
    if best.move == played:
        wr_after, score_after = wr_before, score_before
    elif counted is not None and played == game.pass_action:
        wr_after, score_after = counted
    elif after is not None:  # searched on its own: the position it made, from the opponent's side
        wr_after = 1.0 - after.winrate
        score_after = None if after.score_lead is None else -after.score_lead
    else:  # the tree visited the played move enough (_needs_own_search): its numbers are there
        assert info is not None
        wr_after, score_after = info.winrate, info.score_lead
    wr_loss = max(0.0, wr_before - wr_after)
    points = None
    if score_before is not None and score_after is not None:
        points = max(0.0, score_before - score_after)
    loss = points if thresholds.unit == "points" else wr_loss
    if loss is None:
        raise ValueError("a Go review needs a net with an ownership head (points lost)")
    entry.update(
        best_move=game.action_to_vertex(best.move),
        score_before=_round(score_before, 2), score_after=_round(score_after, 2),
        points_lost=_round(points, 2), winrate_before=round(wr_before, 4),
        winrate_after=round(wr_after, 4), winrate_loss=round(wr_loss, 4),
        pv=[game.action_to_vertex(a) for a in best.pv],
        played_visits=0 if info is None else info.visits, searched_again=after is not None,
        **{"class": "good" if loss < noise or stays_decided(wr_before, wr_after, decided)
           else thresholds.classify(loss)})
    return entry


def stays_decided(before: float, after: float, decided: float | None) -> bool:
    """Whether the judge calls the game won (or lost) for the mover both before and after the move."""
    if decided is None:
        return False
    return min(before, after) >= decided or max(before, after) <= 1.0 - decided


def _played(made: Position) -> int:
    """The move that made ``made`` (every position of a game's line after the first has one)."""
    if made.last_move is None:
        raise ValueError("a position of the game's line has no last move")
    return made.last_move


def _mover_view(black_score: float, mover: int) -> tuple[float, float]:
    """(winrate, score lead) of a count, from the side to move's view: a win is 1, a draw 0.5."""
    score = black_score if mover == BLACK else -black_score
    return (1.0 if score > 0 else 0.0 if score < 0 else 0.5), score


def _round(x: float | None, digits: int) -> float | None:
    return None if x is None else round(x, digits)


def summarise(moves: list[dict[str, Any]], thresholds: Thresholds) -> dict[str, dict[str, Any]]:
    """Per colour: the judged moves, the count of each class, the average loss and the match rate."""
    key = "points_lost" if thresholds.unit == "points" else "winrate_loss"
    summary = {}
    for colour in ("B", "W"):
        own = [m for m in moves if m["color"] == colour and m["class"] != FORCED]
        summary[colour] = {
            "moves": len(own),
            **{name: sum(m["class"] == name for m in own) for name in thresholds.classes},
            "forced": sum(m["color"] == colour and m["class"] == FORCED for m in moves),
            "average_loss": round(sum(m[key] for m in own) / len(own), 4) if own else 0.0,
            "match_rate": round(sum(m["move"] == m["best_move"] for m in own) / len(own), 4) if own else 0.0,
        }
    return summary


# ----------------------------------------------------------------------------- the game's line


def line_from_record(record: SgfRecord, source: str | Path = "") -> list[Position]:
    """The positions of an SGF game's main line from its setup stones on. ValueError: unplayable."""
    position = start_position(record.game, record.setup, record.moves[0][0] if record.moves else None)
    line = [position]
    for number, (colour, action) in enumerate(record.moves, start=1):
        if colour != position.to_play:
            where = f"{source}: " if source else ""
            raise ValueError(f"{where}move {number} is by {COLOUR_LETTER[colour]} but "
                             f"{COLOUR_LETTER[position.to_play]} was to play")
        position = position.play(action)  # IllegalMove (a ValueError) names the move
        line.append(position)
    if len(line) < 2:
        raise ValueError(f"{source}: the game has no moves to review" if source else "the game has no moves")
    return line


def opening_length(record: SgfRecord) -> int:
    """The opening moves a match imposed (zero9's ``GC[opening K: N moves]``), else 0."""
    found = _OPENING_NOTE.search(record.properties.get("GC", ""))
    return int(found.group(1)) if found else 0



