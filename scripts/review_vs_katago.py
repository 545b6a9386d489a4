"""How often does zero9's review flag the moves a strong engine says lose points, and only those?

    python scripts/review_vs_katago.py --katago /opt/kg/katago --model /opt/kg/b10c384.bin.gz \\
        --games 20 --katago-visits 400 --visits 200 --device cuda --out /tmp/vs-katago.json

The strong engine: KataGo 1.18.1 and its b10c384 net as KaTrain's PyPI wheel ships them (an
OpenCL build: it runs on the device's GPUs, not on pocl; ../shared/notes/katago-on-the-device.md).
Its analysis engine (``katago analysis``) analyses every turn of each game; KataGo's **points
lost** by a move is KaTrain's: the mover's score lead before the move minus after it (each turn's
``rootInfo.scoreLead``, Black's view, turned to the mover's). A move **loses points** when
that is at least ``--katago-threshold`` (3 points: KaTrain's "inaccuracy" and worse).

zero9's review (:func:`zero9.arena.review.review_game`, the shipped 9x9 net) **flags** a move
when its class is ``--flagged`` or worse (default ``inaccuracy``: 3 points, the same bar).
Precision: the share of flagged moves KataGo says lose points; recall: the share of
KataGo's point-losing moves the review flagged. Also: the rank correlation of the two losses.

Games: finished 9x9 games of docs/runs (as scripts/score_calibration.py picks them).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

KATAGO_CONFIG = """
logDir = {log}
logToStderr = false
logAllGTPCommunication = false
logSearchInfo = false
reportAnalysisWinratesAs = BLACK
rules = chinese
numAnalysisThreads = 4
numSearchThreadsPerAnalysisThread = 8
nnMaxBatchSize = 64
"""


def katago_losses(katago: str, model: str, games: list, visits: int) -> list[list[float]]:
    """KataGo's points lost by every move of every game (mover's view), KaTrain's way."""
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "analysis.cfg"
        config.write_text(KATAGO_CONFIG.format(log=Path(tmp) / "logs"))
        queries = []
        for g, (_, record) in enumerate(games):
            moves = [["B" if c == 1 else "W", record.game.action_to_vertex(a)] for c, a in record.moves]
            queries.append({"id": str(g), "moves": moves, "rules": "chinese", "komi": record.game.komi,
                            "boardXSize": 9, "boardYSize": 9, "maxVisits": visits,
                            "analyzeTurns": list(range(len(moves) + 1))})
        text = "".join(json.dumps(q) + "\n" for q in queries)
        done = subprocess.run([katago, "analysis", "-model", model, "-config", str(config)], input=text,
                              capture_output=True, text=True, timeout=3000)
    leads: dict[tuple[int, int], float] = {}
    for line in done.stdout.splitlines():
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"KataGo: {reply}")
        leads[int(reply["id"]), int(reply["turnNumber"])] = float(reply["rootInfo"]["scoreLead"])
    out = []
    for g, (_, record) in enumerate(games):
        losses = []
        for t, (colour, _) in enumerate(record.moves):
            sign = 1.0 if colour == 1 else -1.0  # Black's view -> the mover's
            losses.append(sign * (leads[g, t] - leads[g, t + 1]))
        out.append(losses)
    return out


def main() -> int:
    from score_calibration import finished_games

    from zero9.arena.review import Thresholds, review_game
    from zero9.nn.checkpoint import load_net

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--katago", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--katago-visits", type=int, default=400)
    parser.add_argument("--katago-threshold", type=float, default=3.0)
    parser.add_argument("--visits", type=int, default=200)
    parser.add_argument("--flagged", default="inaccuracy", help="the mildest class that counts as flagged")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    games = finished_games([ROOT / "docs" / "runs"], args.games)
    kata = katago_losses(args.katago, args.model, games, args.katago_visits)
    net, _ = load_net(ROOT / "example-data" / "go_9x9_best.pt", device=args.device)
    thresholds = Thresholds.for_game("go")
    worse = set(thresholds.names[: thresholds.names.index(args.flagged) + 1])
    rows = []
    for g, (sgf, record) in enumerate(games):
        review = review_game(record, net, args.visits, seed=g)
        for m, k in zip(review.moves, kata[g], strict=True):
            if m["class"] == "forced":
                continue
            rows.append({"game": str(sgf), "move": m["move_number"], "zero9": m["points_lost"],
                         "zero9_class": m["class"], "katago": k})
        print(f"{g + 1}/{len(games)} games", file=sys.stderr)
    flagged = np.array([r["zero9_class"] in worse for r in rows])
    losing = np.array([r["katago"] >= args.katago_threshold for r in rows])
    tp = int((flagged & losing).sum())
    precision = tp / max(int(flagged.sum()), 1)
    recall = tp / max(int(losing.sum()), 1)
    z = np.array([r["zero9"] for r in rows])
    k = np.array([r["katago"] for r in rows])
    rank = np.corrcoef(np.argsort(np.argsort(z)), np.argsort(np.argsort(k)))[0, 1]
    print(f"{len(rows)} moves of {len(games)} games; KataGo ({args.katago_visits} visits) says "
          f"{int(losing.sum())} lose >= {args.katago_threshold:g} points; zero9 ({args.visits} visits) "
          f"flags {int(flagged.sum())} ({args.flagged} or worse): precision {precision:.2f}, "
          f"recall {recall:.2f}; rank correlation of the losses {rank:.2f}")
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows, "precision": precision, "recall": recall,
                                              "rank_correlation": rank}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
