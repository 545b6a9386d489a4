"""The self-play game's twins: the visible loop (zero9.learn.selfplay.game.play_game, on the readable
zero9.search.mcts tree) and the batched driver (zero9.learn.selfplay.lockstep.play_games, G games at a time,
one or two batches in flight, on the fast trees) give the same records, move for move; and a full move's
root has noise while a fast move's has none, on both trees."""

from __future__ import annotations

import numpy as np
import pytest
from test_search_fingerprint import ProbeNet

from zero9.games import make_game
from zero9.learn.selfplay.game import GameInPlay, play_game
from zero9.learn.selfplay.lockstep import fast_tree, play_games
from zero9.search import mcts, puct
from zero9.search.evaluator import NetEvaluator
from zero9.settings import SelfPlayConfig


def probe(game) -> NetEvaluator:
    # deterministic (no random symmetry): a leaf's evaluation does not depend on the batch it came in
    return NetEvaluator(ProbeNet(game.num_actions), cache_size=1000, random_symmetry=False)


def record_items(record):
    yield record.index, record.result, record.resigned, record.no_resign, sorted(record.would_resign.items())
    for m in record.moves:
        yield (m.action, m.value, m.raw_value, m.visits, m.recorded, m.policy.tobytes(), m.position.hash)


CONFIGS = [
    ("go", SelfPlayConfig(visits=24, parallel_games=3, leaves_per_tree=4, seed=5, randomcnt=6,
                          resign_threshold=0.3, resign_min_moves=10, no_resign_share=0.5,
                          full_search_share=0.5, fast_visits=8, opening_moves=4, opening_visits=6,
                          move_cap=60)),
    ("gomoku", SelfPlayConfig(visits=32, parallel_games=2, leaves_per_tree=8, seed=3, resign_threshold=None)),
    ("go", SelfPlayConfig(visits=16, parallel_games=2, leaves_per_tree=4, seed=4, gumbel=True,
                          gumbel_actions=8, resign_threshold=None, move_cap=30)),
]


@pytest.mark.parametrize("name, config", CONFIGS)
def test_the_loop_and_the_batched_games_give_the_same_records(name, config):
    game = make_game("go", 9) if name == "go" else make_game("gomoku", 7, connect=4)
    batched = sorted(play_games(game, probe(game), 4, config), key=lambda r: r.index)
    seeds = np.random.default_rng(config.seed).integers(2**63, size=4)
    # the readable tree, but for Gumbel (a fast tree only)
    plant = fast_tree(config) if config.gumbel else None
    loop = [play_game(game, probe(game), config, int(seed), index, plant) for index, seed in enumerate(seeds)]
    assert sum(len(r.moves) for r in loop) > 40
    for a, b in zip(loop, batched, strict=True):
        assert list(record_items(a)) == list(record_items(b))


def test_the_loop_plays_on_the_readable_tree_unless_another_is_planted():
    game, config = make_game("go", 9), SelfPlayConfig(seed=1)
    assert type(GameInPlay(game, config, seed=9).tree) is mcts.Tree
    assert type(GameInPlay(game, config, seed=9, plant=fast_tree(config)).tree) is puct.Tree
    with pytest.raises(ValueError, match="Gumbel self-play needs a Gumbel tree"):
        GameInPlay(game, SelfPlayConfig(gumbel=True), seed=9)


def root_noised(tree) -> bool | None:
    """Whether the root's priors are noised; None for a root not evaluated yet."""
    root = tree.root
    if isinstance(tree, mcts.Tree):
        return any(c.P != c.prior_before_noise for c in root.children) if root.evaluated else None
    if not root.expanded:
        return None
    return root.raw_prior is not None and not np.array_equal(root.P, root.raw_prior)


@pytest.mark.parametrize("plant", [None, puct.Tree], ids=["readable", "fast"])
def test_only_full_moves_search_with_root_noise(plant):
    game = make_game("go", 9)
    config = SelfPlayConfig(visits=24, fast_visits=8, full_search_share=0.5, leaves_per_tree=4, seed=1,
                            resign_threshold=None)
    g = GameInPlay(game, config, seed=9, plant=plant)
    evaluator = probe(game)
    kinds = set()
    for _ in range(30):
        g.begin_move()
        noised = root_noised(g.tree)
        if noised is not None:  # a reused root: its priors are noised exactly on full moves
            assert noised == g.full
            kinds.add(g.full)
        mcts.simulate(g.tree, evaluator, 4)
        if g.play(g.choose()):
            break
    assert kinds == {True, False}
