"""The native fast path (zero9.search.forest, zero9.search.native) is the same search as the readable one.

As ``tests/test_mcts_twins.py`` holds :mod:`zero9.search.puct` to :mod:`zero9.search.mcts`, this
holds the native trees to both: the same games move by move, each search with its own copy of
the fingerprint test's probe net behind a real NetEvaluator (features, random symmetries, cache),
the same seeds. After every search they must have asked for the same leaves in the same
batches, hold the same visits (to the bit: the same floats), the same root value, and choose
the same move. Then whole self-play runs (noise, playout cap randomisation, openings,
resignation, one and two batches in flight, tree reuse across compactions) must give the same
records on both paths.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_mcts_twins import Recording as TwinRecording
from test_mcts_twins import fast_search
from test_search_fingerprint import ProbeNet, probe_evaluator, selfplay_items

from zero9.games import make_game
from zero9.learn.selfplay.lockstep import play_games
from zero9.search import forest_gumbel, mcts, native, puct
from zero9.search.evaluator import NetEvaluator
from zero9.search.gumbel import GumbelTree
from zero9.settings import SearchConfig, SelfPlayConfig


class Recording(TwinRecording):
    """:class:`test_mcts_twins.Recording`, and the native path's batches of encoded leaves."""

    def evaluate_encoded(self, batch):
        self.batches.append([int(h) for h in batch.hashes])
        return self.evaluator.evaluate_encoded(batch)


def root_stats(tree) -> dict[int, tuple[float, float]]:
    root = tree.root
    if isinstance(tree, mcts.Tree):
        return {c.action: (c.N, c.W) for c in root.children}
    if not root.expanded:
        return {}
    return dict(zip(root.actions.tolist(), zip(root.N.tolist(), root.W.tolist(), strict=True), strict=True))


def play_triplets(game, config: SearchConfig, seed: int, positions: int, visits: int, leaves: int,
                  proportional_moves: int) -> int:
    rng = np.random.default_rng(seed)
    searched = 0
    while searched < positions:
        game_seed = int(rng.integers(2**31))
        start = game.new_position()
        forest = native.Forest(game, config, 1, nodes=64, edges=256)  # small: compactions and growth happen
        fast = forest.plant(0, start, dataclasses.replace(config), np.random.default_rng(game_seed))
        arrays = puct.Tree(start, dataclasses.replace(config), np.random.default_rng(game_seed))
        plain = mcts.Tree(start, dataclasses.replace(config), np.random.default_rng(game_seed))
        evals = [Recording(probe_evaluator(game, game_seed)) for _ in range(3)]
        while not arrays.root.position.is_terminal() and searched < positions:
            budget = max(visits, arrays.visits() + 1)
            native.search(fast, evals[0], visits=budget, leaves_per_call=leaves)
            fast_search(arrays, evals[1], budget, leaves)
            mcts.search(plain, evals[2], visits=budget, leaves_per_call=leaves)
            where = f"seed {seed}, game {game_seed}, move {arrays.root.position.move_number}"
            assert evals[0].batches == evals[1].batches == evals[2].batches, f"different leaves at {where}"
            assert root_stats(fast) == root_stats(arrays) == root_stats(plain), f"different root at {where}"
            assert (fast.playouts, fast.collisions, fast.visits()) == \
                (arrays.playouts, arrays.collisions, arrays.visits()), where
            assert fast.root.q_value() == arrays.root.q_value(), where
            assert np.array_equal(fast.visit_policy(game.num_actions), arrays.visit_policy(game.num_actions))
            proportional = arrays.root.position.move_number < proportional_moves
            action = arrays.choose_action(proportional)
            assert fast.choose_action(proportional) == action, f"different move at {where}"
            assert plain.choose_action(proportional) == action, f"different move at {where}"
            for tree in (fast, arrays, plain):
                tree.advance(action)
            assert fast.position.hash == arrays.root.position.hash
            searched += 1
    return searched


SETTINGS = [  # (game, config, visits, leaves per call, proportional moves, positions)
    ("go", SearchConfig(noise=True), 24, 8, 8, 120),
    ("go", SearchConfig(fpu_root_reduction=0.25, virtual_loss=3.0), 20, 4, 0, 100),
    ("gomoku", SearchConfig(noise=True), 32, 8, 6, 120),
    ("gomoku", SearchConfig(fpu_reduction=0.0, c_puct=1.5), 24, 1, 4, 80),
    ("go", SearchConfig(fpu_value=-1.0, virtual_loss=0.01), 16, 8, 0, 40),
    ("go", SearchConfig(fpu_value=0.0), 16, 1, 0, 40),
]


