"""Evaluators: what the search asks for a leaf's priors and value.

Vocabulary:

- **evaluator**: any object with ``evaluate(positions) -> (priors, values)``:
  ``priors`` float32 ``[B, A]`` summing to 1 over all actions (the search itself
  drops illegal ones), ``values`` float32 ``[B]`` in [-1, 1] from the side to move's
  view. ``B = len(positions)``; one call is one batch. The search keeps each leaf's
  row of ``priors`` until a simulation goes through that leaf: return new arrays
  from each call (or arrays you never write again), never one buffer refilled.
- **free evaluator** (:class:`UniformEvaluator`): uniform priors, value 0. It costs
  nothing, so it measures the tree code alone, and with enough visits the rules'
  terminal values still find forced wins.
- **symmetry**: one of the 8 dihedral transforms of :mod:`zero9.nn.features`. The net
  sees each position under one random symmetry, and its policy is mapped back
  with the inverse (Leela Zero's ``-s`` off: random symmetry per evaluation).
- **cache key**: the position's Zobrist hash (stones and side to move) *together
  with the hashes of its 7 predecessors*. The net's input holds 8 positions of
  history (and Go's ko state follows from it), so two positions with the same
  stones but different recent histories get different inputs and must not share an
  entry. The cache is a bounded LRU (oldest entry dropped first). An entry is as few
  objects as it can be (the key as one ``bytes``; the batch array, a row, the value):
  self-play evicts an old entry per new one, and freeing each cold object costs.
- **net time**: :class:`NetEvaluator` adds the seconds spent inside
  ``net.predict`` to ``net_seconds`` (the benchmark's "% of wall time inside the net").
- **in flight**: ``evaluate`` in two halves, :meth:`NetEvaluator.submit` (look-ups,
  features, the batch sent) and :meth:`NetEvaluator.collect` (the answer, the cache),
  with an :class:`Asked` batch between them. When the net answers later (the inference
  server's :class:`zero9.nn.inference.RemoteNet`), the caller can search on between the
  two: :func:`zero9.search.batched.search_in_flight`. Cache entries are written at
  ``collect``, so a position asked again while its batch is in flight is a miss.
- **ownership** (``with_ownership=True``, a Go net with the head): the same net call also
  returns the net's ownership ``[N*N]`` per position (+1 = the point ends as the side to
  move's area), mapped back from its symmetry and kept beside the cache entry, so
  :meth:`NetEvaluator.ownership` of a position the search evaluated is a look-up with the
  very numbers its value came from (:mod:`zero9.search.analysis` sums them into a score).
  Off by default: self-play and play never pay for it.
"""

from __future__ import annotations

import itertools
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from zero9.games import BLACK, Game, Position
from zero9.nn import features, planes_fast

if TYPE_CHECKING:  # (for its type only: importing it loads numba, which only the fast path's batches need)
    from zero9.search.leafcache import LeafCache

HISTORY_KEY_DEPTH = 8  # positions in the cache key: the current one and 7 before it


_PACK = [struct.Struct(f"<{k}Q").pack for k in range(HISTORY_KEY_DEPTH + 1)]  # k 64-bit hashes -> bytes


def history_key(position: Position) -> bytes:
    """The cache key: the hashes of ``position`` and up to 7 ancestors, newest first, as 8 bytes each."""
    key: list[int] = []
    p: Position | None = position
    while p is not None and len(key) < HISTORY_KEY_DEPTH:
        key.append(p.hash)
        p = p.parent
    return _PACK[len(key)](*key)


class UniformEvaluator:
    """Uniform priors over all actions and value 0: the search's free evaluator."""

    def __init__(self, game: Game):
        self.game = game
        self._outputs: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # batch size -> (priors, values)
        self.calls = 0
        self.positions = 0

    def evaluate(self, positions: Sequence[object]) -> tuple[np.ndarray, np.ndarray]:
        # (only their number counts: evaluate_encoded passes a range)
        self.calls += 1
        self.positions += len(positions)
        out = self._outputs.get(len(positions))
        if out is None:  # built once per batch size and shared: callers only read them
            priors = np.full((len(positions), self.game.num_actions), 1.0 / self.game.num_actions, np.float32)
            values = np.zeros(len(positions), np.float32)
            priors.flags.writeable = values.flags.writeable = False
            out = self._outputs[len(positions)] = (priors, values)
        return out

    def evaluate_encoded(self, batch) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`evaluate` of the fast path's leaves (:class:`zero9.search.native.LeafBatch`)."""
        return self.evaluate(range(len(batch)))


