"""zero9.util.interrupts: Ctrl-C held while workers start, never lost, and ignored by the workers."""

from __future__ import annotations

import os
import signal
import time
from multiprocessing.context import SpawnProcess

import pytest

from zero9.learn.selfplay.pool import WorkerPool
from zero9.util.interrupts import ctrl_c_held

SIGINT_BIT = 1 << (signal.SIGINT - 1)


@pytest.fixture(autouse=True)
def ctrl_c_as_a_command_has_it():
    """SIGINT at Python's default for the test: a suite started in the background of a shell without job
    control (``cmd &``) inherits it ignored, and these tests are about a command that takes Ctrl-C."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def sigint_state(pid: int | str = "self") -> tuple[bool, bool]:
    """(ignored, held back) of SIGINT in process ``pid``, from Linux's /proc status masks."""
    masks = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("SigIgn", "SigBlk"):
                masks[name] = int(value, 16)
    return bool(masks["SigIgn"] & SIGINT_BIT), bool(masks["SigBlk"] & SIGINT_BIT)


def test_a_ctrl_c_while_the_workers_start_arrives_after_and_stops_them(monkeypatch):
    started = []
    real_start = SpawnProcess.start

    def start_and_press_ctrl_c(process):  # a user's Ctrl-C in the middle of the start
        os.kill(os.getpid(), signal.SIGINT)
        started.append(process)
        real_start(process)

    monkeypatch.setattr(SpawnProcess, "start", start_and_press_ctrl_c)
    with pytest.raises(KeyboardInterrupt):  # an ignore in the parent lost it, and the pool went on
        WorkerPool(2)
    assert len(started) == 2
    assert not any(p.is_alive() for p in started), "the workers outlived the interrupted start"
    assert sigint_state() == (False, False)


def test_the_workers_ignore_ctrl_c_and_no_longer_hold_it():
    with ctrl_c_held():
        assert sigint_state() == (False, True)
    assert sigint_state() == (False, False)
    with WorkerPool(1) as pool:
        pid = pool.procs[0].pid
        deadline = time.monotonic() + 120  # the worker imports torch first (seconds on a busy CPU)
        while sigint_state(pid) != (True, False) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert sigint_state(pid) == (True, False), "a worker must ignore SIGINT and no longer hold it"
