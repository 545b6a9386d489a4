"""Analyse a position: the one API behind review, kata-analyze, ``zero9 analysis`` and the window.

Vocabulary:

- **analysis** (:class:`PositionAnalysis`): a position searched to ``visits`` root visits,
  read back as KataGo reports it: the side to move's **winrate**, its **score lead**, the
  **ownership** of each point, the net's raw **policy**, and one :class:`MoveInfo` per
  visited root move (visits, winrate, score lead, prior, LCB, order, PV).
- **views**: every number is from the **side to move's** view (winrate 0..1, score lead in
  points, ownership +1 = the side to move ends owning the point). Callers that want Black's
  view (KataGo's analysis engine by default) flip it themselves.
- **score of one evaluation** (Go): a net with a **score head** gives it directly (its output
  times N*N, komi counted: :func:`zero9.learn.training.losses.score_target`); the shipped net has an
  ownership head but no score head, so there a position's area score is the **ownership
  sum** (``Σ ownership``, the side to move's area minus the opponent's) minus komi for Black
  (plus komi for White); a finished position (two passes) gets the rules' area count.
  ``scripts/score_calibration.py`` measured the ownership sum against the real final counts
  of finished games (docs/score-calibration.md).
- **score of a move** (a root child): the visit-weighted mean of the scores of every
  evaluation in the child's subtree, i.e. what backing the score up through the tree would
  give (KataGo's scoreLead). The search itself (:mod:`zero9.search.puct`) never sees the
  score: the evaluator keeps each position's ownership beside its cached value
  (``NetEvaluator(with_ownership=True)``), and after the search one walk over the tree sums
  them (:func:`_subtree_sums`). Each non-terminal node was evaluated once and every
  simulation through a child ended at one evaluation below it, so a child's evaluation
  count is exactly its visit count ``N`` (checked by the tests).
- **score stdev**: the spread of those scores over the subtree (no net head predicts it).
- **root numbers** (``winrate``, ``score_lead``, ``ownership`` of :class:`PositionAnalysis`):
  the visit-weighted means over the whole tree, the root's own evaluation included.
- **order**: 0 is the move the search would play (most visits, ties by value then prior:
  :meth:`zero9.search.puct.Tree.choose_action`); the others follow in that same order.
- **policy**: the raw net policy over all actions; illegal moves are **-1** (KataGo's
  ``includePolicy`` convention), legal ones keep the net's probabilities (not renormalised).
- **allow / avoid**: root moves to search only / never (KataGo's ``allowMoves``/``avoidMoves``
  at depth 1); deeper moves are free.
- **batching**: :func:`analyse_many` searches all positions at once, one tree each, their
  leaves in shared net calls (:func:`zero9.search.batched.search_trees`); ``analyse`` is
  ``analyse_many`` of one position.
- **searching on**: ``analyse_many`` is three steps a caller can take apart:
  :func:`start_searches` (the trees), :func:`search_on` (more visits, as many times as
  wanted: a tree keeps what it has) and :func:`read_analyses`. ``zero9 analysis`` searches
  a turn in rounds this way, so each report and the final answer come from one growing tree.
- **seed**: draws the net's random symmetries (a fresh evaluator per call when given a net),
  so the same positions, visits and seed give the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast

import numpy as np

from zero9.games import BLACK, Position
from zero9.search.batched import search_trees
from zero9.search.evaluator import NetEvaluator, UniformEvaluator
from zero9.search.player import lower_confidence_bounds
from zero9.search.puct import Node, Tree, evaluate_leaves, legal_actions
from zero9.settings import PlayConfig, SearchConfig

ILLEGAL_POLICY = -1.0  # the policy entry of an illegal move (KataGo's includePolicy)


class GoArea(Protocol):
    """A Go position as the score reads it: the rules' area count, as both Go boards (``GoPosition`` and
    the readable ``go_simple`` one) give it."""

    @property
    def to_play(self) -> int: ...

    def ownership(self) -> np.ndarray: ...


@dataclass
class MoveInfo:
    """One visited root move, side to move's view."""

    move: int  # action index (Go pass = size*size)
    visits: int
    winrate: float  # 0..1
    score_lead: float | None  # points (Go); None for Gomoku
    prior: float  # the raw net policy of the move
    lcb: float  # lower confidence bound of the winrate, 0..1
    order: int  # 0 = the move the engine would play
    pv: list[int]  # principal variation starting with ``move``
    pv_visits: list[int]  # visits of each move of the PV
    score_stdev: float | None = None  # spread of the subtree's scores (Go)
    value: float = 0.0  # mean value in [-1, 1] (= 2 * winrate - 1)


