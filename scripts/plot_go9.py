"""Plot a Go autotrain run's learning curve for the docs: Elo against H100-minutes and self-play
games (the run's own per-round ratings, GNU Go level 1 as the dotted line), and the win rate of
the kept nets against GNU Go level 10 in the 100-game matches.

    python3 scripts/plot_go9.py docs/runs/go9-h100-59min \
        --match "docs/runs/go9-h100-38min/eval30.log" --match ... --out docs/images/go9-curve.png

Each ``--match`` is a ``zero9 match`` log; the JSON file beside it (same name, ``.json``) says
where it goes: {"minutes": M, "label": L}.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from plot_ab import win_rate  # scripts/ is on the path when this runs as a script


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="run directory (ratings/, logs/)")
    parser.add_argument("--match", type=Path, action="append", default=[],
                        help="a match log with a LOG.json beside it giving minutes and label")
    parser.add_argument("--out", type=Path, default=Path("docs/images/go9-curve.png"))
    args = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratings = json.loads((args.run / "ratings" / "ratings.json").read_text())
    selfplay = [json.loads(line) for line in (args.run / "logs" / "selfplay.jsonl").read_text().splitlines()]
    games_before = {}  # self-play games played before generation g's net existed
    total = 0
    for row in sorted(selfplay, key=lambda r: r["generation"]):
        total += row["games"]
        games_before[row["generation"] + 1] = total
    gens = ratings["generations"]
    minutes = [g["wall_seconds"] / 60 for g in gens]
    games = [games_before.get(g["generation"], float("nan")) for g in gens]
    elo = [g["elo"] for g in gens]
    err = [[g["elo"] - g["lo"] for g in gens], [g["hi"] - g["elo"] for g in gens]]

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
    panels = ((axes[0], minutes, "H100-minutes of autotrain"), (axes[1], games, "self-play games"))
    for ax, x, label in panels:
        ax.errorbar(x, elo, yerr=err, fmt="o-", capsize=2, ms=3)
        ax.set_xlabel(label)
        ax.set_ylabel("Elo (random = 0; 4-game ratings each round)")
        for name, value in ratings.get("anchors", {}).items():
            ax.axhline(value, ls=":", color="grey")
            ax.annotate(name, (0.01, value), xycoords=("axes fraction", "data"), fontsize=8, color="grey",
                        va="bottom")
        ax.grid(alpha=0.3)
    axes[0].set_title("strength over time")
    axes[1].set_title("strength over self-play games")

    ax = axes[2]
    seen: dict[float, int] = {}  # matches of the same minute side by side, not on top of each other
    for log in args.match:
        info = json.loads(log.with_suffix(".json").read_text())
        rate, lo, hi = win_rate(log)
        shift = 0.9 * seen.get(info["minutes"], 0)
        seen[info["minutes"]] = seen.get(info["minutes"], 0) + 1
        ax.errorbar([info["minutes"] + shift], [rate], yerr=[[rate - lo], [hi - rate]], fmt="o", capsize=4,
                    label=info["label"])
    ax.axhline(50, ls="--", color="tab:red", lw=1)
    ax.axhline(90, ls="--", color="tab:red", lw=1)
    ax.axvline(30, ls=":", color="tab:red", lw=1)
    ax.axvline(60, ls=":", color="tab:red", lw=1)
    ax.set_xlim(0, 64)
    ax.set_ylim(0, 100)
    ax.set_xlabel("H100-minutes of autotrain from zero")
    ax.set_ylabel("% wins vs GNU Go level 10 (95% interval)")
    ax.set_title("vs GNU Go 3.8 level 10 at 400 visits, 100 games each\n"
                 "(dashed: the bars, 50% by 30 min, 90% by 60)")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=90)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
