"""The search's seeded behaviour, pinned: speed work on the tree, the evaluator, the features or the
batched driver must not change which moves are searched, played and recorded.

Each test runs a seeded search and hashes everything it produced (moves, visit counts,
backed-up values, policy targets) into a **fingerprint**, a SHA-256 digest compared with
the one recorded when the search last changed on purpose (commit 4ed9a38; the self-play ones
since each self-play game draws from its own seed and only full moves search with root noise,
issue 34; the Gumbel one since Gumbel's logits and softmax take the C library's log and exp,
the same on every CPU and in the native twin, issue 40). A change that
alters the search (a new default, a different tie break) must update the digests here in
the same commit and say why; a speed-up must leave them alone.

The evaluator behind :class:`~zero9.search.evaluator.NetEvaluator` is a **probe net**: a
fixed function of the input planes computed exactly in float32 (sums of small integers,
one division), so that the digests do not depend on a CPU's floating-point kernels, while
the priors still depend on the history planes, the side to move and the board's
orientation (so the random symmetry and the cache matter).
"""

from __future__ import annotations

import hashlib

import numpy as np

from zero9.games import make_game
from zero9.learn.selfplay.lockstep import play_games
from zero9.search.evaluator import NetEvaluator
from zero9.search.player import SearchPlayer
from zero9.search.puct import Tree, run_simulations
from zero9.settings import PlayConfig, SearchConfig, SelfPlayConfig


class ProbeNet:
    """``predict(planes) -> (priors, values)``, exactly computed: see the module docstring."""

    def __init__(self, num_actions: int):
        self.num_actions = num_actions

    def predict(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        b, c = planes.shape[:2]
        x = planes.reshape(b, c, -1)
        nn = x.shape[2]
        weight = np.arange(1, c + 1, dtype=np.float32)  # plane k counts k + 1 at its points
        points = 1.0 + np.einsum("bcp,c->bp", x, weight) + (np.arange(nn) % 7).astype(np.float32)
        scores = np.ones((b, self.num_actions), np.float32)  # pass (if any) keeps a weight of 1
        scores[:, :nn] = points
        priors = scores / scores.sum(axis=1, keepdims=True)
        values = ((x[:, 0].sum(axis=1) - x[:, c // 2].sum(axis=1)) / np.float32(nn)).astype(np.float32)
        return priors, values


def probe_evaluator(game, seed: int, cache_size: int = 100_000) -> NetEvaluator:
    return NetEvaluator(ProbeNet(game.num_actions), cache_size=cache_size, rng=np.random.default_rng(seed))


def digest(items) -> str:
    h = hashlib.sha256()
    for item in items:
        h.update(item.tobytes() if isinstance(item, np.ndarray) else repr(item).encode())
    return h.hexdigest()[:16]


def tree_items(tree: Tree):
    root = tree.root
    return [root.actions, root.N, root.W, root.P, tree.choose_action(), tree.playouts, tree.collisions]


def selfplay_items(records):
    for r in records:
        yield (r.index, r.result, r.resigned, r.no_resign, sorted(r.would_resign.items()))
        for m in r.moves:
            yield (m.action, m.value, m.raw_value, m.visits, m.recorded)
            yield m.policy


def test_run_simulations_fingerprint():
    game = make_game("go", 9)
    start = game.play_moves(["E5", "C3", "G7", "D4"])
    items = []
    configs = ((1, SearchConfig()), (8, SearchConfig(noise=True)), (4, SearchConfig(fpu_reduction=0.0)))
    for k, config in configs:
        tree = Tree(start, config, np.random.default_rng(k))
        run_simulations(tree, probe_evaluator(game, k), 300, batch_size=k)
        items += tree_items(tree)
    assert digest(items) == "b24fad3e629ea3ee"


def test_go_selfplay_fingerprint():
    game = make_game("go", 9)
    cfg = SelfPlayConfig(visits=24, parallel_games=3, leaves_per_tree=4, seed=5, randomcnt=6,
                         resign_threshold=0.3, resign_min_moves=10, no_resign_share=0.5,
                         full_search_share=0.5, fast_visits=8, opening_moves=4, opening_visits=6)
    records = list(play_games(game, probe_evaluator(game, 5, cache_size=500), 4, cfg))
    assert digest(selfplay_items(records)) == "660c4b1998d43f1b"


def test_gomoku_and_gumbel_selfplay_fingerprint():
    gomoku = make_game("gomoku", 7, connect=4)
    cfg = SelfPlayConfig(visits=32, parallel_games=2, leaves_per_tree=8, seed=3, resign_threshold=None)
    items = list(selfplay_items(play_games(gomoku, probe_evaluator(gomoku, 3), 2, cfg)))
    go = make_game("go", 9)
    gumbel = SelfPlayConfig(visits=32, parallel_games=2, leaves_per_tree=4, seed=4, gumbel=True,
                            gumbel_actions=8, resign_threshold=None, move_cap=40)
    items += selfplay_items(play_games(go, probe_evaluator(go, 4), 2, gumbel))
    assert digest(items) == "9e360647352ead37"


def test_search_player_fingerprint():
    game = make_game("go", 9)
    items = []
    settings = ((1, {}, {}), (2, {"batch_size": 8, "lcb": True}, {}),
                (3, {"root_parallel": 2}, {"noise": True}))
    for seed, play, search in settings:
        player = SearchPlayer(game, probe_evaluator(game, seed),
                              PlayConfig(visits=150, resign_threshold=None, **play), SearchConfig(**search),
                              seed=seed)
        position = game.new_position()
        for _ in range(6):
            decision = player.choose(position)
            items.append((decision.action, decision.visits, decision.winrate,
                          [(s.action, s.visits, s.pv) for s in decision.stats[:5]]))
            position = position.play(decision.action)
    assert digest(items) == "f34874363d0cb577"
