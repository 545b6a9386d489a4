"""Self-play games G at a time: the steps of :mod:`zero9.learn.selfplay.game`, from the batched driver.

:func:`zero9.learn.selfplay.game.play_game` plays one game as one loop. A worker plays G games
at once instead, so that each net call evaluates the leaves of all of them: the loop is turned
inside out. The batched driver (:func:`zero9.search.batched.search_slots`) searches every
game's tree; after each step, each game whose budget is spent resigns or plays its move
(:meth:`~zero9.learn.selfplay.game.GameInPlay.play`) and gets its next budget, and a game that
ends makes way for a new one. Each game draws from its own seed, so it plays exactly as it
would alone (``tests/test_selfplay_game.py``).

Vocabulary (tree terms are :mod:`zero9.search.puct`'s, G and K :mod:`zero9.search.batched`'s):

- **games in flight**: G slots, a game in each, K leaves of each per evaluator call.
- **two batches in flight** (``in_flight``, with the inference server): :mod:`zero9.search.batched`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np

from zero9.games import Game, make_game
from zero9.learn.selfplay.game import GameInPlay, GameRecord, MoveRecord, check_config, play_game
from zero9.search import fastpath, puct
from zero9.search.batched import search_slots
from zero9.search.evaluator import NetEvaluator
from zero9.search.gumbel import GumbelTree
from zero9.settings import SearchConfig, SelfPlayConfig

__all__ = ["GameInPlay", "GameRecord", "MoveRecord", "SelfPlay", "fast_tree", "play_game", "play_games"]


class SelfPlay:
    """``n_games`` games, G at a time; :meth:`games` yields each record as its game ends."""

    def __init__(self, game: Game, evaluator, n_games: int, config: SelfPlayConfig):
        self.game, self.evaluator, self.n_games, self.cfg = game, evaluator, n_games, config
        self.rng = np.random.default_rng(config.seed)  # draws each game's seed, in the order they start
        self.started = 0
        self.search = fastpath.selfplay_search(game, config, evaluator)  # "native" or "python"
        self.slots = None  # the native trees' arrays (zero9.search.native.Slots)

    def games(self) -> Iterator[GameRecord]:
        count = min(self.cfg.parallel_games, self.n_games)
        in_flight = self.cfg.in_flight if getattr(self.evaluator, "answers_later", False) else 1
        leaves = self.cfg.leaves_per_tree
        native = None
        if self.search == "native":
            from zero9.search import native  # (numba is imported only where the fast path runs)

            self.slots = native.Slots(self.game, self.cfg.search, count, halves=in_flight == 2,
                                      gumbel_actions=self.cfg.gumbel_actions if self.cfg.gumbel else 0)
        self.playing: list[GameInPlay | None] = [self.new_game(i) for i in range(count)]
        steps = (native.search_slots(self.slots, self.trees, self.evaluator, leaves, self.play_moves)
                 if native is not None else
                 search_slots(self.trees, self.evaluator, leaves, self.play_moves, in_flight))
        self.ended: list[GameRecord] = []
        for _ in steps:
            yield from self.ended
            self.ended.clear()

    def trees(self) -> list:
        """The tree of each slot (None for an empty one)."""
        return [g and g.tree for g in self.playing]

    def play_moves(self, slots: range) -> bool:
        """After each step: the games of ``slots`` whose budget is spent resign or play their move and get
        the next budget. A game that ends makes way for a new one; True then: the records go out."""
        for i in slots:
            g = self.playing[i]
            if g is None or g.tree.leaves_wanted(1) > 0:
                continue
            if g.resign() or g.play(g.choose()):
                self.ended.append(g.record)
                if self.slots is not None:
                    self.slots.release(i)
                self.playing[i] = self.new_game(i) if self.started < self.n_games else None
            else:
                g.begin_move()
        return bool(self.ended)

    def new_game(self, slot: int) -> GameInPlay:
        plant = fast_tree(self.cfg) if self.slots is None else lambda *tree: self.slots.plant(slot, *tree)
        g = GameInPlay(self.game, self.cfg, int(self.rng.integers(2**63)), index=self.started, plant=plant)
        self.started += 1
        g.begin_move()
        return g


def fast_tree(config: SelfPlayConfig):
    """The tree a worker plants in each game when the native fast path is off: :mod:`zero9.search.puct`'s,
    or with ``config.gumbel`` the Gumbel tree; the same methods as :class:`zero9.search.mcts.Tree`."""
    if config.gumbel:
        return functools.partial(GumbelTree, num_actions=config.gumbel_actions)
    return puct.Tree


def play_games(game: Game, evaluator, n_games: int, config: SelfPlayConfig | None = None
               ) -> Iterator[GameRecord]:
    """Play ``n_games`` self-play games, ``G`` at a time, yielding each :class:`GameRecord` as it ends.

    Game ``i`` (in the order they start) is :func:`play_game` with the ``i``-th seed drawn from
    ``config.seed``.
    """
    if n_games < 0:
        raise ValueError(f"n_games must be >= 0, got {n_games}")
    config = config or SelfPlayConfig()
    check_config(config)
    return SelfPlay(game, evaluator, n_games, config).games()


class _UniformNet:
    """A net that answers uniform priors and value 0 at once (the warm-up's)."""

    takes_bytes = True

    def __init__(self, actions: int):
        self.actions = actions

    def predict(self, planes):
        b = len(planes)
        return np.full((b, self.actions), 1.0 / self.actions, np.float32), np.zeros(b, np.float32)


class _LaterUniformNet(_UniformNet):
    """... with the inference server's ticket API (two batches in flight)."""

    def submit(self, planes):
        return self.predict(planes)

    def collect(self, ticket):
        return ticket


def warm_up_native() -> None:
    """Compile (or load from numba's cache) every step of the native fast path in this process, before
    worker processes start: they then load the cache instead of each compiling the same code at once in
    the middle of their games (on 16 cores, 15 workers compiling mid-game took two thirds of a bench's
    measured time). A game of each kind a worker plays, and a compaction. Nothing when it cannot run."""
    if fastpath.wanted() == "python" or not fastpath.numba_available():
        return
    from zero9.search import native  # (imports numba)

    go, gomoku = make_game("go", 5), make_game("gomoku", 5, connect=4)
    kinds = ((go, False, _LaterUniformNet), (go, True, _UniformNet), (gomoku, False, _UniformNet))
    for game, gumbel, net in kinds:
        config = SelfPlayConfig(visits=12, parallel_games=2, leaves_per_tree=4, gumbel=gumbel,
                                gumbel_actions=4, seed=0, resign_threshold=None)
        for _ in play_games(game, NetEvaluator(net(game.num_actions), cache_size=10), 2, config):
            pass
    forest = native.Forest(game, SearchConfig(), 1)
    tree = forest.plant(0, game.new_position(), SearchConfig(), np.random.default_rng(0))
    evaluator = NetEvaluator(_UniformNet(game.num_actions), cache_size=10)
    native.search(tree, evaluator, visits=8, leaves_per_call=2)
    forest.make_room(len(forest.nodes.flags), 0)  # a compaction
