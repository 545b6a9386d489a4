"""Measure the named AI levels (zero9.arena.levels): ``zero9 match`` between neighbours, then Elo.

Each pair of the ladder plays its number of games (``--games`` overrides them; colours
alternate) with ``zero9 match``, its SGFs kept under OUT/PAIR/; then ``zero9 ratings``'s
fit (random = 0 Elo, 95 % intervals) rates every player over all the games, and the
script prints the table as Markdown for docs/levels.md. A pair whose folder already holds
its games is not played again, so an interrupted run resumes.

    python3 scripts/level_table.py --out /tmp/levels --pairs 5 --jobs 4
    python3 scripts/level_table.py --out /tmp/levels --jobs 3 --parallel 5 --device cuda   # a GPU machine

The ladder links every level to its neighbours and to fixed anchors (random play, GNU Go
levels), so each rating is tied to the others by games, not guessed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from zero9.arena.ratings import format_table, rate_folder  # noqa: E402

# (player A, player B, games) on 9x9 Go, komi 7.5; cheapest first, so --pairs N keeps a linked
# ladder. Every level meets its neighbours and an anchor (random, GNU Go 1 or 10), so each
# rating is tied to the others by games. --games replaces the counts. Two levels that always play
# their best move would repeat the same few games, so their pair starts from balanced openings
# (each twice, colours swapped).
GO_OPENINGS = str(ROOT / "example-data" / "openings_go_9x9.txt")
LADDER = [
    ("level:beginner", "random", 30),
    ("level:casual", "level:beginner", 30),
    ("level:casual", "gnugo:1", 30),
    ("level:club", "level:casual", 30),
    ("level:club", "gnugo:1", 30),
    ("level:club", "gnugo:10", 30),
    ("level:strong", "level:club", 30),
    ("level:strong", "gnugo:10", 30),
    ("level:max", "level:strong", 30, GO_OPENINGS),
]


def folder_name(a: str, b: str) -> str:
    return f"{a}-vs-{b}".replace(":", "_")


def play_pair(a: str, b: str, games: int, out: Path, seed: int, parallel: int = 1,
              device: str = "cpu", openings: str | None = None) -> float:
    """Play one pair with ``zero9 match`` unless its games are already there; the seconds it took."""
    folder = out / folder_name(a, b)
    if len(list(folder.glob("*.sgf"))) >= games:
        return 0.0
    start = time.monotonic()
    # one torch thread per match: several matches share the cores, and spinning threads would fight
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "zero9", "match", a, b, "--game", "go", "--size", "9", "--komi", "7.5",
               "--games", str(games), "--seed", str(seed), "--sgf-dir", str(folder), "--max-moves", "200",
               "--parallel", str(parallel), "--device", device]
    command += ["--openings", openings] if openings else []
    print("$", " ".join(command[1:]), flush=True)
    subprocess.run(command, check=True, env=env, cwd=ROOT)
    return time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="/tmp/zero9-levels", help="folder for the games")
    parser.add_argument("--games", type=int, default=None, help="games per pair (default: the ladder's)")
    parser.add_argument("--jobs", type=int, default=1, help="pairs played at once (default 1)")
    parser.add_argument("--parallel", type=int, default=1, help="games of a pair at once (default 1)")
    parser.add_argument("--device", default="cpu", help="where the nets run: cpu (default) or cuda")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=len(LADDER), help="play only the first N pairs")
    args = parser.parse_args()
    out = Path(args.out)

    def play(pair: tuple) -> None:
        a, b, games, *openings = pair
        seconds = play_pair(a, b, args.games or games, out, args.seed, args.parallel, args.device, *openings)
        if seconds:
            print(f"{a} vs {b}: {seconds:.0f} s", flush=True)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(play, LADDER[:args.pairs]))
    ratings, games, skipped = rate_folder(out)
    print(f"\n{len(games)} games, {len(skipped)} skipped\n")
    print(format_table(ratings, games))
    print("\n| player | Elo | 95% interval | games |\n| --- | ---: | --- | ---: |")
    played = {name: sum(name in (x, y) for x, y, _ in games) for name in ratings}
    for name, (elo, lo, hi) in sorted(ratings.items(), key=lambda kv: -kv[1][0]):
        print(f"| {name} | {elo:.0f} | [{lo:.0f}, {hi:.0f}] | {played[name]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