class Asked:
    """A batch between :meth:`NetEvaluator.submit` and :meth:`NetEvaluator.collect`: the rows the cache
    answered are in ``priors``/``values``; the net's answer (or its ticket) fills the others."""

    __slots__ = ("positions", "priors", "values", "size", "misses", "first", "repeats", "leaves", "syms",
                 "ticket", "answer", "turned_by_net")

    def __init__(self, positions: Sequence, priors: np.ndarray, values: np.ndarray, size: int):
        self.positions, self.priors, self.values, self.size = positions, priors, values, size
        self.misses: dict[bytes, int] = {}  # key -> the first row asking for it (the Python cache's keys)
        self.first: Sequence[int] | np.ndarray = ()  # the rows the net is asked for, in order
        # (row, first row) of a leaf asked twice in the batch: a list here, an array from a LeafCache
        self.repeats: list[tuple[int, int]] | np.ndarray = []
        # the fast path's keys (words, lengths) and LeafCache maker; None: by ``misses``
        self.leaves: tuple[np.ndarray, np.ndarray, Callable[[int], LeafCache]] | None = None
        self.syms: np.ndarray | None = None  # the symmetry each miss was sent under
        self.ticket = None  # the net's ticket while the batch is in flight
        # the net's (probs, values) of the misses, then (with ownership) its ownership and score lead
        self.answer: tuple[np.ndarray, ...] | None = None
        self.turned_by_net = False  # the net applied the symmetries and turned its policies back


