"""The move commands of ``zero9 gtp``: ``play``, ``undo``, ``genmove`` and how a searched move is chosen.

Vocabulary:

- **genmove**: search the position (with a filler pass first if the colour asked for is
  not to move), within the clock's **budget** (:mod:`zero9.protocols.gtp.clock`) and the
  visit cap, then play the chosen move into the history.
- **random move** (``-m``/``--randomcnt``): Leela Zero's variety; the first N moves of a
  game are drawn among the searched moves with weight visits^(1/``--randomtemp``), only
  among moves with more than ``--randomvisits`` visits.
- **smarter passing**: without ``-d``, Leela Zero's rule (see :meth:`MovePolicy.smarter_pass`):
  never pass into a loss, pass out a won game after the opponent's pass.
- **cleanup move** (``kgs-genmove_cleanup``): never pass while dead stones are on the board;
  the most visited move that is not a pass and fills no own eye.
- **training record**: each ``genmove`` keeps (position, root visit shares), which
  ``dump_training`` (:mod:`zero9.protocols.gtp.training`) writes; a new game clears it.
- **verbose table**: Leela Zero's per-move lines on stderr after each search (nothing with ``-q``).
- **move policy** (:class:`MovePolicy`): the search and the choice of the move, over the
  engine's state; the analysis streams (:mod:`zero9.protocols.gtp.streams`) choose their
  moves through it too. **move commands** (:class:`MoveCommands`): the GTP commands on top.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import numpy as np

from zero9.games import BLACK, Position
from zero9.protocols.gtp.analysis import AnalyzeTags, RestrictedRoot, verbose_table
from zero9.protocols.gtp.commands import CommandTable
from zero9.protocols.gtp.options import GTPFailure, colour_arg, nargs
from zero9.protocols.gtp.state import EngineState, at_move_cap, go_game, go_rules
from zero9.search.player import MoveStats
from zero9.search.puct import draw_by_visits

StatsCallback = Callable[[list[MoveStats]], None]


class MovePolicy:
    """The search and the choice of a move (random opening moves, smarter passing, cleanup, resigning)."""

    def __init__(self, state: EngineState):
        self.state = state

    def genmove(self, colour: int, cleanup: bool = False, tags: AnalyzeTags | None = None,
                on_stats: StatsCallback | None = None, on_searched: StatsCallback | None = None) -> str:
        """Search for ``colour``, play the chosen move into the history; its vertex or ``resign``."""
        st = self.state
        game = st.game
        if at_move_cap(st.position):
            st.say(f"zero9: move cap {go_game(game).move_cap} reached: the game is scored as it stands; pass")
            return "pass"
        st.prepare_genmove(colour)  # fail before resuming a finished game
        st.resumed()
        position = st.prepare_genmove(colour)
        root: Position = RestrictedRoot(position, tags) if tags is not None and tags.restricted else position
        if root is not position:
            st.player.reset()  # restrictions change the root's moves: no tree reuse (as Leela Zero)
        empty = int((position.board_array() == 0).sum())
        budget = st.clock.budget(colour, empty)
        start = time.monotonic()
        decision = st.player.choose(root, time_s=budget, on_stats=on_stats,
                                    stats_interval_s=tags.interval_s if tags else 0.1)
        st.clock.spend(colour, time.monotonic() - start)
        stats = st.player.root_stats()
        if root is not position:
            st.player.reset()
        if on_searched is not None:
            on_searched(stats)
        self.say_stats(stats)
        action = self.random_move(position, stats, decision.action)
        if cleanup and action == game.pass_action:
            action = self._cleanup_move(position, stats)
        elif decision.resign:
            self._record(position)
            return "resign"
        elif game.name == "go" and not st.options.dumbpass:
            action = self.smarter_pass(position, action, stats)
        self._record(position)
        st.history.append(position.play(action))
        return game.action_to_vertex(action)

    def random_move(self, position: Position, stats: list[MoveStats], best: int) -> int:
        """Leela Zero's ``randomcnt``: early moves drawn ~ visits^(1/randomtemp), above ``randomvisits``."""
        o = self.state.options
        if position.move_number >= o.randomcnt or not stats:
            return best
        pool = [s for s in stats if s.visits > o.randomvisits]
        if not pool:
            return best
        rng = self.state.rng
        return draw_by_visits([s.action for s in pool], [s.visits for s in pool], rng, o.randomtemp)

    def smarter_pass(self, position: Position, action: int, stats: list[MoveStats]) -> int:
        """Leela Zero without ``-d`` (UCTSearch::get_best_move): never pass into a loss, pass out a win.

        The score is what passing now would leave (Tromp-Taylor, our view); the lines on stderr
        are Leela Zero's. For Go positions only.
        """
        say = self.state.say
        pass_action = self.state.game.pass_action
        score = (1 if position.to_play == BLACK else -1) * go_rules(position).score()
        by_action = {s.action: s for s in stats}
        if action == pass_action:
            alternative = self._non_pass_move(position, stats)
            if score < 0:
                say("Passing loses :-(")
                if alternative is not None:
                    say("Avoiding pass because it loses.")
                    return alternative
                say("No alternative to passing.")
            elif score > 0:
                say("Passing wins :-)")
            else:
                say("Passing draws :-|")
                if alternative is not None and by_action[alternative].winrate > 0.5:
                    say("Avoiding pass because there could be a winning alternative.")
                    return alternative
            return action
        if pass_action is not None and position.last_move == pass_action:  # should we end the game?
            if score < 0:
                say("Passing loses, I'll play on.")
            elif score > 0:
                say("Passing wins, I'll pass out.")
                return pass_action
            else:
                say("Passing draws, make it depend on evaluation.")
                chosen = by_action.get(action)
                if chosen is not None and chosen.winrate < 0.5:
                    return pass_action
        return action

    def _non_pass_move(self, position: Position, stats: list[MoveStats]) -> int | None:
        """The most visited move that is not a pass and does not fill an own eye, if any."""
        go = go_rules(position)
        for s in sorted(stats, key=lambda s: -s.visits):
            if s.action != self.state.game.pass_action and not go.is_eye(s.action, position.to_play):
                return s.action
        return None

    def _cleanup_move(self, position: Position, stats: list[MoveStats]) -> int:
        """kgs-genmove_cleanup: the most visited move that is not a pass and does not fill an own eye."""
        choice = self._non_pass_move(position, stats)
        if choice is not None:
            return choice
        pass_action = self.state.game.pass_action
        assert pass_action is not None  # cleanup is Go only
        go = go_rules(position)
        candidates = [a for a in position.legal_moves()
                      if a != pass_action and not go.is_eye(a, position.to_play)]
        return random.choice(candidates) if candidates else pass_action

    def _record(self, position: Position) -> None:
        """Keep the searched position and its visit shares for ``dump_training``."""
        st = self.state
        shares = np.zeros(st.game.num_actions, np.float32)
        for s in st.player.root_stats():
            shares[s.action] = s.visits
        if shares.sum() > 0:
            st.training.append((position, shares / shares.sum()))

    def say_stats(self, stats: list[MoveStats]) -> None:
        """The verbose table of a search on stderr (nothing with -q)."""
        if self.state.log is not None and stats:
            visits = sum(s.visits for s in stats)
            self.state.say(verbose_table(stats, self.state.game) + f"\n\n{visits} visits\n")


