"""Plot the A/B runs at equal compute.

    python3 scripts/plot_ab.py [docs/runs/ab] [docs/images/ab-gomoku9.png]
    python3 scripts/plot_ab.py --x4 [docs/runs/x4] [docs/images/ab-x4.png]

The first (docs/runs/ab/, made by scripts/device/ab_runs.sh): three panels, win rate
of each 9x9 Gomoku arm against the PUCT-160 baseline, win rate against pure MCTS
with 1000 playouts (95% intervals from the logs), and each arm's Elo over wall time
(random = 0, 4-game rating matches).

The second (docs/runs/x4/, made by scripts/device/ab_x4.sh; the 15x15 transfer
run's continuation in docs/runs/gomoku15/): Gomoku 15x15 from the 9x9 net's tower
vs from zero, and 9x9 Go with vs without the ownership head; per A/B the decisive
matches and each arm's Elo over wall time relative to its outside anchor.
Both read the match logs (the last lines `zero9 match` prints) and each arm's ratings.json.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ARMS = {"gm-puct160": "PUCT 160", "gm-puct32": "PUCT 32", "gm-gumbel32": "Gumbel 32", "gm-pcr": "PCR 160/32"}
RESULT = re.compile(r"win rate ([\d.]+)% \[([\d.]+)%, ([\d.]+)%\]")


def win_rate(log: Path) -> tuple[float, float, float]:
    """(rate, low, high) in percent, from the summary `zero9 match` prints at the end."""
    found = RESULT.findall(log.read_text())
    if not found:
        raise ValueError(f"{log}: no 'win rate' summary (did the match finish?)")
    return tuple(float(x) for x in found[-1])


def main(argv: list[str]) -> int:
    root = Path(argv[0] if argv else "docs/runs/ab")
    out = Path(argv[1] if len(argv) > 1 else "docs/images/ab-gomoku9.png")
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))

    # 1. head to head against the baseline, both at 200 visits (the log is baseline's view)
    names, rates, errs = ["PUCT 160"], [50.0], [[0.0], [0.0]]
    for arm in ("gm-puct32", "gm-gumbel32", "gm-pcr"):
        rate, lo, hi = win_rate(root / f"h2h-puct160-vs-{arm}.log")
        rate, lo, hi = 100 - rate, 100 - hi, 100 - lo
        names.append(ARMS[arm])
        rates.append(rate)
        errs[0].append(rate - lo)
        errs[1].append(hi - rate)
    axes[0].bar(names, rates, yerr=errs, capsize=4, color="tab:blue")
    axes[0].axhline(50, color="grey", lw=0.8, ls=":")
    axes[0].set_ylabel("win rate vs PUCT 160 (%)")
    axes[0].set_title("head to head, 40 games at 200 visits")

    # 2. against the pure-MCTS yardstick
    names, rates, errs = [], [], [[], []]
    for arm, label in ARMS.items():
        rate, lo, hi = win_rate(root / f"{arm}-vs-mcts1000.log")
        names.append(label)
        rates.append(rate)
        errs[0].append(rate - lo)
        errs[1].append(hi - rate)
    axes[1].bar(names, rates, yerr=errs, capsize=4, color="tab:green")
    axes[1].set_ylim(0, 100)
    axes[1].set_ylabel("win rate vs mcts:1000 (%)")
    axes[1].set_title("vs pure MCTS 1000 playouts, 20 games")

    # 3. Elo over time as each run rated itself
    for arm, label in ARMS.items():
        gens = json.loads((root / arm / "ratings.json").read_text())["generations"]
        minutes = [g["wall_seconds"] / 60 for g in gens]
        axes[2].plot(minutes, [g["elo"] for g in gens], marker=".", label=label)
    axes[2].set_xlabel("wall-clock minutes (3 self-play workers each, one shared GPU)")
    axes[2].set_ylabel("Elo (random = 0)")
    axes[2].set_title("self-rating during the run (4-game matches)")
    axes[2].legend()
    fig.suptitle("9x9 Gomoku from zero, 8 minutes each at equal compute (H200 machine, 16 cores)")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    print(f"wrote {out}")
    return 0


def elo_over_time(ax, ratings: Path, anchor: str, label: str) -> None:
    """One arm's generations: Elo relative to ``anchor`` (0 = as strong as it) over wall-clock minutes."""
    data = json.loads(ratings.read_text())
    base = data["anchors"][anchor]
    gens = data["generations"]
    ax.plot([g["wall_seconds"] / 60 for g in gens], [g["elo"] - base for g in gens], marker=".", label=label)


