"""A game clock for the window: main time, then byo-yomi periods, as KaTrain and go clubs use it.

Vocabulary:

- **main time**: each side's time for the whole game (``main_s`` seconds).
- **byo-yomi**: once the main time is spent, each move must be made within one period
  (``byo_s`` seconds); a move made in time gives the period back whole, a period that runs
  out is lost, and with none left (of ``periods``) the side **loses on time** (``W+T``).
- the clock **runs** for the side to move while a game of yours is live at the end of its
  line; it stops while you browse, while a loaded game waits, and once the game is over.
  :meth:`GameClock.update` is called once a frame with the time it is (``now``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zero9.games import BLACK, WHITE


@dataclass
class SideClock:
    main: float
    periods: int
    period_left: float


@dataclass
class GameClock:
    main_s: float
    byo_s: float = 30.0
    periods: int = 3
    sides: dict[int, SideClock] = field(default_factory=dict)
    running: int | None = None  # the colour whose time runs
    since: float | None = None  # when it started to run (monotonic seconds)

    def __post_init__(self) -> None:
        bad = min(self.main_s, self.byo_s, self.periods) < 0 or (self.byo_s == 0) != (self.periods == 0)
        if bad or self.main_s == self.periods == 0:
            raise ValueError(f"a clock needs some time: main time >= 0, byo-yomi seconds and periods both "
                             f"set or both 0, not {self.main_s:g} s + {self.periods} x {self.byo_s:g} s")
        self.reset()

    def reset(self) -> None:
        self.sides = {c: SideClock(self.main_s, self.periods, self.byo_s) for c in (BLACK, WHITE)}
        self.running = self.since = None

    def update(self, colour: int | None, now: float) -> int | None:
        """Charge the time since the last update to the side that ran; run ``colour``'s clock now
        (None: stopped). Returns the colour that lost on time, if one did."""
        lost = None
        if self.running is not None and self.since is not None:
            lost = self._spend(self.running, now - self.since)
        self.running, self.since = (colour, now) if lost is None else (None, None)
        return lost

    def moved(self, colour: int) -> None:
        """``colour`` made a move: a byo-yomi period in use is given back whole."""
        side = self.sides[colour]
        if side.main <= 0:
            side.period_left = self.byo_s

    def _spend(self, colour: int, seconds: float) -> int | None:
        side = self.sides[colour]
        if side.main > 0:
            used = min(side.main, seconds)
            side.main -= used
            seconds -= used
        while seconds > 0 and side.periods > 0:
            used = min(side.period_left, seconds)
            side.period_left -= used
            seconds -= used
            if side.period_left <= 0:
                side.periods -= 1
                side.period_left = self.byo_s if side.periods > 0 else 0.0
        if side.main <= 0 and side.periods == 0:
            return colour
        return None

    def text(self, colour: int) -> str:
        """'4:32' in main time, '0:27 (3)' in byo-yomi (seconds left in the period, periods left)."""
        side = self.sides[colour]
        if side.main > 0:
            return _mmss(side.main)
        return f"{_mmss(side.period_left)} ({side.periods})"


def _mmss(seconds: float) -> str:
    whole = max(0, int(seconds + 0.999))
    return f"{whole // 60}:{whole % 60:02d}"


__all__ = ["GameClock", "SideClock"]