class MoveCommands:
    """``play``, ``undo``, ``genmove``, ``kgs-genmove_cleanup``."""

    def __init__(self, state: EngineState, policy: MovePolicy):
        self.state = state
        self.policy = policy

    def commands(self) -> CommandTable:
        return {"play": self.cmd_play, "undo": self.cmd_undo, "genmove": self.cmd_genmove,
                "kgs-genmove_cleanup": self.cmd_kgs_genmove_cleanup}

    def cmd_play(self, args: list[str]) -> str:
        st = self.state
        nargs(args, 2, usage="play COLOUR VERTEX")
        colour, action = colour_arg(args[0]), st.vertex(args[1])
        if action == st.game.pass_action and at_move_cap(st.position):
            return ""  # the game is over at the cap: a controller's pass changes nothing (at_move_cap)
        terminal = st.position
        st.resumed()
        try:
            st.push(colour, action)
        except GTPFailure:
            st.history[-1] = terminal  # a refused move changes nothing
            raise
        return ""

    def cmd_undo(self, args: list[str]) -> str:
        nargs(args, 0, usage="undo")
        if len(self.state.history) < 2:
            raise GTPFailure("cannot undo")
        self.state.history.pop()
        return ""

    def cmd_genmove(self, args: list[str]) -> str:
        nargs(args, 1, usage="genmove COLOUR")
        return self.policy.genmove(colour_arg(args[0]))

    def cmd_kgs_genmove_cleanup(self, args: list[str]) -> str:
        self.state.require_go("kgs-genmove_cleanup")
        nargs(args, 1, usage="kgs-genmove_cleanup COLOUR")
        return self.policy.genmove(colour_arg(args[0]), cleanup=True)