@pytest.mark.parametrize("name, config, visits, leaves, proportional, positions", SETTINGS)
def test_the_native_search_agrees_with_both_twins(name, config, visits, leaves, proportional, positions):
    game = make_game("go", 9) if name == "go" else make_game("gomoku", 9, connect=5)
    assert play_triplets(game, config, 11, positions, visits, leaves, proportional) == positions


@pytest.mark.parametrize("name, visits, leaves, m, positions", [
    ("go", 32, 4, 16, 120), ("go", 24, 8, 4, 60), ("gomoku", 32, 8, 16, 100), ("gomoku", 12, 1, 2, 40),
])
def test_native_gumbel_agrees_with_gumbel_tree(name, visits, leaves, m, positions):
    game = make_game("go", 9) if name == "go" else make_game("gomoku", 9, connect=5)
    config = SearchConfig()
    rng = np.random.default_rng(2)
    searched = 0
    while searched < positions:
        game_seed = int(rng.integers(2**31))
        start = game.new_position()
        forest = native.Forest(game, config, 1, nodes=64, edges=256, gumbel_actions=m)
        fast = forest.plant(0, start, dataclasses.replace(config), np.random.default_rng(game_seed))
        ref = GumbelTree(start, dataclasses.replace(config), np.random.default_rng(game_seed), num_actions=m)
        evals = [Recording(probe_evaluator(game, game_seed)) for _ in range(2)]
        while not ref.root.position.is_terminal() and searched < positions:
            native.search(fast, evals[0], visits=visits, leaves_per_call=leaves)
            fast_search(ref, evals[1], visits, leaves)
            where = f"game {game_seed}, move {ref.root.position.move_number}"
            assert evals[0].batches == evals[1].batches, f"different leaves at {where}"
            assert root_stats(fast) == root_stats(ref), f"different root at {where}"
            assert (fast.playouts, fast.collisions) == (ref.playouts, ref.collisions), where
            assert fast.root.q_value() == ref.root.q_value(), where
            a = game.num_actions
            assert np.array_equal(fast.policy_target(a), ref.policy_target(a)), where
            action = ref.choose_action()
            assert fast.choose_action() == action, f"different move at {where}"
            fast.advance(action)
            ref.advance(action)
            searched += 1


class LaterProbeNet(ProbeNet):
    """The probe net with the inference server's ticket API (two batches in flight)."""

    takes_bytes = True

    def submit(self, planes):
        return planes

    def collect(self, ticket):
        return self.predict(np.asarray(ticket, np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pairwise_sum_is_numpys(dtype):
    """The native sums of priors and values are numpy's, to the bit, for every length (blocks of 128,
    halves above) and offset."""
    rng = np.random.default_rng(1)
    for n in [*range(0, 300), 401, 625, 913, 1000, forest_gumbel.PAIRWISE_MOST]:
        x = (rng.random(n) * rng.choice([1e-3, 1.0, 1e3], n)).astype(dtype)
        for start in (0, 3):
            got = forest_gumbel.pairwise_sum(x, start, max(n - start, 0), dtype(0.0))
            assert got == np.add.reduce(x[start:]), (n, start)  # (float64 arithmetic would differ)


@pytest.mark.parametrize("name, in_flight, shape", [
    ("go", 1, dict(visits=24, fast_visits=8, full_search_share=0.5, opening_moves=6)),
    ("go", 2, dict(visits=16, randomcnt=4, resign_threshold=0.3, no_resign_share=0.5)),
    ("gomoku", 2, dict(visits=24, fast_visits=8, full_search_share=0.25)),
    ("gomoku", 1, dict(visits=16, search=SearchConfig(noise=True, fpu_reduction=0.2))),
    ("go", 2, dict(visits=16, gumbel=True, gumbel_actions=8, fast_visits=8, full_search_share=0.5)),
    ("gomoku", 1, dict(visits=24, gumbel=True, gumbel_actions=16)),
])
def test_native_selfplay_plays_the_python_games(monkeypatch, name, in_flight, shape):
    game = make_game("go", 7) if name == "go" else make_game("gomoku", 9, connect=5)
    config = SelfPlayConfig(parallel_games=5, leaves_per_tree=4, seed=3, in_flight=in_flight, **shape)
    records = {}
    for path in ("python", "native"):
        monkeypatch.setenv("ZERO9_SEARCH", path)
        net = (LaterProbeNet if in_flight == 2 else ProbeNet)(game.num_actions)
        evaluator = NetEvaluator(net, cache_size=500, rng=np.random.default_rng(5))
        records[path] = list(play_games(game, evaluator, 9, dataclasses.replace(config)))
    assert [r.index for r in records["native"]] == [r.index for r in records["python"]]
    ours, theirs = list(selfplay_items(records["native"])), list(selfplay_items(records["python"]))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b
    assert sum(len(r.moves) for r in records["native"]) > 100
