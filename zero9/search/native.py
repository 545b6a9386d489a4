"""The fast path's Python side: the forest's arrays, one tree's view of them, and the batched driver.

:mod:`zero9.search.forest` holds the compiled steps (read its vocabulary first). This module
owns the arrays they work on and does what happens once a move rather than once a leaf, in
plain numpy with :mod:`zero9.search.puct`'s own expressions (so its numbers are the same):
planting a game's root, root noise, tree reuse, the move and its policy target.

Vocabulary:

- **forest** (:class:`Forest`): the arrays of up to ``G`` trees (one self-play worker's games,
  or half of them with two batches in flight) with room for their nodes and edges. It grows
  when a step could overflow it and **compacts** when it fills: the live trees are copied to
  the front of a second set of arrays (the branches a move left behind stay behind).
- **native tree** (:class:`NativeTree`): slot ``g`` of a forest behind
  :class:`zero9.search.puct.Tree`'s interface (budget, noise, ``advance``, the move, the
  policy), so :class:`zero9.learn.selfplay.game.GameInPlay` plays on it unchanged. It keeps
  the root's :class:`~zero9.games.Position` (the record needs it), made by ``play`` once a move.
- **leaf batch** (:class:`LeafBatch`): one step's leaves: their trees and nodes, input planes
  (uint8 ``[B, C, N, N]``) and cache keys (:func:`zero9.search.evaluator.history_key`'s hashes as words),
  what :meth:`zero9.search.evaluator.NetEvaluator.submit_encoded` takes instead of positions.
- **the driver** (:func:`search_slots`): :func:`zero9.search.batched.search_slots` over native
  trees, one or two batches in flight, the same steps in the same order.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

import numpy as np

from zero9.games import Game, Position
from zero9.games.go_native import go_tables
from zero9.games.gomoku import Gomoku
from zero9.games.gomoku_native import gomoku_tables
from zero9.nn.features import num_planes, point_maps
from zero9.search import forest as forest_steps
from zero9.search import forest_gumbel as gumbel_steps
from zero9.search.batched import two_halves
from zero9.search.gcpause import gc_paused
from zero9.search.gumbel import considered_visits
from zero9.search.leafcache import LeafCache
from zero9.search.numba_cache import DirectCalls
from zero9.search.puct import draw_by_visits
from zero9.settings import SearchConfig

# the compiled steps, called from here straight at their machine code (see numba_cache.Direct)
F, G = DirectCalls(forest_steps), DirectCalls(gumbel_steps)


class GoRules(Game, Protocol):
    """Go's rules as the forest reads them (both Go boards' games: ``Go``, ``SimpleGo``)."""

    @property
    def komi(self) -> float: ...
    @property
    def move_cap(self) -> int: ...  # (an int once the game is made: None is resolved then)


@functools.cache
def rules_for(game: Game) -> forest_steps.Rules:
    """The forest's view of ``game`` (Go, or Gomoku freestyle/standard)."""
    n = game.size
    nn = n * n
    if game.num_actions > G.PAIRWISE_MOST:
        raise ValueError(f"the fast path searches at most {G.PAIRWISE_MOST} actions, not {game.num_actions}")
    # (writable copies of the tables: numba compiles a function again for read-only arrays, and Go's
    # and Gomoku's rules must be of one type to share the compiled steps)
    if game.name == "go":
        go = cast(GoRules, game)  # a game named go has Go's rules
        t = go_tables(n)
        return F.Rules(F.GO, n, nn, game.num_actions, num_planes(game), np.array(t.nbrs), np.array(t.zobrist),
                       np.uint64(t.white_to_move), float(go.komi), int(go.move_cap), 0, False)
    if game.name == "gomoku":
        gomoku = cast(Gomoku, game)  # a game named gomoku is Gomoku
        if gomoku.variant in ("freestyle", "standard"):
            tables = gomoku_tables(n)
            return F.Rules(F.GOMOKU, n, nn, game.num_actions, num_planes(game), np.zeros((nn, 4), np.int32),
                           np.array(tables.zobrist), np.uint64(tables.side_key), 0.0, 0, int(gomoku.connect),
                           gomoku.variant == "standard")
    raise ValueError(f"the fast path plays Go and Gomoku (freestyle, standard), not {game}")


