"""The readable search (zero9.search.mcts) and the fast one (zero9.search.puct) are the same search.

Both trees play the same games move by move, each with its own copy of the same evaluator
(the fingerprint test's probe net behind a real NetEvaluator: features, random symmetries,
cache) and the same seeds. After every search they must have asked the evaluator for the
same leaves in the same batches, hold the same visit counts at the root, have done the same
playouts and hit the same collisions, and choose the same move (the best, or one drawn in
proportion to visits). Between searches the chosen move is played on both (tree reuse), with
root noise, first-play urgency and virtual loss (several leaves per call) switched on and off
across the settings. A search of a root position counts as one position: the test covers
over a thousand of them, Go and Gomoku.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_search_fingerprint import probe_evaluator

from zero9.games import make_game
from zero9.search import mcts, puct
from zero9.settings import SearchConfig


class Recording:
    """An evaluator that notes the hashes of every batch it is asked."""

    def __init__(self, evaluator):
        self.evaluator, self.batches = evaluator, []

    def evaluate(self, positions):
        self.batches.append([p.hash for p in positions])
        return self.evaluator.evaluate(positions)


def fast_search(tree: puct.Tree, evaluator, visits: int, leaves: int) -> None:
    tree.begin_search(visits=visits)
    while (k := tree.leaves_wanted(leaves)) > 0:
        puct.evaluate_leaves(evaluator, puct.collect_leaves(tree, k))


def root_visits(tree) -> dict[int, float]:
    if isinstance(tree, puct.Tree):
        root = tree.root
        return {} if not root.expanded else dict(zip(root.actions.tolist(), root.N.tolist(), strict=True))
    return {c.action: c.N for c in tree.root.children}


def play_twins(game, config: SearchConfig, seed: int, positions: int, visits: int, leaves: int,
               proportional_moves: int) -> tuple[int, int]:
    """Search ``positions`` root positions with both trees, games one after another; returns the positions
    and the collisions (virtual loss sending two leaves of a batch to the same node)."""
    rng = np.random.default_rng(seed)
    searched = collisions = 0
    while searched < positions:
        game_seed = int(rng.integers(2**31))
        start = game.new_position()
        fast = puct.Tree(start, config, np.random.default_rng(game_seed))
        plain = mcts.Tree(start, config, np.random.default_rng(game_seed))
        fast_eval = Recording(probe_evaluator(game, game_seed))
        plain_eval = Recording(probe_evaluator(game, game_seed))
        while not fast.root.position.is_terminal() and searched < positions:
            collisions -= fast.collisions
            budget = max(visits, fast.visits() + 1)
            fast_search(fast, fast_eval, budget, leaves)
            mcts.search(plain, plain_eval, visits=budget, leaves_per_call=leaves)
            where = f"seed {seed}, game {game_seed}, move {fast.root.position.move_number}"
            assert plain_eval.batches == fast_eval.batches, f"different leaves asked at {where}"
            assert root_visits(plain) == root_visits(fast), f"different root visits at {where}"
            assert (plain.playouts, plain.collisions, plain.visits()) == \
                (fast.playouts, fast.collisions, fast.visits()), where
            assert plain.root.q_value() == fast.root.q_value(), where
            assert np.array_equal(plain.visit_policy(game.num_actions), fast.visit_policy(game.num_actions))
            proportional = fast.root.position.move_number < proportional_moves
            action = fast.choose_action(proportional)
            assert plain.choose_action(proportional) == action, f"different move at {where}"
            collisions += fast.collisions
            fast.advance(action)
            plain.advance(action)
            searched += 1
    return searched, collisions


SETTINGS = [  # (game, config, visits, leaves per call, proportional moves, positions)
    ("go", SearchConfig(noise=True), 24, 8, 8, 260),
    ("go", SearchConfig(fpu_root_reduction=0.25, virtual_loss=3.0), 20, 4, 0, 260),
    ("gomoku", SearchConfig(noise=True), 32, 8, 6, 260),
    ("gomoku", SearchConfig(fpu_reduction=0.0, c_puct=1.5), 24, 1, 4, 260),
    ("go", SearchConfig(fpu_value=-1.0, virtual_loss=0.01), 16, 8, 0, 60),
    ("go", SearchConfig(fpu_value=0.0), 16, 1, 0, 60),
]


@pytest.mark.parametrize("name, config, visits, leaves, proportional, positions", SETTINGS)
def test_the_readable_and_the_fast_search_agree(name, config, visits, leaves, proportional, positions):
    game = make_game("go", 9) if name == "go" else make_game("gomoku", 9, connect=5)
    searched, collisions = play_twins(game, config, 7, positions, visits, leaves, proportional)
    assert searched == positions
    if config.virtual_loss < 1 and leaves > 1:  # a small virtual loss: leaves of a batch meet, and are undone
        assert collisions > 0


def test_the_twins_cover_a_thousand_positions():
    assert sum(s[-1] for s in SETTINGS) >= 1000


def test_draw_by_visits_is_proportional_and_sharpens_with_temperature():
    rng = np.random.default_rng(0)
    actions = np.array([10, 20, 30])
    counts = {a: 0 for a in actions.tolist()}
    for _ in range(3000):
        counts[puct.draw_by_visits(actions, [1.0, 0.0, 3.0], rng)] += 1
    assert counts[20] == 0 and 600 < counts[10] < 900 and 2100 < counts[30] < 2400
    cold = [puct.draw_by_visits(actions, [1.0, 0.0, 3.0], rng, temperature=0.1) for _ in range(200)]
    assert cold.count(30) == 200
