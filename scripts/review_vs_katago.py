"""How often does zero9's review flag the moves a strong engine says lose points, and only those?

    nice python scripts/review_vs_katago.py zero9 --games 20                    # zero9's reviews (CPU)
    python scripts/review_vs_katago.py queries --games 20                        # katago-queries.jsonl
    katago analysis -model b10c384h6nbttflrs.bin.gz -config analysis.cfg \\
        < katago-queries.jsonl > katago-replies.jsonl                            # on the device's GPU
    python scripts/review_vs_katago.py compare --games 20 --out vs-katago.json  # the figures

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

from zero9.util.files import read_text_file

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_NET = str(ROOT / "example-data" / "go_9x9_best.pt")
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


def katago_queries(games: list, visits: int) -> str:
    """One analysis query per game, every turn analysed (KataGo's JSON lines)."""
    lines = []
    for g, (_, record) in enumerate(games):
        moves = [["B" if c == 1 else "W", record.game.action_to_vertex(a)] for c, a in record.moves]
        lines.append(json.dumps({"id": str(g), "moves": moves, "rules": "chinese", "komi": record.game.komi,
                                 "boardXSize": 9, "boardYSize": 9, "maxVisits": visits,
                                 "analyzeTurns": list(range(len(moves) + 1))}))
    return "".join(line + "\n" for line in lines)


def katago_losses(games: list, replies: str) -> list[list[float]]:
    """KataGo's points lost by every move of every game (mover's view), KaTrain's way."""
    leads: dict[tuple[int, int], float] = {}
    for line in replies.splitlines():
        if not line.strip().startswith("{"):
            continue
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


def run_katago(katago: str, model: str, queries: str) -> str:
    """``katago analysis`` on the queries: its reply lines."""
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "analysis.cfg"
        config.write_text(KATAGO_CONFIG.format(log=Path(tmp) / "logs"))
        done = subprocess.run([katago, "analysis", "-model", model, "-config", str(config)], input=queries,
                              capture_output=True, text=True, timeout=3000)
    return done.stdout


LEVEL_GAMES = "docs/runs/levels/level_*-vs-gnugo_*"  # zero9's playing levels against GNU Go 1 and 10


def pick_games(count: int, games_from: str = "runs") -> list:
    """``runs``: finished 9x9 games between real players (nets, GNU Go, Pachi: not the weak levels);
    ``levels``: the playing levels' games against GNU Go (a student's kind of game, resignations
    included), taken from each folder in turn."""
    from score_calibration import finished_games

    if games_from == "runs":
        games = finished_games([ROOT / "docs" / "runs"], 10_000)
        return [g for g in games if "/levels/" not in str(g[0])][:count]
    from zero9.games.sgf import read_sgf

    folders = [sorted(folder.glob("*.sgf")) for folder in sorted(ROOT.glob(LEVEL_GAMES))]
    picked = []
    for row in range(max(map(len, folders), default=0)):
        for files in folders:
            if row < len(files) and len(picked) < count:
                record = read_sgf(files[row])
                if record.game.size == 9 and record.game.komi == 7.5 and len(record.moves) >= 20:
                    picked.append((files[row], record))
    return picked


def _review_one(job: tuple[int, str, int, str, str]) -> list[dict]:
    g, sgf, visits, device, net_path = job
    from zero9.arena.review import review_game
    from zero9.games.sgf import read_sgf
    from zero9.nn.checkpoint import load_net

    net, _ = load_net(net_path, device=device)
    moves = review_game(read_sgf(sgf), net, visits, seed=g).moves
    print(f"zero9: game {g} reviewed", file=sys.stderr)
    return moves


def zero9_losses(games: list, visits: int, device: str, jobs: int = 1,
                 net: str = SHIPPED_NET) -> list[list[dict]]:
    """zero9's review of each game (seed = the game's index); ``jobs`` processes, GPUs taken in turn."""
    import multiprocessing

    gpus = 0
    if device == "cuda":
        import torch

        gpus = torch.cuda.device_count()
    work = [(g, str(sgf), visits, f"cuda:{g % gpus}" if gpus else device, net)
            for g, (sgf, _) in enumerate(games)]
    if jobs <= 1:
        return [_review_one(job) for job in work]
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        return pool.map(_review_one, work)


def compare(games: list, zero9: list[list[dict]], kata: list[list[float]], katago_threshold: float,
            flagged_from: str, decided: float | None = None) -> dict:
    """The figures; ``decided`` re-judges reviews saved before the review's decided-game rule
    (``ReviewConfig.decided``) as if it had been on."""
    from zero9.arena.review import Thresholds, stays_decided

    names = Thresholds.for_game("go").names
    worse = set(names[: names.index(flagged_from) + 1])
    rows = []
    for (sgf, _), moves, losses in zip(games, zero9, kata, strict=True):
        for m, k in zip(moves, losses, strict=True):
            if m["class"] != "forced":
                kept = decided is not None and stays_decided(m["winrate_before"], m["winrate_after"], decided)
                rows.append({"game": str(Path(sgf).relative_to(ROOT)), "move": m["move_number"],
                             "zero9": m["points_lost"], "zero9_class": "good" if kept else m["class"],
                             "katago": round(k, 2)})
    flagged = np.array([r["zero9_class"] in worse for r in rows])
    losing = np.array([r["katago"] >= katago_threshold for r in rows])
    tp = int((flagged & losing).sum())
    z = np.array([r["zero9"] for r in rows])
    k = np.array([r["katago"] for r in rows])
    rank = float(np.corrcoef(np.argsort(np.argsort(z)), np.argsort(np.argsort(k)))[0, 1])
    fine = int((flagged & (k < 0.5)).sum())
    return {"moves": len(rows), "games": len(games), "katago_losing": int(losing.sum()), "fine_flagged": fine,
            "zero9_flagged": int(flagged.sum()), "both": tp,
            "precision": tp / max(int(flagged.sum()), 1), "recall": tp / max(int(losing.sum()), 1),
            "rank_correlation": rank, "rows": rows}


def _text(path: str) -> str:
    """A file's text, gunzipped when gzip'd (KataGo's replies to a few dozen games: tens of MB)."""
    return read_text_file(path, 1 << 30, 1 << 30, "saved analysis")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("zero9", "queries", "katago", "compare"),
                        help="zero9: review the games; queries: KataGo's queries (JSON lines, for a machine "
                             "without Python); katago: run it here; compare: the figures")
    parser.add_argument("--katago", help="the katago binary (step katago)")
    parser.add_argument("--model", help="KataGo's model (step katago)")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--games-from", choices=("runs", "levels"), default="runs",
                        help="runs: finished games between nets, GNU Go and Pachi in docs/runs; levels: "
                             "the playing levels' games against GNU Go (docs/runs/levels)")
    parser.add_argument("--katago-visits", type=int, default=400)
    parser.add_argument("--katago-threshold", type=float, default=3.0)
    parser.add_argument("--visits", type=int, default=200)
    parser.add_argument("--net", default=SHIPPED_NET,
                        help="zero9: the net that reviews (default the shipped one)")
    parser.add_argument("--flagged", default="inaccuracy", help="the mildest class that counts as flagged")
    parser.add_argument("--decided", type=float, default=None,
                        help="compare: reviews saved before the decided-game rule, judged with it at this "
                             "winrate (ReviewConfig.decided)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--jobs", type=int, default=1, help="zero9: games reviewed at once (processes)")
    parser.add_argument("--zero9-json", default="zero9-losses.json")
    parser.add_argument("--queries", default="katago-queries.jsonl")
    parser.add_argument("--replies", default="katago-replies.jsonl", help="KataGo's analysis output")
    parser.add_argument("--out", default=None, help="compare: every move's numbers here")
    parser.add_argument("--half", choices=("all", "even", "odd"), default="all",
                        help="compare: the games of even or odd index only (tune on one half, report "
                             "the other)")
    args = parser.parse_args()
    games = pick_games(args.games, args.games_from)
    if args.step == "zero9":
        losses = zero9_losses(games, args.visits, args.device, args.jobs, args.net)
        Path(args.zero9_json).write_text(json.dumps(losses) + "\n")
        return 0
    if args.step == "queries":
        Path(args.queries).write_text(katago_queries(games, args.katago_visits))
        return 0
    if args.step == "katago":
        queries = katago_queries(games, args.katago_visits)
        Path(args.replies).write_text(run_katago(args.katago, args.model, queries))
        return 0
    kata = katago_losses(games, _text(args.replies))
    zero9 = json.loads(_text(args.zero9_json))
    keep = [g for g in range(len(games)) if args.half == "all" or g % 2 == (args.half == "odd")]
    result = compare([games[g] for g in keep], [zero9[g] for g in keep], [kata[g] for g in keep],
                     args.katago_threshold, args.flagged, args.decided)
    print(f"{result['moves']} moves of {result['games']} games; KataGo ({args.katago_visits} visits) says "
          f"{result['katago_losing']} lose >= {args.katago_threshold:g} points; zero9 ({args.visits} visits) "
          f"flags {result['zero9_flagged']} ({args.flagged} or worse), {result['both']} of them among "
          f"KataGo's: precision {result['precision']:.2f}, recall {result['recall']:.2f}, "
          f"{result['fine_flagged']} of the flags on moves it says lose under 0.5 points; rank "
          f"correlation of the two losses {result['rank_correlation']:.2f}")
    if args.out:
        Path(args.out).write_text(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
