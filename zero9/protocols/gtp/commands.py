"""The command tables of ``zero9 gtp``: each command group names its handlers, GTP name by GTP name.

Vocabulary:

- **handler**: one GTP command's code, ``args -> str | Reply``: a string is the text of a
  one-shot reply, a :class:`~zero9.protocols.gtp.loop.Reply` with a stream is a reply that
  writes on (``lz-analyze``); a :class:`~zero9.protocols.gtp.options.GTPFailure` becomes the
  ``?`` reply.
- **command table**: GTP name -> handler (:data:`CommandTable`).
- **command group** (:class:`CommandGroup`): an object built over the parts of the engine it
  needs (the state, the move policy, the analysis streams) that gives its table through
  ``commands()``. :class:`~zero9.protocols.gtp.engine.GTPEngine` joins the groups' tables
  into one (:func:`join_tables`), refusing a name that two groups claim.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from zero9.protocols.gtp.loop import Reply

Handler = Callable[[list[str]], "str | Reply"]
CommandTable = dict[str, Handler]


class CommandGroup(Protocol):
    """A group of GTP commands: its table of handlers."""

    def commands(self) -> CommandTable: ...


def join_tables(groups: Iterable[CommandGroup]) -> CommandTable:
    """One table of every group's commands; ValueError if two groups claim one name."""
    table: CommandTable = {}
    for group in groups:
        for name, handler in group.commands().items():
            if name in table:
                raise ValueError(f"GTP command {name!r} is claimed twice ({type(group).__name__})")
            table[name] = handler
    return table
