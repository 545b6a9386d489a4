"""The old home of :func:`play_as` (now :mod:`zero9.protocols.gtp.state`), for the modules not moved yet.

``zero9.protocols.analysis_query`` imports it from here; once it imports from the package, this goes.
"""

from zero9.protocols.gtp.state import play_as

__all__ = ["play_as"]