class NetEvaluator:
    """A ZeroNet behind features, a random symmetry per position, and an LRU cache."""

    def __init__(self, net, cache_size: int = 200_000, random_symmetry: bool = True,
                 rng: np.random.Generator | None = None, with_ownership: bool = False,
                 compiled_cache: bool = True):
        if cache_size < 0:
            raise ValueError(f"cache_size must be >= 0, got {cache_size}")
        self.net = net
        # Ownership rides on the cache (keyed alike, evicted alike): it needs one.
        self.has_ownership = bool(with_ownership and net_has_ownership(net))
        if self.has_ownership and cache_size == 0:
            raise ValueError("with_ownership needs a cache (cache_size > 0)")
        # key -> (ownership batch, row, score-head leads of the batch or None)
        self._owned: dict[bytes, tuple] | None = {} if self.has_ownership else None
        self.cache_size = cache_size
        self.random_symmetry = random_symmetry
        self.rng = rng or np.random.default_rng()
        self._cache: OrderedDict[bytes, tuple[np.ndarray, int, float]] = OrderedDict()  # (priors, row, value)
        # The fast path's leaves go through a zero9.search.leafcache.LeafCache (made at their first batch),
        # the OrderedDict's rules compiled; compiled_cache=False keeps them in the OrderedDict (the tests
        # hold the two equal).
        self.compiled_cache = compiled_cache
        self._leaf_cache: LeafCache | None = None
        self._lock = threading.Lock()  # the window's policy heatmap and a running analysis share us
        self.calls = 0  # net.predict calls
        self.positions = 0  # positions asked for
        self.cache_hits = 0
        self.net_seconds = 0.0

    @property
    def answers_later(self) -> bool:
        """The net takes a batch and answers later (``submit``/``collect``: the inference server's
        RemoteNet), so a caller gains by keeping two batches in flight."""
        return hasattr(self.net, "submit")

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        return self.collect(self.submit(positions, wait=True))

    def evaluate_encoded(self, batch) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`evaluate` of the fast path's leaves (:class:`zero9.search.native.LeafBatch`)."""
        return self.collect(self.submit_encoded(batch, wait=True))

    def submit(self, positions: Sequence[Position], wait: bool = False) -> Asked:
        """The first half of ``evaluate``: cache look-ups, features, and the net's batch sent off.

        A net that answers later (see :attr:`answers_later`) gets the batch through its ``submit``
        unless ``wait``; any other net computes it here. :meth:`collect` gives the answer.
        """
        game = positions[0].game if positions else None

        def encode(rows: list[int], syms: np.ndarray | None) -> np.ndarray:
            if syms is None:  # as they stand
                syms = np.zeros(len(rows), np.intp)
            return planes_fast.encode_batch([positions[j] for j in rows], syms)

        return self._submit(positions, map(history_key, positions), encode, game, wait)

    def submit_encoded(self, batch, wait: bool = False) -> Asked:
        """:meth:`submit` of the fast path's leaves: their keys and planes (uint8, symmetry 0) are made
        already; the misses' planes are turned by their symmetries here. The cache is then a
        :class:`zero9.search.leafcache.LeafCache` (the same rules, compiled), unless ownership rides
        on it."""
        game = batch.forest.game

        def encode(rows, syms: np.ndarray | None) -> np.ndarray:
            planes = batch.planes[rows] if syms is None else batch.turned(rows, syms)
            # 0/1 bytes for a net that takes them (the inference server's slots), else float32 as encode_batch
            return planes if getattr(self.net, "takes_bytes", False) else planes.astype(np.float32)

        if not (self.cache_size and self.compiled_cache) or self._owned is not None:
            return self._submit(batch.hashes, batch.keys, encode, game, wait)
        with self._lock:
            asked = self._asked(batch.hashes, game)
            asked.leaves = batch.key_words, batch.key_len, batch.new_cache
            asked.first, asked.repeats, hits = self._leaves(asked).look_up(*asked.leaves[:2], asked.priors,
                                                                           asked.values)
            self.cache_hits += hits
            self._send(asked, encode, wait)
            return asked

    def _leaves(self, asked: Asked) -> LeafCache:
        """The fast path's cache (made at its first batch, and again after :meth:`clear_cache`)."""
        if self._leaf_cache is None:
            assert asked.leaves is not None  # a fast-path batch (submit_encoded)
            self._leaf_cache = asked.leaves[2](self.cache_size)
        return self._leaf_cache

    def _asked(self, positions, game) -> Asked:
        self.positions += len(positions)
        num_actions = game.num_actions if game is not None else 0
        return Asked(positions, np.empty((len(positions), num_actions), np.float32),
                     np.empty(len(positions), np.float32), game.size if game is not None else 0)

    def _submit(self, positions, keys, encode, game, wait: bool) -> Asked:
        # Self-play asks for hundreds of positions a call: whole-batch numpy operations, and a
        # Python loop only where each position needs its own (keys, cache entries).
        with self._lock:
            asked = self._asked(positions, game)
            priors, values, misses, repeats = asked.priors, asked.values, asked.misses, asked.repeats
            assert isinstance(repeats, list)  # a new Asked's (an array comes only from a LeafCache)
            cache = self._cache
            for j, key in enumerate(keys):
                hit = cache.get(key)
                if hit is not None:
                    cache.move_to_end(key)
                    batch, row, values[j] = hit
                    priors[j] = batch[row]
                    self.cache_hits += 1
                elif key in misses:
                    repeats.append((j, misses[key]))
                else:
                    misses[key] = j
            asked.first = list(misses.values())
            self._send(asked, encode, wait)
            return asked

    def _send(self, asked: Asked, encode, wait: bool) -> None:
        """The misses' planes to the net (each under a random symmetry), or their answer computed now."""
        if not len(asked.first):
            return
        first = asked.first
        syms = asked.syms = (self.rng.integers(0, 8, len(first)) if self.random_symmetry
                             else np.zeros(len(first), np.intp))
        # the inference server's net turns the planes itself, on the GPU (zero9.nn.inference)
        on_net = asked.turned_by_net = self._owned is None and getattr(self.net, "takes_symmetries", False)
        planes = encode(first, None if on_net else syms)
        extra = (syms,) if on_net else ()
        start = time.perf_counter()
        if self._owned is not None:
            asked.answer = self.net.predict(planes, ownership=True)
        elif self.answers_later and not wait:
            asked.ticket = self.net.submit(planes, *extra)
        else:
            asked.answer = self.net.predict(planes, *extra)
        self.net_seconds += time.perf_counter() - start
        self.calls += 1

    def collect(self, asked: Asked) -> tuple[np.ndarray, np.ndarray]:
        """The second half of ``evaluate``: the net's answer in, the cache filled; ``(priors, values)``."""
        with self._lock:
            if not len(asked.first):
                return asked.priors, asked.values
            if asked.answer is None:
                start = time.perf_counter()
                asked.answer = self.net.collect(asked.ticket)
                self.net_seconds += time.perf_counter() - start
            probs, vals = asked.answer[0], asked.answer[1]
            priors, values, first, syms = asked.priors, asked.values, asked.first, asked.syms
            assert syms is not None  # drawn by _send for the misses (there are some)
            probs = np.asarray(probs, np.float32)
            size = asked.size
            for s in range(1, 1 if asked.turned_by_net else features.NUM_SYMMETRIES):  # each row back
                if (rows := syms == s).any():
                    back = features.back_index(s, size, probs.shape[1])
                    probs[rows] = probs[rows][:, back]
            priors[first], values[first] = probs, vals
            if len(asked.repeats):
                repeats = np.asarray(asked.repeats, np.intp)
                priors[repeats[:, 0]], values[repeats[:, 0]] = priors[repeats[:, 1]], values[repeats[:, 1]]
            if self._owned is not None:
                self._keep_ownership(asked, size)
            if asked.leaves is not None:
                self._leaves(asked).insert(*asked.leaves[:2], np.asarray(first), priors, values)
            elif self.cache_size:
                # An entry's priors are a row of ``priors`` (the search only reads it), not of ``probs``:
                # one array per batch stays alive, not two.
                cache = self._cache
                entries = zip(itertools.repeat(priors), first, values[first].tolist(), strict=False)
                cache.update(zip(asked.misses, entries, strict=True))  # (the inner zip: repeat is endless)
                if self._owned is None:
                    while len(cache) > self.cache_size:
                        cache.popitem(last=False)  # the least recently used
                else:
                    while len(cache) > self.cache_size:
                        self._owned.pop(cache.popitem(last=False)[0], None)  # evicted alike
            return priors, values

    def _keep_ownership(self, asked: Asked, size: int) -> None:
        """The net's ownership (and score head's lead) of a collected batch, each row back from its
        symmetry, kept by key."""
        # collect's, with the ownership head: the answer is in, drawn symmetries and all
        assert asked.answer is not None and asked.syms is not None and self._owned is not None
        own = np.asarray(asked.answer[2], np.float32)
        for s in range(1, features.NUM_SYMMETRIES):
            if (rows := asked.syms == s).any():
                own[rows] = own[rows][:, features.back_index(s, size, own.shape[1])]
        # The score head answers the lead over the board's points (zero9.learn.training.losses.score_target).
        scores = np.asarray(asked.answer[3], np.float64) * own.shape[1] if len(asked.answer) > 3 else None
        self._owned.update((key, (own, i, scores)) for i, key in enumerate(asked.misses))

    def ownership(self, positions: Sequence[Position]) -> np.ndarray | None:
        """The net's ownership ``[B, N*N]`` float32 (side to move's view); None without the head.

        A position the search evaluated is a look-up (the numbers its value came from);
        any other is evaluated first (one call for all of them).
        """
        found = self.ownership_and_scores(positions)
        return None if found is None else found[0]

    def ownership_and_scores(self, positions: Sequence[Position]
                             ) -> tuple[np.ndarray, np.ndarray | None] | None:
        """:meth:`ownership` and the score head's lead in points ``[B]`` (side to move's view; None
        without a score head); None without an ownership head."""
        if self._owned is None:
            return None
        keys = [history_key(p) for p in positions]
        with self._lock:
            missing = [p for p, k in zip(positions, keys, strict=True) if k not in self._owned]
        if missing:
            self.evaluate(missing)
        out = np.empty((len(positions), positions[0].game.size ** 2 if positions else 0), np.float32)
        scores = np.empty(len(positions))
        with self._lock:
            for j, key in enumerate(keys):
                batch, row, lead = self._owned[key]
                out[j] = batch[row]
                scores[j] = np.nan if lead is None else lead[row]
        if np.isnan(scores).any():
            return out, None
        # The planes carry no komi, so the head answers at the komi its games had (zero9.nn.heads):
        # each position's own komi moves its lead by the difference (Black gives komi, White gets it).
        trained = getattr(self.net, "score_komi", None)
        if trained is not None:
            for j, position in enumerate(positions):
                shift = trained - float(getattr(position.game, "komi", trained))
                scores[j] += shift if position.to_play == BLACK else -shift
        return out, scores

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()
            self._leaf_cache = None
            if self._owned is not None:
                self._owned.clear()


def steady_evaluator(net, game) -> NetEvaluator | UniformEvaluator:
    """``net`` seen the same way every time (no random symmetry; None: uniform priors).

    For a playout that must give one answer, the count of a finished game
    (:func:`zero9.games.aftermath.count_finished`): the same game always gets the same count.
    """
    return UniformEvaluator(game) if net is None else NetEvaluator(net, random_symmetry=False)


def net_has_ownership(net) -> bool:
    """Whether ``net`` (a ZeroNet; not a remote one) has an ownership head."""
    config = getattr(net, "config", None)
    return isinstance(config, dict) and bool(config.get("ownership"))
