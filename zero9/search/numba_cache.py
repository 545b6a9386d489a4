"""How the fast path's steps are compiled and called: numba's options for them, its on-disk cache kept
true when a compiled function's callees change, and calls from Python that skip numba's dispatch.

**Without numba's runtime** (:data:`KERNEL`): numba counts references to every array it passes
between compiled functions (an atomic add and subtract for each array of a namedtuple argument, each
row view), unless its runtime (NRT) is off. On the forest's arrays, 20 to a namedtuple, those counts
were a third of a simulation's time (perf, 2026-11-29). The steps own no memory (the Python side
allocates every array), so they are compiled without NRT: nothing is counted, and a step that
allocates (``np.empty``, a slice copy) fails to compile rather than slowing down.

numba caches each compiled function in ``__pycache__`` (or ``NUMBA_CACHE_DIR``) and checks only the
file the function itself is in: a step of :mod:`zero9.search.forest` compiled with the Go rules of
:mod:`zero9.games.go_native` inlined keeps those rules after ``go_native.py`` changes (it crashed so).
:func:`stamp` writes a hash of the callees' sources beside the cache and empties the module's cached
functions when it differs.
"""

from __future__ import annotations

import hashlib
import inspect
import os
from collections.abc import Iterable
from types import ModuleType
from typing import Any

import numba
import numpy as np

# @numba.njit(**KERNEL): the forest's steps (Any: _nrt is a private option numba's stub does not list)
KERNEL: dict[str, Any] = dict(cache=True, nogil=True, _nrt=False)
CHECK_DIRECT = os.environ.get("ZERO9_CHECK_DIRECT") == "1"  # Direct checks every call (the test suite)


def stamp(namespace: dict, module: str, name: str, sources: Iterable[ModuleType]) -> None:
    """Empty the cache of the numba functions defined in ``namespace`` (of ``module``) when the source of
    any of ``sources`` changed since the stamp ``<name>.deps`` was written."""
    dispatchers = [v for v in namespace.values()
                   if isinstance(v, numba.core.registry.CPUDispatcher) and v.py_func.__module__ == module]
    if not dispatchers:
        return
    # (the ignores: numba sets a dispatcher's private _cache at run time; its type hints do not declare it)
    where = dispatchers[0]._cache._cache_path  # type: ignore[attr-defined]
    h = hashlib.sha256()
    for source in sources:
        h.update(inspect.getsource(source).encode())
    digest, stamp_file = h.hexdigest()[:16], os.path.join(where, f"{name}.deps")
    try:
        with open(stamp_file) as f:
            if f.read() == digest:
                return
    except OSError:
        pass
    for d in dispatchers:
        d._cache.flush()  # type: ignore[attr-defined]
    try:
        os.makedirs(where, exist_ok=True)
        with open(stamp_file, "w") as f:
            f.write(digest)
    except OSError:
        pass  # a read-only install: numba keeps its cache elsewhere, or none


class Direct:
    """A compiled step called from Python straight at its machine code once it knows the arguments' kinds.

    numba's dispatcher finds a call's overload from the types of its arguments, and a namedtuple's type
    is worked out in Python, element by element: 8 µs a call for the forest's namedtuples (60 arrays),
    against 0.8 µs for the compiled function's own entry point. Self-play calls a step or four per
    game per move (the move, its policy, Gumbel's root), a sixth of a Go recipe worker's time (py-spy,
    issue 40). Here the first call of each **kind** of arguments goes through the dispatcher, and
    later calls of that kind straight to the overload it chose. An argument's kind is its Python type;
    an array's, its dtype, dimensions, C-contiguity and writability (what makes numba's type). A
    namedtuple's arrays are not looked into: the fast path makes each kind of namedtuple with the same
    arrays' kinds every time (:func:`zero9.search.forest.new_nodes` and the like). The test suite holds
    every call to that (``ZERO9_CHECK_DIRECT=1``, set by ``tests/conftest.py``: each call's numba types
    are worked out and must be those of the overload it goes to).
    """

    __slots__ = ("dispatcher", "entries")

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self.entries: dict[tuple, tuple] = {}  # kind -> (entry point, numba types)

    def __call__(self, *args):
        key = tuple([(a.dtype.num, a.ndim, a.flags.c_contiguous, a.flags.writeable) if type(a) is np.ndarray
                     else type(a) for a in args])
        entry = self.entries.get(key)
        if entry is not None:
            if CHECK_DIRECT and self._types(args) != entry[1]:
                raise TypeError(f"{self.dispatcher.__name__}: arguments of types {self._types(args)} called "
                                f"the overload of {entry[1]} (a namedtuple with arrays of another kind?)")
            return entry[0](*args)
        result = self.dispatcher(*args)  # (compiles, or loads from the cache, this kind's overload)
        types = self._types(args)
        self.entries[key] = self.dispatcher.overloads[types].entry_point, types
        return result

    def _types(self, args) -> tuple:
        return tuple(self.dispatcher.typeof_pyval(a) for a in args)


class DirectCalls:
    """A module whose compiled functions are called through :class:`Direct` (its other names as they
    are): ``F = DirectCalls(forest)``, then ``F.select_batch(...)`` as before."""

    def __init__(self, module: ModuleType):
        self._module = module

    def __getattr__(self, name: str):
        value = getattr(self._module, name)
        if isinstance(value, numba.core.registry.CPUDispatcher):
            value = Direct(value)
        setattr(self, name, value)  # (looked up once)
        return value
