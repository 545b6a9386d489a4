"""Named AI levels: the shipped net's search made weaker on purpose, the way teaching programs do it.

Vocabulary:

- **level** (:class:`Level`): a name and three knobs. ``visits``: the search's visits per
  move (1 = the net's policy alone). ``top_k``: how many of the search's best moves may
  be chosen. ``temperature``: how the choice among those ``top_k`` is drawn; each
  candidate's **weight** is the mean of its share of the root visits and its prior,
  raised to ``1 / temperature`` (0 = always the best move, 1 = in proportion to the
  weight, higher = flatter).
- :data:`LEVELS`: Beginner, Casual, Club, Strong, Max, weakest first. Their measured
  strength (Elo against random play, GNU Go and each other) is the table in
  docs/levels.md, made by ``scripts/level_table.py``.
- **level spec** ``level:NAME`` (``zero9 match``, the window's level menu): a level on
  the shipped net for the game and size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from zero9.games import Game, Position
from zero9.search.player import Decision, SearchPlayer
from zero9.search.puct import draw_by_visits
from zero9.settings import PlayConfig


@dataclass(frozen=True)
class Level:
    name: str
    visits: int
    top_k: int = 1
    temperature: float = 0.0

    def __post_init__(self):
        if self.visits < 1 or self.top_k < 1 or self.temperature < 0:
            raise ValueError(f"level {self.name}: visits and top_k must be >= 1 and temperature >= 0")


LEVELS: dict[str, Level] = {level.name.lower(): level for level in (
    Level("Beginner", visits=1, top_k=40, temperature=2.0),
    Level("Casual", visits=1, top_k=8, temperature=1.0),
    Level("Club", visits=16, top_k=3, temperature=0.5),
    Level("Strong", visits=200),
    Level("Max", visits=800),
)}


def level_playing(name: str, visits: int) -> Level | None:
    """The level called ``name`` when it plays at ``visits`` (its own); None when the visits were set to
    another number (a custom strength: the best move at those visits)."""
    level = LEVELS.get(name)
    return level if level is not None and level.visits == visits else None


def name_for_visits(name: str, visits: int) -> str:
    """The name the window and ``zero9 play`` show for ``visits`` chosen after level ``name``: ``name``
    while it plays at those visits, else the weakest level that does, else "custom"."""
    if level_playing(name, visits) is not None:
        return name
    return next((key for key, level in LEVELS.items() if level.visits == visits), "custom")


def find_level(name: str) -> Level:
    """The level called ``name`` (any case). ValueError naming the known levels."""
    try:
        return LEVELS[name.strip().lower()]
    except KeyError:
        known = ", ".join(level.name for level in LEVELS.values())
        raise ValueError(f"unknown level {name!r}: expected one of {known}") from None


def choose_weakened(visits: np.ndarray, priors: np.ndarray, level: Level, rng: np.random.Generator) -> int:
    """Draw an action among the ``top_k`` best by (visits, prior); see the module docstring for the weights.

    ``visits`` and ``priors`` are per action (``[A]``); illegal actions have prior 0 and no visits.
    """
    ranked = np.lexsort((priors, visits))[::-1][:level.top_k]
    order = [int(a) for a in ranked if visits[a] > 0 or priors[a] > 0]
    if level.temperature == 0 or len(order) == 1:
        return order[0]
    n, p = visits[order].astype(np.float64), priors[order].astype(np.float64)
    share = n / n.sum() if n.sum() > 0 else p
    return draw_by_visits(order, (share + p / max(p.sum(), 1e-12)) / 2, rng, level.temperature)


def weakened_action(player: SearchPlayer, position: Position, decision: Decision, level: Level,
                    rng: np.random.Generator) -> int:
    """The move ``level`` plays after ``player`` searched ``position`` and decided ``decision``."""
    if level.top_k == 1 or decision.resign:
        return decision.action
    visits = np.zeros(position.game.num_actions)
    for s in decision.stats:
        visits[s.action] = s.visits
    legal = np.zeros(position.game.num_actions, dtype=bool)
    legal[position.legal_moves()] = True
    priors = np.where(legal, player.policy(position), 0.0)
    return choose_weakened(visits, priors, level, rng)


class LevelPlayer:
    """A SearchPlayer whose move is drawn by :func:`choose_weakened`; it never resigns."""

    def __init__(self, game: Game, evaluator, level: Level, seed: int | None = None):
        self.level = level
        # weakened levels keep the search's own tactics: threat search only where the level plays its best
        play = PlayConfig(visits=level.visits, resign_threshold=None,
                          threats=PlayConfig.threats and level.top_k == 1)
        self.search = SearchPlayer(game, evaluator, play, seed=seed)
        self.rng = np.random.default_rng(seed)

    def genmove(self, position: Position) -> int:
        return weakened_action(self.search, position, self.search.choose(position), self.level, self.rng)

    def reset(self) -> None:
        self.search.reset()