def bars(ax, logs: list[tuple[str, Path]], title: str) -> None:
    """Win rates with their 95% intervals, one bar per (label, match log)."""
    names, rates, errs = [], [], [[], []]
    for label, log in logs:
        rate, lo, hi = win_rate(log)
        names.append(label)
        rates.append(rate)
        errs[0].append(rate - lo)
        errs[1].append(hi - rate)
    ax.bar(names, rates, yerr=errs, capsize=4, color=["tab:blue", "tab:green", "tab:orange"][: len(names)])
    ax.axhline(50, color="grey", lw=0.8, ls=":")
    ax.set_ylim(0, 100)
    ax.set_ylabel("win rate (%)")
    ax.set_title(title, fontsize=10)


def main_x4(argv: list[str]) -> int:
    root = Path(argv[0] if argv else "docs/runs/x4")
    out = Path(argv[1] if len(argv) > 1 else "docs/images/ab-x4.png")
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    bars(
        axes[0, 0],
        [
            ("transfer vs zero\n(40, @200)", root / "h2h-gm15-transfer-vs-zero.log"),
            ("transfer vs\ngomokubench:hard", root / "gm15-transfer-vs-gomokubench-hard.log"),
            ("zero vs\ngomokubench:hard", root / "gm15-zero-vs-gomokubench-hard.log"),
        ],
        "Gomoku 15x15 after 11.4 min each (@400 unless said)",
    )
    continued = root.parent / "gomoku15" / "ratings.json"
    elo_over_time(
        axes[0, 1],
        continued if continued.exists() else root / "gm15-transfer" / "ratings.json",
        "gomokubench:easy",
        "from the 9x9 net (then continued)",
    )
    elo_over_time(axes[0, 1], root / "gm15-zero" / "ratings.json", "gomokubench:easy", "from zero")
    axes[0, 1].set_ylabel("Elo relative to gomokubench:easy")
    axes[0, 1].set_title("Gomoku 15x15: self-rating during the runs", fontsize=10)
    bars(
        axes[1, 0],
        [
            ("ownership vs plain\n(40, @100)", root / "h2h-go-ownership-vs-plain.log"),
            ("ownership vs\ngnugo:1 (20)", root / "go-ownership-vs-gnugo1.log"),
            ("plain vs\ngnugo:1 (20)", root / "go-plain-vs-gnugo1.log"),
        ],
        "9x9 Go (Gumbel 32) after 11.7-11.9 min each (@100)",
    )
    elo_over_time(axes[1, 1], root / "go-ownership" / "ratings.json", "gnugo:1", "ownership head")
    elo_over_time(axes[1, 1], root / "go-plain" / "ratings.json", "gnugo:1", "plain")
    axes[1, 1].set_ylabel("Elo relative to GNU Go level 1")
    axes[1, 1].set_title("9x9 Go: self-rating during the runs", fontsize=10)
    for ax in axes[:, 1]:
        ax.axhline(0, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("wall-clock minutes (one H200 + 16 cores per arm)")
        ax.legend()
    fig.suptitle("A/B at equal compute: 4 runs at once on a 4-GPU machine, one GPU + 16 cores each")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    raise SystemExit(main_x4(args[1:]) if args[:1] == ["--x4"] else main(args))
