"""``zero9 plot RUN_DIR``: pictures of a run's progress, saved as PNGs in ``RUN_DIR/plots``.

Vocabulary (the logs are described in ``docs/run-directory.md``):

- **global step**: training steps summed over generations, the x axis of the loss plot.
- **wall time**: the run's accumulated wall time (``wall_seconds`` in its logs,
  summed across restarts), the x axis of "Elo over time": in minutes for a run under two
  hours (a GPU run of 20 minutes), else in hours.
- **false resignation**: in the share of self-play games where resigning was
  disabled, a game in which the eventual winner's value once fell below the
  resign threshold, i.e. a game it would have resigned and lost wrongly.

matplotlib is imported here only, and only when plotting, so the self-play and
training machines never need it. The command line (``zero9 plot``) is :mod:`zero9.cli.plot`.
"""

from __future__ import annotations

import io
from pathlib import Path

from zero9.learn.rundir import RunDir
from zero9.util.files import atomic_write_bytes, read_json, read_jsonl


def plot_run(run_dir: RunDir, out_dir: str | Path | None = None) -> list[Path]:
    """Draw every plot there is data for; returns the PNG paths written."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed: files only
    out = Path(out_dir) if out_dir else run_dir.plots_dir
    out.mkdir(parents=True, exist_ok=True)
    figures = {"losses.png": losses_figure(read_jsonl(run_dir.train_log)),
               "elo.png": elo_figure(read_json(run_dir.ratings_path, default=None)),
               "selfplay.png": selfplay_figure(read_jsonl(run_dir.selfplay_log))}
    return [_save(fig, out / name) for name, fig in figures.items() if fig is not None]


def _dedup_train_rows(rows: list[dict]) -> list[dict]:
    # A resumed training replays steps after its last saved state; keep the newest row per key.
    keyed = {}
    for r in rows:
        keyed[(r.get("kind"), r.get("generation"), r.get("step"))] = r
    return sorted(keyed.values(), key=lambda r: (r.get("global_step", 0), r.get("kind", "")))


# (row key, title, y axis label, scale): one axis each, since the policy loss (~4) and the value
# loss (~0.5) on one axis would flatten the value loss to a line at the bottom
LOSS_PANELS = (("policy_loss", "policy loss", "cross-entropy (nats)", 1.0),
               ("value_loss", "value loss", "mean squared error", 1.0),
               ("total", "total loss (policy + value + L2)", "loss", 1.0),
               ("accuracy", "policy top-1 accuracy", "accuracy (%)", 100.0))


def losses_figure(rows: list[dict]):
    """The train and test losses of a run's train log, each on its own axis; None without rows."""
    import matplotlib.pyplot as plt

    rows = _dedup_train_rows(rows)
    if not rows:
        return None
    fig, axes = plt.subplots(1, len(LOSS_PANELS), figsize=(18, 4))
    for ax, (key, title, ylabel, scale) in zip(axes, LOSS_PANELS, strict=True):
        for kind, style in (("train", "-"), ("test", "o-")):
            part = [r for r in rows if r.get("kind") == kind and key in r]
            if part:
                ax.plot([r["global_step"] for r in part], [scale * r[key] for r in part], style, label=kind,
                        ms=3)
        ax.set_title(title)
        ax.set_xlabel("training step (all generations)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend()
    return fig


def elo_figure(ratings: dict | None):
    """Each generation's Elo over wall time and over self-play games; None before any rating."""
    import matplotlib.pyplot as plt

    gens = (ratings or {}).get("generations", [])
    if not gens:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    elo = [g["elo"] for g in gens]
    err = [[g["elo"] - g["lo"] for g in gens], [g["hi"] - g["elo"] for g in gens]]
    seconds = [g.get("wall_seconds", 0) for g in gens]
    unit, per = ("minutes", 60) if max(seconds) < 2 * 3600 else ("hours", 3600)  # a 20-minute run in minutes
    games = [g.get("games", 0) for g in gens]
    axes[0].errorbar([s / per for s in seconds], elo, yerr=err, fmt="o-", capsize=3)
    axes[0].set_xlabel(f"wall time ({unit})")
    axes[1].errorbar(games, elo, yerr=err, fmt="o-", capsize=3)
    axes[1].set_xlabel("self-play games")
    anchors = (ratings or {}).get("anchors", {})
    for ax in axes:
        ax.set_ylabel("Elo (random = 0), 95% interval")
        ax.grid(alpha=0.3)
        for k, (name, value) in enumerate(sorted(anchors.items(), key=lambda a: a[1])):
            ax.axhline(value, ls=":", color="grey")
            # x in axes fraction, y in data: the label stays inside the plot whatever the x range;
            # staggered, so anchors of about one strength (GNU Go 1 and 10) stay readable
            ax.annotate(name, (0.01 + 0.13 * (k % 3), value), xycoords=("axes fraction", "data"), fontsize=8,
                        color="grey", va="bottom")
    axes[0].set_title("strength over wall time")
    axes[1].set_title("strength over self-play games")
    return fig


def selfplay_figure(rows: list[dict]):
    """Self-play speed, game length and false resignations per generation; None without rows."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    if not rows:
        return None
    gens = [r["generation"] for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    axes[0].plot(gens, [r.get("evals_per_s", 0) for r in rows], "o-", label="net evaluations/s")
    axes[0].plot(gens, [r.get("moves_per_s", 0) for r in rows], "o-", label="moves/s")
    axes[0].set_yscale("log")
    axes[0].set_title("self-play speed")
    axes[0].set_ylabel("per second (log scale)")
    axes[0].legend()
    axes[1].plot(gens, [r.get("mean_length", 0) for r in rows], "o-")
    axes[1].set_title("mean game length")
    axes[1].set_ylabel("moves")
    rate = [
        100 * r["false_resigns"] / r["no_resign_games"] if r.get("no_resign_games") else float("nan")
        for r in rows
    ]
    axes[2].plot(gens, rate, "o-")
    axes[2].set_title("false resignations")
    axes[2].set_ylabel("% of the games played without resigning")
    for ax in axes:
        ax.set_xlabel("generation")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # no generation 0.5
        ax.grid(alpha=0.3)
    return fig


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=90, format=path.suffix.lstrip(".") or "png")
    plt.close(fig)
    atomic_write_bytes(path, buffer.getvalue())  # a reader never sees half a picture
    return path
