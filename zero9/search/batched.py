"""Many trees, one net call: the batched multi-game driver (G games x K leaves per call).

Vocabulary:

- **G** (``parallel_games``): games played at once, one search tree each.
- **K** (``leaves_per_tree``): leaves each tree selects (with virtual loss) before
  the net is called; one call evaluates up to ``G * K`` positions. A GPU wants
  hundreds per call; a CPU core wants a few dozen.
- **step**: collect leaves from every tree that still needs simulations, one
  ``evaluator.evaluate`` call, expand and back up each leaf. With ``K = 1`` a tree
  goes through exactly the simulations of :func:`zero9.search.puct.run_simulations`
  (same selection code, same order), which the tests check.
- **full / fast move** (playout cap randomisation, KataGo): a share
  ``full_search_share`` of moves search ``visits`` with root noise and are
  **recorded** as policy targets; the others search ``fast_visits`` without noise
  and are not.
- **opening move** (leelaz-ninenine's cheap random opening): until a move number
  drawn uniformly from ``0..opening_moves``, moves are chosen in proportion to
  ``opening_visits`` visits and not recorded.
- **no-resign game**: a share ``no_resign_share`` of games never resign; they note
  the first move at which each side *would* have resigned, so the false-resignation
  rate can be measured (Leela Zero's resignation analysis).

The record format (what :mod:`zero9.learn.selfplay` turns into training chunks) is
:class:`GameRecord` / :class:`MoveRecord` below.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from zero9.games import Game, Position, opponent
from zero9.search.gumbel import GumbelTree
from zero9.search.puct import Tree, checked_values, collect_leaves, gc_paused
from zero9.settings import SelfPlayConfig


@dataclass
class MoveRecord:
    """One move of a self-play game."""

    position: Position  # before the move (its .parent chain is the history the planes need)
    action: int  # the move played
    policy: np.ndarray  # float32 [A]: root visit distribution (Gumbel: the completed-Q improved policy)
    value: float  # root Q after the search, [-1, 1], the side to move's view
    raw_value: float  # the evaluator's value of the position, same view
    visits: int  # root visits when the move was chosen
    recorded: bool  # True: a full search, write it as a training target; False: fast/opening move


@dataclass
class GameRecord:
    """A finished self-play game: every move, and the result."""

    game: Game
    moves: list[MoveRecord]
    final: Position  # the terminal position (after a resignation: the resigned position)
    winner: int  # BLACK, WHITE or EMPTY (draw)
    result: str  # 'B+3.5', 'W+R', '0', ...
    resigned: bool
    no_resign: bool  # resignation was off in this game (to count false resignations)
    would_resign: dict[int, int] = field(default_factory=dict)  # colour -> first move index it would resign
    index: int = 0  # 0-based order in which the game was started

    @property
    def false_resignation(self) -> bool | None:
        """In a no-resign game: True if a side that would have resigned did not lose; None otherwise."""
        if not self.no_resign or not self.would_resign:
            return None
        return any(self.winner != opponent(c) for c in self.would_resign)


def search_trees(trees: Sequence[Tree], evaluator, visits: int | None = None, playouts: int | None = None,
                 leaves_per_tree: int = 1, deadline: float | None = None,
                 stop: threading.Event | None = None, on_step: Callable[[], None] | None = None) -> int:
    """Search every tree until it reaches ``visits`` (root ΣN) and/or ``playouts`` (new simulations).

    One evaluator call per step serves up to ``len(trees) * leaves_per_tree`` leaves.
    ``deadline`` is a ``time.monotonic()`` value; ``stop`` an event checked every step.
    Returns the simulations done (all trees).
    """
    start = [t.playouts for t in trees]

    def wants(j: int, t: Tree) -> int:
        if t.root.terminal:
            return 0
        need = leaves_per_tree
        if visits is not None:
            need = min(need, visits - t.visits())
        if playouts is not None:
            need = min(need, playouts - (t.playouts - start[j]))
        return max(need, 1 if not t.root.expanded else 0)

    with gc_paused():
        while True:
            if stop is not None and stop.is_set():
                break
            if deadline is not None and time.monotonic() >= deadline:
                break
            batch = []
            active = False
            for j, t in enumerate(trees):
                k = wants(j, t)
                if k > 0:
                    active = True
                    batch.extend((t, leaf) for leaf in collect_leaves(t, k))
            if not active:
                break
            evaluate_leaves(evaluator, batch)
            if on_step is not None:
                on_step()
    return sum(t.playouts - s for t, s in zip(trees, start, strict=True))


def evaluate_leaves(evaluator, batch: list) -> None:
    """One evaluator call for ``[(tree, leaf), ...]``, then expand and back up each."""
    if not batch:
        return
    priors, values = evaluator.evaluate([leaf.node.position for _, leaf in batch])
    values = checked_values(priors, values, len(batch))  # (lengths checked: no strict zip)
    for (tree, leaf), p, v in zip(batch, priors, values, strict=False):
        tree.expand_and_backup(leaf, p, v)


# --- self-play ------------------------------------------------------------------------------


@dataclass
class _Slot:
    """One game in progress."""

    tree: Tree
    record: GameRecord
    target: int = 0  # visits (PUCT) or playouts (Gumbel) for the current move
    playouts_at_start: int = 0
    full: bool = True
    opening_until: int = 0


class _SelfPlay:
    def __init__(self, game: Game, evaluator, n_games: int, config: SelfPlayConfig):
        self.game, self.evaluator, self.n_games, self.cfg = game, evaluator, n_games, config
        self.rng = np.random.default_rng(config.seed)
        points = game.size * game.size
        min_moves = config.resign_min_moves
        self.resign_min_moves = min_moves if min_moves is not None else points // 4
        self.move_cap = config.move_cap if config.move_cap is not None else 2 * game.num_actions
        self.started = 0

    def new_slot(self) -> _Slot:
        cfg = self.cfg
        position = self.game.new_position()
        rng = np.random.default_rng(self.rng.integers(2**63))
        if cfg.gumbel:
            tree: Tree = GumbelTree(position, dataclasses.replace(cfg.search, noise=False), rng,
                                    num_actions=cfg.gumbel_actions)
        else:
            tree = Tree(position, dataclasses.replace(cfg.search), rng)
        no_resign = self.rng.random() < cfg.no_resign_share
        record = GameRecord(self.game, [], position, 0, "", False, no_resign, index=self.started)
        self.started += 1
        slot = _Slot(tree, record, opening_until=int(self.rng.integers(0, cfg.opening_moves + 1)))
        self.begin_move(slot)
        return slot

    def begin_move(self, slot: _Slot) -> None:
        """Decide the next move's kind (opening / fast / full) and its search budget."""
        cfg, tree = self.cfg, slot.tree
        move_number = tree.root.position.move_number
        if move_number < slot.opening_until and cfg.opening_moves > 0:
            slot.full, budget = False, cfg.opening_visits
        elif cfg.full_search_share >= 1.0 or self.rng.random() < cfg.full_search_share:
            slot.full, budget = True, cfg.visits
        else:
            slot.full, budget = False, cfg.fast_visits
        tree.config.noise = slot.full and cfg.search.noise and not cfg.gumbel
        slot.playouts_at_start = tree.playouts
        slot.target = budget
        if cfg.gumbel:
            tree.begin_search(budget)

    def wants(self, slot: _Slot) -> int:
        tree = slot.tree
        if not tree.root.expanded:
            return 1
        new = tree.playouts - slot.playouts_at_start
        left = (slot.target - new) if self.cfg.gumbel else (slot.target - tree.visits())
        if new == 0:
            left = max(left, 1)  # at least one fresh simulation (noise must matter)
        return min(left, self.cfg.leaves_per_tree)

    def finish_move(self, slot: _Slot) -> bool:
        """Choose and play the move; True when the game is over."""
        cfg, tree, record = self.cfg, slot.tree, slot.record
        position = tree.root.position
        root_q = tree.root.q_value()
        winrate = (root_q + 1) / 2
        threshold = cfg.resign_threshold
        if (threshold is not None and threshold >= 0 and position.move_number > self.resign_min_moves
                and winrate < threshold):
            colour = position.to_play
            if record.no_resign:
                record.would_resign.setdefault(colour, position.move_number)
            else:
                self.end(record, position.resign(), resigned=True)
                return True
        opening = position.move_number < slot.opening_until
        proportional = opening or position.move_number < cfg.randomcnt
        if cfg.gumbel:
            action = tree.choose_action()
            policy = tree.policy_target(self.game.num_actions)
        else:
            action = tree.choose_action(proportional=proportional)
            policy = tree.visit_policy(self.game.num_actions)
        record.moves.append(MoveRecord(position, action, policy, root_q, tree.root.value, tree.visits(),
                                       slot.full and not opening))
        tree.advance(action)
        final = tree.root.position
        if final.is_terminal():
            self.end(record, final)
            return True
        if len(record.moves) >= self.move_cap:
            while self.game.pass_action is not None and not final.is_terminal():
                final = final.play(self.game.pass_action)
            self.end(record, final)
            return True
        self.begin_move(slot)
        return False

    @staticmethod
    def end(record: GameRecord, final: Position, resigned: bool = False) -> None:
        record.final = final
        record.resigned = resigned
        record.winner = final.winner() if final.is_terminal() else 0
        record.result = final.result_string() if final.is_terminal() else "0"

    def run(self) -> Iterator[GameRecord]:
        slots = [self.new_slot() for _ in range(min(self.cfg.parallel_games, self.n_games))]
        while slots:
            with gc_paused():
                batch = []
                for slot in slots:
                    batch.extend((slot.tree, leaf) for leaf in collect_leaves(slot.tree, self.wants(slot)))
                evaluate_leaves(self.evaluator, batch)
            still = []
            for slot in slots:
                if self.wants(slot) > 0 or not self.finish_move(slot):
                    still.append(slot)
                    continue
                yield slot.record
                if self.started < self.n_games:
                    still.append(self.new_slot())
            slots = still


def play_games(game: Game, evaluator, n_games: int, config: SelfPlayConfig | None = None
               ) -> Iterator[GameRecord]:
    """Play ``n_games`` self-play games, ``G`` at a time, yielding each :class:`GameRecord` as it ends."""
    if n_games < 0:
        raise ValueError(f"n_games must be >= 0, got {n_games}")
    config = config or SelfPlayConfig()
    if config.visits < 1 or config.parallel_games < 1 or config.leaves_per_tree < 1:
        raise ValueError("visits, parallel_games and leaves_per_tree must be >= 1")
    return _SelfPlay(game, evaluator, n_games, config).run()

