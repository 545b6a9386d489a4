"""Throughput of ``zero9 analysis``: a whole 9x9 game's turns in one query, batched and one at a time.

Prints positions per second of the engine as KaTrain uses it (every turn of a game queued at
once, analysed together in shared net calls, ``-analysis-threads`` positions per batch) and,
beside it, the same turns analysed one at a time (batch 1) in the same run, with the ratio.
``--report-every 1`` asks for reports during the search as KaTrain does (each turn then searched
in rounds of doubling visits, its tree kept from round to round).

    python scripts/bench_analysis_engine.py [--sgf GAME] [--visits 200] [--batch 16] [--device cpu]
                                            [--report-every SECONDS]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)

import torch  # noqa: E402

from zero9.cli.analysis import net_finder  # noqa: E402
from zero9.games.sgf import read_sgf  # noqa: E402
from zero9.protocols.analysis_engine import AnalysisEngine  # noqa: E402


def game_query(path: str, visits: int) -> dict:
    record = read_sgf(path)
    game = record.game
    moves = [["B" if colour == 1 else "W", game.action_to_vertex(action)] for colour, action in record.moves]
    return {"id": "game", "moves": moves, "rules": "chinese-ogs", "komi": game.komi, "boardXSize": game.size,
            "boardYSize": game.size, "maxVisits": visits, "analyzeTurns": list(range(len(moves) + 1)),
            "includeOwnership": True, "includePolicy": True}


def run(nets, query: dict, batch: int) -> tuple[float, int]:
    out = io.StringIO()
    engine = AnalysisEngine(nets, out, seed=1, batch=batch)
    start = time.perf_counter()
    engine.serve(io.StringIO(json.dumps(query) + "\n"))
    seconds = time.perf_counter() - start
    answered = sum(1 for line in out.getvalue().splitlines() if '"isDuringSearch":false' in line)
    return seconds, answered


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sgf", default=os.path.join(ROOT, "docs/runs/review-gnugo/game-0000.sgf"))
    parser.add_argument("--visits", type=int, default=200)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--report-every", type=float, default=None,
                        help="reportDuringSearchEvery in the query (KaTrain sends 1 s)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    nets = net_finder(None, args.device)
    query = game_query(args.sgf, args.visits)
    if args.report_every is not None:
        query["reportDuringSearchEvery"] = args.report_every
    run(nets, {**query, "analyzeTurns": [0], "maxVisits": 8}, 1)  # load the net, warm up
    batched, n = run(nets, query, args.batch)
    single, m = run(nets, query, 1)
    assert n == m == len(query["analyzeTurns"]), (n, m)
    print(f"{n} positions x {args.visits} visits: batched (-analysis-threads {args.batch}) {batched:.1f} s, "
          f"{n / batched:.2f} positions/s; one at a time {single:.1f} s, {n / single:.2f} positions/s; "
          f"ratio {single / batched:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
