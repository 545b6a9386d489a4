"""The old home of :func:`read_line` (now :mod:`zero9.protocols.gtp.loop`), for the modules not moved yet.

``zero9.protocols.analysis_engine`` imports it from here; once it imports from the package, this goes.
"""

from zero9.protocols.gtp.loop import read_line

__all__ = ["read_line"]