def knobs_for(config: SearchConfig, gumbel: bool = False) -> forest_steps.Knobs:
    def number(x):
        return math.nan if x is None else float(x)

    return F.Knobs(float(config.c_puct), float(config.fpu_reduction), number(config.fpu_root_reduction),
                   number(config.fpu_value), float(config.virtual_loss), bool(gumbel))


@dataclass
class LeafBatch:
    """One step's leaves (see the module docstring); ``planes`` and ``keys`` are the evaluator's."""

    forest: Forest
    trees: np.ndarray  # int32 [B]
    nodes: np.ndarray  # int32 [B]
    planes: np.ndarray  # uint8 [B, C, N, N]
    key_words: np.ndarray  # uint64 [B, 8]: each leaf's cache key (zero9.search.leafcache), newest first
    key_len: np.ndarray  # int64 [B]: the words of each key

    def __len__(self) -> int:
        return len(self.nodes)

    def new_cache(self, capacity: int) -> LeafCache:
        """An empty evaluator's cache for leaves like these (:mod:`zero9.search.leafcache`)."""
        return LeafCache(capacity, self.key_words.shape[1], self.forest.rules.num_actions)

    @property
    def hashes(self) -> np.ndarray:
        """uint64 ``[B]``: each leaf's position hash (its key's first word)."""
        return self.key_words[:, 0]

    @property
    def keys(self) -> list[bytes]:
        """The keys as :func:`zero9.search.evaluator.history_key`'s bytes."""
        raw, width = self.key_words.tobytes(), self.key_words.itemsize * self.key_words.shape[1]
        return [raw[width * b: width * b + 8 * n] for b, n in enumerate(self.key_len.tolist())]

    def turned(self, rows: list[int], syms: np.ndarray) -> np.ndarray:
        """The planes of leaves ``rows``, each under its symmetry (uint8 ``[len(rows), C, N, N]``)."""
        out = np.empty((len(rows), *self.planes.shape[1:]), np.uint8)
        c = self.planes.shape[1]
        maps = _maps(self.forest.rules.size)
        F.turn_planes(self.planes.reshape(len(self.planes), c, -1), np.asarray(rows, np.int64),
                      np.asarray(syms, np.int64), maps, out.reshape(len(rows), c, -1))
        return out


@functools.cache
def _halving_table(m: int, n: int) -> np.ndarray:
    """:func:`zero9.search.gumbel.considered_visits`, kept per (m, n): every move of self-play asks it."""
    table = np.array(considered_visits(m, n), np.int32)
    table.flags.writeable = False
    return table


@functools.cache
def _maps(size: int) -> np.ndarray:
    return np.array(point_maps(size), np.int64)


