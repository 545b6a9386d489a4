"""Resignations only where the resigning side's own search could have resigned.

A client is handed ``resignation_percent`` (Leela Zero's option) with every task, and its
search resigns only when its winrate falls below that. A forger who wants a result can end
any game early with ``RE[B+R]``; this check refuses that unless the resigning side's net agrees
that it was losing.

Vocabulary:

- **resigner**: the side to move in the position the SGF ends in (the one that resigned), and
  its net: a match task names Black's and White's nets, a self-play game has one.
- **raw winrate**: the resigner net's value of that position, one forward pass, no search,
  from the resigner's view, ``(value + 1) / 2``.
- **allowed**: ``max(threshold + RAW_MARGIN, RAW_FLOOR)``. The search's winrate is an average
  over hundreds of visits, and a search reads tactics (a dead group, a lost ko, a scored end
  after passes) that the raw value of the root does not see, so an honest resignation can come
  from a position whose raw winrate is well above the threshold. A margin of 0.15 (and at least
  0.25 in all, which is a clearly lost position however low the threshold) leaves the search
  that room, while a forged resignation of a position the resigner wins or still fights for
  (raw winrate near 0.5 or more) is refused. The margin errs towards believing honest clients:
  a resignation it lets through is one the resigner's own net already calls lost. A task
  handed ``resignation_percent`` 0 never resigns, so there every resignation is refused.
- **a scored end in reach**: a search of a few visits already reads the end of the game when
  one more move can end it (Go: the opponent just passed, or the move cap is at most
  :data:`SCORED_END_PLIES` moves away), and there the rules' count, not the net, decides. So a
  resignation there is also believed when the position's own area count (komi in) has the
  resigner behind: a very weak early net resigns such games honestly while its raw value still
  says 0.5, and a forger gains nothing (the count already says who wins).
- **net cache**: the nets last used, by hash (an LRU of :data:`CACHED_NETS`), loaded with
  :func:`zero9.nn.checkpoint.load_net` from the server's own ``networks/<hash>.gz`` on the CPU;
  a resigned game costs one forward pass, done in the thread pool the upload checks run in.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import torch

from zero9.distributed.validation import COLOUR_NAMES, Rejected
from zero9.games import BLACK, Game, Position
from zero9.nn.checkpoint import load_net
from zero9.nn.features import encode

RAW_MARGIN = 0.15  # how far above the threshold the raw winrate may be (see the module docstring)
RAW_FLOOR = 0.25  # and the raw winrate allowed whatever the threshold
SCORED_END_PLIES = 2  # moves before Go's move cap within which a search reads the scored end
CACHED_NETS = 4  # nets kept loaded (a match's two, the best net, one more)


def allowed_winrate(resign_pct: int) -> float:
    """The highest raw winrate of the resigner that a resignation is believed at."""
    return max(resign_pct / 100 + RAW_MARGIN, RAW_FLOOR)


class ResignCheck:
    """Checks resignations against the resigner's net (see the module docstring)."""

    def __init__(self, game: Game, net_file: Callable[[str], Path | None], resign_pct: int):
        self.game, self.net_file, self.resign_pct = game, net_file, resign_pct
        self.nets: OrderedDict[str, object] = OrderedDict()
        self.lock = threading.Lock()  # one load at a time; lookups are quick

    def net(self, net_hash: str):
        with self.lock:
            if net_hash in self.nets:
                self.nets.move_to_end(net_hash)
                return self.nets[net_hash]
            path = self.net_file(net_hash)
            if path is None:
                raise Rejected(f"network {net_hash[:8]} is not on this server", 400)
            net, _ = load_net(path, device="cpu", expected_size=self.game.size)
            self.nets[net_hash] = net
            while len(self.nets) > CACHED_NETS:
                self.nets.popitem(last=False)
            return net

    def raw_winrate(self, net_hash: str, position: Position) -> float:
        """The raw winrate of the side to move in ``position`` by the net ``net_hash``."""
        net = self.net(net_hash)
        with torch.inference_mode():
            _, value = net.predict(encode(position)[None])
        return (float(value[0]) + 1) / 2

    def check(self, position: Position, net_hash: str) -> None:
        """Rejected unless the side to move in ``position`` (who resigned there) could have resigned
        by the net ``net_hash``."""
        colour = COLOUR_NAMES.get(position.to_play, "?")
        if self.resign_pct <= 0:
            raise Rejected(f"{colour} resigned, but this server's tasks say never resign "
                           "(resignation_percent 0)")
        if behind_at_a_scored_end(position):
            return
        winrate = self.raw_winrate(net_hash, position)
        allowed = allowed_winrate(self.resign_pct)
        if winrate > allowed:
            raise Rejected(f"{colour} resigned at move {position.move_number} where its net "
                           f"{net_hash[:8]} gives it a winrate of {winrate:.2f}; a resignation needs "
                           f"{allowed:.2f} or less (resignation_percent {self.resign_pct} plus a margin)")


def behind_at_a_scored_end(position: Position) -> bool:
    """Go: one move can end the game here (the opponent passed, or the move cap is near) and the
    area count (komi in) has the side to move behind: see "a scored end in reach" above."""
    game = position.game
    if game.name != "go" or position.is_terminal():
        return False
    cap = game.move_cap
    near = position.last_move == game.pass_action or (0 < cap <= position.move_number + SCORED_END_PLIES)
    if not near:
        return False
    lead = position.score()  # black's
    return (lead < 0) if position.to_play == BLACK else (lead > 0)
