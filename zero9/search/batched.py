"""Many trees, one net call: the batched driver (G trees x K leaves per evaluator call).

Vocabulary (tree terms are :mod:`zero9.search.puct`'s):

- **G**: the trees searched at once: the games of self-play
  (:mod:`zero9.learn.selfplay.lockstep`), or the root-parallel trees of one position in play
  (:class:`zero9.search.player.SearchPlayer`).
- **K** (``leaves_per_tree``): leaves each tree selects (with virtual loss) before
  the net is called; one call evaluates up to ``G * K`` positions. A GPU wants
  hundreds per call; a CPU core wants a few dozen.
- **budget**: each tree's own (:meth:`~zero9.search.puct.Tree.begin_search`), so trees
  may search to different visit counts (self-play's fast and full moves); a tree whose
  budget is spent takes no more leaves.
- **step**: collect the leaves every tree wants, one ``evaluator.evaluate`` call, expand
  and back up each leaf. With ``K = 1`` a tree goes through exactly the simulations of
  :func:`zero9.search.puct.run_simulations` (same selection code, same order), which
  the tests check.
- **on_step**: the caller's hook after each step: progress reports, or self-play playing
  the move of each tree whose search is done and giving it its next budget. It returns
  True to end the search there.
- **two batches in flight** (:func:`search_in_flight`): when the net answers later (the
  inference server), the trees are split into two **halves** and each half steps in
  turn: while the GPU evaluates one half's batch, the core selects the other half's
  leaves. Each tree still goes through exactly the steps it would with one batch (its
  half's steps select, evaluate and back up only its own leaves); only the evaluator's
  shared state (its random symmetries, its cache) sees a different order.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar, cast

from zero9.search.gcpause import gc_paused
from zero9.search.puct import Leaf, Tree, collect_leaves, evaluate_leaves


def search_trees(trees: Sequence[Tree], evaluator, leaves_per_tree: int = 1, deadline: float | None = None,
                 stop: threading.Event | None = None, on_step: Callable[[], bool | None] | None = None
                 ) -> int:
    """Search every tree until its budget is spent, ``deadline`` passes, ``stop`` is set or ``on_step``
    returns True.

    One evaluator call per step serves up to ``len(trees) * leaves_per_tree`` leaves.
    ``deadline`` is a ``time.monotonic()`` value; ``stop`` an event checked every step.
    Returns the simulations done (all trees).
    """
    start = [tree.playouts for tree in trees]
    with gc_paused():
        while not (stop is not None and stop.is_set()):
            if deadline is not None and time.monotonic() >= deadline:
                break
            leaves = select_leaves(trees, leaves_per_tree)
            if leaves is None:
                break
            evaluate_leaves(evaluator, leaves)
            del leaves  # see _drop_paths
            if on_step is not None and on_step():
                break
    return sum(tree.playouts - s for tree, s in zip(trees, start, strict=True))


# _drop_paths: a step's leaves are dropped before ``on_step``. Their paths hold the roots, so a
# move played there frees its tree's unplayed subtrees at once, and the next selection reuses that
# memory while it is still in cache; held until the next step, the tree went only after it (self-play
# measured 4-6% slower per CPU second).


def select_leaves(trees: Sequence[Tree | None], leaves_per_tree: int) -> list[Leaf] | None:
    """One step's leaves, tree by tree (a slot may be None: no tree); None when no tree wants any."""
    wanted = [tree.leaves_wanted(leaves_per_tree) if tree is not None else 0 for tree in trees]
    if not any(wanted):
        return None
    return [leaf for tree, k in zip(trees, wanted, strict=True) if k
            for leaf in collect_leaves(cast(Tree, tree), k)]  # (k > 0: a tree, not None)


