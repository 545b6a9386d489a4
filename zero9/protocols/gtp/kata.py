"""KataGo's GTP extensions in ``zero9 gtp``: ``kata-analyze``, scores, ownership, rules, dead stones.

The analyses run in :class:`~zero9.protocols.gtp.streams.AnalysisStreams`; this module gives
KataGo's commands over them. Values are the side to move's, as KataGo's GTP reports by default.

Vocabulary:

- **kata-analyze** ``[COLOUR] [INTERVAL] [ownership true] [pvVisits true] [maxmoves N] ...``
  (the tags of :mod:`zero9.protocols.gtp.analysis`): replies ``=`` at once, then a line of
  ``info move V visits N utility U winrate W scoreMean S scoreStdev D scoreLead S prior P
  lcb L order K pv ...`` entries (``pvVisits ...`` after each pv when asked), followed by
  ``ownership`` and size² numbers when asked, every interval until the next input line (or
  until ``-v``'s visits: the streams' analysis rounds).
- **kata-genmove_analyze**: an analysed genmove (:mod:`zero9.protocols.gtp.streams`), its
  line, then ``play MOVE``.
- **rules**: ``kata-get-rules`` answers what zero9 plays (:data:`ZERO9_RULES`: area scoring,
  positional superko, no suicide); ``kata-set-rules`` accepts a ruleset equal to it and
  refuses any other, naming the fields that differ (zero9's net knows only its rules).
- **dead stones** (``final_status_list``, ``final_score``): found by playing the finished
  position on, GNU Go's aftermath (:mod:`zero9.games.aftermath` says why the search's
  ownership cannot tell under Tromp-Taylor); ``final_score`` removes the dead stones and
  counts area (stones plus surrounded empty points) with komi: Chinese counting, as GNU Go's
  ``--chinese-rules --score aftermath``. Seki stones stay, their shared liberties count for
  nobody.
- **cputime**: the CPU seconds this process has used (GoGui's timing of the engine).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import cast

import numpy as np

from zero9.games.aftermath import count_finished, dead_stones, score_result
from zero9.games.go import GoPosition
from zero9.protocols.gtp.analysis import parse_analyze_tags
from zero9.protocols.gtp.commands import CommandTable
from zero9.protocols.gtp.loop import Reply
from zero9.protocols.gtp.options import GTPFailure, nargs
from zero9.protocols.gtp.state import EngineState, Evaluator
from zero9.protocols.gtp.streams import AnalysisStreams
from zero9.protocols.kata_format import ZERO9_RULES, parse_rules, rules_differences
from zero9.search.evaluator import steady_evaluator


class KataCommands:
    """KataGo's extensions: analysis, rules, dead stones and the score, cputime."""

    def __init__(self, state: EngineState, streams: AnalysisStreams):
        self.state = state
        self.streams = streams

    def commands(self) -> CommandTable:
        return {
            "kata-analyze": self.cmd_kata_analyze,
            "kata-genmove_analyze": self.cmd_kata_genmove_analyze,
            "kata-get-rules": self.cmd_kata_get_rules,
            "kata-set-rules": self.cmd_kata_set_rules,
            "final_status_list": self.cmd_final_status_list,
            "final_score": self.cmd_final_score,
            "cputime": self.cmd_cputime,
        }

    # -- analysis ----------------------------------------------------------------------------------

    def cmd_kata_analyze(self, args: list[str]) -> Reply:
        return self.streams.stream(parse_analyze_tags(args, self.state.position), self.streams.kata_line)

    def cmd_kata_genmove_analyze(self, args: list[str]) -> Reply:
        tags = parse_analyze_tags(args, self.state.position)
        self.state.prepare_genmove(tags.colour)  # fail now, before the '=' goes out

        def run(write: Callable[[str], None], stop: threading.Event) -> None:
            write(f"play {self.streams.genmove_analysed(tags, write)}\n")

        return Reply(stream=run)

    # -- rules -------------------------------------------------------------------------------------

    def cmd_kata_get_rules(self, args: list[str]) -> str:
        self.state.require_go("kata-get-rules")
        nargs(args, 0, usage="kata-get-rules")
        return json.dumps(ZERO9_RULES, separators=(",", ":"))

    def cmd_kata_set_rules(self, args: list[str]) -> str:
        self.state.require_go("kata-set-rules")
        if not args:
            raise GTPFailure("wrong number of arguments: usage kata-set-rules RULES")
        try:
            rules = parse_rules(" ".join(args))
        except ValueError as e:
            raise GTPFailure(str(e)) from None
        different = rules_differences(rules)
        if different:
            raise GTPFailure("zero9 plays only its own rules (kata-get-rules); these differ: "
                             + ", ".join(different))
        return ""

    # -- scoring -----------------------------------------------------------------------------------

    def _playout_evaluator(self) -> Evaluator:
        """The aftermath playout's evaluator: the same finished game always gets the same count."""
        return steady_evaluator(self.state.source.net, self.state.game)

    def _dead_stones(self) -> tuple[dict[int, str], np.ndarray]:
        """(point -> 'alive' / 'dead' / 'seki' for every stone, the playout's final board).

        See :mod:`zero9.games.aftermath`.
        """
        return dead_stones(cast(GoPosition, self.state.position), self._playout_evaluator())

    def cmd_final_status_list(self, args: list[str]) -> str:
        self.state.require_go("final_status_list")
        nargs(args, 1, usage="final_status_list alive|dead|seki")
        wanted = args[0].lower()
        if wanted not in ("alive", "dead", "seki"):
            raise GTPFailure(f"bad status {args[0]!r}: expected alive, dead or seki")
        statuses, _ = self._dead_stones()
        vertex = self.state.game.action_to_vertex
        return " ".join(vertex(p) for p in sorted(statuses) if statuses[p] == wanted)

    def cmd_final_score(self, args: list[str]) -> str:
        nargs(args, 0, usage="final_score")
        st = self.state
        if st.game.name != "go":
            return st.position.result_string() if st.position.is_terminal() else "0"
        position = cast(GoPosition, st.position)
        if st.options.tromp_taylor:  # Leela Zero's count: autogtp's winner and training targets
            return score_result(position.score())
        return count_finished(position, self._playout_evaluator()).result

    def cmd_cputime(self, args: list[str]) -> str:
        nargs(args, 0, usage="cputime")
        return f"{time.process_time():.3f}"

