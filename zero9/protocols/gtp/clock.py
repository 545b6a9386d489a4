"""The clock of ``zero9 gtp``: a GTP time control and how many seconds each ``genmove`` may spend.

Vocabulary:

- **time control**: none, **absolute** (main time only), **Canadian** byo-yomi
  (``time_settings MAIN BYO_TIME BYO_STONES``: after the main time, BYO_STONES moves in
  each BYO_TIME period) or **Japanese** byo-yomi (``kgs-time_settings byoyomi MAIN
  PERIOD_TIME PERIODS``: each move within one period). ``time_left`` sets a colour's
  remaining seconds and stones, as the client's own clock sees them.
- **budget**: the seconds one ``genmove`` may search, a share of what is left less the
  **lag** kept back for pipes and the GUI (``-b``); the search also keeps its visit cap.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Clock:
    """A GTP time control and each colour's remaining time (seconds)."""

    kind: str = "none"  # 'none', 'absolute', 'canadian' or 'byoyomi'
    main: float = 0.0
    byo_time: float = 0.0
    byo_stones: int = 0  # canadian: stones per period; byoyomi: number of periods
    left: dict[int, tuple[float, int]] = field(default_factory=dict)  # colour -> (seconds, stones)
    lag: float = 0.2  # safety margin for the pipes and the GUI

    @classmethod
    def canadian(cls, main: float, byo_time: float, byo_stones: int) -> Clock:
        """GTP ``time_settings``: byo_time > 0 with 0 stones means no time limit."""
        if byo_time > 0 and byo_stones == 0:
            return cls()
        kind = "absolute" if byo_time == 0 else "canadian"
        return cls(kind, main, byo_time, byo_stones)

    def set_left(self, colour: int, seconds: float, stones: int) -> None:
        self.left[colour] = (seconds, stones)

    def budget(self, colour: int, empty_points: int) -> float | None:
        """Seconds to spend on this move, or None for no limit."""
        if self.kind == "none":
            return None
        seconds, stones = self.left.get(colour, (self.main, 0))
        if stones > 0 or seconds <= 0 and self.kind != "absolute":
            # In byo-yomi: Canadian spreads the period over its stones, Japanese uses one period.
            period = seconds if seconds > 0 else self.byo_time
            per_move = period / max(stones, 1) if self.kind == "canadian" else period
            return max(0.05, 0.85 * per_move - self.lag)
        moves_left = max(8, empty_points // 3)  # small boards: most games end well before the board fills
        share = seconds / moves_left
        if self.kind == "canadian":
            share += 0.5 * self.byo_time / max(self.byo_stones, 1)
        elif self.kind == "byoyomi":
            share += 0.5 * self.byo_time
        return max(0.05, share - self.lag)

    def spend(self, colour: int, elapsed: float) -> None:
        """Our own bookkeeping between ``time_left`` updates (clients need not send any)."""
        if self.kind == "none":
            return
        seconds, stones = self.left.get(colour, (self.main, 0))
        seconds -= elapsed
        if stones > 0:
            stones -= 1
            if stones == 0 and self.kind == "canadian":
                seconds, stones = self.byo_time, self.byo_stones
        elif seconds <= 0 and self.kind in ("canadian", "byoyomi"):
            seconds, stones = self.byo_time, self.byo_stones
        self.left[colour] = (seconds, stones)
