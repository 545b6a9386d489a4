"""Pure MCTS: the same tree as :mod:`zero9.search.puct`, with random rollouts instead of a net.

This is AlphaZero_Gomoku's ``mcts_pure.py`` beside its ``mcts_alphaZero.py``: put
:class:`RolloutEvaluator` where :class:`zero9.search.evaluator.NetEvaluator` would go and
nothing else changes. The difference teaches what the net buys: a prior that
narrows the search, and a value without playing the game out.

Vocabulary:

- **rollout** (playout to the end): from the leaf, both sides play random moves
  until the game ends; the result is the leaf's value (+1 / -1 / 0 from its side
  to move's view). In Go the random player never fills its own single-point eye
  and passes when nothing else is left (so games end and groups live), and a
  rollout longer than ``max_moves`` is scored as it stands (Tromp-Taylor).
- **prior**: uniform over all actions (the search renormalises over legal ones).
- **ladder**: rollout players at 1000, 2000, ..., 5000 playouts per move, the
  yardstick AlphaZero_Gomoku measures its nets against (:func:`rollout_player`).
  Pure MCTS wants a fixed first-play value (``fpu_value=1``: every move is tried
  once before any is tried twice, classic UCT) rather than the parent's one noisy
  rollout, and a larger ``c_puct`` (AlphaZero_Gomoku uses 5).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from zero9.games import BLACK, Game, Position
from zero9.search.player import SearchPlayer
from zero9.settings import PlayConfig, SearchConfig

PURE_C_PUCT = 5.0  # AlphaZero_Gomoku's pure-MCTS constant
LADDER = (1000, 2000, 3000, 4000, 5000)


def random_rollout(position: Position, rng: random.Random, max_moves: int | None = None) -> float:
    """Play random moves to the end; the result from ``position``'s side to move's view."""
    game = position.game
    colour = position.to_play
    limit = max_moves if max_moves is not None else 3 * game.size * game.size
    pos = position
    for _ in range(limit):
        if pos.is_terminal():
            return pos.result_value(colour)
        pos = pos.play(_random_move(pos, rng))
    if pos.is_terminal():
        return pos.result_value(colour)
    if hasattr(pos, "score"):  # Go: score the board as it stands
        score = pos.score()  # black minus white minus komi

        sign = 1.0 if colour == BLACK else -1.0
        return float(np.sign(score) * sign)
    return 0.0


def _random_move(pos: Position, rng: random.Random) -> int:
    moves = pos.legal_moves()
    pass_action = pos.game.pass_action
    is_eye = getattr(pos, "is_eye", None)
    if pass_action is None:
        return rng.choice(moves)
    # Go: a random non-pass move that does not fill an own eye; pass when none is left.
    candidates = [m for m in moves if m != pass_action]
    while candidates:
        k = rng.randrange(len(candidates))
        move = candidates[k]
        if is_eye is None or not is_eye(move, pos.to_play):
            return move
        candidates[k] = candidates[-1]
        candidates.pop()
    return pass_action


class RolloutEvaluator:
    """An evaluator: uniform priors, and the value of one random rollout per position."""

    def __init__(self, game: Game, seed: int | None = None, max_moves: int | None = None):
        self.game = game
        self.rng = random.Random(seed)
        self.max_moves = max_moves
        self._row = np.full(game.num_actions, 1.0 / game.num_actions, dtype=np.float32)

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        values = np.array([random_rollout(p, self.rng, self.max_moves) for p in positions], np.float32)
        return np.tile(self._row, (len(positions), 1)), values


def rollout_player(game: Game, playouts: int = 1000, seed: int | None = None,
                   time_per_move: float | None = None, batch_size: int = 1, root_parallel: int = 1):
    """A :class:`~zero9.search.player.SearchPlayer` searching ``playouts`` rollouts per move (the ladder),
    never resigning; ``batch_size`` 1 by default: rollouts gain nothing from batching, the search stays
    exact."""
    play = PlayConfig(visits=None, playouts=playouts, time_per_move=time_per_move, batch_size=batch_size,
                      root_parallel=root_parallel, resign_threshold=None)
    search = SearchConfig(c_puct=PURE_C_PUCT, fpu_value=1.0)
    return SearchPlayer(game, RolloutEvaluator(game, seed=seed), play, search, seed)