class Forest:
    """The arrays of up to ``slots`` trees of one game, searched with one :class:`SearchConfig`'s numbers."""

    def __init__(self, game: Game, config: SearchConfig, slots: int, nodes: int | None = None,
                 edges: int | None = None, gumbel_actions: int = 0):
        # (the cast: every game is a frozen dataclass, hashable, which the Game protocol does not say)
        self.game, self.rules = game, rules_for(cast(Hashable, game))
        self.gumbel_actions = gumbel_actions  # m of Gumbel search; 0: PUCT
        self.knobs = knobs_for(config, gumbel_actions > 0)
        nn, a = self.rules.nn, self.rules.num_actions
        nodes = nodes or max(4096, 1024 * slots)  # it grows as the trees need (make_room)
        edges = edges or 32 * nodes
        self.nodes, self.edges = F.new_nodes(nodes, nn, a), F.new_edges(edges)
        self.spare: tuple[forest_steps.Nodes, forest_steps.Edges] | None = None
        self.trees = F.new_trees(slots, 2 * a + 8, nn)
        self.views: list[NativeTree | None] = [None] * slots
        # leaves_wanted(1) of every tree after the last backup (self-play asks it of each tree each step)
        self.wanted, self.wanted_ok = np.full(slots, -1, np.int64), np.zeros(slots, bool)
        self._scratch = np.zeros(4 * nn + 8, np.int32)
        self._actions = np.zeros(a + 1, np.int32)
        self._path = np.zeros(4 * a + 64, np.uint64)
        self._work, self._work32 = np.zeros(2 * a + 16), np.zeros(a + 8, np.float32)
        self.unprepared: set[int] = set()  # Gumbel trees whose search has not drawn its noise yet
        self._expanded = np.zeros(1, np.int32)
        self._old_of = np.zeros(nodes, np.int32)

    # --- memory ----------------------------------------------------------------------------

    def make_room(self, nodes: int, edges: int) -> None:
        """Room for ``nodes`` more nodes and ``edges`` more edges: compact, and grow if that is not enough."""
        have_nodes, have_edges = len(self.nodes.flags), len(self.edges.n)
        if self.nodes.used[0] + nodes <= have_nodes and self.edges.used[0] + edges <= have_edges:
            return
        slots = np.flatnonzero(self.trees.active).astype(np.int32)
        if self.spare is None or len(self.spare[0].flags) < have_nodes or len(self.spare[1].n) < have_edges:
            self.spare = self._new_nodes(have_nodes), F.new_edges(have_edges)
        if len(self._old_of) < have_nodes:
            self._old_of = np.zeros(have_nodes, np.int32)
        to_nodes, to_edges = self.spare
        F.compact(self.nodes, self.edges, self.trees, slots, to_nodes, to_edges, self._old_of)
        self.spare, self.nodes, self.edges = (self.nodes, self.edges), to_nodes, to_edges
        live_nodes, live_edges = int(self.nodes.used[0]), int(self.edges.used[0])
        # room for four times what lives: a compaction (copying the live trees) every few hundred steps
        if live_nodes + nodes > have_nodes // 4 or live_edges + edges > have_edges // 4:
            self._grow(max(have_nodes, 4 * (live_nodes + nodes)), max(have_edges, 4 * (live_edges + edges)))

    def _new_nodes(self, capacity: int) -> forest_steps.Nodes:
        return F.new_nodes(capacity, self.rules.nn, self.rules.num_actions)

    def _grow(self, nodes: int, edges: int) -> None:
        bigger_nodes, bigger_edges = self._new_nodes(nodes), F.new_edges(edges)
        used_nodes, used_edges = int(self.nodes.used[0]), int(self.edges.used[0])
        for old, new in zip(self.nodes, bigger_nodes, strict=True):
            new[:used_nodes] = old[:used_nodes]
        for old, new in zip(self.edges, bigger_edges, strict=True):
            new[:used_edges] = old[:used_edges]
        bigger_nodes.used[0], bigger_edges.used[0] = used_nodes, used_edges
        bigger_nodes.unexpanded[0] = self.nodes.unexpanded[0]
        self.nodes, self.edges, self.spare = bigger_nodes, bigger_edges, None
        self._old_of = np.zeros(nodes, np.int32)

    # --- roots -------------------------------------------------------------------------------

    def plant_node(self, position: Position) -> int:
        """A new unevaluated node holding ``position`` (the caller makes room first)."""
        nodes = self.nodes
        i = int(nodes.used[0])
        nodes.used[0] = i + 1
        nodes.parent[i] = nodes.pedge[i] = nodes.first[i] = -1
        nodes.count[i] = 0
        nodes.value[i] = nodes.total[i] = nodes.tried[i] = nodes.fpu[i] = nodes.sqsum[i] = 0.0
        nodes.stones[i] = position.board_array()
        nodes.to_play[i] = position.to_play
        nodes.passes[i] = getattr(position, "passes", 0)
        nodes.move_number[i] = position.move_number
        nodes.last[i] = -1 if position.last_move is None else position.last_move
        nodes.phash[i] = position.hash
        nodes.bhash[i] = getattr(position, "board_hash", position.hash)
        if position.is_terminal():
            nodes.flags[i] = F.TERMINAL
            nodes.value[i] = position.result_value(position.to_play)
        else:
            nodes.flags[i] = 0
        return i

    def plant(self, slot: int, position: Position, config: SearchConfig, rng: np.random.Generator
              ) -> NativeTree:
        """Tree ``slot`` from ``position`` (its history from ``position.parent``)."""
        self.make_room(1, 0)
        trees = self.trees
        self.wanted_ok[slot] = False
        trees.root[slot] = self.plant_node(position)
        trees.active[slot] = 1
        trees.visit_limit[slot] = trees.playout_limit[slot] = -1
        trees.playouts[slot] = trees.start[slot] = trees.collisions[slot] = 0
        trees.noise[slot] = bool(config.noise)
        earlier, p = [], position.parent
        while p is not None:
            earlier.append(p)
            p = p.parent
        hashes = sorted(getattr(q, "board_hash", q.hash) for q in [position, *earlier])
        if len(hashes) > trees.hist_hash.shape[1]:
            self._widen_history(len(hashes))
        trees.hist_hash[slot, :len(hashes)] = np.array(hashes, np.uint64)
        trees.nhist[slot] = len(hashes)
        back = earlier[:F.BACK]
        trees.nback[slot] = len(back)
        for j, q in enumerate(back):
            trees.hist_boards[slot, j] = q.board_array()
            trees.hist_keys[slot, j] = q.hash
        kind = GumbelNativeTree if self.gumbel_actions else NativeTree
        view = self.views[slot] = kind(self, slot, position, config, rng)
        return view

    def release(self, slot: int) -> None:
        """Slot ``slot`` holds no game any more (its nodes go at the next compaction)."""
        self.trees.active[slot] = 0
        self.wanted_ok[slot] = False
        self.views[slot] = None
        self.unprepared.discard(slot)

    def _widen_table(self, need: int) -> None:
        old = self.trees.table
        wider = np.zeros((old.shape[0], max(need, 2 * old.shape[1])), np.int32)
        wider[:, :old.shape[1]] = old
        self.trees = self.trees._replace(table=wider)

    def _widen_history(self, need: int) -> None:
        old = self.trees.hist_hash
        wider = np.zeros((old.shape[0], max(need, 2 * old.shape[1])), np.uint64)
        wider[:, :old.shape[1]] = old
        self.trees = self.trees._replace(hist_hash=wider)

    # --- a step ------------------------------------------------------------------------------

    def select(self, slots: Sequence[int] | np.ndarray, k: int) -> LeafBatch | None:
        """The leaves of trees ``slots`` for one evaluator call (None: no tree wants any)."""
        for g in list(self.unprepared):  # Gumbel: a search's noise is drawn once its root is expanded
            view = self.views[g]
            assert isinstance(view, GumbelNativeTree)  # only Gumbel trees are unprepared (release drops them)
            if view.root.expanded:
                view.prepare()
        slots = np.asarray(slots, np.int32)
        self.wanted_ok[:] = False  # virtual losses change the roots' visits until the backup
        most = len(slots) * k
        self.make_room(most + 1, most * self.rules.num_actions)
        rules = self.rules
        out_tree, out_node = np.empty(most, np.int32), np.empty(most, np.int32)
        planes = np.empty((most, rules.planes, rules.size, rules.size), np.uint8)
        keys = np.empty((most, F.HISTORY), "<u8")
        key_len = np.empty(most, np.int64)
        count = F.select_batch(self.nodes, self.edges, self.trees, rules, self.knobs, slots, k, out_tree,
                               out_node, planes.reshape(most, rules.planes, rules.nn), keys, key_len,
                               self._scratch, self._work, self._work32, self._path, self._actions,
                               np.empty(len(slots), np.int64))
        if count < 0:
            return None
        return LeafBatch(self, out_tree[:count], out_node[:count], planes[:count], keys[:count],
                         key_len[:count])

    def backup(self, batch: LeafBatch, priors: np.ndarray, values: np.ndarray) -> None:
        """Expand and back up each leaf of ``batch`` with its evaluation (then the new roots' noise)."""
        count = len(batch)
        if not count:
            return
        if len(priors) != count or len(values) != count:
            raise ValueError(f"the evaluator returned {len(priors)} priors and {len(values)} values "
                             f"for {count} positions")
        if len(self._expanded) < count:
            self._expanded = np.zeros(count, np.int32)
        priors = np.ascontiguousarray(priors, np.float32)
        values = np.ascontiguousarray(values, np.float32)
        roots = F.backup_batch(self.nodes, self.edges, self.trees, self.rules, self.knobs, batch.trees,
                               batch.nodes, count, priors, values, self._path, self._scratch, self._actions,
                               self._expanded)
        for g in self._expanded[:roots].tolist():
            view = self.views[g]
            if view is not None and view.config.noise:
                view.add_noise()
        F.wanted_all(self.nodes, self.trees, 1, self.wanted)
        self.wanted_ok[:] = True