@dataclass
class PositionAnalysis:
    """A searched position (see the module docstring); all numbers side to move's view."""

    to_move: int  # BLACK or WHITE (Gomoku: the colour to play)
    visits: int  # root visits (the root's own evaluation not counted)
    winrate: float
    score_lead: float | None
    score_stdev: float | None
    ownership: np.ndarray | None  # float32 [size*size], +1 = the side to move owns it (Go only)
    policy: np.ndarray  # float32 [num_actions], raw net policy, illegal moves ILLEGAL_POLICY
    moves: list[MoveInfo]  # sorted by order
    raw_winrate: float = 0.5  # the net's own value of the position, before any search
    raw_score_lead: float | None = None  # its ownership sum's score, before any search
    terminal: bool = False  # the game is over: the numbers are the rules' result
    extra: dict = field(default_factory=dict)

    def move_info(self, move: int) -> MoveInfo | None:
        """The analysis of root move ``move``, None when the search never visited it."""
        return next((m for m in self.moves if m.move == move), None)

    @property
    def best(self) -> MoveInfo | None:
        return self.moves[0] if self.moves else None


def make_evaluator(net, seed: int | None = None) -> NetEvaluator | UniformEvaluator:
    """An evaluator for analysis: ``net``'s ownership kept beside each value (a Go net with the head)."""
    return NetEvaluator(net, rng=np.random.default_rng(seed), with_ownership=True)


def analyse(position: Position, net_or_evaluator, visits: int, seed: int | None = None,
            allow: Sequence[int] | None = None, avoid: Sequence[int] | None = None,
            config: SearchConfig | None = None, leaves_per_tree: int = PlayConfig.batch_size
            ) -> PositionAnalysis:
    """Search ``position`` to ``visits`` root visits (0: the raw net) and read the tree back.

    ``net_or_evaluator``: a net (a fresh evaluator seeded by ``seed`` is built), or an evaluator
    (``NetEvaluator(with_ownership=True)`` for Go scores; any other gives winrates only).
    """
    return analyse_many([position], net_or_evaluator, visits, seed, [allow], [avoid], config,
                        leaves_per_tree)[0]


def analyse_many(positions: Sequence[Position], net_or_evaluator, visits: int | Sequence[int],
                 seed: int | None = None, allow: Sequence[Sequence[int] | None] | None = None,
                 avoid: Sequence[Sequence[int] | None] | None = None, config: SearchConfig | None = None,
                 leaves_per_tree: int = PlayConfig.batch_size,
                 on_step: Callable[[], bool | None] | None = None) -> list[PositionAnalysis]:
    """Analyse many positions at once: one tree each, all their leaves in shared net calls.

    ``visits``: one number for all, or one per position. ``allow``/``avoid``: per position,
    root moves to search only / never (None: no restriction). ``on_step``: called after each
    net call (progress); True stops every search there.
    """
    budgets = _budgets(visits, len(positions))  # checked before any net call
    evaluator = _evaluator(net_or_evaluator, seed)
    trees = start_searches(positions, evaluator, seed, allow, avoid, config)
    search_on(trees, evaluator, budgets, leaves_per_tree, on_step)
    return read_analyses(positions, trees, evaluator)


def start_searches(positions: Sequence[Position], evaluator, seed: int | None = None,
                   allow: Sequence[Sequence[int] | None] | None = None,
                   avoid: Sequence[Sequence[int] | None] | None = None,
                   config: SearchConfig | None = None) -> list[Tree | None]:
    """A tree for each position (None: a finished game), the roots evaluated in one net call and
    restricted to ``allow`` / without ``avoid``; :func:`search_on` searches them, as often as wanted."""
    count = len(positions)
    allow = list(allow) if allow is not None else [None] * count
    avoid = list(avoid) if avoid is not None else [None] * count
    config = config or SearchConfig()
    rng = np.random.default_rng(seed)
    trees = [None if p.is_terminal() else Tree(p, config, np.random.default_rng(rng.integers(2**63)))
             for p in positions]
    # The roots' own evaluations first, in one call, so the root moves can be restricted before
    # any is tried.
    live = [t for t in trees if t is not None]
    evaluate_leaves(evaluator, [leaf for t in live if (leaf := t.select_leaf()) is not None])
    for tree, keep, drop in zip(trees, allow, avoid, strict=True):
        if tree is not None and (keep is not None or drop is not None):
            assert tree.root.actions is not None  # its evaluation (above) expanded the root
            tree.restrict_root(_kept_moves(tree.root.actions, keep, drop))
    return trees


