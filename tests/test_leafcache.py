"""The fast path's compiled cache (zero9.search.leafcache) keeps the OrderedDict's rules.

Two NetEvaluators with the same seed take the same batches of leaves, one through the compiled
:class:`~zero9.search.leafcache.LeafCache`, one through the OrderedDict (``compiled_cache=False``),
submitted and collected in the same random interleaving (up to three batches in flight, as two
halves and a worker's stale batch make). Keys come from a small pool so that hits, repeats inside
a batch, keys missed by two batches in flight, keys sharing their first word and evictions all
happen with a small capacity. Both must ask their nets for the same rows under the same
symmetries, answer the same priors and values and count the same hits.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from zero9.games import make_game
from zero9.search.evaluator import NetEvaluator
from zero9.search.leafcache import LeafCache
from zero9.search.native import LeafBatch


class AskedNet:
    """A net that answers later and remembers what it was asked: each answer is made from the planes (the
    leaf's number is written in them) and a counter, so an answer served from a cache shows."""

    takes_bytes = takes_symmetries = True

    def __init__(self, num_actions: int):
        self.num_actions, self.asked, self.answered = num_actions, [], 0

    def submit(self, planes, syms):
        self.asked.append((planes[:, 0, 0, 0].tolist(), syms.tolist()))
        return planes

    def collect(self, planes):
        self.answered += 1
        n = len(planes)
        ids = planes[:, 0, 0, 0].astype(np.float32)
        probs = np.random.default_rng(self.answered).random((n, self.num_actions), dtype=np.float32)
        probs[:, 0] = ids
        return probs, ids / 256 + self.answered / 1024


def pool_of_keys(rng, count: int) -> list[np.ndarray]:
    keys = []
    for _ in range(count):
        words = rng.integers(0, 2**63, 8, dtype=np.uint64)
        keys.append(words[: int(rng.integers(1, 9))])
    for j in range(0, count, 5):  # the same newest position under another history: the same bucket
        other = keys[j].copy() if len(keys[j]) > 1 else np.append(keys[j], np.uint64(7))
        other[-1] ^= np.uint64(1)
        keys.append(other)
    return keys


def batch_of(game, pool, picks) -> LeafBatch:
    n = len(picks)
    words = np.zeros((n, 8), np.uint64)
    length = np.zeros(n, np.int64)
    planes = np.zeros((n, 2, game.size, game.size), np.uint8)
    for b, k in enumerate(picks):
        words[b, : len(pool[k])] = pool[k]
        words[b, len(pool[k]):] = np.uint64(12345)  # (words past a key's length are not its key)
        length[b] = len(pool[k])
        planes[b, 0, 0, 0] = k
    forest = SimpleNamespace(game=game, rules=SimpleNamespace(size=game.size, num_actions=game.num_actions))
    return LeafBatch(forest, np.zeros(n, np.int32), np.zeros(n, np.int32), planes, words, length)


@pytest.mark.parametrize("seed, capacity", [(0, 3), (1, 20), (2, 64), (3, 1000)])
def test_the_compiled_cache_answers_as_the_ordered_dict(seed, capacity):
    game = make_game("go", 5)
    rng = np.random.default_rng(seed)
    pool = pool_of_keys(rng, 60)
    nets = [AskedNet(game.num_actions) for _ in range(2)]
    evaluators = [NetEvaluator(net, cache_size=capacity, rng=np.random.default_rng(seed), compiled_cache=c)
                  for net, c in zip(nets, (True, False), strict=True)]
    in_flight: list[tuple] = []
    for _ in range(300):
        if in_flight and (len(in_flight) == 3 or rng.random() < 0.5):
            asked = in_flight.pop(int(rng.integers(len(in_flight))))
            (p1, v1), (p2, v2) = (e.collect(a) for e, a in zip(evaluators, asked, strict=True))
            assert np.array_equal(p1, p2) and np.array_equal(v1, v2)
        else:
            picks = rng.integers(0, len(pool), int(rng.integers(0, 40))).tolist()
            batch = batch_of(game, pool, picks)
            in_flight.append(tuple(e.submit_encoded(batch) for e in evaluators))
        if rng.random() < 0.01:
            for e in evaluators:
                e.clear_cache()
        assert nets[0].asked == nets[1].asked
        assert evaluators[0].cache_hits == evaluators[1].cache_hits
    assert evaluators[0].cache_hits > 50 and len(nets[0].asked) > 20
    assert evaluators[0]._leaf_cache is not None and len(evaluators[0]._cache) == 0  # each took its own way
    assert len(evaluators[0]._leaf_cache) == len(evaluators[1]._cache) <= capacity


def test_a_batch_of_more_misses_than_the_room_grows_the_cache():
    game = make_game("go", 5)
    cache = LeafCache(5000, 8, game.num_actions)
    words = np.arange(1, 6001, dtype=np.uint64).reshape(-1, 1) * np.uint64(0x9E3779B97F4A7C15)
    length = np.ones(6000, np.int64)
    priors = np.zeros((6000, game.num_actions), np.float32)
    values = np.arange(6000, dtype=np.float32)
    misses, repeats, hits = cache.look_up(words, length, priors, values.copy())
    assert hits == 0 and len(misses) == 6000 and len(repeats) == 0
    cache.insert(words, length, misses, priors, values)
    assert len(cache) == 5000
    out = np.full(6000, -1, np.float32)
    misses, _, hits = cache.look_up(words, length, priors, out)
    assert hits == 5000 and misses.tolist() == list(range(1000))  # the oldest thousand went
    assert np.array_equal(out[1000:], values[1000:])


def test_a_cache_holds_an_entry():
    with pytest.raises(ValueError, match="at least one entry"):
        LeafCache(0, 8, 26)
