"""Where the library's log lines go: stderr, for the command line and for the processes it spawns.

Library modules log through ``logging.getLogger(__name__)`` and never print diagnostics; the
``zero9`` command calls :func:`configure_logging` once for every subcommand, and each worker
process started with ``spawn`` calls it again, because a spawned process begins with no handlers
and would drop its progress lines (only warnings reach Python's last-resort handler).
"""

from __future__ import annotations

import logging
import sys

# The message alone: progress lines read as they did when they were printed.
PLAIN_FORMAT = "%(message)s"
HANDLER_NAME = "zero9"  # marks the handler this module installed, so a second call adjusts it


class StderrHandler(logging.StreamHandler):
    """Writes to ``sys.stderr`` as it is at each line, as Python's last-resort handler does: a caller
    that redirects stderr around one command (``contextlib.redirect_stderr``) gets that command's lines."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)  # not StreamHandler's: it would keep today's stderr

    @property
    def stream(self):
        return sys.stderr


def configure_logging(fmt: str = PLAIN_FORMAT, root_level: int = logging.WARNING) -> None:
    """zero9's own records from INFO, other libraries' from ``root_level``, to stderr in ``fmt``.

    A program that set up logging itself (pytest, a notebook, an embedding application) keeps its
    own configuration: nothing changes when the root logger has a handler that is not ours.
    """
    root = logging.getLogger()
    ours = next((h for h in root.handlers if h.get_name() == HANDLER_NAME), None)
    if ours is None:
        if root.handlers:
            return
        ours = StderrHandler()  # not stdout: it may carry a protocol (GTP, pbrain, JSON)
        ours.set_name(HANDLER_NAME)
        root.addHandler(ours)
    ours.setFormatter(logging.Formatter(fmt))
    root.setLevel(root_level)
    # Library INFO lines (an HTTP client's one per request) stay out unless root_level lets them in.
    logging.getLogger("zero9").setLevel(min(logging.INFO, root_level))
