"""``zero9 plot`` on a real run's logs (docs/runs/gomoku9-h100-fast): every axis labelled, losses apart."""

import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from zero9.learn.loop.plot import elo_figure, losses_figure, selfplay_figure  # noqa: E402
from zero9.util.files import read_json, read_jsonl  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "docs" / "runs" / "gomoku9-h100-fast"


def figures():
    return {"losses": losses_figure(read_jsonl(RUN / "logs" / "train_log.jsonl")),
            "elo": elo_figure(read_json(RUN / "ratings" / "ratings.json", default=None)),
            "selfplay": selfplay_figure(read_jsonl(RUN / "logs" / "selfplay.jsonl"))}


def test_every_axis_of_every_plot_is_labelled():
    for name, fig in figures().items():
        assert fig is not None, f"{name}: nothing drawn from a real run's logs"
        for ax in fig.axes:
            assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title(), (name, ax.get_title())
        plt.close(fig)


def test_policy_and_value_losses_have_axes_of_their_own():
    fig = figures()["losses"]
    by_title = {ax.get_title(): ax for ax in fig.axes}
    policy, value = by_title["policy loss"], by_title["value loss"]
    assert policy is not value
    rows = [r for r in read_jsonl(RUN / "logs" / "train_log.jsonl") if r.get("kind") == "train"]
    # each axis spans its own loss, so the value loss (about a tenth of the policy loss here) is not
    # squashed at the bottom of the policy loss's scale
    assert policy.get_ylim()[0] <= min(r["policy_loss"] for r in rows) <= policy.get_ylim()[1]
    assert value.get_ylim()[1] < min(r["policy_loss"] for r in rows)
    plt.close("all")


def test_zero9_plot_writes_the_three_pictures(tmp_path):
    done = subprocess.run([sys.executable, "-m", "zero9", "plot", str(RUN), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elo.png", "losses.png", "selfplay.png"]
    assert done.stdout.split() == [str(tmp_path / n) for n in ("losses.png", "elo.png", "selfplay.png")]
