"""Gomoku threat search: winning by continuous fours (VCF), and refusing the opponent's.

A 400-visit PUCT search reads a few moves deep; strong Gomoku engines also prove forced wins
that run twenty moves deep, because in Gomoku a **four** leaves the opponent one answer.
This module reads only such lines, so it goes deep cheaply.

Vocabulary (on top of :mod:`zero9.games.gomoku`):

- **window**: ``connect`` points in a row along one of the four directions; the board's
  windows are one array ``[W, connect]`` of points.
- **winning point** of a colour: an empty point that completes one of its windows (the
  rest of the window is its stones); the game's own win test has the last word (exact-five
  and renju rules).
- **four move**: a move after which its player has a winning point. The opponent must take
  that point at once, unless they can win first.
- **VCF** (victory by continuous fours): a line of four moves, each answered by the one
  forced block, that ends in a five or in two winning points at once (which no single
  stone blocks). :func:`find_vcf` returns one, or None within its budget.
- **defence**: if the opponent, to move, would have a VCF, our move must spoil it;
  :func:`refute_vcf` picks, among moves ranked by the search, the first after which the
  opponent has none.
- **proven leaf**: :class:`ThreatEvaluator` wraps the net's evaluator; a leaf whose side to
  move has a VCF is worth a sure win, so the tree sees the fours behind the threes it reads.
"""

from __future__ import annotations

import functools

import numpy as np

from zero9.games import EMPTY, Position
from zero9.games.renju import DIRECTIONS

IN_TREE_BUDGET = 200  # positions a leaf's find_vcf may look at: the tree asks hundreds of times a move
MAX_FOURS = 12  # fours in a line (24 moves): Rapfi's proven wins in our games were 5-39 moves long
NODE_BUDGET = 3000  # positions one find_vcf may look at


@functools.cache
def windows(size: int, connect: int) -> np.ndarray:
    """Every ``connect``-long window of the board: ``[W, connect]`` points."""
    rows = []
    for y in range(size):
        for x in range(size):
            for dx, dy in DIRECTIONS:
                xe, ye = x + (connect - 1) * dx, y + (connect - 1) * dy
                if 0 <= xe < size and 0 <= ye < size:
                    rows.append([(y + k * dy) * size + x + k * dx for k in range(connect)])
    return np.array(rows, dtype=np.intp)


def _window_counts(position: Position, colour: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    board = np.frombuffer(position.board, np.uint8)
    w = windows(position.game.size, position.game.connect)
    cells = board[w]
    return w, (cells == colour).sum(1), (cells == EMPTY).sum(1)


def winning_points(position: Position, colour: int) -> list[int]:
    """The points where ``colour`` would win at once (ascending)."""
    w, own, empty = _window_counts(position, colour)
    full = w[(own == position.game.connect - 1) & (empty == 1)]
    points = sorted({int(p) for p in full[np.frombuffer(position.board, np.uint8)[full] == EMPTY]})
    return [p for p in points if position.wins_at(p, colour)]


def four_moves(position: Position, colour: int) -> list[int]:
    """Empty points that would give ``colour`` a winning point (a four), most windows first."""
    w, own, empty = _window_counts(position, colour)
    near = w[(own == position.game.connect - 2) & (empty == 2)]
    board = np.frombuffer(position.board, np.uint8)
    points, counts = np.unique(near[board[near] == EMPTY], return_counts=True)
    return [int(p) for p in points[np.argsort(-counts, kind="stable")]]


def find_vcf(position: Position, max_fours: int = MAX_FOURS, budget: int = NODE_BUDGET) -> list[int] | None:
    """A VCF for the side to move as the moves of both sides, or None (none, or none found in budget)."""
    if position.is_terminal():
        return None
    nodes = [0]
    failed: set[int] = set()  # hashes of positions already shown to hold no VCF at this depth or more

    def search(pos: Position, fours_left: int) -> list[int] | None:
        me, them = pos.to_play, 3 - pos.to_play
        mine = winning_points(pos, me)
        if mine:
            return [mine[0]]
        if fours_left == 0 or pos.hash in failed or nodes[0] >= budget:
            return None
        nodes[0] += 1
        theirs = winning_points(pos, them)
        if len(theirs) > 1:
            failed.add(pos.hash)
            return None  # they have two winning points: only a five of ours would do, and we have none
        for move in four_moves(pos, me):
            if theirs and move != theirs[0] or not pos.is_legal(move):
                continue  # their four must be blocked first
            after = pos.play(move)
            threats = winning_points(after, me)
            if not threats or winning_points(after, them):
                continue  # no four after all (exact-five rule), or they win first
            if len(threats) > 1:
                return [move, threats[0], threats[1]]  # they block one point, we take the other
            block = threats[0]
            if not after.is_legal(block):
                return [move]  # the answer is forbidden to them (renju): the four wins
            line = search(after.play(block), fours_left - 1)
            if line is not None:
                return [move, block, *line]
        failed.add(pos.hash)
        return None

    return search(position, max_fours)


def refute_vcf(position: Position, ranked: list[int], budget: int = NODE_BUDGET) -> int | None:
    """If the opponent would have a VCF here, the first move of ``ranked`` after which they have none.

    None when they have no VCF (nothing to refute) or no ranked move refutes it.
    """
    if find_vcf(position.passed(), budget=budget) is None:
        return None
    for move in ranked:
        if position.is_legal(move) and find_vcf(position.play(move), budget=budget) is None:
            return move
    return None


def threat_move(position: Position, ranked: list[int], budget: int = NODE_BUDGET) -> int | None:
    """The move threat search insists on, or None to keep the search's choice.

    Our own VCF first (its first move); else a move of ``ranked`` that spoils the opponent's VCF.
    """
    line = find_vcf(position, budget=budget)
    if line is not None:
        return line[0]
    return refute_vcf(position, ranked, budget)


class ThreatEvaluator:
    """An evaluator whose values are 1 (a sure win) at leaves where the side to move has a VCF."""

    def __init__(self, inner, budget: int = IN_TREE_BUDGET):
        self.inner = inner
        self.budget = budget

    def evaluate(self, positions):
        priors, values = self.inner.evaluate(positions)
        proven = [i for i, p in enumerate(positions) if find_vcf(p, budget=self.budget) is not None]
        if proven:
            values = np.array(values, np.float32)
            values[proven] = 1.0
        return priors, values

    def __getattr__(self, name):  # calls, positions, clear_cache...: the wrapped evaluator's
        return getattr(self.inner, name)
