"""Clean stops: SIGINT (Ctrl-C) and SIGTERM ask a long command to stop at its next safe point.

Vocabulary:

- **stop request**: the first SIGINT or SIGTERM only sets a flag (:func:`stop_requested`);
  the command's loops look at it at each **safe point** (after a training step, between
  self-play messages, between rounds) and call :func:`check_stop`, which raises
  :class:`StopRequested` once the work so far is on disk. The command then saves what
  it holds (the training state and optimizer, the logs) and exits 0; a rerun continues.
- **second signal**: a second SIGINT/SIGTERM raises ``KeyboardInterrupt`` at once, for a
  user who will not wait; what was written atomically is still whole.

Only the main thread can take signals, so :func:`stop_signals` is used around a command's
``run`` in the main thread; elsewhere (tests, threads) it changes nothing.

- **held Ctrl-C**: worker processes leave stopping to their parent, which stops them itself. While
  it starts them, the parent holds SIGINT back (:func:`ctrl_c_held`, a blocked signal): the children
  inherit the hold, so a Ctrl-C while they still import reaches none of them (each then ignores it
  for good, :func:`ignore_ctrl_c`), and the parent's own Ctrl-C waits and arrives when the hold
  ends. Ignoring it in the parent instead, as children want, would lose a Ctrl-C pressed then.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_requested: list[int] = []  # the signal numbers received, in order


class StopRequested(Exception):
    """Raised at a safe point after SIGINT/SIGTERM; the command saves, says so and exits 0."""


def stop_requested() -> bool:
    return bool(_requested)


def check_stop() -> None:
    """Raise :class:`StopRequested` when a stop was asked for (call it at a safe point)."""
    if _requested:
        raise StopRequested(signal.Signals(_requested[0]).name)


def request_stop(signum: int = signal.SIGINT) -> None:
    """Ask for a stop as a signal would (tests, and callers that stop for their own reasons)."""
    _requested.append(signum)


def _on_signal(signum, _frame) -> None:
    first = not _requested
    _requested.append(signum)
    if not first:
        raise KeyboardInterrupt
    name = signal.Signals(signum).name
    # os.write, not print: the handler may run while the main thread is inside a write to stderr
    # (a progress bar), and a buffered stream refuses that reentrant call.
    message = f"\n{name}: stopping at the next safe point and saving (again to abort at once)\n"
    try:
        os.write(sys.stderr.fileno(), message.encode())
    except (OSError, ValueError, AttributeError):
        pass  # no usable stderr: the stop itself still happens


@contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Within: SIGINT is held back in this thread and in the processes it starts (see **held Ctrl-C**);
    in the main thread, one that reaches another thread meanwhile is kept too. Both arrive at the end."""
    held: list[int] = []
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: held.append(signum)) if in_main else None
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)  # one held in this thread is taken here
        if in_main:
            signal.signal(signal.SIGINT, previous)
            if held:
                signal.raise_signal(signal.SIGINT)  # to the handler the command had


def ignore_ctrl_c() -> None:
    """A worker process's side: SIGINT ignored from now on; one held while it started is dropped."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextmanager
def stop_signals() -> Iterator[None]:
    """Within: SIGINT/SIGTERM request a stop (module docstring); the old handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    _requested.clear()
    for s in STOP_SIGNALS:
        signal.signal(s, _on_signal)
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        _requested.clear()