class RootView:
    """The root of a :class:`NativeTree`, as :class:`zero9.search.puct.Node`'s few fields a caller reads."""

    __slots__ = ("tree",)

    def __init__(self, tree: NativeTree):
        self.tree = tree

    @property
    def position(self) -> Position:
        return self.tree.position

    @property
    def node(self) -> int:
        return int(self.tree.forest.trees.root[self.tree.slot])

    @property
    def terminal(self) -> bool:
        return bool(self.tree.forest.nodes.flags[self.node] & F.TERMINAL)

    @property
    def expanded(self) -> bool:
        return bool(self.tree.forest.nodes.flags[self.node] & F.EXPANDED)

    @property
    def value(self) -> float:
        return float(self.tree.forest.nodes.value[self.node])

    @property
    def total(self) -> float:
        return float(self.tree.forest.nodes.total[self.node])

    def edges(self) -> slice:
        nodes = self.tree.forest.nodes
        first = int(nodes.first[self.node])
        return slice(first, first + int(nodes.count[self.node])) if first >= 0 else slice(0, 0)

    @property
    def actions(self) -> np.ndarray:
        return self.tree.forest.edges.action[self.edges()].astype(np.intp)

    @property
    def N(self) -> np.ndarray:
        return self.tree.forest.edges.n[self.edges()].copy()

    @property
    def W(self) -> np.ndarray:
        return self.tree.forest.edges.w[self.edges()].copy()

    @property
    def P(self) -> np.ndarray:
        tree = self.tree
        sl = self.edges()
        return tree.forest.edges.p[sl].copy() if tree.noised else tree.forest.edges.raw[sl].copy()

    @property
    def Q(self) -> np.ndarray:
        """Mean values, untried children at the first-play value (as :attr:`zero9.search.puct.Node.Q`)."""
        sl = self.edges()
        edges = self.tree.forest.edges
        n, w = edges.n[sl], edges.w[sl]
        fpu = float(self.tree.forest.nodes.fpu[self.node])
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(n != 0, w / np.where(n != 0, n, 1.0), fpu)

    def q_value(self) -> float:
        """Mean value from the root's side to move's view (its raw value before any visit)."""
        total = self.total
        if self.expanded and total > 0:
            return sum(self.tree.forest.edges.w[self.edges()].tolist()) / total
        return self.value


