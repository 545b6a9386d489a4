"""Review speed: a whole 9x9 game at 200 visits, its positions batched, against one position at a time.

    flock /work/bench.lock python scripts/bench_review.py            # the figure and its reference
    flock /work/bench.lock python scripts/bench_review.py --busy 2   # whole commands, alone and busy
    python scripts/bench_review.py --noise --games 4                 # the review's search noise
    python scripts/bench_review.py --noise --games 4 --game gomoku

1. ``review: N positions at V visits in X s``: :func:`zero9.arena.review.review_game` on
   docs/runs/review-gnugo/game-0000.sgf (77 moves) with the shipped 9x9 net, every position's
   leaves in shared net calls (the bar: 20 s on the 2-core CPU). Reference in the same run: the
   same review with ``ReviewConfig(batched=False)``, one position's search at a time (8 leaves
   per net call). Wall and CPU seconds of each, and their ratio.
2. ``--busy N``: ``zero9 review`` (this game) and ``zero9 demo`` (a 9x9 Go game, seed 1) as
   a user runs them, whole commands, each alone and then beside N busy-loop processes
   (default 2: load 2 on a 2-core CPU), with the ratio busy / alone (issue 42's bar: at most
   1.5). ``--threads T`` runs them with ``OMP_NUM_THREADS=T`` (the way they ran before they
   chose one thread: T = the cores). The load average is printed before each pair: other
   programs on the machine count too. Take the timing lock.
3. ``--noise``: the review's noise. ``--games`` finished games reviewed twice with different
   seeds; per judged move the difference of the two losses (points for Go, winrate); the 95th
   percentile is what ``ReviewConfig.noise_points`` / ``noise_winrate`` hold (losses below it
   are never flagged).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from zero9.arena.review import review_game
from zero9.games.sgf import read_sgf
from zero9.nn.checkpoint import load_net
from zero9.settings import ReviewConfig

ROOT = Path(__file__).resolve().parents[1]
GAME = ROOT / "docs" / "runs" / "review-gnugo" / "game-0000.sgf"
BAR_SECONDS = 20.0


def timed(record, net, visits: int, config: ReviewConfig) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    review = review_game(record, net, visits, seed=1, config=config)
    return time.perf_counter() - wall, time.process_time() - cpu, review


def speed(args) -> None:
    record = read_sgf(args.sgf)
    net, _ = load_net(args.net, device="cpu")
    positions = len(record.moves)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min) on {os.cpu_count()} cores")
    review_game(record, net, 8, seed=0)  # warm-up (torch's first calls)
    wall, cpu, review = timed(record, net, args.visits, ReviewConfig())
    again = sum(m.get("searched_again", False) for m in review.moves)
    print(f"review: {positions} positions at {args.visits} visits in {wall:.1f} s ({cpu:.1f} CPU s), "
          f"batched; {again} played moves searched on their own (bar {BAR_SECONDS:.0f} s)")
    if args.skip_reference:
        return
    ref_wall, ref_cpu, _ = timed(record, net, args.visits, ReviewConfig(batched=False))
    print(f"reference: one position at a time {ref_wall:.1f} s ({ref_cpu:.1f} CPU s); "
          f"batched is {ref_wall / wall:.2f}x faster in wall time, {ref_cpu / cpu:.2f}x in CPU time")


def _command_seconds(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "zero9", *argv], check=True, env=env, cwd=ROOT,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800)
    return time.perf_counter() - started


def busy(args) -> None:
    """Each command alone, then beside ``args.busy`` busy loops: wall seconds and their ratio."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    env["PYTHONPATH"] = str(ROOT)
    if args.threads:
        env["OMP_NUM_THREADS"] = str(args.threads)
    threads = f"OMP_NUM_THREADS={args.threads}" if args.threads else "threads chosen by zero9"
    with tempfile.TemporaryDirectory() as out:
        commands = {
            f"review ({args.visits} visits)": ["review", str(args.sgf), "--net", str(args.net), "--visits",
                                               str(args.visits), "--seed", "1", "--no-plot", "--out", out],
            "demo (9x9 Go)": ["demo", "--seed", "1", "--quiet"],
        }
        for name, argv in commands.items():
            load = os.getloadavg()
            alone = _command_seconds(argv, env)
            loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
            try:
                beside = _command_seconds(argv, env)
            finally:
                for loop in loops:
                    loop.kill()
                    loop.wait()
            print(f"{name}, {threads}: alone {alone:.1f} s, beside {args.busy} busy loops {beside:.1f} s, "
                  f"ratio {beside / alone:.2f} (load before: {load[0]:.2f} {load[1]:.2f} (1, 5 min) on "
                  f"{os.cpu_count()} cores)", flush=True)


def noise(args) -> None:
    go = args.game == "go"
    net, _ = load_net(args.net if go else ROOT / "example-data" / "gomoku_9x9_best.pt", device="cpu")
    folder = ROOT / "docs" / "runs" / ("levels" if go else "gomoku9-h100")  # 9x9 games
    every = sorted(folder.rglob("*.sgf"))
    games = every[:: max(1, len(every) // args.games)]
    diffs: dict[str, list[float]] = {"points": [], "winrate": []} if go else {"winrate": []}
    best_changed = judged = 0
    for sgf in games[: args.games]:
        record = read_sgf(sgf)
        one, two = (review_game(record, net, args.visits, seed=s).moves for s in (1, 2))
        for a, b in zip(one, two, strict=True):
            if a["class"] == "forced":
                continue
            judged += 1
            best_changed += a["best_move"] != b["best_move"]
            if go:
                diffs["points"].append(abs(a["points_lost"] - b["points_lost"]))
            diffs["winrate"].append(abs(a["winrate_loss"] - b["winrate_loss"]))
        print(f"{sgf.relative_to(ROOT)}: {len(one)} moves", file=sys.stderr)
    for unit, values in diffs.items():
        v = np.array(values)
        print(f"noise ({unit}): {judged} moves reviewed twice (seeds 1, 2) at {args.visits} visits: "
              f"|difference of the losses| median {np.median(v):.3f}, 90th percentile "
              f"{np.percentile(v, 90):.3f}, 95th {np.percentile(v, 95):.3f}, max {v.max():.3f}")
    print(f"best move differs between the two reviews at {best_changed} of {judged} moves")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sgf", default=str(GAME))
    parser.add_argument("--net", default=str(ROOT / "example-data" / "go_9x9_best.pt"))
    parser.add_argument("--visits", type=int, default=ReviewConfig.visits)
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument("--noise", action="store_true", help="measure the review's noise instead")
    parser.add_argument("--games", type=int, default=6, help="--noise: games reviewed twice")
    parser.add_argument("--game", choices=("go", "gomoku"), default="go",
                        help="--noise: 9x9 Go (docs/runs/levels) or Gomoku (docs/runs/gomoku9-h100)")
    parser.add_argument("--busy", type=int, default=0, metavar="N",
                        help="whole commands alone and beside N busy-loop processes, and the ratio")
    parser.add_argument("--threads", type=int, default=0,
                        help="--busy: run the commands with OMP_NUM_THREADS=T (0: as zero9 chooses)")
    args = parser.parse_args()
    if args.busy:
        busy(args)
    else:
        noise(args) if args.noise else speed(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