def search_on(trees: Sequence[Tree | None], evaluator, visits: int | Sequence[int],
              leaves_per_tree: int = PlayConfig.batch_size,
              on_step: Callable[[], bool | None] | None = None) -> None:
    """Search each tree on until it has ``visits`` root visits (one number, or one per tree), keeping
    what it has: a tree already there takes no leaves. ``on_step`` as :func:`analyse_many`'s."""
    live = []
    for tree, budget in zip(trees, _budgets(visits, len(trees)), strict=True):
        if tree is not None:
            tree.begin_search(visits=budget)
            live.append(tree)
    search_trees(live, evaluator, leaves_per_tree, on_step=on_step)


def read_analyses(positions: Sequence[Position], trees: Sequence[Tree | None], evaluator
                  ) -> list[PositionAnalysis]:
    """The analysis of each position from its tree (:func:`start_searches`; None: a finished game)."""
    policies = _policies(positions, evaluator)
    return [_terminal_analysis(p) if t is None else _read_tree(t, evaluator, policy)
            for p, t, policy in zip(positions, trees, policies, strict=True)]


def _budgets(visits: int | Sequence[int], count: int) -> list[int]:
    if np.ndim(visits) == 0:  # one number (np.ndim tells it from a sequence, numpy's scalars too)
        budgets = [int(cast(int, visits))] * count
    else:
        budgets = [int(v) for v in cast(Sequence[int], visits)]
    if len(budgets) != count:
        raise ValueError(f"{len(budgets)} visit counts for {count} positions")
    if any(v < 0 for v in budgets):
        raise ValueError(f"visits must be >= 0, got {min(budgets)}")
    return budgets


def _evaluator(net_or_evaluator, seed: int | None):
    if hasattr(net_or_evaluator, "evaluate"):
        return net_or_evaluator
    if net_or_evaluator is None:
        raise ValueError("analyse needs a net or an evaluator")
    return make_evaluator(net_or_evaluator, seed)


def _kept_moves(actions: np.ndarray, allow: Sequence[int] | None, avoid: Sequence[int] | None) -> np.ndarray:
    keep = actions if allow is None else actions[np.isin(actions, np.asarray(list(allow), np.intp))]
    if avoid is not None:
        keep = keep[~np.isin(keep, np.asarray(list(avoid), np.intp))]
    if len(keep) == 0:
        raise ValueError("allow/avoid leave no legal move to analyse")
    return keep


def _policies(positions: Sequence[Position], evaluator) -> list[np.ndarray | None]:
    """The raw net policy of each non-terminal position (a cache look-up), illegal moves -1."""
    live = [p for p in positions if not p.is_terminal()]
    priors = evaluator.evaluate(live)[0] if live else []
    out: list[np.ndarray | None] = []
    rows = iter(priors)
    for p in positions:
        if p.is_terminal():
            out.append(None)
            continue
        policy = np.full(p.game.num_actions, ILLEGAL_POLICY, np.float32)
        legal = legal_actions(p)
        policy[legal] = next(rows)[legal]
        out.append(policy)
    return out


# ----------------------------------------------------------------------------- scores


def _komi_term(position: Position) -> float:
    """What komi takes from the side to move's area difference (Black gives it, White receives it)."""
    komi = float(getattr(position.game, "komi", 0.0))
    return komi if position.to_play == BLACK else -komi


def _terminal_ownership(position: Position) -> np.ndarray:
    """The rules' area of a finished Go position, side to move's view (+1 / -1 / 0)."""
    go = cast(GoArea, position)  # only Go positions are scored (a Go board counts its area: GoArea)
    owner = go.ownership()
    me = go.to_play
    return ((owner == me).astype(np.float32) - (owner == 3 - me).astype(np.float32))


@dataclass
class _Sums:
    """Over the evaluations of a subtree, from its root's side to move's view."""

    count: float  # evaluations (= visits into the node)
    ownership: np.ndarray  # Σ ownership vectors
    score: float  # Σ score leads
    score_sq: float  # Σ score² (view-free)