class NativeTree:
    """Tree ``slot`` of a :class:`Forest`, with :class:`zero9.search.puct.Tree`'s interface."""

    def __init__(self, forest: Forest, slot: int, position: Position, config: SearchConfig,
                 rng: np.random.Generator):
        self.forest, self.slot, self.position = forest, slot, position
        self.config, self.rng = config, rng
        self.noised = False  # the root's priors have noise in them (puct: root.raw_prior is set)
        self.begin_search()

    @property
    def root(self) -> RootView:
        # made on each call: a view kept here would make a reference cycle, which held every game's
        # positions (the record's, through their parents) until the cyclic collector came: 200,000
        # objects a collection, 6 % of a Go recipe worker (scripts/bench_search.py --per-core --gumbel)
        return RootView(self)

    # --- budget --------------------------------------------------------------------------------

    @property
    def playouts(self) -> int:
        return int(self.forest.trees.playouts[self.slot])

    @property
    def collisions(self) -> int:
        return int(self.forest.trees.collisions[self.slot])

    @property
    def playouts_at_start(self) -> int:
        return int(self.forest.trees.start[self.slot])

    def begin_search(self, visits: int | None = None, playouts: int | None = None) -> None:
        trees, g = self.forest.trees, self.slot
        self.forest.wanted_ok[g] = False
        trees.visit_limit[g] = -1 if visits is None else visits
        trees.playout_limit[g] = -1 if playouts is None else playouts
        trees.start[g] = trees.playouts[g]

    def visits(self) -> int:
        return int(round(self.root.total))

    def leaves_wanted(self, k: int) -> int:
        f = self.forest
        if k == 1 and f.wanted_ok[self.slot]:
            return int(f.wanted[self.slot])
        return int(F.leaves_wanted(f.nodes, f.trees, self.slot, k))

    # --- root noise ----------------------------------------------------------------------------

    def _refresh_fpu(self) -> None:
        """:meth:`zero9.search.puct.Tree._refresh_fpu` of the root."""
        cfg, nodes, r = self.config, self.forest.nodes, self.root.node
        if cfg.fpu_value is not None:
            nodes.fpu[r] = cfg.fpu_value
            return
        reduction = cfg.fpu_reduction
        if cfg.fpu_root_reduction is not None:
            reduction = cfg.fpu_root_reduction
        elif cfg.noise:
            reduction = 0.0
        nodes.fpu[r] = max(float(nodes.value[r]) - reduction * math.sqrt(float(nodes.tried[r])), -1.0)

    def _priors_changed(self, p: np.ndarray) -> None:
        """The root's priors are now ``p``: its ``tried`` sum (numpy's, as puct's) and its FPU follow."""
        sl = self.root.edges()
        edges = self.forest.edges
        edges.p[sl] = p
        edges.u[sl] = p / (1.0 + edges.n[sl])  # (puct.py's U0, the same numpy division)
        self.forest.nodes.tried[self.root.node] = float(p[edges.n[sl] > 0].sum())
        self._refresh_fpu()

    def add_noise(self) -> None:
        """P = (1-ε)·P + ε·Dir(α) at the root (:meth:`zero9.search.puct.Tree.add_noise`, the same numpy)."""
        root, cfg = self.root, self.config
        if not root.expanded or self.forest.nodes.count[root.node] == 0:
            return
        self.noised = True
        raw = self.forest.edges.raw[root.edges()]
        eta = self.rng.dirichlet(np.full(len(raw), cfg.noise_alpha_scale / len(raw)))
        self._priors_changed((1 - cfg.noise_eps) * raw + cfg.noise_eps * eta)

    def set_noise(self, on: bool) -> None:
        was = self.config.noise
        self.config.noise = on
        self.forest.trees.noise[self.slot] = on
        if on == was or not self.root.expanded:
            return
        if on:
            self.add_noise()
        elif self.noised:
            self.noised = False
            self._priors_changed(self.forest.edges.raw[self.root.edges()].astype(np.float32))

    # --- the move ------------------------------------------------------------------------------

    reuse = True  # advance keeps the played move's subtree (Gumbel search starts each move afresh)

    def advance(self, action: int) -> None:
        """Play ``action`` at the root: its subtree (if searched) becomes the new root."""
        position = self.position.play(action)  # (the record's position; the forest plays it itself)
        forest, g = self.forest, self.slot
        forest.make_room(1, forest.rules.num_actions)
        if forest.trees.nhist[g] >= forest.trees.hist_hash.shape[1]:
            forest._widen_history(int(forest.trees.nhist[g]) + 1)
        forest.wanted_ok[g] = False
        F.advance_root(forest.nodes, forest.edges, forest.trees, forest.rules, forest.knobs, g, int(action),
                       self.reuse, forest._scratch, forest._path, forest._actions)
        self.position = position
        self.noised = False
        self.advanced()

    def advanced(self) -> None:
        """The new root's first-play value and noise (:meth:`zero9.search.puct.Tree.advance`'s end)."""
        if self.root.expanded:
            self._refresh_fpu()
            if self.config.noise:
                self.add_noise()

    def visit_policy(self, num_actions: int) -> np.ndarray:
        pi = np.zeros(num_actions, dtype=np.float32)
        root = self.root
        total = root.total
        if root.expanded and total > 0:
            pi[root.actions] = root.N / total
        return pi

    def choose_action(self, proportional: bool = False) -> int:
        root = self.root
        if not root.expanded or root.total <= 0:
            raise ValueError("choose_action: the root has not been searched")
        n = root.N
        if proportional:
            return draw_by_visits(root.actions, n, self.rng)
        return int(root.actions[np.lexsort((root.P, root.Q, n))[-1]])


