"""Review and teaching in the window: the game judged move by move, and your moves checked as you play.

Vocabulary:

- **review**: the whole line judged move by move by
  :func:`zero9.arena.review.review_game`, the one review function ``zero9 review`` calls,
  on the same net with the seed :data:`REVIEW_SEED`, so ``zero9 review FILE --visits V
  --seed 0`` prints the window's numbers: per move the loss (Go: points lost; Gomoku:
  win rate lost) and its class, the better move and its line. :class:`Coach` keeps it
  while the line shown still starts with the line that was reviewed; the graph and the
  board show it.
- **teaching game** (KaTrain's teaching mode): with ``teaching`` on, each of your moves
  is judged by the same function (at ``teach_visits``) before the AI answers; a move whose
  class is in :data:`TEACH_STOPS` (a mistake or a blunder) stops the game with a
  :class:`TeachNote`: what it cost, the better move and its line, and Undo to try again
  (AI move plays on).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zero9.arena.review import black_scores, black_winrates, review_game
from zero9.games import Game, Position

REVIEW_VISITS = 64  # per position in the window's review: a 60-move game in about a minute on a laptop
REVIEW_SEED = 0  # the window's reviews are reproducible: zero9 review --seed 0 gives the same numbers
TEACH_VISITS = 64
TEACH_STOPS = ("mistake", "blunder")  # a teaching game stops at a mistake or worse
BAD_CLASSES = ("blunder", "mistake", "inaccuracy")  # marked on the graph and the stones


class Cancelled(ValueError):
    """A review stopped by the player (or by a change of the game)."""


@dataclass
class TeachNote:
    """What a teaching game says about your last move (see the module docstring)."""

    index: int  # line index of the position after your move
    move: int
    best: int | None
    pv: list[int]
    loss: str  # what it cost: '7.5 points' or '23%'
    kind: str  # the class: mistake, blunder


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 visit', '2 visits', '0 blunders' ('inaccuracy' -> 'inaccuracies' via ``many``)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def loss_text(move: dict) -> str:
    """What a reviewed move cost: points lost for Go ('7.5 points'), win rate lost for Gomoku ('23%')."""
    if move.get("points_lost") is not None:
        return plural_points(move["points_lost"])
    return f"{100 * (move.get('winrate_loss') or 0.0):.0f}%"


def plural_points(points: float) -> str:
    return f"{points:.1f} point{'' if round(points, 1) == 1 else 's'}"


def describe_reviewed(move: dict) -> str:
    """One line about a reviewed move: 'move 6 (W A9): blunder, lost 46%; better F5 (F5 B5 A5)'."""
    text = f"move {move['move_number']} ({move['color']} {move['move']}): {move['class']}, " \
           f"lost {loss_text(move)}"
    if move["best_move"] and move["best_move"] != move["move"]:
        text += f"; better {move['best_move']} ({' '.join(move['pv'][:6])})"
    return text


def review_summary(moves: list[dict]) -> str:
    counts = {c: sum(m["class"] == c for m in moves) for c in BAD_CLASSES}
    inaccuracies = plural(counts["inaccuracy"], "inaccuracy", "inaccuracies")
    return (f"review done: {plural(counts['blunder'], 'blunder')}, {plural(counts['mistake'], 'mistake')}, "
            f"{inaccuracies}; click the graph to jump to a move")


def judge_job(net: Any, line: list[Position], visits: int, forced: int = 0) -> tuple:
    """(job, cancel) judging ``line`` at ``visits`` per position with the one review function.

    ``net``: the engine's net (its evaluator is built with :data:`REVIEW_SEED`, as ``zero9
    review --seed`` builds it), or ``"uniform"`` without one. ``forced``: the first moves that were
    not the players' choice (a match's opening). Progress: visits done of ``visits``.
    """
    stop = threading.Event()

    def judge(progress: Callable) -> list[dict]:
        def step(done: int, total: int) -> None:
            if stop.is_set():
                raise Cancelled("review stopped")
            progress(done)

        return review_game(line, net, visits, REVIEW_SEED, progress=step, forced=forced).moves

    return judge, stop.set


class Coach:
    """The review of the line and the teaching game's state; the model asks it and feeds it results."""

    def __init__(self) -> None:
        self.review: list[dict] | None = None  # per move (index i-1 is the move to line[i])
        self.review_line: list[Position] = []  # the positions reviewed
        self.review_progress = 0
        self.review_visits = REVIEW_VISITS
        self.request: list[Position] | None = None  # the line waiting to be (or being) reviewed
        self.forced = 0  # the loaded game's opening moves that were imposed (never judged)
        self.teaching = False
        self.teach_visits = TEACH_VISITS
        self.teach_note: TeachNote | None = None
        self.checked: Position | None = None  # the last position whose move was checked

    # ---- the review ------------------------------------------------------------------------------

    def reviewed(self, line: list[Position]) -> list[dict] | None:
        """The review's moves while ``line`` still starts with the reviewed line, else None."""
        done = self.review_line
        if self.review is None or len(done) > len(line):
            return None
        return self.review if all(a is b for a, b in zip(done, line, strict=False)) else None

    def review_at(self, line: list[Position], index: int) -> dict | None:
        """The review of the move that leads to ``line[index]`` (None for the start or unreviewed)."""
        moves = self.reviewed(line)
        return moves[index - 1] if moves and 1 <= index <= len(moves) else None

    def black_winrates(self, line: list[Position]) -> list[float | None] | None:
        """Black's win rate after each move by the review (None past its end); None without a review."""
        moves = self.reviewed(line)
        if not moves:
            return None
        return black_winrates(moves) + [None] * (len(line) - len(moves) - 1)

    def black_scores(self, line: list[Position]) -> list[float | None] | None:
        """Black's score lead after each move by the review (Go); None without a review."""
        moves = self.reviewed(line)
        if not moves or moves[0].get("score_before", None) is None and all(
                m.get("score_after") is None for m in moves):
            return None
        return black_scores(moves) + [None] * (len(line) - len(moves) - 1)

    def start(self, line: list[Position]) -> None:
        self.request, self.review_progress = list(line), 0

    def take_review(self, tag: Position, value: Any, error: str) -> str | None:
        """A finished review job: the message to show (None when it was cancelled or replaced)."""
        line, self.request = self.request, None
        if line is None or line[-1] is not tag:
            return None
        if error:
            return f"review failed: {error}"
        self.review, self.review_line = value, line
        return review_summary(self.review)

    # ---- the teaching game -----------------------------------------------------------------------

    def set_teaching(self, on: bool, end: Position) -> str:
        self.teaching = on
        self.teach_note = None
        self.checked = end  # moves already played are not judged
        return f"teaching game {'on: each of your moves is checked' if on else 'off'}"

    def needs_check(self, end: Position, human: int, ended: bool) -> bool:
        """A teaching game judges your move at ``end`` before the AI answers it."""
        return (self.teaching and not ended and end is not self.checked
                and end.parent is not None and end.parent.to_play == human and self.teach_note is None)

    def take_teach(self, game: Game, index: int, pos: Position, move: dict) -> str | None:
        """A checked move: None when it is fine, else the note's message (and ``teach_note`` is set)."""
        self.checked = pos
        if move["class"] not in TEACH_STOPS:
            return None
        self.teach_note = TeachNote(
            index, pos.last_move,
            None if move["best_move"] is None else game.vertex_to_action(move["best_move"]),
            [game.vertex_to_action(v) for v in move["pv"]], loss_text(move), move["class"])
        better = f"; {move['best_move']} was better" if move["best_move"] else ""
        return (f"{move['move']} loses {loss_text(move)} ({move['class']}){better}. "
                "Undo to try again, or AI move to play on")


__all__ = ["Cancelled", "Coach", "TeachNote", "describe_reviewed", "judge_job", "plural", "review_summary"]
