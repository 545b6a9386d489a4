"""Gomoku threat search: winning by continuous fours (VCF) or threats (VCT), and refusing the opponent's.

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
- **double point** of a colour: an empty point where its stone would make two winning points
  at once (an open four, or two fours): next move it wins, whatever one stone blocks.
- **three move**: a move after which its player has a double point (``_XXX_``, ``X_XX``...).
  The **answers** to a three are the points that spoil every double point (each double point
  and the other empty point of each of its windows), or a four of the defender's own, which
  the attacker must block before going on; any other move loses to the open four.
- **VCT** (victory by continuous threats): fours *and* threes, each answered in every way the
  defender has, ending in a five. :func:`find_vct` proves one by AND/OR search: at the
  attacker's nodes any four or three that wins (VCF first), at the defender's nodes every
  answer must lose (and a defender with a VCF of their own refutes a three: fours come first).
- **defence against a VCT**: :func:`refute_vct` tries the search's choice, then the points of
  the opponent's proven line and our own fours and threes, those the search ranks first, and
  picks the first after which the opponent has neither VCT nor VCF. A four or three of ours
  must **spoil** the threat, not **delay** it: once the opponent has answered it, they must
  still have no win.
- **reading**: what the player's threat search reads at the root: ``"vcf"`` (fours) or
  ``"vct"`` (fours and threes). Leaves of the tree only ever get the cheap VCF test.
"""

from __future__ import annotations

import functools
from typing import Protocol

import numpy as np

from zero9.games import BLACK, EMPTY, WHITE, Position
from zero9.games.gomoku import Gomoku
from zero9.games.renju import DIRECTIONS

IN_TREE_BUDGET = 200  # positions a leaf's find_vcf may look at: the tree asks hundreds of times a move
MAX_FOURS = 12  # fours in a line (24 moves): Rapfi's proven wins in our games were 5-39 moves long
NODE_BUDGET = 3000  # positions one find_vcf may look at
MAX_THREATS = 8  # fours and threes of the attacker before the VCF that ends a VCT
VCT_BUDGET = 300  # attacker and defender nodes one find_vct may expand (about 1 ms each in Python)
VCT_VCF_BUDGET = 15  # positions each VCF test inside find_vct may look at (VCT's own fours go deeper)
REFUTE_TRIES = 10  # candidate moves refute_vct may try, a find_vct or more each
READINGS = ("vcf", "vct")


class GomokuStones(Position, Protocol):
    """A Gomoku position as threat search reads it (:class:`zero9.games.gomoku.GomokuPosition`): its
    stones one byte a point, its rules' win test, and the same stones with the other side to move."""

    @property
    def game(self) -> Gomoku: ...
    @property
    def board(self) -> bytes: ...

    def play(self, action: int) -> GomokuStones: ...

    def passed(self) -> GomokuStones: ...

    def wins_at(self, point: int, colour: int) -> bool: ...


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


@functools.cache
def point_windows(size: int, connect: int) -> list[np.ndarray]:
    """For each point, the rows of :func:`windows` that hold it."""
    w = windows(size, connect)
    return [np.nonzero((w == p).any(1))[0] for p in range(size * size)]


def _unique(points) -> list[int]:
    """``points`` without repeats, first occurrence kept."""
    return list(dict.fromkeys(int(p) for p in points))


def _as_mover(position: GomokuStones, colour: int) -> GomokuStones:
    """``position`` with ``colour`` to move (the same stones)."""
    return position if position.to_play == colour else position.passed()


_CODES = np.array([0, 1, 32], np.int32)  # a window's sum of codes: black stones + 32 * white (connect < 32)


def _stone_counts(board: np.ndarray, rows: np.ndarray, connect: int) -> tuple[np.ndarray, ...]:
    """Black stones, white stones and empty points of each window in ``rows`` (one gather, one sum)."""
    coded = _CODES[board][rows].sum(1)
    black, white = coded % 32, coded // 32
    return black, white, connect - black - white