class GumbelNativeTree(NativeTree):
    """:class:`zero9.search.gumbel.GumbelTree` on a forest: sequential halving at the root, the improved
    policy below it, a fresh root every move. Its numbers are :mod:`zero9.search.forest`'s Gumbel part."""

    reuse = False

    def __init__(self, forest: Forest, slot: int, position: Position, config: SearchConfig,
                 rng: np.random.Generator):
        self.m = forest.gumbel_actions
        self.budget = 0
        self.gumbel: np.ndarray | None = None
        super().__init__(forest, slot, position, config, rng)

    def begin_search(self, visits: int | None = None, playouts: int | None = None) -> None:
        super().begin_search(visits, playouts)
        self.budget = visits if visits is not None else playouts or 0
        self.gumbel = None
        self.forest.trees.ntable[self.slot] = 0
        self.forest.unprepared.add(self.slot)

    def prepare(self) -> None:
        """The search's Gumbel noise, its halving table and each root action's g + logits."""
        forest, g = self.forest, self.slot
        sl = self.root.edges()
        count = sl.stop - sl.start
        self.gumbel = self.rng.gumbel(size=count)
        table = _halving_table(min(self.m, count), max(self.budget, 1))
        if len(table) > forest.trees.table.shape[1]:
            forest._widen_table(len(table))
        forest.trees.table[g, :len(table)] = table
        forest.trees.ntable[g] = len(table)
        forest.edges.gbase[sl] = self.gumbel + forest.edges.logit[sl]
        forest.unprepared.discard(g)

    def _ready(self) -> None:
        root = self.root
        if not root.expanded or root.total <= 0:
            raise ValueError("choose_action: the root has not been searched")
        if self.gumbel is None:
            self.prepare()

    def choose_action(self, proportional: bool = False) -> int:
        """Among the most visited root actions, the best by g + logits + σ(q̂)."""
        self._ready()
        f = self.forest
        node = self.root.node
        best = G.gumbel_best_root(f.nodes, f.edges, node, int(self.root.N.max()), f._work, f._work32)
        return int(f.edges.action[best])

    def policy_target(self, num_actions: int) -> np.ndarray:
        """The completed-Q improved policy at the root, float32 ``[A]``."""
        pi = np.zeros(num_actions, dtype=np.float32)
        root = self.root
        if root.expanded:
            f = self.forest
            count = int(f.nodes.count[root.node])
            z = np.zeros(count)
            G.improved_policy(f.nodes, f.edges, root.node, z, f._work, f._work32)
            pi[root.actions] = z
        return pi

    def advanced(self) -> None:
        self.gumbel = None


