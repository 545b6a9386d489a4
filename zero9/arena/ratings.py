"""``zero9 ratings DIR``: maximum-likelihood Elo ratings over every game in a folder.

Vocabulary:

- **game**: an SGF file anywhere under DIR with the players' names (``PB``, ``PW``) and
  a result (``RE``: ``B+...``, ``W+...``, ``0``/``Draw``). Files without a result
  (unfinished games) or that cannot be parsed are skipped and counted.
- **player**: a name as written in PB/PW, so ``zero9 match`` SGFs, self-play and
  GNU Go's own SGFs all mix.
- **rating**: :func:`zero9.arena.elo.bayeselo`'s Bradley-Terry fit with 95% intervals;
  ``random`` is pinned at 0 Elo (Leela Zero's convention) when it played, otherwise
  the ``--anchor`` player is.
- **chart**: a horizontal bar chart (PNG) of the ratings with their intervals.

The command line (``zero9 ratings``) is :mod:`zero9.cli.ratings`.
"""

from __future__ import annotations

from pathlib import Path

from zero9.arena.elo import bayeselo
from zero9.games.sgf import read_sgf


def result_score(result: str) -> float | None:
    """Black's score from an SGF RE value: 1, 0.5, 0, or None when there is no result."""
    text = result.strip().upper()
    if text.startswith("B+"):
        return 1.0
    if text.startswith("W+"):
        return 0.0
    if text in ("0", "DRAW", "JIGO") or text.startswith("0"):
        return 0.5
    return None


def read_games(folder: str | Path) -> tuple[list[tuple[str, str, float]], list[str]]:
    """(games as (black, white, black's score), skipped files with the reason) under ``folder``."""

    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder")
    games, skipped = [], []
    for path in sorted(folder.rglob("*.sgf")):
        try:
            record = read_sgf(path)
        except ValueError as e:
            skipped.append(f"{path}: unreadable ({e})")
            continue
        black, white = record.black, record.white
        score = result_score(record.result)
        if not black or not white or score is None:
            skipped.append(f"{path}: no players or no result")
        elif black == white:
            skipped.append(f"{path}: {black} played itself")
        else:
            games.append((black, white, score))
    return games, skipped


def rate_folder(folder: str | Path, anchor: str = "random", anchor_elo: float = 0.0
                ) -> tuple[dict[str, tuple[float, float, float]], list[tuple[str, str, float]], list[str]]:
    """(ratings, games, skipped) for all SGFs under ``folder``."""
    games, skipped = read_games(folder)
    if not games:
        raise ValueError(f"no rated games under {folder} ({len(skipped)} files skipped)")
    return bayeselo(games, anchor=anchor, anchor_elo=anchor_elo), games, skipped


def format_table(ratings: dict[str, tuple[float, float, float]], games: list[tuple[str, str, float]]) -> str:
    played = {name: 0 for name in ratings}
    for a, b, _ in games:
        played[a] += 1
        played[b] += 1
    width = max(len(n) for n in ratings)
    lines = [f"{'player':<{width}}  {'Elo':>6}  {'95% interval':>16}  games"]
    for name, (elo, lo, hi) in sorted(ratings.items(), key=lambda kv: -kv[1][0]):
        lines.append(f"{name:<{width}}  {elo:>6.0f}  [{lo:>6.0f}, {hi:>6.0f}]  {played[name]:>5}")
    return "\n".join(lines)


def plot_ratings(ratings: dict[str, tuple[float, float, float]], path: str | Path, title: str = "") -> Path:
    """A bar chart PNG of the ratings with their 95% intervals, strongest on top."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    items = sorted(ratings.items(), key=lambda kv: kv[1][0])
    names = [n for n, _ in items]
    elos = [r[0] for _, r in items]
    errors = [[r[0] - r[1] for _, r in items], [r[2] - r[0] for _, r in items]]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(items) + 1.5))
    ax.barh(names, elos, xerr=errors, color="#4a7fb5", ecolor="black", capsize=3)
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("Elo (random = 0)")
    ax.set_title(title or "zero9 ratings (95% intervals)")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path