class _Lines:
    """One position's windows read once: per window, each colour's stones and the empty points."""

    def __init__(self, position: GomokuStones):
        self.position = position
        self.connect = position.game.connect
        self.board = np.frombuffer(position.board, np.uint8)
        self.w = windows(position.game.size, self.connect)
        black, white, self.empty = _stone_counts(self.board, self.w, self.connect)
        self.stones = {BLACK: black, WHITE: white}

    def _gaps(self, colour: int, stones: int) -> np.ndarray:
        """``[k, connect - stones]``: the empty points of windows of ``stones`` of ``colour``, no other."""
        rows = self.w[(self.stones[colour] == stones) & (self.empty == self.connect - stones)]
        return rows[self.board[rows] == EMPTY].reshape(len(rows), self.connect - stones)

    def winning(self, colour: int) -> list[int]:
        """:func:`winning_points`, from the windows already read."""
        points = sorted(set(self._gaps(colour, self.connect - 1).ravel().tolist()))
        return [p for p in points if self.position.wins_at(p, colour)]

    def fours(self, colour: int) -> list[int]:
        """:func:`four_moves`, from the windows already read."""
        points, counts = np.unique(self._gaps(colour, self.connect - 2), return_counts=True)
        return [int(p) for p in points[np.argsort(-counts, kind="stable")]]

    def pairs(self, colour: int) -> list[tuple[int, int]]:
        """The two empty points of each window one stone short of a four."""
        return [tuple(pair) for pair in self._gaps(colour, self.connect - 2).tolist()]

    def doubles(self, colour: int) -> dict[int, set[int]]:
        """The double points of ``colour``, each with the winning points it would make."""
        partners: dict[int, set[int]] = {}
        for a, b in self.pairs(colour):
            partners.setdefault(a, set()).add(b)
            partners.setdefault(b, set()).add(a)
        mover = _as_mover(self.position, colour)
        found = {}
        for point, others in partners.items():
            if len(others) > 1 and mover.is_legal(point):  # the game's own rules decide (exact five, renju)
                made = winning_through(mover.play(point), point, colour)
                if len(made) > 1:
                    found[point] = others
        return found

    def threes(self, colour: int) -> list[int]:
        """Empty points that would give ``colour`` a double point it lacks now, most new pairs first.

        Read from the windows alone (a stone making a new pair beside a pair that shares a point);
        :meth:`doubles` checks each against the rules when the defender must answer it.
        """
        old = self.pairs(colour)
        new: dict[int, list[tuple[int, int]]] = {}
        for row in self._gaps(colour, self.connect - 3).tolist():
            for p in row:
                new.setdefault(p, []).append(tuple(q for q in row if q != p))
        scored = []
        for p, made in new.items():
            partners: dict[int, set[int]] = {}
            for a, b in [pair for pair in old if p not in pair] + made:
                partners.setdefault(a, set()).add(b)
                partners.setdefault(b, set()).add(a)
            if any(len(partners[q]) > 1 for pair in made for q in pair):
                scored.append((-len(made), p))
        return [p for _, p in sorted(scored)]


def winning_points(position: GomokuStones, colour: int) -> list[int]:
    """The points where ``colour`` would win at once (ascending)."""
    return _Lines(position).winning(colour)


def four_moves(position: GomokuStones, colour: int) -> list[int]:
    """Empty points that would give ``colour`` a winning point (a four), most windows first."""
    return _Lines(position).fours(colour)


def winning_through(position: GomokuStones, point: int, colour: int) -> list[int]:
    """The winning points of ``colour`` in the windows through ``point``: all that a stone just
    played there can have made (ascending)."""
    game = position.game
    rows = windows(game.size, game.connect)[point_windows(game.size, game.connect)[point]]
    board = np.frombuffer(position.board, np.uint8)
    black, white, empty = _stone_counts(board, rows, game.connect)
    full = rows[((black if colour == BLACK else white) == game.connect - 1) & (empty == 1)]
    points = sorted(set(full[board[full] == EMPTY].tolist()))
    return [p for p in points if position.wins_at(p, colour)]


def find_vcf(position: GomokuStones, max_fours: int = MAX_FOURS, budget: int = NODE_BUDGET
             ) -> list[int] | None:
    """A VCF for the side to move as the moves of both sides, or None (none, or none found in budget)."""
    if position.is_terminal():
        return None
    nodes = [0]
    failed: set[int] = set()  # hashes of positions already shown to hold no VCF at this depth or more

    def search(pos: GomokuStones, fours_left: int) -> list[int] | None:
        me, them = pos.to_play, 3 - pos.to_play
        lines = _Lines(pos)
        mine = lines.winning(me)
        if mine:
            return [mine[0]]
        if fours_left == 0 or pos.hash in failed or nodes[0] >= budget:
            return None
        nodes[0] += 1
        theirs = lines.winning(them)
        if len(theirs) > 1:
            failed.add(pos.hash)
            return None  # they have two winning points: only a five of ours would do, and we have none
        for move in lines.fours(me):
            if theirs and move != theirs[0] or not pos.is_legal(move):
                continue  # their four must be blocked first
            # our stone only takes points from them: once their one four is blocked, they have none
            after = pos.play(move)
            threats = winning_through(after, move, me)
            if not threats:
                continue  # no four after all (exact-five rule)
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


