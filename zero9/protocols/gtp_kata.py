"""KataGo's GTP extensions in ``zero9 gtp``: ``kata-analyze``, scores, ownership, rules, dead stones.

Every number comes from :func:`zero9.search.analysis.analyse` (score lead, ownership, one
entry per root move); this module runs it, and :mod:`zero9.protocols.kata_format` writes it
as KataGo does. Values are the side to move's, as KataGo's GTP reports by default.

Vocabulary:

- **kata-analyze** ``[COLOUR] [INTERVAL] [ownership true] [pvVisits true] [maxmoves N] ...``
  (the tags of :mod:`zero9.protocols.gtp_analysis`): replies ``=`` at once, then a line of
  ``info move V visits N utility U winrate W scoreMean S scoreStdev D scoreLead S prior P
  lcb L order K pv ...`` entries (``pvVisits ...`` after each pv when asked), followed by
  ``ownership`` and size² numbers when asked, every interval until the next input line.
- **analysis rounds**: the search runs in rounds of doubling visits on one evaluator (its
  cache makes a round cost little more than its new visits); a line goes out after each
  round once the interval has passed, so lines come at least an interval apart. ``-v N``
  (or ``lz-setoption name visits``) stops the rounds at N visits and the reply ends by
  itself, as ``lz-analyze``'s does (Leela Zero's rule); without it analysis runs until the
  next input line.
- **kata-genmove_analyze**: one analysis at the engine's visits, its line, then ``play MOVE``:
  the best move, through the same move policy as ``genmove`` (random opening moves, smarter
  passing, the resign threshold). Unlike ``genmove`` it searches to its visits whatever the
  clock, and its positions are not kept for ``dump_training``.
- **rules**: ``kata-get-rules`` answers what zero9 plays (:data:`ZERO9_RULES`: area scoring,
  positional superko, no suicide); ``kata-set-rules`` accepts a ruleset equal to it and
  refuses any other, naming the fields that differ (zero9's net knows only its rules).
- **dead stones** (``final_status_list``, ``final_score``): found by playing the finished
  position on, GNU Go's aftermath (:mod:`zero9.protocols.aftermath` says why the search's
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

import numpy as np

from zero9.games import Position
from zero9.protocols.aftermath import aftermath, area_score, chain_statuses
from zero9.protocols.gtp_analysis import AnalyzeTags, info_line, parse_analyze_tags
from zero9.protocols.gtp_loop import Reply
from zero9.protocols.gtp_options import GTPFailure, nargs
from zero9.protocols.gtp_state import resumable
from zero9.protocols.kata_format import (
    ZERO9_RULES,
    gtp_info,
    gtp_ownership,
    move_fields,
    parse_rules,
    rules_differences,
)
from zero9.search.analysis import MoveInfo, PositionAnalysis, analyse_many, make_evaluator
from zero9.search.evaluator import NetEvaluator, UniformEvaluator
from zero9.search.player import MoveStats

FIRST_ROUND_VISITS = 16


class KataCommands:
    """KataGo's extensions (a mixin of GTPEngine over EngineState, MoveCommands, LeelaZeroCommands)."""

    # -- analysis ----------------------------------------------------------------------------------

    def _analysis_evaluator(self):
        """A fresh evaluator for one analysis (seeded by -s: the same commands give the same numbers)."""
        if self.source.net is None:
            return UniformEvaluator(self.game)
        return make_evaluator(self.source.net, self.options.seed)

    def _playout_evaluator(self):
        """The aftermath playout's evaluator: the net seen the same way every time (no random symmetry),
        so the same finished game always gets the same count."""
        if self.source.net is None:
            return UniformEvaluator(self.game)
        return NetEvaluator(self.source.net, random_symmetry=False)

    def _root_filter(self, position: Position, tags: AnalyzeTags | None) -> list[int] | None:
        """The root moves ``tags`` allow (None: all), for the analysis' ``allow``."""
        if tags is None or not tags.restricted:
            return None
        pass_action = self.game.pass_action
        keep = [a for a in position.legal_moves()
                if not tags.is_avoided(position.to_play, a, position.move_number, pass_action)]
        return keep or None

    def _analyse(self, position: Position, visits: int, evaluator, tags: AnalyzeTags | None = None,
                 stop: threading.Event | None = None) -> PositionAnalysis:
        allow = self._root_filter(position, tags)
        on_step = (lambda: stop.is_set()) if stop is not None else None
        return analyse_many([position], evaluator, visits, self.options.seed, allow=[allow],
                            on_step=on_step)[0]

    def _kata_line(self, analysis: PositionAnalysis, tags: AnalyzeTags) -> str:
        moves = analysis.moves[: tags.max_moves] if tags.max_moves else analysis.moves
        vertex = self.game.action_to_vertex
        line = " ".join(gtp_info(move_fields(m, vertex, 1.0, tags.pv_visits)) for m in moves)
        return self._with_ownership(line, analysis, tags)

    def _with_ownership(self, line: str, analysis: PositionAnalysis, tags: AnalyzeTags) -> str:
        if tags.ownership and analysis.ownership is not None:
            return f"{line} {gtp_ownership(analysis.ownership, self.game.size)}".strip()
        return line

    def _lz_line(self, analysis: PositionAnalysis, tags: AnalyzeTags) -> str:
        """Leela Zero's info line of an analysis (lz-analyze with ownership)."""
        stats = [_move_stats(m, self.game) for m in analysis.moves]
        if tags.max_moves:
            stats = stats[: tags.max_moves]
        return self._with_ownership(info_line(stats, self.game), analysis, tags)

    def _analysis_stream(self, tags: AnalyzeTags,
                         line: Callable[[PositionAnalysis, AnalyzeTags], str]) -> Reply:
        """The stream of an analyze command in rounds (see the module docstring)."""
        finished = self.position.is_terminal() and not resumable(self.position)
        position = self.position if finished else self._prepare_genmove(tags.colour)
        limit = self.options.visits or None  # -v bounds analysis, as in Leela Zero

        def run(write: Callable[[str], None], stop: threading.Event) -> None:
            if position.is_terminal():
                stop.wait()
                return
            evaluator = self._analysis_evaluator()
            visits, last, printed = min(FIRST_ROUND_VISITS, limit or FIRST_ROUND_VISITS), -1e9, False
            while not stop.is_set():
                analysis = self._analyse(position, visits, evaluator, tags, stop)
                now = time.monotonic()
                done = limit is not None and visits >= limit
                due = now - last >= tags.interval_s or done  # a bounded analysis ends on its last line
                if tags.interval_cs and due and not (stop.is_set() and printed):
                    write(line(analysis, tags) + "\n")
                    last, printed = now, True
                if done:
                    return
                visits = visits * 2 if limit is None else min(visits * 2, limit)

        return Reply(stream=run, interruptible=True)

    def cmd_kata_analyze(self, args: list[str]) -> Reply:
        return self._analysis_stream(parse_analyze_tags(args, self.position), self._kata_line)

    def cmd_kata_genmove_analyze(self, args: list[str]) -> Reply:
        tags = parse_analyze_tags(args, self.position)
        self._prepare_genmove(tags.colour)  # fail now, before the '=' goes out

        def run(write: Callable[[str], None], stop: threading.Event) -> None:
            write(f"play {self._genmove_analysed(tags, write)}\n")

        return Reply(stream=run)

    def _genmove_analysed(self, tags: AnalyzeTags, write: Callable[[str], None]) -> str:
        """genmove from one analysis at the engine's visits; its line goes out first."""
        self._resumed()
        position = self._prepare_genmove(tags.colour)
        visits = self.player.visits or self.player.playouts or 1
        start = time.monotonic()
        analysis = self._analyse(position, visits, self._analysis_evaluator(), tags)
        self.clock.spend(tags.colour, time.monotonic() - start)
        if tags.interval_cs or tags.ownership:
            write(self._kata_line(analysis, tags) + "\n")
        stats = [_move_stats(m, self.game) for m in analysis.moves]
        best = analysis.best.move if analysis.best else self.game.pass_action
        threshold = self.options.resign_threshold
        if threshold is not None and analysis.best and analysis.best.winrate < threshold:
            return "resign"
        action = self._random_move(position, stats, best)
        if self.game.name == "go" and not self.options.dumbpass:
            action = self._smarter_pass(position, action, stats)
        self.history.append(position.play(action))
        return self.game.action_to_vertex(action)

    # -- rules -------------------------------------------------------------------------------------

    def cmd_kata_get_rules(self, args: list[str]) -> str:
        self._go_only("kata-get-rules")
        nargs(args, 0, usage="kata-get-rules")
        return json.dumps(ZERO9_RULES, separators=(",", ":"))

    def cmd_kata_set_rules(self, args: list[str]) -> str:
        self._go_only("kata-set-rules")
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

    def _dead_stones(self) -> tuple[dict[int, str], np.ndarray]:
        """(point -> 'alive' / 'dead' / 'seki' for every stone, the playout's final board).

        See :mod:`zero9.protocols.aftermath`.
        """
        position = self.position
        if resumable(position):
            position = position.resume()
        board = position.board_array()
        if position.is_terminal() or not board.any():
            return {int(p): "alive" for p in np.nonzero(board)[0]}, board
        captured, final = aftermath(position, self._playout_evaluator())
        return chain_statuses(position, captured), final

    def cmd_final_status_list(self, args: list[str]) -> str:
        self._go_only("final_status_list")
        nargs(args, 1, usage="final_status_list alive|dead|seki")
        wanted = args[0].lower()
        if wanted not in ("alive", "dead", "seki"):
            raise GTPFailure(f"bad status {args[0]!r}: expected alive, dead or seki")
        statuses, _ = self._dead_stones()
        return " ".join(self.game.action_to_vertex(p) for p in sorted(statuses) if statuses[p] == wanted)

    def cmd_final_score(self, args: list[str]) -> str:
        nargs(args, 0, usage="final_score")
        position = self.position
        if self.game.name != "go":
            return position.result_string() if position.is_terminal() else "0"
        if self.options.tromp_taylor:  # Leela Zero's count: autogtp's winner and training targets
            score = position.score()
            return "0" if score == 0 else f"{'B' if score > 0 else 'W'}+{abs(score):g}"
        statuses, final = self._dead_stones()
        score = area_score(position.board_array(), statuses, final, self.game.size, self.game.komi)
        return "0" if score == 0 else f"{'B' if score > 0 else 'W'}+{abs(score):g}"

    def cmd_cputime(self, args: list[str]) -> str:
        nargs(args, 0, usage="cputime")
        return f"{time.process_time():.3f}"


def _move_stats(info: MoveInfo, game) -> MoveStats:
    """An analysis' move as the search player's MoveStats (what the move policy and LZ lines read)."""
    return MoveStats(info.move, game.action_to_vertex(info.move), info.visits, info.winrate, info.prior,
                     info.lcb, info.value, 0.0, float("nan"), list(info.pv))
