"""Leela Zero's GTP extensions in ``zero9 gtp``: ``lz-analyze``, ``lz-genmove_analyze`` &c.

Vocabulary (tags, info lines and restrictions: :mod:`zero9.protocols.gtp.analysis`):

- **lz-analyze**: replies ``=id`` at once, then an ``info move ...`` line every interval
  while the search runs in a thread, until the next input line arrives. Leela Zero's rule
  for its length: ``-v N`` (or ``lz-setoption name visits N``) stops it at N visits and the
  reply then ends by itself; without a visit limit (``-v`` absent or 0, the default) it
  deepens until the next line, whatever visits ``genmove`` uses. With ``ownership true``
  each line ends with ``ownership`` and size² numbers (KataGo's form, from the analyses of
  :mod:`zero9.protocols.gtp.streams`).
- **lz-genmove_analyze**: a ``genmove`` that posts info lines while it searches, then
  ``play MOVE``.
- **heatmap**: the net's raw policy (per mille) and value for one symmetry.
- **lz-setoption**: one option, checked in full (:mod:`zero9.protocols.gtp.options`) before
  it is applied.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from zero9.games import Position
from zero9.protocols.gtp.analysis import AnalyzeTags, RestrictedRoot, info_line, parse_analyze_tags
from zero9.protocols.gtp.commands import CommandTable
from zero9.protocols.gtp.loop import Reply
from zero9.protocols.gtp.moves import MovePolicy
from zero9.protocols.gtp.options import SETTINGS, int_value, nargs, parse_setoption
from zero9.protocols.gtp.state import EngineState, resumable
from zero9.protocols.gtp.streams import AnalysisStreams
from zero9.search.player import MoveStats


class LeelaZeroCommands:
    """Leela Zero's extensions: ``lz-analyze``, ``lz-genmove_analyze``, ``heatmap``, ``lz-setoption``."""

    def __init__(self, state: EngineState, policy: MovePolicy, streams: AnalysisStreams):
        self.state = state
        self.policy = policy
        self.streams = streams

    def commands(self) -> CommandTable:
        return {
            "heatmap": self.cmd_heatmap,
            "lz-analyze": self.cmd_lz_analyze,
            "lz-genmove_analyze": self.cmd_lz_genmove_analyze,
            "lz-setoption": self.cmd_lz_setoption,
        }

    def _tags(self, args: list[str]) -> AnalyzeTags:
        return parse_analyze_tags(args, self.state.position)

    def _info(self, stats: list[MoveStats], root: Position, tags: AnalyzeTags) -> str:
        """The info line; ``minmoves`` pads it with unvisited moves in the net's prior order."""
        stats = list(stats)
        if len(stats) < tags.min_moves:
            plain = getattr(root, "unwrapped", root)
            policy, _ = self.state.source.raw_policy(plain, 0)
            seen = {s.action for s in stats}
            for a in sorted((a for a in root.legal_moves() if a not in seen), key=lambda a: -policy[a]):
                if len(stats) >= tags.min_moves:
                    break
                stats.append(MoveStats(a, self.state.game.action_to_vertex(a), 0, 0.0, float(policy[a]), 0.0,
                                       float("nan"), 0.0, float("nan"), [a]))
        return info_line(stats, self.state.game, tags.min_moves)

    def cmd_lz_analyze(self, args: list[str]) -> Reply:
        tags = self._tags(args)
        if tags.ownership:
            return self.streams.stream(tags, self.streams.lz_line)
        finished = self.state.position.is_terminal() and not resumable(self.state.position)
        position = self.state.position if finished else self.state.prepare_genmove(tags.colour)
        root = RestrictedRoot(position, tags) if tags.restricted else position
        limit = self.state.options.visits or None  # -v bounds lz-analyze, as in Leela Zero

        def run(write: Callable[[str], None], stop: threading.Event) -> None:
            if position.is_terminal():
                stop.wait()
                return
            if root is not position:
                self.state.player.reset()
            printed = False

            def on_stats(stats) -> None:
                nonlocal printed
                line = self._info(stats, root, tags)
                if tags.interval_cs and line:
                    printed = True
                    write(line + "\n")

            # interval 0: nothing while searching (Leela Zero); otherwise at least one line at the end
            self.state.player.analyze(root, on_stats, tags.interval_s or 3600.0, stop, max_visits=limit)
            if tags.interval_cs and not printed:
                on_stats(self.state.player.root_stats())
            self.policy.say_stats(self.state.player.root_stats())
            if root is not position:
                self.state.player.reset()

        # With a visit limit the reply ends by itself when the limit is reached.
        return Reply(stream=run, interruptible=True)

    def cmd_lz_genmove_analyze(self, args: list[str]) -> Reply:
        tags = self._tags(args)
        position = self.state.prepare_genmove(tags.colour)  # fail now, before the '=' goes out
        root = RestrictedRoot(position, tags) if tags.restricted else position

        def run(write: Callable[[str], None], stop: threading.Event) -> None:
            printed = False

            def on_stats(stats) -> None:
                nonlocal printed
                line = self._info(stats, root, tags)
                if line:
                    printed = True
                    write(line + "\n")

            if not tags.interval_cs:
                write(f"play {self.policy.genmove(tags.colour, tags=tags)}\n")
                return
            def at_least_once(stats) -> None:  # Leela Zero posts one line even after a short search
                if not printed:
                    on_stats(stats)

            move = self.policy.genmove(tags.colour, tags=tags, on_stats=on_stats, on_searched=at_least_once)
            write(f"play {move}\n")

        return Reply(stream=run)

    def cmd_heatmap(self, args: list[str]) -> str:
        nargs(args, 0, 1, usage="heatmap [SYMMETRY]")
        sym = int_value(args[0], "symmetry", 0, 7) if args else 0
        position = self.state.position
        policy, winrate = self.state.source.raw_policy(position, sym)
        n = self.state.game.size
        board = position.board_array()
        rows = []
        for y in range(n - 1, -1, -1):
            cells = [int(policy[y * n + x] * 1000) if board[y * n + x] == 0 else 0 for x in range(n)]
            rows.append(" ".join(f"{c:3d}" for c in cells))
        if self.state.game.pass_action is not None:
            rows.append(f"pass: {int(policy[self.state.game.pass_action] * 1000)}")
        rows.append(f"winrate: {winrate:f}")
        return "\n" + "\n".join(rows)

    def cmd_lz_setoption(self, args: list[str]) -> str:
        """``lz-setoption name NAME value VALUE``: checked in full (gtp.options), then applied."""
        name, text = parse_setoption(args)
        setting = SETTINGS[name]
        value = setting.parse(text)
        where, _, key = setting.target.partition(":")
        if where == "player":
            if key in ("visits", "playouts"):
                setattr(self.state.options, key, value or None)
            self.state.player.set_option(key, value if value != 0 or key not in ("visits", "playouts", "time")
                                   else None)
        elif where == "options":
            setattr(self.state.options, key, value)
            if key == "resignpct":
                self.state.player.set_option("resign", self.state.options.resign_threshold)
            elif key == "lagbuffer":
                self.state.clock.lag = value / 100.0
        return ""
