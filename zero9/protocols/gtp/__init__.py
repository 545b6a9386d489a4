"""``zero9 gtp``: the Go Text Protocol (version 2) on stdin/stdout, as Leela Zero and KataGo speak it.

:class:`GTPEngine` maps one command line to one reply (testable without any subprocess);
:func:`zero9.protocols.gtp.loop.serve` is the thin stdin/stdout loop around it, and
``zero9.cli.gtp`` its command line. The engine is a few objects with typed interfaces, one
module each, and command groups that hold those objects and give their commands as tables:

- :mod:`~zero9.protocols.gtp.loop`: lines, replies, streams, overlong lines;
- :mod:`~zero9.protocols.gtp.state`: the engine's state (game, setup stones, history, filler
  passes, clock, search player) and its options;
- :mod:`~zero9.protocols.gtp.clock`: time controls and each move's budget;
- :mod:`~zero9.protocols.gtp.options`: strict values (every number a client sends);
- :mod:`~zero9.protocols.gtp.moves`: the move policy (search, random opening moves, smarter
  passing) and ``play``, ``undo``, ``genmove``;
- :mod:`~zero9.protocols.gtp.streams`: analyses in rounds and their lines;
- :mod:`~zero9.protocols.gtp.analysis`: analyze tags, restricted roots, info lines;
- :mod:`~zero9.protocols.gtp.commands`: command tables and groups;
- command groups: :mod:`~zero9.protocols.gtp.engine` (administrative),
  :mod:`~zero9.protocols.gtp.core` (setup, handicap, time, inspection, SGF files),
  :mod:`~zero9.protocols.gtp.leelaz` (Leela Zero's ``lz-analyze`` & co),
  :mod:`~zero9.protocols.gtp.kata` (KataGo's ``kata-analyze`` & co, rules, dead stones),
  :mod:`~zero9.protocols.gtp.training` (``dump_training``, ``dump_supervised``, ``autotrain``).

A group reaches the others only through the public methods of the objects it was given:
no group calls another's private methods.
"""

from zero9.protocols.gtp.engine import BANNER, COMMANDS, GO_ONLY, LEELAZ_VERSION, GTPEngine
from zero9.protocols.gtp.state import LeelaZeroOptions

__all__ = ["BANNER", "COMMANDS", "GO_ONLY", "LEELAZ_VERSION", "LeelaZeroOptions", "GTPEngine"]
