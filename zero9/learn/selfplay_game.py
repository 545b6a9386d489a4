"""Self-play games: how each move is searched, chosen and recorded, G games at a time.

Vocabulary (tree terms are :mod:`zero9.search.puct`'s, G and K :mod:`zero9.search.batched`'s):

- **games in flight**: G games, a search tree each, K leaves of each per evaluator call
  (:func:`zero9.search.batched.search_trees`); a game whose search is done plays its
  move at once, while the others search on.
- **full / fast move** (playout cap randomisation, KataGo): a share ``full_search_share``
  of moves search ``visits`` with root noise and are **recorded** as policy targets;
  the others search ``fast_visits`` without noise and are not.
- **opening move** (leelaz-ninenine's cheap random opening): until a move number
  drawn uniformly from ``0..opening_moves``, moves search ``opening_visits``, are
  chosen in proportion to visits and are not recorded.
- **the move**: in proportion to the root's visits for the first ``randomcnt`` moves
  (Leela Zero's ``-m``: varied games), the most visited afterwards. A move's budget
  counts the reused subtree's visits (Leela Zero's ``-v``) and is at least one fresh
  simulation, so that the new root noise counts. Gumbel search
  (:mod:`zero9.search.gumbel`) chooses its own move from a fresh root.
- **resignation**: below ``resign_threshold`` winrate (root Q) after
  ``resign_min_moves`` moves. A share ``no_resign_share`` of games never resign; they
  note the first move at which each side *would* have resigned, so the
  false-resignation rate can be measured (Leela Zero's resignation analysis).
- **two batches in flight** (``in_flight``, with the inference server): :mod:`zero9.search.batched`.
- **record**: a :class:`GameRecord` of :class:`MoveRecord` s; :mod:`zero9.learn.selfplay` writes it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from zero9.games import Game, Position, opponent
from zero9.search.batched import search_slots
from zero9.search.gumbel import GumbelTree
from zero9.search.puct import Tree
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


@dataclass
class _Game:
    """One game in flight."""

    tree: Tree
    record: GameRecord
    opening_until: int  # moves before this move number are opening moves
    full: bool = True  # the move being searched is a full (recorded) one


class SelfPlay:
    """``n_games`` games, G at a time; :meth:`games` yields each record as its game ends."""

    def __init__(self, game: Game, evaluator, n_games: int, config: SelfPlayConfig):
        self.game, self.evaluator, self.n_games, self.cfg = game, evaluator, n_games, config
        self.rng = np.random.default_rng(config.seed)
        min_moves = config.resign_min_moves
        self.resign_min_moves = min_moves if min_moves is not None else game.size * game.size // 4
        self.move_cap = config.move_cap if config.move_cap is not None else 2 * game.num_actions
        self.started = 0

    def games(self) -> Iterator[GameRecord]:
        playing: list[_Game | None] = [self.new_game() for _ in range(min(self.cfg.parallel_games,
                                                                          self.n_games))]
        ended: list[GameRecord] = []
        in_flight = self.cfg.in_flight if getattr(self.evaluator, "answers_later", False) else 1
        trees = lambda: [g and g.tree for g in playing]  # noqa: E731 (None for an empty slot)
        for _ in search_slots(trees, self.evaluator, self.cfg.leaves_per_tree,
                              functools.partial(self.play_moves, playing, ended), in_flight):
            yield from ended
            ended.clear()

    def play_moves(self, playing: list[_Game | None], ended: list[GameRecord], slots: range) -> bool:
        """After each step: play the move of each game of ``slots`` whose search is done. A game that
        ends makes way for a new one (None once all are started); True then: the records go out."""
        for i in slots:
            g = playing[i]
            if g is not None and g.tree.leaves_wanted(1) == 0 and self.play_move(g):
                ended.append(g.record)
                playing[i] = self.new_game() if self.started < self.n_games else None
        return bool(ended)

    def new_game(self) -> _Game:
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
        g = _Game(tree, record, opening_until=int(self.rng.integers(0, cfg.opening_moves + 1)))
        self.begin_move(g)
        return g

    def begin_move(self, g: _Game) -> None:
        """Decide the next move's kind (opening / fast / full) and give its tree the search budget."""
        cfg, tree = self.cfg, g.tree
        if tree.root.position.move_number < g.opening_until and cfg.opening_moves > 0:
            g.full, budget = False, cfg.opening_visits
        elif cfg.full_search_share >= 1.0 or self.rng.random() < cfg.full_search_share:
            g.full, budget = True, cfg.visits
        else:
            g.full, budget = False, cfg.fast_visits
        tree.config.noise = g.full and cfg.search.noise and not cfg.gumbel
        tree.begin_search(visits=max(budget, tree.visits() + 1))  # at least one fresh simulation

    def play_move(self, g: _Game) -> bool:
        """Resign, or choose the move, record it and play it; True when the game is over."""
        cfg, tree, record = self.cfg, g.tree, g.record
        position = tree.root.position
        root_q = tree.root.q_value()
        threshold = cfg.resign_threshold
        if (threshold is not None and threshold >= 0 and position.move_number > self.resign_min_moves
                and (root_q + 1) / 2 < threshold):
            if not record.no_resign:
                self.end(record, position.resign(), resigned=True)
                return True
            record.would_resign.setdefault(position.to_play, position.move_number)
        opening = position.move_number < g.opening_until
        if cfg.gumbel:
            action = tree.choose_action()
            policy = tree.policy_target(self.game.num_actions)
        else:
            action = tree.choose_action(proportional=opening or position.move_number < cfg.randomcnt)
            policy = tree.visit_policy(self.game.num_actions)
        record.moves.append(MoveRecord(position, action, policy, root_q, tree.root.value, tree.visits(),
                                       g.full and not opening))
        tree.advance(action)
        final = tree.root.position
        if not final.is_terminal() and len(record.moves) < self.move_cap:
            self.begin_move(g)
            return False
        while self.game.pass_action is not None and not final.is_terminal():
            final = final.play(self.game.pass_action)  # at the move cap Go passes out: the board is scored
        self.end(record, final)
        return True

    @staticmethod
    def end(record: GameRecord, final: Position, resigned: bool = False) -> None:
        record.final, record.resigned = final, resigned
        record.winner = final.winner() if final.is_terminal() else 0
        record.result = final.result_string() if final.is_terminal() else "0"


def play_games(game: Game, evaluator, n_games: int, config: SelfPlayConfig | None = None
               ) -> Iterator[GameRecord]:
    """Play ``n_games`` self-play games, ``G`` at a time, yielding each :class:`GameRecord` as it ends."""
    if n_games < 0:
        raise ValueError(f"n_games must be >= 0, got {n_games}")
    config = config or SelfPlayConfig()
    if config.visits < 1 or config.parallel_games < 1 or config.leaves_per_tree < 1:
        raise ValueError("visits, parallel_games and leaves_per_tree must be >= 1")
    return SelfPlay(game, evaluator, n_games, config).games()