def refute_vcf(position: GomokuStones, ranked: list[int], budget: int = NODE_BUDGET) -> int | None:
    """If the opponent would have a VCF here, the first move of ``ranked`` after which they have none.

    None when they have no VCF (nothing to refute) or no ranked move refutes it.
    """
    if find_vcf(position.passed(), budget=budget) is None:
        return None
    for move in ranked:
        if position.is_legal(move) and find_vcf(position.play(move), budget=budget) is None:
            return move
    return None


def find_vct(position: GomokuStones, max_threats: int = MAX_THREATS, budget: int = VCT_BUDGET,
             vcf_budget: int = VCT_VCF_BUDGET) -> list[int] | None:
    """A VCT for the side to move as a line of moves of both sides, or None (none found in budget).

    The line follows the defender's first answer at each of their nodes; the proof behind it
    holds for every answer. It ends in a five, or earlier where the defender has no legal
    answer (renju). Iterative deepening on the attacker's threats, ``max_threats`` at most;
    ``budget`` bounds the nodes expanded, ``vcf_budget`` each VCF test.
    """
    if position.is_terminal():
        return None
    search = _VCTSearch(position.to_play, budget, vcf_budget)
    for threats in range(1, max_threats + 1):
        line = search.attack(position, threats)
        if line is not None or search.spent():
            return line
    return None


class _VCTSearch:
    """One :func:`find_vct`'s AND/OR search and the tables its nodes share.

    :meth:`attack` is an OR node (the attacker needs one four or three that wins), :meth:`defend`
    an AND node (every answer of the defender's must lose); they call each other, ``threats``
    counting down the attacker's fours and threes left. A four leaves one answer, read by
    :meth:`block`. Positions already proven, or already failed with as many threats, are not
    searched again (:meth:`known`, :meth:`settle`); all of it within one budget of nodes.
    """

    def __init__(self, attacker: int, budget: int, vcf_budget: int):
        self.attacker, self.defender = attacker, 3 - attacker
        self.budget, self.vcf_budget = budget, vcf_budget
        self.expanded = 0
        self.proven: dict[int, list[int]] = {}  # position hash -> the line from there
        self.failed: dict[int, int] = {}  # position hash -> the most threats it was searched with, in vain
        self.vcf_lines: dict[int, list[int] | None] = {}

    def spent(self) -> bool:
        return self.expanded >= self.budget

    def vcf(self, pos: GomokuStones) -> list[int] | None:
        """:func:`find_vcf` for the side to move, each position tested once."""
        if pos.hash not in self.vcf_lines:
            self.vcf_lines[pos.hash] = find_vcf(pos, budget=self.vcf_budget)
        return self.vcf_lines[pos.hash]

    def known(self, pos: GomokuStones, threats: int) -> tuple[bool, list[int] | None]:
        """(settled, line): a transposition's answer, or out of budget (settled, no line).

        Not settled: the caller expands ``pos``, and it counts against the budget.
        """
        if pos.hash in self.proven:
            return True, self.proven[pos.hash]
        if self.failed.get(pos.hash, -1) >= threats or self.spent():
            return True, None
        self.expanded += 1
        return False, None

    def settle(self, pos: GomokuStones, threats: int, line: list[int] | None) -> list[int] | None:
        """Remember a node's result: its line, or that it failed with ``threats``."""
        if line is not None:
            self.proven[pos.hash] = line
        elif not self.spent():  # a search cut short by the budget proves nothing
            self.failed[pos.hash] = threats
        return line

    def block(self, pos: GomokuStones, point: int, then, threats: int,
              if_illegal: list[int] | None) -> list[int] | None:
        """The one answer to a four: take ``point``, then ``then`` on the new position.

        ``if_illegal`` is the result where the blocker may not play there (renju): the four wins.
        """
        if not pos.is_legal(point):
            return if_illegal
        rest = then(pos.play(point), threats)
        return None if rest is None else [point, *rest]

    def attack(self, pos: GomokuStones, threats: int) -> list[int] | None:
        """The attacker to move: a five, a forced block, a VCF, or a four or three that wins."""
        lines = _Lines(pos)
        mine = lines.winning(self.attacker)
        if mine:
            return [mine[0]]
        theirs = lines.winning(self.defender)
        if len(theirs) > 1:
            return None
        if theirs:  # the attacker must block; unable to (renju), they lose
            return self.block(pos, theirs[0], self.defend, threats, if_illegal=None)
        fours = lines.fours(self.attacker)
        line = self.vcf(pos) if fours else None
        if line is not None or threats == 0:
            return line
        settled, line = self.known(pos, threats)
        if settled:
            return line
        for move in _unique(fours + lines.threes(self.attacker)):  # one that wins will do
            if pos.is_legal(move):
                rest = self.defend(pos.play(move), threats - 1)
                if rest is not None:
                    return self.settle(pos, threats, [move, *rest])
        return self.settle(pos, threats, None)

    def defend(self, pos: GomokuStones, threats: int) -> list[int] | None:
        """The defender to move: the attacker wins only if every answer loses."""
        lines = _Lines(pos)
        if lines.winning(self.defender):
            return None
        mine = lines.winning(self.attacker)
        if len(mine) > 1:
            return [mine[0], mine[1]]  # one block, then the other five
        if mine:  # the defender must block; unable to (renju), they lose
            return self.block(pos, mine[0], self.attack, threats, if_illegal=[])
        doubles = lines.doubles(self.attacker)
        fours = lines.fours(self.defender)
        if not doubles or fours and self.vcf(pos) is not None:
            return None  # no threat left, or the defender's fours come first
        settled, line = self.known(pos, threats)
        if settled:
            return line
        first = None
        for move in _unique(_spoilers(doubles) + fours):  # every answer must lose
            if pos.is_legal(move):
                rest = self.attack(pos.play(move), threats)
                if rest is None:
                    return self.settle(pos, threats, None)
                first = first or [move, *rest]
        return self.settle(pos, threats, first if first is not None else [])


