"""Which search runs: the native fast path or the Python one. Decided here, and only here.

Vocabulary:

- **native** (:mod:`zero9.search.forest`, :mod:`zero9.search.native`): the trees as arrays,
  each step one call compiled by numba. It needs numba (a binary wheel: nothing to compile at
  install), a game it knows (Go; Gomoku freestyle or standard) and an evaluator that takes
  encoded leaves (:meth:`zero9.search.evaluator.NetEvaluator.submit_encoded`).
- **python** (:mod:`zero9.search.puct`, :mod:`zero9.search.gumbel`): the search in numpy and
  Python; what runs wherever the native one cannot. Both play the same games
  (``tests/test_native_twins.py``).
- ``ZERO9_SEARCH`` (environment): ``auto`` (the default: native where it can run), ``python``
  (never native) or ``native`` (fail loudly where it cannot run).

:func:`selfplay_search` answers for a self-play worker, and :func:`describe` is the line a run's
log shows; numba's compiled code is cached beside the modules (or in ``NUMBA_CACHE_DIR``), so
only a machine's first run pays for compiling (about a minute on 2 cores).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os

log = logging.getLogger(__name__)

CHOICES = ("auto", "python", "native")


@functools.cache
def numba_available() -> bool:
    return importlib.util.find_spec("numba") is not None


def wanted() -> str:
    choice = os.environ.get("ZERO9_SEARCH", "auto").strip().lower() or "auto"
    if choice not in CHOICES:
        raise ValueError(f"ZERO9_SEARCH={choice!r}: expected one of {', '.join(CHOICES)}")
    return choice


def why_not_native(game, config, evaluator=None) -> str | None:
    """Why self-play of ``game`` with ``config`` (a SelfPlayConfig) cannot run natively; None if it can."""
    if not numba_available():
        return "numba is not installed (pip install numba)"
    if game.name == "gomoku" and game.variant not in ("freestyle", "standard"):
        return f"Gomoku's {game.variant} rules have no native twin"
    if game.name not in ("go", "gomoku"):
        return f"{game.name} has no native twin"
    if evaluator is not None and not hasattr(evaluator, "submit_encoded"):
        return f"the evaluator ({type(evaluator).__name__}) takes positions only"
    return None


def selfplay_search(game, config, evaluator=None) -> str:
    """``"native"`` or ``"python"`` for self-play; ValueError when ``ZERO9_SEARCH=native`` cannot be had."""
    choice = wanted()
    if choice == "python":
        return "python"
    reason = why_not_native(game, config, evaluator)
    if reason is None:
        return "native"
    if choice == "native":
        raise ValueError(f"ZERO9_SEARCH=native, but {reason}")
    return "python"


def describe(game, config, evaluator=None) -> str:
    """The run log's line: which search self-play runs, and why when it is not the native one."""
    path = selfplay_search(game, config, evaluator)
    if path == "native":
        return "search: native fast path (numba)"
    reason = "ZERO9_SEARCH=python" if wanted() == "python" else why_not_native(game, config, evaluator)
    return f"search: python path ({reason})"