def _subtree_sums(root: Node, evaluator) -> dict[int, _Sums]:
    """``id(node) -> _Sums`` for every evaluated node under ``root`` (Go with ownership only)."""
    order: list[tuple[Node, float]] = []  # (node, visits into it), parents first
    stack: list[tuple[Node, float]] = [(root, 0.0)]
    while stack:
        node, into = stack.pop()
        order.append((node, into))
        if node.terminal or node.actions is None:
            continue
        assert node.n is not None  # expanded, as actions says
        for i, child in node.children.items():
            n = node.n[i]
            if n > 0 and (child.terminal or child.evaluated):
                stack.append((child, n))
    inner = [node for node, _ in order if not node.terminal]
    owned, leads = evaluator.ownership_and_scores([node.position for node in inner])
    row_of = {id(node): j for j, node in enumerate(inner)}
    sums: dict[int, _Sums] = {}
    for node, into in reversed(order):  # children before parents
        if node.terminal:
            own = _terminal_ownership(node.position)
            score = float(own.sum()) - _komi_term(node.position)
            sums[id(node)] = _Sums(into, own * into, score * into, score * score * into)
            continue
        j = row_of[id(node)]
        own = owned[j].astype(np.float64)
        # the score head where the net has one, else the ownership sum (docs/score-calibration.md)
        score = float(leads[j]) if leads is not None else float(own.sum()) - _komi_term(node.position)
        total = _Sums(1.0, own.copy(), score, score * score)
        if node.actions is not None:
            for child in node.children.values():
                below = sums.get(id(child))
                if below is not None:
                    total.count += below.count
                    total.ownership -= below.ownership  # the child's view is the other player's
                    total.score -= below.score
                    total.score_sq += below.score_sq
        sums[id(node)] = total
    return sums


def _score(sums: _Sums) -> tuple[float, float]:
    """(mean score lead, its stdev) of a subtree, from its root's side to move's view."""
    mean = sums.score / sums.count
    var = max(sums.score_sq / sums.count - mean * mean, 0.0)
    return mean, math.sqrt(var)


def _raw_score(evaluator, position: Position) -> float:
    """The net's own score of ``position`` (score head, else ownership sum), side to move's view."""
    owned, leads = evaluator.ownership_and_scores([position])
    return float(leads[0]) if leads is not None else float(owned[0].sum()) - _komi_term(position)


# ----------------------------------------------------------------------------- reading the tree


def _terminal_analysis(position: Position) -> PositionAnalysis:
    """A finished game: the rules' result, no moves."""
    value = position.result_value(position.to_play)
    winrate = (value + 1) / 2
    go = position.game.name == "go"
    own = _terminal_ownership(position) if go else None
    lead = float(own.sum()) - _komi_term(position) if own is not None else None  # (own: Go)
    return PositionAnalysis(position.to_play, 0, winrate, lead, 0.0 if go else None, own,
                            np.full(position.game.num_actions, ILLEGAL_POLICY, np.float32), [],
                            winrate, lead, terminal=True)


def _read_tree(tree: Tree, evaluator, policy: np.ndarray | None) -> PositionAnalysis:
    """The analysis of a searched tree (see the module docstring)."""
    assert policy is not None  # a tree's position goes on: _policies gave it a policy
    root = tree.root
    position = root.position
    go = position.game.name == "go" and getattr(evaluator, "has_ownership", False)
    sums = _subtree_sums(root, evaluator) if go else {}
    N, W, Q = root.N, root.W, root.Q
    assert N is not None and W is not None and Q is not None and root.actions is not None  # searched
    visits = int(round(N.sum()))
    value = (root.value + float(W.sum())) / (1.0 + float(N.sum()))
    lcb = lower_confidence_bounds(root)
    moves = []
    for rank, i in enumerate(i for i in np.lexsort((root.P, Q, N))[::-1] if N[i] > 0):
        child = root.children.get(int(i))
        pv, pv_visits = _principal_variation(root, int(i))
        lead = stdev = None
        if go and id(child) in sums:
            lead, stdev = _score(sums[id(child)])
            lead = -lead
        q = float(W[i] / N[i])
        a = int(root.actions[i])
        moves.append(MoveInfo(a, int(N[i]), (q + 1) / 2, lead, float(policy[a]),
                              (max(float(lcb[i]), -1.0) + 1) / 2, rank, pv, pv_visits, stdev, q))
    lead = stdev = own = raw_lead = None
    if go:
        root_sums = sums[id(root)]
        lead, stdev = _score(root_sums)
        own = (root_sums.ownership / root_sums.count).astype(np.float32)
        raw_lead = _raw_score(evaluator, position)
    return PositionAnalysis(position.to_play, visits, (value + 1) / 2, lead, stdev, own, policy, moves,
                            (root.value + 1) / 2, raw_lead)


def _principal_variation(root: Node, i: int, limit: int = 30) -> tuple[list[int], list[int]]:
    """The most-visited line starting with root child ``i``, and the visits of each of its moves."""
    assert root.actions is not None and root.n is not None  # searched: expanded
    pv, pv_visits = [int(root.actions[i])], [int(root.n[i])]
    node = root.children.get(i)
    while node is not None and node.expanded and node.total > 0 and len(pv) < limit:
        N = node.N
        assert N is not None and node.actions is not None and node.n is not None  # expanded
        j = int(np.argmax(N))
        pv.append(int(node.actions[j]))
        pv_visits.append(int(node.n[j]))
        node = node.children.get(j)
    return pv, pv_visits
