"""SearchPlayer: the search behind one object, for GTP, pbrain, matches and the window.

Vocabulary:

- **decision** (:class:`Decision`): the move chosen, whether to resign, the side to
  move's winrate, the root visits and the root statistics.
- **move statistics** (:class:`MoveStats`), per root child as Lc0 prints them:
  ``N`` visits, ``P`` prior, ``Q`` mean value in [-1, 1] (side to move at the root),
  ``U`` the PUCT exploration term, ``Q+U``, ``V`` the net's raw value of the child
  (root side's view), ``winrate = (Q+1)/2``, ``lcb`` the lower confidence bound as a
  winrate, and the **PV** (principal variation: most-visited line from that move).
- **limits**: ``visits`` (root visits, reused subtree included: Leela Zero's
  ``-v``), ``playouts`` (new simulations this move: ``-p``), ``time_per_move``
  seconds. The search stops at whichever comes first; ``None`` turns a limit off.
  GTP time management passes its budget as ``time_s`` to :meth:`SearchPlayer.choose`,
  which replaces ``time_per_move`` for that move.
- **tree reuse**: if the position asked about is the current root, its child or its
  grandchild (compared by identity, else by the hashes of the last 8 positions),
  that subtree becomes the root.
- **batching** in play mode: ``batch_size`` (K) leaves per net call within a tree
  (virtual loss). **Root parallel** (``root_parallel`` = R > 1): R independent trees
  of the same position, their leaves batched into one net call, their visit counts
  summed to vote the move. The default (``root_parallel=1``, K = 8) was the stronger
  at equal time per move: 16/20 against 4 trees x K = 2 at 0.3 s per move on 7x7
  four-in-a-row with rollout values (``scripts/bench_search.py --play-mode``). One
  deeper tree beats several shallow ones; both use the cores the same way here
  (the net call is what runs on several threads).
- **resignation** (Leela Zero): resign when the winrate is below ``resign_threshold``
  after ``resign_min_moves`` moves (default a quarter of the points) and with at
  least ``resign_min_visits`` visits. ``None`` or a negative threshold never resigns.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from zero9.games import Game, Position
from zero9.nn import features
from zero9.nn.checkpoint import load_net
from zero9.search.batched import search_trees
from zero9.search.evaluator import NetEvaluator, UniformEvaluator, history_key
from zero9.search.puct import Node, Tree, draw_by_visits
from zero9.search.threats import READINGS, GomokuStones, ThreatEvaluator, threat_move
from zero9.settings import PlayConfig, SearchConfig

log = logging.getLogger(__name__)


@dataclass
class MoveStats:
    """One root move's statistics (see the module docstring)."""

    action: int
    vertex: str
    visits: int
    winrate: float  # (Q + 1) / 2 for the side to move at the root
    prior: float
    lcb: float  # as a winrate, 0..1
    q: float
    u: float
    value: float  # V: the net's raw value of the child, root side's view; nan if never evaluated
    pv: list[int] = field(default_factory=list)

    @property
    def move(self) -> int:
        """Alias of ``action``."""
        return self.action


@dataclass
class Decision:
    action: int  # the best move (also filled when resigning)
    resign: bool
    winrate: float  # side to move, 0..1
    visits: int
    stats: list[MoveStats]


def same_position(a: Position, b: Position) -> bool:
    """Identity, or equal move number and hashes of the last 8 positions (GTP rebuilds positions)."""
    return a is b or (a.move_number == b.move_number and history_key(a) == history_key(b))


