"""Calling the fast path's compiled steps straight at their machine code (zero9.search.numba_cache.Direct)
gives what numba's dispatcher gives, each kind of argument its own overload."""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np
import pytest

from zero9.search import numba_cache
from zero9.search.numba_cache import Direct, DirectCalls

Pair = namedtuple("Pair", "a b")


@numba.njit(**numba_cache.KERNEL)
def weighted_sum(pair, scale, out) -> float:
    total = 0.0
    for i in range(len(pair.a)):
        out[i] = pair.a[i] * scale + pair.b[i]
        total += out[i]
    return total


def test_direct_calls_answer_as_the_dispatcher_for_each_kind_of_argument():
    step = Direct(weighted_sum)
    rng = np.random.default_rng(0)
    pair = Pair(rng.random(7), rng.random(7))
    for _ in range(3):  # a float array out, an int array out (another overload), a non-contiguous view
        for scale, out in ((2.5, np.empty(7)), (2, np.empty(7, np.int64)), (0.5, np.empty(14)[::2])):
            want = out.copy()
            assert step(pair, scale, out) == weighted_sum(pair, scale, want)
            assert np.array_equal(out, want)
    assert len(step.entries) == 3  # one entry point per kind of arguments


def test_a_namedtuple_of_arrays_of_another_kind_is_caught_under_the_check():
    """The kinds of a namedtuple's arrays are not part of a call's kind (too slow to look at); under
    ZERO9_CHECK_DIRECT=1 (the suite) a call that would go to the wrong overload is refused."""
    assert numba_cache.CHECK_DIRECT
    step = Direct(weighted_sum)
    step(Pair(np.ones(3), np.ones(3)), 1.0, np.empty(3))
    with pytest.raises(TypeError, match="overload of"):
        step(Pair(np.ones(6)[::2], np.ones(3)), 1.0, np.empty(3))


def test_direct_calls_wrap_a_modules_compiled_functions_only():
    steps = DirectCalls(numba_cache)
    assert steps.KERNEL is numba_cache.KERNEL and steps.stamp is numba_cache.stamp
    import sys

    module = sys.modules[__name__]
    assert isinstance(DirectCalls(module).weighted_sum, Direct)
