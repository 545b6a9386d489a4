"""The search's pause of the cyclic garbage collector (zero9/search/gcpause.py)."""

from __future__ import annotations

import gc

from zero9.search import gcpause


def test_the_live_count_never_hands_out_the_objects(monkeypatch):
    """gc.get_objects() returns references to tuples other threads may still be building, whose resize
    then fails (a SystemError in self-play's record writer thread): the pause counts the objects the
    collector tracks by freezing them instead, and leaves the collector as it found it."""

    def forbidden(*args, **kwargs):
        raise AssertionError("gc.get_objects() exposes objects under construction")

    monkeypatch.setattr(gc, "get_objects", forbidden)
    monkeypatch.setattr(gcpause, "_gc_aged", 10**9)  # due: the pause collects first, then counts
    assert gc.isenabled() and not gc.get_freeze_count()
    with gcpause.gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled() and not gc.get_freeze_count()
    assert gcpause._gc_aged < 10**9 and gcpause._gc_live > 1000  # this interpreter tracks many objects


def test_a_callers_frozen_objects_stay_frozen(monkeypatch):
    monkeypatch.setattr(gcpause, "_gc_aged", 10**9)
    monkeypatch.setattr(gcpause, "_gc_live", 1234)
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gcpause.gc_paused():
            pass
        assert gc.get_freeze_count() == frozen and gcpause._gc_live == 1234  # the last count stands
    finally:
        gc.unfreeze()