def refute_vct(position: GomokuStones, ranked: list[int], budget: int = VCT_BUDGET,
               tries: int = REFUTE_TRIES) -> int | None:
    """If the opponent would have a VCT (or VCF) here, the first candidate after which they have neither.

    Candidates: the search's own choice (``ranked[0]``), then the points of the opponent's proven
    line and our own fours and threes (they gain a tempo), those in ``ranked`` (the search's
    order) first; ``tries`` of them at most.
    A four or three of ours must spoil the threat, not only delay it: once they have answered
    it, they must still have no win if they could move again. None when there is nothing to
    refute or no candidate does.
    """
    threat = find_vcf(position.passed()) or find_vct(position.passed(), budget=budget)
    if threat is None:
        return None
    us = position.to_play
    lines = _Lines(position)
    candidates = set(threat) | set(lines.fours(us)) | set(lines.threes(us))
    order = _unique(ranked[:1] + [m for m in ranked if m in candidates] + sorted(candidates))
    for move in [m for m in order if position.is_legal(m)][:tries]:
        after = position.play(move)
        answered = [after.play(a).passed() for a in _answers(after, us) if after.is_legal(a)]
        if all(find_vcf(p) is None and find_vct(p, budget=budget) is None for p in [after, *answered]):
            return move
    return None


def _answers(position: GomokuStones, attacker: int) -> list[int]:
    """The defender's answers to the attacker's four (the block) or three (its spoilers), else []."""
    lines = _Lines(position)
    fours = lines.winning(attacker)
    if fours:
        return fours[:1] if len(fours) == 1 else []
    return _spoilers(lines.doubles(attacker))


def _spoilers(doubles: dict[int, set[int]]) -> list[int]:
    """The points that spoil double points: each one, then the other empty points of its windows."""
    return _unique(p for q, others in doubles.items() for p in (q, *sorted(others)))


def threat_move(position: GomokuStones, ranked: list[int], budget: int = NODE_BUDGET,
                reading: str = "vct") -> int | None:
    """The move threat search insists on, or None to keep the search's choice.

    Our own VCF first (its first move); with ``reading="vct"`` then our own VCT, if the
    opponent has no VCF once its first move is on the board; else a move of ``ranked`` that
    spoils the opponent's VCF (or VCT).
    """
    if reading not in READINGS:
        raise ValueError(f"bad threat reading {reading!r}: expected one of {', '.join(READINGS)}")
    line = find_vcf(position, budget=budget)
    if line is not None:
        return line[0]
    if reading == "vcf":
        return refute_vcf(position, ranked, budget)
    line = find_vct(position)
    if line is not None and find_vcf(position.play(line[0]), budget=budget) is None:
        return line[0]
    return refute_vct(position, ranked)


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