# ---------------------------------------------------------------------------------------------
# the driver


def evaluate(evaluator, batch: LeafBatch, answer: tuple | None = None) -> None:
    """One evaluator call for ``batch`` (``answer``: its result, already in), then expand and back up."""
    if not len(batch):
        return
    priors, values = answer or evaluator.evaluate_encoded(batch)
    batch.forest.backup(batch, priors, values)


def search(tree: NativeTree, evaluator, visits: int | None = None, playouts: int | None = None,
           leaves_per_call: int = 1) -> int:
    """:func:`zero9.search.mcts.search` on a native tree: the simulations done."""
    tree.begin_search(visits, playouts)
    start = tree.playouts
    with gc_paused():
        while (batch := tree.forest.select([tree.slot], leaves_per_call)) is not None:
            evaluate(evaluator, batch)
    return tree.playouts - start


class Slots:
    """The native trees of a fixed number of slots: one forest, or one per half with two batches in flight."""

    def __init__(self, game: Game, config: SearchConfig, slots: int, halves: bool, gumbel_actions: int = 0):
        cut = (slots + 1) // 2 if halves else slots
        self.halves = (range(0, cut), range(cut, slots)) if halves else (range(0, slots),)
        self.forests = [Forest(game, config, max(1, len(h)), gumbel_actions=gumbel_actions)
                        for h in self.halves]

    def locate(self, slot: int) -> tuple[Forest, int]:
        for half, forest in zip(self.halves, self.forests, strict=True):
            if slot in half:
                return forest, slot - half.start
        raise IndexError(slot)

    def plant(self, slot: int, position: Position, config: SearchConfig, rng: np.random.Generator
              ) -> NativeTree:
        forest, local = self.locate(slot)
        return forest.plant(local, position, config, rng)

    def release(self, slot: int) -> None:
        forest, local = self.locate(slot)
        forest.release(local)


