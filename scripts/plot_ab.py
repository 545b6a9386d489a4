"""Plot the A/B runs at equal compute (docs/runs/ab/, made by scripts/device/ab_runs.sh).

    python3 scripts/plot_ab.py [docs/runs/ab] [docs/images/ab-gomoku9.png]

Reads the match logs (the last lines `zero9 match` prints) and each arm's
ratings.json; draws three panels: win rate of each Gomoku arm against the PUCT-160
baseline, win rate against pure MCTS with 1000 playouts (95% intervals from the
logs), and each arm's Elo over wall time (random = 0, 4-game rating matches).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ARMS = {"gm-puct160": "PUCT 160", "gm-puct32": "PUCT 32", "gm-gumbel32": "Gumbel 32",
        "gm-pcr": "PCR 160/32"}
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


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
