"""The move commands of ``zero9 gtp``: ``play``, ``undo``, ``genmove`` and how a searched move is chosen.

Vocabulary:

- **genmove**: search the position (with a filler pass first if the colour asked for is
  not to move), within the clock's **budget** (:mod:`zero9.protocols.gtp_clock`) and the
  visit cap, then play the chosen move into the history.
- **random move** (``-m``/``--randomcnt``): Leela Zero's variety; the first N moves of a
  game are drawn among the searched moves with weight visits^(1/``--randomtemp``), only
  among moves with more than ``--randomvisits`` visits.
- **smarter passing**: without ``-d``, Leela Zero's rule (see :meth:`MoveCommands._smarter_pass`):
  never pass into a loss, pass out a won game after the opponent's pass.
- **cleanup move** (``kgs-genmove_cleanup``): never pass while dead stones are on the board;
  the most visited move that is not a pass and fills no own eye.
- **training record**: each ``genmove`` keeps (position, root visit shares), which
  ``dump_training`` (:mod:`zero9.protocols.gtp_training`) writes; a new game clears it.
- **verbose table**: Leela Zero's per-move lines on stderr after each search (nothing with ``-q``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import numpy as np

from zero9.games import BLACK, Position
from zero9.protocols.gtp_analysis import AnalyzeTags, RestrictedRoot, verbose_table
from zero9.protocols.gtp_options import GTPFailure, colour_arg, nargs
from zero9.protocols.gtp_state import at_move_cap
from zero9.search.mcts import draw_by_visits


class MoveCommands:
    """``play``, ``undo``, ``genmove``, ``kgs-genmove_cleanup`` (a mixin of GTPEngine over EngineState)."""

    def cmd_play(self, args: list[str]) -> str:
        nargs(args, 2, usage="play COLOUR VERTEX")
        colour, action = colour_arg(args[0]), self._vertex(args[1])
        if action == self.game.pass_action and at_move_cap(self.position):
            return ""  # the game is over at the cap: a controller's pass changes nothing (_at_move_cap)
        terminal = self.position
        self._resumed()
        try:
            self._push(colour, action)
        except GTPFailure:
            self.history[-1] = terminal  # a refused move changes nothing
            raise
        return ""

    def cmd_undo(self, args: list[str]) -> str:
        nargs(args, 0, usage="undo")
        if len(self.history) < 2:
            raise GTPFailure("cannot undo")
        self.history.pop()
        return ""

    def cmd_genmove(self, args: list[str]) -> str:
        nargs(args, 1, usage="genmove COLOUR")
        return self._genmove(colour_arg(args[0]))

    def cmd_kgs_genmove_cleanup(self, args: list[str]) -> str:
        self._go_only("kgs-genmove_cleanup")
        nargs(args, 1, usage="kgs-genmove_cleanup COLOUR")
        return self._genmove(colour_arg(args[0]), cleanup=True)

    def _genmove(self, colour: int, cleanup: bool = False, tags: AnalyzeTags | None = None,
                 on_stats: Callable | None = None, on_searched: Callable | None = None) -> str:
        if at_move_cap(self.position):
            self._say(f"zero9: move cap {self.game.move_cap} reached: the game is scored as it stands; pass")
            return "pass"
        self._prepare_genmove(colour)  # fail before resuming a finished game
        self._resumed()
        position = self._prepare_genmove(colour)
        root = RestrictedRoot(position, tags) if tags is not None and tags.restricted else position
        if root is not position:
            self.player.reset()  # restrictions change the root's moves: no tree reuse (as Leela Zero)
        empty = int((position.board_array() == 0).sum())
        budget = self.clock.budget(colour, empty)
        start = time.monotonic()
        decision = self.player.choose(root, time_s=budget, on_stats=on_stats,
                                      stats_interval_s=tags.interval_s if tags else 0.1)
        self.clock.spend(colour, time.monotonic() - start)
        stats = self.player.root_stats()
        if root is not position:
            self.player.reset()
        if on_searched is not None:
            on_searched(stats)
        self._say_stats(stats)
        action = self._random_move(position, stats, decision.action)
        if cleanup and action == self.game.pass_action:
            action = self._cleanup_move(position, stats)
        elif decision.resign:
            self._record(position)
            return "resign"
        elif self.game.name == "go" and not self.options.dumbpass:
            action = self._smarter_pass(position, action, stats)
        self._record(position)
        self.history.append(position.play(action))
        return self.game.action_to_vertex(action)

    def _random_move(self, position: Position, stats, best: int) -> int:
        """Leela Zero's ``randomcnt``: early moves drawn ~ visits^(1/randomtemp), above ``randomvisits``."""
        o = self.options
        if position.move_number >= o.randomcnt or not stats:
            return best
        pool = [s for s in stats if s.visits > o.randomvisits]
        if not pool:
            return best
        return draw_by_visits([s.action for s in pool], [s.visits for s in pool], self.rng, o.randomtemp)

    def _smarter_pass(self, position: Position, action: int, stats) -> int:
        """Leela Zero without ``-d`` (UCTSearch::get_best_move): never pass into a loss, pass out a win.

        The score is what passing now would leave (Tromp-Taylor, our view); the lines on stderr
        are Leela Zero's.
        """
        pass_action = self.game.pass_action
        score = (1 if position.to_play == BLACK else -1) * position.score()
        by_action = {s.action: s for s in stats}
        if action == pass_action:
            alternative = self._non_pass_move(position, stats)
            if score < 0:
                self._say("Passing loses :-(")
                if alternative is not None:
                    self._say("Avoiding pass because it loses.")
                    return alternative
                self._say("No alternative to passing.")
            elif score > 0:
                self._say("Passing wins :-)")
            else:
                self._say("Passing draws :-|")
                if alternative is not None and by_action[alternative].winrate > 0.5:
                    self._say("Avoiding pass because there could be a winning alternative.")
                    return alternative
            return action
        if position.last_move == pass_action:  # the opponent passed: should we end the game?
            if score < 0:
                self._say("Passing loses, I'll play on.")
            elif score > 0:
                self._say("Passing wins, I'll pass out.")
                return pass_action
            else:
                self._say("Passing draws, make it depend on evaluation.")
                chosen = by_action.get(action)
                if chosen is not None and chosen.winrate < 0.5:
                    return pass_action
        return action

    def _non_pass_move(self, position: Position, stats) -> int | None:
        """The most visited move that is not a pass and does not fill an own eye, if any."""
        for s in sorted(stats, key=lambda s: -s.visits):
            if s.action != self.game.pass_action and not position.is_eye(s.action, position.to_play):
                return s.action
        return None

    def _cleanup_move(self, position: Position, stats) -> int:
        """kgs-genmove_cleanup: the most visited move that is not a pass and does not fill an own eye."""
        choice = self._non_pass_move(position, stats)
        if choice is not None:
            return choice
        candidates = [a for a in position.legal_moves()
                      if a != self.game.pass_action and not position.is_eye(a, position.to_play)]
        return random.choice(candidates) if candidates else self.game.pass_action

    def _record(self, position: Position) -> None:
        """Keep the searched position and its visit shares for ``dump_training``."""
        shares = np.zeros(self.game.num_actions, np.float32)
        for s in self.player.root_stats():
            shares[s.action] = s.visits
        if shares.sum() > 0:
            self.training.append((position, shares / shares.sum()))

    def _say_stats(self, stats) -> None:
        if self.log is not None and stats:
            visits = sum(s.visits for s in stats)
            self._say(verbose_table(stats, self.game) + f"\n\n{visits} visits\n")
