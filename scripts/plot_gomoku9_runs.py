"""Compare 9x9 Gomoku runs of the same recipe by what their self-play looked like: mean game
length and Black's share of the games, against self-play games played, one line per run, with
each run's final 100-game match against pure MCTS 5000 in the legend.

    python3 scripts/plot_gomoku9_runs.py "docs/runs/gomoku9=H200, 2nd session" \
        "docs/runs/gomoku9-h100=H100, 7th session" "docs/runs/gomoku9-h100-short=H100, 8th session" \
        --out docs/images/gomoku9-runs.png

Each run is DIR or DIR=NAME; a run directory holds selfplay.jsonl (directly or under logs/)
and eval_vs_mcts5000.log. Short games that Black wins are the phase where White has not yet
learned to defend; the runs differ mostly in when they leave it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from plot_ab import win_rate  # scripts/ is on the path when this runs as a script


def selfplay_rows(run: Path) -> list[dict]:
    for path in (run / "logs" / "selfplay.jsonl", run / "selfplay.jsonl"):
        if path.exists():
            rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            return sorted(rows, key=lambda r: r["generation"])
    raise FileNotFoundError(f"{run}: no selfplay.jsonl (looked in the run and its logs/)")


def label(run: Path, name: str) -> str:
    config = json.loads((run / "config.json").read_text())["last_command"]
    rounds = f"{config['games_per_gen']} games + {config['steps']} steps a round"
    rate, low, high = win_rate(run / "eval_vs_mcts5000.log")
    return f"{name}: {rounds}; first 100 games vs MCTS 5000: {rate:.1f}% [{low:.1f}, {high:.1f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run directories, each optionally =NAME for the legend")
    parser.add_argument("--out", type=Path, default=Path("docs/images/gomoku9-runs.png"))
    args = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (length_ax, black_ax) = plt.subplots(1, 2, figsize=(13, 4.6))
    for spec in args.runs:
        path, _, name = spec.partition("=")
        run = Path(path)
        rows = selfplay_rows(run)
        games, total = [], 0
        for row in rows:
            total += row["games"]
            games.append(total)
        length_ax.plot(games, [r["mean_length"] for r in rows], marker="o", ms=3,
                       label=label(run, name or run.name))
        black_ax.plot(games, [100 * r["wins"].get("B", 0) / r["games"] for r in rows], marker="o", ms=3)
    length_ax.set(xlabel="self-play games", ylabel="mean game length (moves)",
                  title="9x9 Gomoku self-play: game length")
    black_ax.set(xlabel="self-play games", ylabel="Black wins (% of self-play games)",
                 title="9x9 Gomoku self-play: Black's share")
    for ax in (length_ax, black_ax):
        ax.grid(alpha=0.3)
    fig.legend(loc="lower center", ncol=1, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