def search_slots(slots: Slots, trees: Callable[[], Sequence[NativeTree | None]], evaluator,
                 leaves_per_tree: int, on_step: Callable[[range], bool]) -> Iterator[None]:
    """:func:`zero9.search.batched.search_slots` on native trees: the same steps, in the same order."""
    if len(slots.halves) == 2:
        yield from _in_flight(slots, trees, evaluator, leaves_per_tree, on_step)
        return
    forest, every = slots.forests[0], slots.halves[0]
    while True:
        live = [t.slot for t in trees() if t is not None]
        # (the cast: a live slot's view is its tree)
        if not live or not any(cast(NativeTree, forest.views[g]).leaves_wanted(1) for g in live):
            return
        with gc_paused():  # (as zero9.search.batched: the cache's entries hold no cycles)
            while (batch := forest.select(live, leaves_per_tree)) is not None:
                evaluate(evaluator, batch)
                del batch
                if on_step(every):
                    break
        yield


def _in_flight(slots: Slots, trees, evaluator, leaves_per_tree: int, on_step) -> Iterator[None]:
    """:func:`zero9.search.batched.search_in_flight` on native trees: two halves (a forest each), a batch
    in flight each, through the same loop (:func:`zero9.search.batched.two_halves`)."""

    def submit(h: int):
        forest, half = slots.forests[h], slots.halves[h]
        current = trees()
        live = [current[i].slot for i in half if current[i] is not None]
        batch = forest.select(live, leaves_per_tree) if live else None
        if batch is None:
            return None
        return batch, (evaluator.submit_encoded(batch) if len(batch) else None)

    def back_up(batch: LeafBatch, asked) -> None:
        if len(batch):
            evaluate(evaluator, batch, evaluator.collect(asked))

    yield from two_halves(slots.halves, submit, back_up, evaluator.collect, on_step)


__all__ = ["Forest", "LeafBatch", "NativeTree", "Slots", "evaluate", "search", "search_slots"]
