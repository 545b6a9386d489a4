"""Many trees, one net call: the batched driver (G trees x K leaves per evaluator call).

Vocabulary (tree terms are :mod:`zero9.search.puct`'s):

- **G**: the trees searched at once: the games of self-play
  (:mod:`zero9.learn.selfplay_game`), or the root-parallel trees of one position in play
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
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from zero9.search.gcpause import gc_paused
from zero9.search.puct import Tree, collect_leaves, evaluate_leaves


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
            wanted = [tree.leaves_wanted(leaves_per_tree) for tree in trees]
            if not any(wanted):
                break
            evaluate_leaves(evaluator, [leaf for tree, k in zip(trees, wanted, strict=True) if k
                                        for leaf in collect_leaves(tree, k)])
            if on_step is not None and on_step():
                break
    return sum(tree.playouts - s for tree, s in zip(trees, start, strict=True))
