"""Plot issue 26's curve: 15x15 Gomoku win rate against Rapfi (10,000 nodes a move) over the GPU
minutes that trained each net, from zero: PUCT alone, with threat search reading fours (VCF), and
reading threes too (VCT).

    python3 scripts/plot_gomoku15_rapfi.py docs/runs/gomoku15-rapfi --out docs/images/gomoku15-rapfi.png

Reads the ``zero9 match`` logs named in POINTS (their closing win-rate line); the minutes
are those of docs/runs/gomoku15-rapfi/README.md (9.3 for the 9x9 tower, 19.7 for the shipped
net, 15.5 for the second leg, 12.2 for the third).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from plot_ab import win_rate  # scripts/ is on the path when this runs as a script

POINTS = [  # (log file, GPU minutes from zero, threat search: None, "vcf" or "vct")
    ("shipped_vs_rapfi10k.log", 29.0, None),
    ("final_vs_rapfi10k.log", 44.5, None),
    ("leg3_vs_rapfi10k.log", 56.7, None),
    ("shipped_threats_vs_rapfi10k.log", 29.0, "vcf"),
    ("final_threats_vs_rapfi10k.log", 44.5, "vcf"),
    ("leg3_threats_vs_rapfi10k.log", 56.7, "vcf"),
    ("leg3_vct_vs_rapfi10k.log", 56.7, "vct"),
]
SERIES = {None: ("tab:blue", -0.4, "PUCT alone"), "vcf": ("tab:orange", 0.0, "threat search, fours (VCF)"),
          "vct": ("tab:green", 0.4, "threat search, threes too (VCT)")}
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--out", type=Path, default=Path("docs/images/gomoku15-rapfi.png"))
    args = parser.parse_args()

    import matplotlib.pyplot as plt  # plot_ab chose the Agg backend

    fig, ax = plt.subplots(figsize=(6, 4))
    for reading, (colour, shift, label) in SERIES.items():
        xs, ys, lo, hi = [], [], [], []
        for name, minutes, read in POINTS:
            if read != reading:
                continue
            rate, low, high = win_rate(args.folder / name)  # percent
            xs.append(minutes + shift)
            ys.append(rate)
            lo.append(rate - low)
            hi.append(high - rate)
            print(f"{name}: {rate:.1f}% [{low:.1f}, {high:.1f}] at {minutes} GPU-min")
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt="o-", color=colour, capsize=4, label=label)
    ax.axhline(50, color="grey", linestyle=":", label="issue 26's bar")
    ax.set_xlabel("GPU minutes of training, from zero")
    ax.set_ylabel("win rate vs Rapfi 10k nodes (%), 120 games")
    ax.set_ylim(0, 60)
    ax.set_title("15x15 Gomoku, 400 visits")
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
