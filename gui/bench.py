"""How long the AI takes to answer in the window, per level: ``python -m gui.bench``.

Vocabulary:

- **reply time**: seconds from your click to the AI's stone on the board, measured
  through the real window (dummy video driver, frames drawn at the busy frame rate
  while the worker thread searches), so drawing's share of the CPU is included.
- **bare time**: the same searches (same positions, same SearchPlayer settings)
  called directly on a plain thread with no window: the reference measured in the
  same run. The ratio reply/bare is the window's overhead.
- **target**: the spec asks for a reply within about 3 s at the default level with
  the default CPU net on a 2-core CPU.

The machine's load average is printed with the figures: on a shared machine the
absolute seconds move with it, the ratio much less.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import torch

from gui.engine import DEFAULT_LEVEL, build_engine  # noqa: E402
from gui.settings import Settings  # noqa: E402
from zero9.arena.levels import LEVELS  # noqa: E402
from zero9.games import EMPTY, make_game  # noqa: E402

# your moves: the first empty point of this list each turn (a plausible 9x9 opening)
HUMAN_MOVES = "E5 C3 G7 C7 G3 D6 F4 B5 H5 E2 E8 A1 J9 A9 J1".split()
TARGET_S = 3.0


def _human_move(position, game) -> int:
    board = position.board_array()
    for v in HUMAN_MOVES:
        a = game.vertex_to_action(v)
        if board[a] == EMPTY and position.is_legal(a):
            return a
    return position.legal_moves()[0]


def window_replies(level: str, moves: int, net: str | None) -> tuple[list[float], list]:
    """Reply times through the window, and the positions the AI answered (for the bare reference)."""
    from gui.app import FPS_BUSY, App

    settings = Settings(level=level, visits=LEVELS[level].visits, net=net)
    game = settings.make_game()
    app = App(settings, build_engine(game, net, settings.visits))
    m = app.model
    m.overlays["winrate"] = True
    times, positions = [], []
    try:
        for _ in range(moves):
            while m.worker.busy:  # let the quick net evaluation of your position finish first
                app.step()
                time.sleep(0.005)
            if m.over:
                break
            n = len(m.history)
            m.click(_human_move(m.position, game))
            positions.append(m.history[-1])
            start = time.perf_counter()
            while len(m.history) == n + 1 and not m.over:
                app.step()
                app.clock.tick(FPS_BUSY)
            times.append(time.perf_counter() - start)
    finally:
        app.close()
    return times, positions


def bare_replies(level: str, positions: list, net: str | None) -> list[float]:
    """The same searches with no window: SearchPlayer.choose on a plain thread, as the worker calls it."""
    game = make_game("go", 9, komi=7.5)
    player = build_engine(game, net, LEVELS[level].visits).player
    times: list[float] = []

    def search() -> None:
        for pos in positions:
            start = time.perf_counter()
            player.choose(pos)
            times.append(time.perf_counter() - start)

    # on a thread like the window's worker: torch's intra-op pool behaves differently on the main thread
    worker = threading.Thread(target=search)
    worker.start()
    worker.join()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="beginner,casual,strong", help="comma-separated level names")
    parser.add_argument("--moves", type=int, default=6, help="AI replies timed per level")
    parser.add_argument("--net", help="net file (default: the shipped 9x9 Go net)")
    args = parser.parse_args(argv)

    load = os.getloadavg()[0]
    print(f"load average {load:.2f} on {os.cpu_count()} CPUs, torch threads {torch.get_num_threads()}")
    head = ("level", "visits", "window median", "window max", "bare median", "ratio")
    print("{:<9} {:>6} {:>14} {:>11} {:>12} {:>6}".format(*head))
    for level in args.levels.split(","):
        times, positions = window_replies(level, args.moves, args.net)
        bare = bare_replies(level, positions, args.net)
        med, ref = statistics.median(times), statistics.median(bare)
        row = f"{level:<9} {LEVELS[level].visits:>6} {med:>13.2f}s {max(times):>10.2f}s {ref:>11.2f}s"
        print(f"{row} {med / ref:>6.2f}")
        if level == DEFAULT_LEVEL:
            verdict = "meets" if med <= TARGET_S else "MISSES"
            print(f"  default level {verdict} the ~{TARGET_S:g} s target (median {med:.2f} s)")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
