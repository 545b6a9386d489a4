"""How the fast path's steps are compiled: numba's options for them, and its on-disk cache kept true
when a compiled function's callees change.

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

import numba

KERNEL = dict(cache=True, nogil=True, _nrt=False)  # @numba.njit(**KERNEL): the forest's steps


def stamp(namespace: dict, module: str, name: str, sources: Iterable[ModuleType]) -> None:
    """Empty the cache of the numba functions defined in ``namespace`` (of ``module``) when the source of
    any of ``sources`` changed since the stamp ``<name>.deps`` was written."""
    dispatchers = [v for v in namespace.values()
                   if isinstance(v, numba.core.registry.CPUDispatcher) and v.py_func.__module__ == module]
    if not dispatchers:
        return
    where = dispatchers[0]._cache._cache_path
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
        d._cache.flush()
    try:
        os.makedirs(where, exist_ok=True)
        with open(stamp_file, "w") as f:
            f.write(digest)
    except OSError:
        pass  # a read-only install: numba keeps its cache elsewhere, or none