def search_slots(trees: Callable[[], Sequence[Tree | None]], evaluator, leaves_per_tree: int,
                 on_step: Callable[[range], bool], in_flight: int = 1) -> Iterator[None]:
    """Search the trees of a fixed number of slots, yielding whenever ``on_step`` returns True.

    ``trees()`` gives the current tree of every slot (None: an empty slot); the caller may
    put a new tree in a slot inside ``on_step(slots)``, which plays the moves of those
    slots. ``in_flight = 1``: :func:`search_trees` over the filled slots; 2:
    :func:`search_in_flight`. Ends when no tree is left (or none wants leaves).
    """
    if in_flight == 2:
        yield from search_in_flight(trees, evaluator, leaves_per_tree, on_step)
        return
    every = range(len(trees()))
    while (live := [tree for tree in trees() if tree is not None]) and any(t.leaves_wanted(1) for t in live):
        search_trees(live, evaluator, leaves_per_tree, on_step=lambda: on_step(every))
        yield


def search_in_flight(trees: Callable[[], Sequence[Tree | None]], evaluator, leaves_per_tree: int,
                     on_step: Callable[[range], bool]) -> Iterator[None]:
    """Search the trees in two halves with a batch in flight each; yields whenever ``on_step`` returns True.

    ``trees()`` gives the current tree of every slot (None: an empty slot); the number of
    slots is fixed, the caller may put a new tree in a slot inside ``on_step``. The
    evaluator has ``submit(positions) -> asked`` and ``collect(asked) -> (priors, values)``
    (:class:`zero9.search.evaluator.NetEvaluator`). ``on_step(half)`` runs after each of a
    half's steps with that half's slots; the order of steps is A, B, A, B..., so the hook
    sees the slots in the order of :func:`search_trees`' steps. A half ends when none of its
    trees wants leaves; the search ends when both have. The caller's loop over this
    generator does its work (writing finished games) at each yield, with both halves in flight.
    """
    n = len(trees())
    halves = (range(0, (n + 1) // 2), range((n + 1) // 2, n))

    def submit(h: int) -> tuple[list[Leaf], object] | None:
        current = trees()
        leaves = select_leaves([current[i] for i in halves[h]], leaves_per_tree)
        if leaves is None:
            return None
        return leaves, (evaluator.submit([leaf.node.position for leaf in leaves]) if leaves else None)

    def back_up(leaves: list[Leaf], asked) -> None:
        if leaves:
            evaluate_leaves(evaluator, leaves, evaluator.collect(asked))

    yield from two_halves(halves, submit, back_up, lambda asked: evaluator.collect(asked), on_step)


Leaves = TypeVar("Leaves")  # a half's leaves: puct's list of Leaf, or the fast path's LeafBatch


def two_halves(halves: Sequence[range], submit: Callable[[int], tuple[Leaves, Any] | None],
               back_up: Callable[[Leaves, Any], None], abandon: Callable[[Any], object],
               on_step: Callable[[range], bool]) -> Iterator[None]:
    """The loop of two batches in flight (:func:`search_in_flight`'s, and the native fast path's):
    ``submit(h)`` selects half ``h``'s leaves and sends them (``(leaves, ticket)``; None when the half
    wants no more), ``back_up(leaves, ticket)`` takes their answer in; ``abandon(ticket)`` collects a
    batch still in flight when the caller stops early."""
    in_flight: list[tuple[Leaves, Any] | None] = [None, None]  # per half: its leaves and batch

    def step(h: int) -> bool:
        """Half ``h``'s batch answered: back it up, the caller's hook, the half's next batch out."""
        leaves, asked = cast("tuple[Leaves, Any]", in_flight[h])  # (h is in flight: the caller checks)
        in_flight[h] = None
        back_up(leaves, asked)
        del leaves, asked  # see _drop_paths
        ended = on_step(halves[h])
        in_flight[h] = submit(h)  # out before the caller's work at the yield
        return ended

    try:
        with gc_paused():
            for h in range(2):
                in_flight[h] = submit(h)
        h = 0
        while in_flight[0] is not None or in_flight[1] is not None:
            # The collector is paused between yields, as search_trees pauses it between games ending.
            with gc_paused():
                ended = False
                while not ended and (in_flight[0] is not None or in_flight[1] is not None):
                    if in_flight[h] is not None:
                        ended = step(h)
                    h = 1 - h
            if ended:
                yield
    finally:
        for item in in_flight:  # stopped early: every ticket is answered, so the net's slots come back
            if item is not None and item[0]:
                abandon(item[1])
