"""KaTrain's own engine code (katrain.core.engine.KataGoEngine, katrain 1.20) drives ``zero9 analysis``
through a whole 9x9 game: its command line with only the program name changed, its queries, its parsing
of every answer into its game tree (score, points lost, ownership, candidate moves)."""

import os
import stat
import sys
import tempfile
import time

import pytest

katrain = pytest.importorskip("katrain", reason="katrain is in the test extra (pip install -e .[test])")
pytest.importorskip("kivy", reason="KaTrain's engine imports kivy (in the test extra)")

os.environ.setdefault("KIVY_HOME", tempfile.mkdtemp(prefix="zero9-kivy-"))  # kivy's logs: not in ~
os.environ.setdefault("KIVY_NO_ARGS", "1")
os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")

from katrain.core.constants import OUTPUT_ERROR, OUTPUT_KATAGO_STDERR  # noqa: E402
from katrain.core.engine import KataGoEngine  # noqa: E402
from katrain.core.game import KaTrainSGF  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
GAME = os.path.join(ROOT, "docs", "runs", "review-gnugo", "game-0000.sgf")


class KaTrainStandIn:
    """What KataGoEngine calls on KaTrain's app object: log lines and (error) popups."""

    def __init__(self):
        self.lines: list[tuple[int, str]] = []
        self.popups: list[tuple] = []

    def log(self, message, level=0):
        self.lines.append((level, str(message)))

    def __call__(self, *args, **kwargs):
        self.popups.append(args)


def zero9_as_katago(tmp_path) -> str:
    """An executable that runs ``zero9`` with the arguments KaTrain gives ``katago``."""
    exe = tmp_path / "zero9-katago"
    exe.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m zero9 \"$@\"\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


def test_katrain_analyses_a_whole_game_with_zero9(tmp_path):
    app = KaTrainStandIn()
    # KaTrain's own default engine settings (its config.json), with the program and visits changed.
    config = {"katago": zero9_as_katago(tmp_path), "model": "katrain/models/b10c384h6nbttflrs.bin.gz",
              "config": "katrain/KataGo/analysis_config.cfg", "max_visits": 24, "fast_visits": 8,
              "max_time": 60.0, "wide_root_noise": 0.04, "_enable_ownership": True, "allow_recovery": False}
    engine = KataGoEngine(app, config)
    try:
        root = KaTrainSGF.parse_file(GAME)
        nodes = root.nodes_in_tree
        assert len(nodes) > 60
        for node in nodes:
            node.analyze(engine)
        deadline = time.monotonic() + 240
        while not engine.is_idle() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert engine.is_idle(), f"{engine.queries_remaining()} queries left"
    finally:
        engine.shutdown(finish=False)
    errors = [line for level, line in app.lines if level == OUTPUT_ERROR]
    stderr = [line for level, line in app.lines if level == OUTPUT_KATAGO_STDERR]
    assert any("not a zero9 net" in line and "shipped" in line for line in stderr)  # KaTrain's KataGo net
    assert not errors and not app.popups, (errors, app.popups)
    for node in nodes:
        assert node.analysis_complete, node
        assert node.score is not None and abs(node.score) < 81
        assert len(node.ownership) == 81 and len(node.policy) == 82
        candidates = node.candidate_moves
        assert candidates and candidates[0]["order"] == 0 and "pointsLost" in candidates[0]
    lost = [node.points_lost for node in nodes[1:]]
    assert all(x is not None for x in lost)
    # Black's view (KaTrain forces reportAnalysisWinratesAs BLACK): the game ended B+3.5
    assert root.get_property("RE", "") == "B+3.5" and nodes[-1].score > 0
    print(f"{len(nodes)} positions analysed by KaTrain's engine code; points lost per move: "
          f"mean {sum(abs(x) for x in lost) / len(lost):.2f}")
