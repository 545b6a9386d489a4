"""How often ``zero9 gtp``'s ``final_score`` equals GNU Go's count on finished 9x9 games.

For every game of the given SGF files that ended with two passes (a finished game, not a
resignation), in a seeded random order up to ``--games``: GNU Go 3.8's
``gnugo --chinese-rules --score aftermath -l GAME`` against ``loadsgf GAME`` + ``final_score``
of zero9's GTP engine with the shipped 9x9 net. Prints each disagreement and the count.

    python scripts/final_score_vs_gnugo.py --games 400 'docs/runs/go9*/*/*.sgf' 'docs/runs/levels/*/*.sgf'
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import re
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)

import torch  # noqa: E402

from zero9.arena.gtpclient import find_gnugo  # noqa: E402
from zero9.games import make_game  # noqa: E402
from zero9.games.sgf import read_sgf  # noqa: E402
from zero9.nn.checkpoint import default_net_path  # noqa: E402
from zero9.protocols.gtp import GTPEngine, LeelaZeroOptions  # noqa: E402
from zero9.search.player import NetSource  # noqa: E402


def gnugo_score(gnugo: str, path: str) -> str:
    out = subprocess.run([gnugo, "--chinese-rules", "--score", "aftermath", "-l", path],
                         capture_output=True, text=True, timeout=120).stdout
    m = re.search(r"(Black|White) wins by ([\d.]+) points", out)
    return f"{m.group(1)[0]}+{float(m.group(2)):g}" if m else "0" if "jigo" in out.lower() else "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("patterns", nargs="+", help="SGF file patterns (quoted globs)")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    gnugo = find_gnugo()
    if gnugo is None:
        print("GNU Go is not installed", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    files = sorted({f for pattern in args.patterns for f in glob.glob(pattern)})
    random.Random(args.seed).shuffle(files)
    source = NetSource(default_net_path("go", 9), device="cpu")
    agree = total = 0
    start = time.monotonic()
    for path in files:
        if total >= args.games:
            break
        record = read_sgf(path)
        if record.game.name != "go" or record.game.size != 9 or len(record.moves) < 2:
            continue
        if not all(action == 81 for _, action in record.moves[-2:]):
            continue  # not finished by two passes
        engine = GTPEngine(make_game("go", 9, komi=record.game.komi), source, LeelaZeroOptions(seed=1))
        engine.handle(f"loadsgf {path}")
        ours = engine.handle("final_score")[1:].strip()
        theirs = gnugo_score(gnugo, path)
        total += 1
        agree += ours == theirs
        if ours != theirs:
            print(f"{path}: zero9 {ours}, GNU Go {theirs}, file {record.result}", flush=True)
    print(f"{agree}/{total} finished games agree with GNU Go ({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