class SearchPlayer:
    """PUCT search with tree reuse, batching, limits, resignation and analysis output."""

    OPTIONS = ("visits", "playouts", "time", "randomcnt", "resign", "lcb", "c_puct", "fpu_reduction",
               "batch_size", "root_parallel", "noise", "threats")

    def __init__(self, game: Game, evaluator, play: PlayConfig | None = None,
                 search: SearchConfig | None = None, seed: int | None = None):
        """A player of ``game`` on ``evaluator``: ``play`` says how it plays (visits, time, resignation,
        threats ...), ``search`` how it searches (c_puct, first-play urgency, noise); each is copied, so
        :meth:`set_option` changes this player's only."""
        self.game = game
        self.evaluator = evaluator
        self.play = dataclasses.replace(play or PlayConfig())
        self.config = dataclasses.replace(search or SearchConfig())
        min_moves = self.play.resign_min_moves
        self.resign_min_moves = game.size * game.size // 4 if min_moves is None else min_moves
        if self.play.threat_reading not in READINGS:
            raise ValueError(f"bad threat reading {self.play.threat_reading!r}: expected one of "
                             f"{', '.join(READINGS)}")
        self._check_limits()
        self.rng = np.random.default_rng(seed)
        self.trees: list[Tree] = []
        self._stop = threading.Event()
        self._lock = threading.RLock()  # tree replacement vs. stats read from another thread

    # --- options ----------------------------------------------------------------------------

    def _check_limits(self) -> None:
        for name in ("visits", "playouts"):
            v = getattr(self.play, name)
            if v is not None and v < 1:
                raise ValueError(f"{name} must be >= 1 or None, got {v}")
        if self.play.time_per_move is not None and self.play.time_per_move <= 0:
            raise ValueError(f"time per move must be > 0 seconds or None, got {self.play.time_per_move}")
        if self.play.batch_size < 1 or self.play.root_parallel < 1:
            raise ValueError("batch_size and root_parallel must be >= 1")

    def set_option(self, name: str, value) -> None:
        """Change a setting between moves (lz-setoption): visits, playouts, time, randomcnt, resign, ..."""
        key = name.strip().lower().replace("-", "_")
        if key not in self.OPTIONS:
            raise ValueError(f"unknown option {name!r}: expected one of {', '.join(self.OPTIONS)}")
        if key in ("visits", "playouts", "time"):
            number = None if value is None or float(value) <= 0 else float(value)
            value = number if key == "time" or number is None else int(number)
            setattr(self.play, "time_per_move" if key == "time" else key, value)
        elif key in ("randomcnt", "batch_size", "root_parallel"):
            setattr(self.play, key, int(value))
            if key == "root_parallel":
                self.trees = []
        elif key == "resign":
            self.play.resign_threshold = None if value is None else float(value)
        elif key in ("lcb", "threats"):
            setattr(self.play, key, _as_bool(value))
        elif key == "noise":
            self.config.noise = _as_bool(value)
        else:
            setattr(self.config, key, float(value))
        self._check_limits()

    def stop(self) -> None:
        """Make a running choose()/analyze() return soon with its best move so far (thread-safe)."""
        self._stop.set()

    # --- searching --------------------------------------------------------------------------

    def _sync(self, position: Position) -> None:
        """Point every tree's root at ``position``, reusing a subtree when it is a child or grandchild."""
        if position.game.num_actions != self.game.num_actions:
            raise ValueError("position is from a different game than this player's")
        with self._lock:
            while len(self.trees) < self.play.root_parallel:
                rng = np.random.default_rng(self.rng.integers(2**63))
                self.trees.append(Tree(position, self.config, rng))
            for j, tree in enumerate(self.trees):
                root = tree.root.position
                chain = [position]
                while len(chain) < 3 and chain[-1].parent is not None:
                    chain.append(chain[-1].parent)
                match = next((k for k, p in enumerate(chain) if same_position(p, root)), None)
                if match is None:
                    self.trees[j] = Tree(position, self.config, tree.rng)
                    continue
                for p in reversed(chain[:match]):
                    assert p.last_move is not None  # its parent is in the chain: a move led to it
                    tree.advance(p.last_move)
                tree.root.position = position  # identical content; keep the caller's object

    def _search(self, position: Position, visits, playouts, seconds, stop: threading.Event,
                on_step: Callable[[], None] | None = None) -> None:
        self._sync(position)
        deadline = time.monotonic() + seconds if seconds else None
        if visits is None and playouts is None and deadline is None and stop is self._stop:
            visits = PlayConfig.visits
        for tree in self.trees:
            tree.begin_search(visits, playouts)
        evaluator = ThreatEvaluator(self.evaluator) if self._threats_apply(position) else self.evaluator
        search_trees(self.trees, evaluator, self.play.batch_size, deadline, stop, on_step)

    def choose(self, position: Position, time_s: float | None = None,
               on_stats: Callable[[list[MoveStats]], None] | None = None,
               stats_interval_s: float = 0.1) -> Decision:
        """Search ``position`` within the limits and decide: move, resign or not, winrate, stats.

        ``time_s`` overrides the time budget for this move; ``on_stats`` gets the root
        statistics every ``stats_interval_s`` seconds while the search runs (lz-genmove_analyze).
        """
        if position.is_terminal():
            raise ValueError("choose: the game is over")
        self._stop.clear()
        seconds = time_s if time_s is not None else self.play.time_per_move
        on_step = None
        if on_stats is not None:
            last = time.monotonic()

            def on_step() -> None:
                nonlocal last
                if time.monotonic() - last >= stats_interval_s:
                    last = time.monotonic()
                    on_stats(self.root_stats())

        self._search(position, self.play.visits, self.play.playouts, seconds, self._stop, on_step)
        stats = self.root_stats()
        visits = sum(s.visits for s in stats)
        winrate = self.winrate()
        action = self._pick(position)
        forced = self._threat_move(position)
        action = action if forced is None else forced
        threshold = self.play.resign_threshold
        resign = (threshold is not None and threshold >= 0 and winrate < threshold
                  and position.move_number >= self.resign_min_moves and visits >= self.play.resign_min_visits)
        return Decision(action, resign, winrate, visits, stats)

    def genmove(self, position: Position, time_limit: float | None = None,
                on_stats: Callable[[list[MoveStats]], None] | None = None) -> int | None:
        """The move to play, or None to resign (``time_limit`` seconds overrides the budget)."""
        decision = self.choose(position, time_s=time_limit, on_stats=on_stats)
        return None if decision.resign else decision.action

    def reset(self) -> None:
        """Forget the search trees (new game)."""
        with self._lock:
            self.trees = []

    def _pick(self, position: Position) -> int:
        actions, n, _, _ = self._merged()
        if len(actions) == 0 or n.sum() <= 0:  # no time for a single simulation: the best prior
            root = self.trees[0].root
            if root.actions is None:  # not expanded
                return position.legal_moves()[0]
            return int(root.actions[root.P.argmax()])
        if position.move_number < self.play.randomcnt:
            return draw_by_visits(actions, n, self.rng)
        if self.play.root_parallel == 1:
            tree = self.trees[0]
            best = lcb_choice(tree.root) if self.play.lcb else None
            return tree.choose_action() if best is None else best
        return int(actions[n.argmax()])

    def _threats_apply(self, position: Position) -> bool:
        return self.play.threats and position.game.name == "gomoku"

    def _threat_move(self, position: Position) -> int | None:
        """Gomoku: the move threat search insists on (our forced win, or spoiling theirs), else None."""
        if not self._threats_apply(position) or position.move_number < self.play.randomcnt:
            return None
        actions, n, _, p = self._merged()
        order = np.lexsort((p, n))[::-1][:PlayConfig.threat_candidates]
        stones = cast(GomokuStones, position)  # a Gomoku game's position (_threats_apply)
        return threat_move(stones, [int(a) for a in actions[order]], reading=self.play.threat_reading)

    def analyze(self, position: Position, on_stats: Callable[[list[MoveStats]], None], interval_s: float,
                stop_event: threading.Event, max_visits: int | None = None) -> None:
        """Search ``position`` and call ``on_stats(root_stats())`` every ``interval_s`` seconds.

        Returns when ``stop_event`` is set, :meth:`stop` is called, or ``max_visits`` is reached
        (after a last ``on_stats``). Blocks: run it in a thread (lz-analyze, the window's overlay).
        """
        self._stop.clear()
        last = time.monotonic()

        def report() -> None:
            nonlocal last
            if time.monotonic() - last >= interval_s:
                last = time.monotonic()
                on_stats(self.root_stats())
            if self._stop.is_set():
                stop_event.set()

        self._search(position, max_visits, None if max_visits else 10**9, None, stop_event, on_step=report)
        on_stats(self.root_stats())

    # --- reading the tree ----------------------------------------------------------------------

    def _merged(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Root actions with visits, total values and priors summed over the root-parallel trees."""
        with self._lock:
            trees = [t for t in self.trees if t.root.expanded]
        if not trees:
            return np.zeros(0, np.intp), np.zeros(0), np.zeros(0), np.zeros(0)
        first = trees[0].root
        assert first.actions is not None  # the trees kept are expanded
        if len(trees) == 1:
            N, W = first.N, first.W
            assert N is not None and W is not None  # expanded
            return first.actions, N.copy(), W.copy(), first.P.copy()
        index = {int(a): i for i, a in enumerate(first.actions)}
        n, w, p = np.zeros(len(index)), np.zeros(len(index)), np.zeros(len(index))
        for t in trees:
            N, W = t.root.N, t.root.W
            assert t.root.actions is not None and N is not None and W is not None  # kept: expanded
            for a, ni, wi, pi in zip(t.root.actions, N, W, t.root.P, strict=True):
                i = index[int(a)]
                n[i] += ni
                w[i] += wi
                p[i] += pi / len(trees)
        return first.actions, n, w, p

    def root_stats(self) -> list[MoveStats]:
        """Statistics of the root's visited moves (all moves if none visited), best first."""
        actions, n, w, p = self._merged()
        if len(actions) == 0:
            return []
        root = self.trees[0].root
        q = np.where(n > 0, w / np.maximum(n, 1), np.nan)
        u = self.config.c_puct * p * math.sqrt(max(n.sum(), 1.0)) / (1.0 + n)
        lcb = lower_confidence_bounds(root) if len(self.trees) == 1 else np.where(n > 0, q, -2.0)
        stats = []
        for i in np.lexsort((p, n))[::-1]:
            if n.sum() > 0 and n[i] == 0:
                continue
            child = root.children.get(int(i)) if len(self.trees) == 1 else None
            qi = float(q[i]) if n[i] > 0 else float("nan")
            value = (-child.value if child is not None and (child.evaluated or child.terminal)
                     else float("nan"))
            a = int(actions[i])
            lcb_i = (max(float(lcb[i]), -1.0) + 1) / 2
            stats.append(MoveStats(a, self.game.action_to_vertex(a), int(n[i]), (qi + 1) / 2, float(p[i]),
                                   lcb_i, qi, float(u[i]), value, [a] + _pv(child)))
        return stats

    def winrate(self) -> float:
        """The side to move's winrate at the root, 0..1 (the raw value before any visit)."""
        _, n, w, _ = self._merged()
        if n.sum() > 0:
            return float((w.sum() / n.sum() + 1) / 2)
        return (self.trees[0].root.value + 1) / 2 if self.trees else 0.5

    def text_stats(self, n: int = 10) -> str:
        """An Lc0-like table: move, N, P, Q, U, Q+U, V and PV, best first."""
        lines = [f"{'move':>5} {'N':>7} {'P':>6} {'Q':>7} {'U':>7} {'Q+U':>7} {'V':>7}  PV"]
        for s in self.root_stats()[:n]:
            pv = " ".join(self.game.action_to_vertex(a) for a in s.pv[:12])
            lines.append(f"{s.vertex:>5} {s.visits:>7} {100 * s.prior:>5.2f}% {s.q:>7.4f} {s.u:>7.4f} "
                         f"{s.q + s.u:>7.4f} {s.value:>7.4f}  {pv}")
        return "\n".join(lines)

    def policy(self, position: Position) -> np.ndarray:
        """The evaluator's raw priors over all actions, float32 ``[A]`` (for heatmaps)."""
        priors, _ = self.evaluator.evaluate([position])
        return np.array(priors[0], dtype=np.float32)

    def value(self, position: Position) -> float:
        """The evaluator's raw value of ``position``, side to move's view, [-1, 1]."""
        if position.is_terminal():
            return float(position.result_value(position.to_play))
        _, values = self.evaluator.evaluate([position])
        return float(values[0])


def lower_confidence_bounds(node: Node, z: float = 1.96) -> np.ndarray:
    """Per child: Q − z · std / sqrt(N) from the backed-up values' variance; −2 below 2 visits."""
    assert node.n is not None  # a searched root: expanded
    lcb = np.full(len(node.n), -2.0)
    for i, child in node.children.items():
        n = node.n[i]
        if n >= 2:
            q = node.q.item(i)
            var = max(child.sq_sum / n - q * q, 0.0) * n / (n - 1)
            lcb[i] = q - z * math.sqrt(var / n)
    return lcb


def lcb_choice(root: Node) -> int | None:
    """The root move with the best lower confidence bound among those with at least 2 visits and a
    tenth of the most visited one's (Leela Zero's LCB pick); None when no move has that many."""
    N = root.N
    assert N is not None and root.actions is not None  # a searched root: expanded
    eligible = N >= max(2.0, 0.1 * N.max())
    if not eligible.any():
        return None
    return int(root.actions[np.where(eligible, lower_confidence_bounds(root), -np.inf).argmax()])


def _pv(node: Node | None, limit: int = 30) -> list[int]:
    """The most-visited line below ``node``."""
    line: list[int] = []
    while node is not None and node.expanded and node.total > 0 and len(line) < limit:
        N = node.N
        assert N is not None and node.actions is not None  # expanded
        i = int(N.argmax())
        line.append(int(node.actions[i]))
        node = node.children.get(i)
    return line


def _as_bool(value) -> bool:
    if isinstance(value, str):
        if value.strip().lower() in ("1", "true", "on", "yes"):
            return True
        if value.strip().lower() in ("0", "false", "off", "no"):
            return False
        raise ValueError(f"expected a boolean, got {value!r}")
    return bool(value)


class NetMismatch(ValueError):
    """A net file made for another game or board size than the one asked for."""


class NetSource:
    """Where a player's evaluator comes from: a net file (one game and board size) or, without one,
    the uniform evaluator (any game and size). The one way gtp, pbrain, match, demo and the
    window load a net and build a :class:`SearchPlayer` on it (:meth:`player`)."""

    def __init__(self, path: str | os.PathLike | None, device: str = "auto", warn: bool = False):
        self.net = None
        self.meta: dict[str, Any] = {}
        self.path = None if path is None else Path(path)
        if self.path is not None:
            self.net, self.meta = load_net(self.path, device=device)
        elif warn:
            log.warning("zero9: no net file found; playing with uniform priors (weak). Use -w FILE.")

    def check(self, game: Game) -> None:
        """Raise :class:`NetMismatch`, naming the file, unless the net was made for ``game``'s name and
        serves its size.

        The one check that a net serves a game (gtp's ``boardsize``, the window, match, pbrain).
        """
        if self.net is None:
            return
        assert self.path is not None  # the net was loaded from it
        made_for = self.meta.get("game") or {}
        name, size = made_for.get("game", made_for.get("name", game.name)), self.net.size
        if name != game.name:
            raise NetMismatch(f"the net {self.path.name} is for {name} {size}x{size}, "
                              f"not {game.name} {game.size}x{game.size}")
        if not self.net.serves_size(game.size):  # one size, or any for size-independent heads (zero9.nn.net)
            raise NetMismatch(f"unacceptable size: the net {self.path.name} is for "
                              f"{self.net.sizes_served()}, not {game.size}x{game.size}")
        actions = self.net.actions_for(game.size)
        if actions != game.num_actions:
            raise NetMismatch(f"the net {self.path.name} has {actions} moves per position; {game.name} "
                              f"{game.size}x{game.size} has {game.num_actions}")

    def evaluator(self, game: Game, rng: np.random.Generator | None = None):
        """The evaluator for ``game`` (``rng`` draws the net's random symmetries)."""
        self.check(game)
        return UniformEvaluator(game) if self.net is None else NetEvaluator(self.net, rng=rng)

    def raw_policy(self, position: Position, sym: int) -> tuple[np.ndarray, float]:
        """The net's policy and winrate for the side to move, seen through symmetry ``sym``."""
        game = position.game
        if self.net is None:
            return np.full(game.num_actions, 1.0 / game.num_actions, np.float32), 0.5

        planes = features.transform_planes(features.encode(position), sym)
        probs, value = self.net.predict(np.ascontiguousarray(planes)[None])
        policy = features.transform_policy(probs[0], features.inverse_symmetry(sym), game.size)
        return policy, (float(value[0]) + 1.0) / 2.0

    def player(self, game: Game, rng: np.random.Generator | None = None, play: PlayConfig | None = None,
               search: SearchConfig | None = None, seed: int | None = None) -> SearchPlayer:
        """A :class:`SearchPlayer` for ``game`` on this source's evaluator."""
        return SearchPlayer(game, self.evaluator(game, rng), play, search, seed)
