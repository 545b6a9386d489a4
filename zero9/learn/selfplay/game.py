"""A self-play game, one visible loop: give the move its budget, search it, resign or pick, record, play.

This is how one game of self-play goes, written as one loop (:func:`play_game`) over the search
of :mod:`zero9.search.mcts`. Workers play G games at a time instead, so that one net call serves
all of them: :mod:`zero9.learn.selfplay.lockstep` runs the same :class:`GameInPlay` steps from the
batched driver, on a fast tree **planted** in the readable one's place (the same methods, the
same search), and ``tests/test_selfplay_game.py`` checks that both give the same records.

Vocabulary (tree terms are :mod:`zero9.search.mcts`'s):

- **full / fast move** (playout cap randomisation, KataGo): a share ``full_search_share``
  of moves search ``visits`` with root noise and are **recorded** as policy targets;
  the others search ``fast_visits`` without noise and are not.
- **opening move** (leelaz-ninenine's cheap random opening): until a move number
  drawn uniformly from ``0..opening_moves``, moves search ``opening_visits``, are
  chosen in proportion to visits and are not recorded.
- **budget**: a move's root visits. It counts the visits the reused subtree already has
  (Leela Zero's ``-v``) and is at least one fresh simulation, so that new root noise counts.
- **the move**: in proportion to the root's visits for the first ``randomcnt`` moves
  (Leela Zero's ``-m``: varied games), the most visited afterwards. Gumbel search
  (:mod:`zero9.search.gumbel`) chooses its own move and policy target.
- **resignation**: below ``resign_threshold`` winrate (root Q) after ``resign_min_moves``
  moves. A share ``no_resign_share`` of games never resign; they note the first move at
  which each side *would* have resigned, so the false-resignation rate can be measured
  (Leela Zero's resignation analysis).
- **record**: a :class:`GameRecord` of :class:`MoveRecord` s; :mod:`zero9.learn.selfplay.pool`
  writes it as training data.
- **seed**: each game draws its random numbers (noise, budgets, openings) from its own
  seed, so a game plays the same alone or among others.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from zero9.games.game import Game, Position, opponent
from zero9.search.mcts import Tree, simulate
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


def check_config(config: SelfPlayConfig) -> None:
    if config.visits < 1 or config.parallel_games < 1 or config.leaves_per_tree < 1:
        raise ValueError("visits, parallel_games and leaves_per_tree must be >= 1")


def play_game(game: Game, evaluator, config: SelfPlayConfig, seed: int, index: int = 0,
              plant=None) -> GameRecord:
    """One self-play game from the empty board, its moves searched with ``evaluator`` (``plant``: see
    :class:`GameInPlay`)."""
    check_config(config)
    g = GameInPlay(game, config, seed, index, plant)
    while True:
        g.begin_move()  # this move's budget: full, fast or opening
        simulate(g.tree, evaluator, config.leaves_per_tree)  # search until it is spent
        if g.resign() or g.play(g.choose()):  # resign, or pick the move, record it and play it
            return g.record


class GameInPlay:
    """A self-play game between its moves: the search tree, the record so far, its own random numbers.

    ``plant(position, search_config, rng)`` makes the tree: by default :class:`zero9.search.mcts.Tree`;
    self-play's workers plant a fast one with the same methods
    (:func:`zero9.learn.selfplay.lockstep.fast_tree`: :mod:`zero9.search.puct`'s, Gumbel's, or the
    native fast path's). Gumbel self-play needs a tree that chooses its own move and policy target.
    """

    def __init__(self, game: Game, config: SelfPlayConfig, seed: int, index: int = 0, plant=None):
        self.game, self.cfg = game, config
        self.rng = np.random.default_rng(seed)
        position = game.new_position()
        tree_rng = np.random.default_rng(self.rng.integers(2**63))
        # Gumbel: the Gumbel sample explores, no root noise
        search = dataclasses.replace(config.search, noise=config.search.noise and not config.gumbel)
        self.tree: Tree = (plant or Tree)(position, search, tree_rng)
        if config.gumbel and not hasattr(self.tree, "policy_target"):
            raise ValueError("Gumbel self-play needs a Gumbel tree: "
                             "plant=zero9.learn.selfplay.lockstep.fast_tree(config)")
        self.noise = config.search.noise and not config.gumbel
        no_resign = bool(self.rng.random() < config.no_resign_share)
        self.record = GameRecord(game, [], position, 0, "", False, no_resign, index=index)
        self.opening_until = int(self.rng.integers(0, config.opening_moves + 1))  # 0: no opening moves
        min_moves = config.resign_min_moves
        self.resign_min_moves = min_moves if min_moves is not None else game.size * game.size // 4
        self.move_cap = config.move_cap if config.move_cap is not None else 2 * game.num_actions
        self.full = True  # the move being searched is a full (recorded) one

    def begin_move(self) -> None:
        """Decide the next move's kind (opening / fast / full) and give the tree its budget."""
        cfg, tree = self.cfg, self.tree
        if tree.root.position.move_number < self.opening_until:
            self.full, budget = False, cfg.opening_visits
        elif cfg.full_search_share >= 1.0 or self.rng.random() < cfg.full_search_share:
            self.full, budget = True, cfg.visits
        else:
            self.full, budget = False, cfg.fast_visits
        tree.set_noise(self.full and self.noise)
        tree.begin_search(visits=max(budget, tree.visits() + 1))  # at least one fresh simulation

    def resign(self) -> bool:
        """True (the game ends) when the side to move resigns; a no-resign game only notes it."""
        position, threshold = self.tree.root.position, self.cfg.resign_threshold
        if (threshold is None or threshold < 0 or position.move_number <= self.resign_min_moves
                or (self.tree.root.q_value() + 1) / 2 >= threshold):
            return False
        if self.record.no_resign:
            self.record.would_resign.setdefault(position.to_play, position.move_number)
            return False
        self.end(position.resign(), resigned=True)
        return True

    def choose(self) -> int:
        """The move: drawn by visits in the opening and the first ``randomcnt`` moves, else the best."""
        tree, move_number = self.tree, self.tree.root.position.move_number
        if self.cfg.gumbel:
            return tree.choose_action()
        return tree.choose_action(proportional=move_number < max(self.opening_until, self.cfg.randomcnt))

    def play(self, action: int) -> bool:
        """Record the move, play it (the subtree is kept); True when the game is over."""
        tree, position = self.tree, self.tree.root.position
        policy = tree.policy_target(self.game.num_actions) if self.cfg.gumbel else \
            tree.visit_policy(self.game.num_actions)
        recorded = self.full and position.move_number >= self.opening_until
        self.record.moves.append(MoveRecord(position, action, policy, tree.root.q_value(), tree.root.value,
                                            tree.visits(), recorded))
        tree.advance(action)
        final = tree.root.position
        if not final.is_terminal() and len(self.record.moves) < self.move_cap:
            return False
        while self.game.pass_action is not None and not final.is_terminal():
            final = final.play(self.game.pass_action)  # at the move cap Go passes out: the board is scored
        self.end(final)
        return True

    def end(self, final: Position, resigned: bool = False) -> None:
        record = self.record
        record.final, record.resigned = final, resigned
        record.winner = final.winner() if final.is_terminal() else 0
        record.result = final.result_string() if final.is_terminal() else "0"
