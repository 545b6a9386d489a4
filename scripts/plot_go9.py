"""Plot a Go autotrain run's learning curve for the docs: Elo against H100-minutes and self-play
games (the runs' own ratings, the anchors as dotted lines), and win rates in a third panel: the
``zero9 match`` logs given with ``--match``, and with ``--versus ANCHOR`` each rated net's score
against that anchor in its rating games.

    python3 scripts/plot_go9.py docs/runs/go9-h100-59min \
        --match "docs/runs/go9-h100-38min/eval30.log" --match ... --out docs/images/go9-curve.png
    python3 scripts/plot_go9.py docs/runs/go9-h100-59min docs/runs/go9-pachi/leg2+58.9 \
        --versus pachi:1000 --match LOG --rates-title "..." --bars 90 --out docs/images/go9-pachi-curve.png

A run is a run directory, with ``+MINUTES`` when its clock started after that many H100-minutes
(a run that continues another run's net). Each ``--match`` is a ``zero9 match`` log; the JSON file
beside it (same name, ``.json``) says where it goes: {"minutes": M, "label": L}.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from plot_ab import win_rate  # scripts/ is on the path when this runs as a script

from zero9.arena.elo import win_rate_interval


def read_run(spec: str, relative_to: str | None = None) -> dict:
    """A run's rated generations as columns: minutes from zero, games before, Elo and its interval.

    ``relative_to``: an anchor both runs share, whose rating becomes 0 (runs rated against different
    opponents, or at other visits, put the same anchor at different Elo: random = 0 is not common ground).
    """
    path, _, offset = spec.partition("+")
    run = Path(path)
    ratings = json.loads((run / "ratings" / "ratings.json").read_text())
    selfplay = [json.loads(line) for line in (run / "logs" / "selfplay.jsonl").read_text().splitlines()]
    games_before = {}  # self-play games played before generation g's net existed
    total = 0
    for row in sorted(selfplay, key=lambda r: r["generation"]):
        total += row["games"]
        games_before[row["generation"] + 1] = total
    anchors = ratings.get("anchors", {})
    shift = 0.0
    if relative_to:
        if relative_to not in anchors:
            raise SystemExit(f"{run}: no anchor {relative_to!r} in its ratings (it has {', '.join(anchors)})")
        shift = anchors[relative_to]
    gens = [dict(g, elo=g["elo"] - shift, lo=g["lo"] - shift, hi=g["hi"] - shift)
            for g in ratings["generations"]]
    rating_games = [json.loads(line) for line in (run / "ratings" / "games.jsonl").read_text().splitlines()]
    return {"label": run.name if not offset else f"{run.parent.name}/{run.name}",
            "offset": float(offset or 0), "anchors": {k: v - shift for k, v in anchors.items()}, "gens": gens,
            "minutes": [float(offset or 0) + g["wall_seconds"] / 60 for g in gens],
            "games": [games_before.get(g["generation"], float("nan")) for g in gens],
            "rating_games": rating_games}


def score_against(run: dict, anchor: str) -> list[tuple[float, float, float, float, int]]:
    """(minutes, rate, low, high, games) of each rated net against ``anchor`` in its rating games."""
    points = []
    for gen, minutes in zip(run["gens"], run["minutes"], strict=True):
        scores = [r["score"] for r in run["rating_games"] if r["a"] == gen["name"] and r["b"] == anchor]
        if scores:
            wins = sum(s == 1 for s in scores)
            draws = sum(s == 0.5 for s in scores)
            rate, lo, hi = win_rate_interval(wins, len(scores) - wins - draws, draws)
            points.append((minutes, 100 * rate, 100 * lo, 100 * hi, len(scores)))
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run directories (ratings/, logs/), each DIR or DIR+MINUTES")
    parser.add_argument("--match", type=Path, action="append", default=[],
                        help="a match log with a LOG.json beside it giving minutes and label")
    parser.add_argument("--relative-to", metavar="ANCHOR",
                        help="put every run's Elo relative to this anchor (default: random = 0)")
    parser.add_argument("--versus", help="also plot each rated net's score against this rating anchor")
    parser.add_argument("--rates-title", default="vs GNU Go 3.8 level 10 at 400 visits, 100 games each\n"
                        "(dashed: the bars, 50% by 30 min, 90% by 60)", help="the third panel's title")
    parser.add_argument("--rates-label", default="% wins vs GNU Go level 10 (95% interval)")
    parser.add_argument("--bars", default="50,90", help="win rates drawn dashed in the third panel")
    parser.add_argument("--deadlines", default="30,60", help="minutes drawn dotted in the third panel")
    parser.add_argument("--xmin", type=float, default=0, help="the third panel's first minute")
    parser.add_argument("--xmax", type=float, default=64, help="the third panel's last minute")
    parser.add_argument("--legend", default="lower right", help="where the third panel's legend goes")
    parser.add_argument("--out", type=Path, default=Path("docs/images/go9-curve.png"))
    args = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [read_run(spec, args.relative_to) for spec in args.runs]
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
    for ax, key, label in ((axes[0], "minutes", "H100-minutes of autotrain from zero"),
                           (axes[1], "games", "self-play games")):
        for run in runs:
            elo = [g["elo"] for g in run["gens"]]
            err = [[g["elo"] - g["lo"] for g in run["gens"]], [g["hi"] - g["elo"] for g in run["gens"]]]
            line = ax.errorbar(run[key], elo, yerr=err, fmt="o-", capsize=2, ms=3,
                               label=run["label"] if len(runs) > 1 else None)
            colour = line.lines[0].get_color() if len(runs) > 1 else "grey"
            for name, value in run["anchors"].items():  # each run's anchors in its colour
                ax.axhline(value, ls=":", color=colour, lw=0.8)
                ax.annotate(name, (0.01, value), xycoords=("axes fraction", "data"), fontsize=8, color=colour,
                            va="bottom")
        ax.set_xlabel(label)
        ax.set_ylabel(f"Elo ({args.relative_to or 'random'} = 0; each run's rating games)")
        ax.grid(alpha=0.3)
        if len(runs) > 1:
            ax.legend(fontsize=7, loc="lower right")
    axes[0].set_title("strength over time")
    axes[1].set_title("strength over self-play games (each run counts its own)")

    ax = axes[2]
    if args.versus:
        for run in runs:
            points = score_against(run, args.versus)
            if points:
                x, rate, lo, hi, n = zip(*points, strict=True)
                ax.errorbar(x, rate, yerr=[[r - low for r, low in zip(rate, lo, strict=True)],
                                           [high - r for r, high in zip(rate, hi, strict=True)]],
                            fmt="s", ms=3, capsize=2, alpha=0.5, color="tab:grey",
                            label=f"vs {args.versus} in the rating games ({n[0]} each)")
    seen: dict[float, int] = {}  # matches of the same minute side by side, not on top of each other
    for log in args.match:
        info = json.loads(log.with_suffix(".json").read_text())
        rate, lo, hi = win_rate(log)
        shift = 0.9 * seen.get(info["minutes"], 0)
        seen[info["minutes"]] = seen.get(info["minutes"], 0) + 1
        ax.errorbar([info["minutes"] + shift], [rate], yerr=[[rate - lo], [hi - rate]], fmt="o", capsize=4,
                    label=info["label"])
    for bar in filter(None, args.bars.split(",")):
        ax.axhline(float(bar), ls="--", color="tab:red", lw=1)
    for minute in filter(None, args.deadlines.split(",")):
        ax.axvline(float(minute), ls=":", color="tab:red", lw=1)
    ax.set_xlim(args.xmin, args.xmax)
    ax.set_ylim(0, 100)
    ax.set_xlabel("H100-minutes of autotrain from zero")
    ax.set_ylabel(args.rates_label)
    ax.set_title(args.rates_title)
    ax.legend(fontsize=7, loc=args.legend)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=90)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
