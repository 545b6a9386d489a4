"""Pausing Python's cyclic garbage collector while a search builds its tree (:func:`gc_paused`).

Vocabulary:

- **cyclic collector** (``gc``): finds the reference cycles that reference counting
  cannot free, by scanning every tracked object of a generation every few hundred
  allocations. A search tree has no cycles (children point down, positions point up).
- **freeze**: ``gc.freeze()`` moves every tracked object to a permanent generation that
  is never scanned; ``gc.unfreeze()`` moves them back, into the oldest generation.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

_gc_aged = 0  # objects moved to the oldest generation unscanned since the last full collection
_gc_live = 0  # objects the collector tracked after that collection


def _tracked_objects() -> int:
    """How many objects the collector tracks, counted by freezing them for a moment. Not
    ``len(gc.get_objects())``: that list holds a reference to a tuple another thread may still be
    building (``tuple(generator)``, whose generator lets other threads run), and the tuple's final
    resize then fails with SystemError (self-play's record writer thread did, in test_in_flight).
    When the caller froze objects itself, unfreezing would undo that: the last count stands."""
    if gc.get_freeze_count():
        return _gc_live
    gc.freeze()
    try:
        return gc.get_freeze_count()
    finally:
        gc.unfreeze()


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Switch Python's cyclic garbage collector off while searching, and spare it the new tree.

    A search allocates many small objects that live on (nodes, positions); every few
    hundred allocations the collector would scan them all, though the tree holds no
    reference cycles (children point down, positions point up): reference counting
    frees it. Switched back on, the collector would still scan everything made during
    the pause at the next allocation; ``gc.freeze()`` + ``gc.unfreeze()`` instead moves
    it all, unscanned, to the oldest generation (the tree is often freed before anyone
    looks). That generation is then collected once twice as many objects have joined it
    as it held after its last collection, so that cycles made meanwhile (by other threads,
    say) are still found. Python's own rule collects at a quarter, eight times as often,
    and a full collection walks every live object to find nothing: no search tree holds a
    cycle (self-play, 64 games x 8 leaves: 7 full collections of 0.1-0.3 s found 0 objects,
    3.9% of the CPU time; at twice, 2 collections, 1.4%). (The trick is skipped when the
    caller froze objects itself: unfreeze would undo that.) Measured by
    ``scripts/bench_search.py`` (gc on / frozen / off; ``--per-core``).
    """
    global _gc_aged, _gc_live
    was_enabled = gc.isenabled()
    if was_enabled and _gc_aged > max(2 * _gc_live, 100_000):
        gc.collect()  # (before the search rather than after: one tree fewer to scan, often)
        _gc_aged, _gc_live = 0, _tracked_objects()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if not gc.get_freeze_count():
                _gc_aged += gc.get_count()[0]  # what the pause left in the youngest generation
                gc.freeze()
                gc.unfreeze()
            gc.enable()
