"""KaTrain's own engine code (katrain.core.engine.KataGoEngine, katrain 1.20) drives ``zero9 analysis``
through a whole 9x9 game: its command line with only the program name changed, its queries, its parsing
of every answer into its game tree (score, points lost, ownership, candidate moves); and, with KaTrain's
default engine settings (8 s a position; 200 visits, as docs/use-in-katrain.md advises) on a CPU loaded
by busy loops, every final answer is at least as deep as every report before it."""

import os
import re
import stat
import subprocess
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


def katrains_defaults(tmp_path, **changes) -> dict:
    """KaTrain's own default engine settings (its config.json), with the program changed."""
    return {"katago": zero9_as_katago(tmp_path), "model": "katrain/models/b10c384h6nbttflrs.bin.gz",
            "config": "katrain/KataGo/analysis_config.cfg", "max_visits": 500, "fast_visits": 25,
            "max_time": 8.0, "wide_root_noise": 0.04, "_enable_ownership": True, "allow_recovery": False,
            **changes}


def analyse_all(engine: KataGoEngine, nodes, seconds: float) -> None:
    """KaTrain asks its engine about every node of a game, as its whole-game analysis does; all answered."""
    for node in nodes:
        node.analyze(engine)
    deadline = time.monotonic() + seconds
    while not engine.is_idle() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert engine.is_idle(), f"{engine.queries_remaining()} queries left"


def test_katrain_analyses_a_whole_game_with_zero9(tmp_path):
    app = KaTrainStandIn()
    engine = KataGoEngine(app, katrains_defaults(tmp_path, max_visits=24, fast_visits=8, max_time=60.0))
    try:
        root = KaTrainSGF.parse_file(GAME)
        nodes = root.nodes_in_tree
        assert len(nodes) > 60
        analyse_all(engine, nodes, 240)
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


# KaTrain's log line for each answer it reads: seconds since it sent the query, the query, partial
# ("....") or final ("done"), and the root visits ("n/a": noResults).
ANSWER_LOG = re.compile(r"^\[([0-9.]+)\]\[([^]]+)\]\[(\.\.\.\.|done)\] KataGo analysis received: "
                        r"\d+ candidate moves, ([0-9]+|n/a) visits")


def busy_loops(count: int, seconds: float) -> list[subprocess.Popen]:
    """``count`` processes spinning a core each, every one ending by itself after ``seconds``."""
    code = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]


@pytest.mark.integration  # about 75 s: the time limit of 78 positions, 12 at a time
def test_katrain_at_its_default_time_limit_on_a_loaded_cpu_gets_the_deepest_answers(tmp_path):
    """The reported case: 8 s a position, a busy CPU, answers cut by the time limit. Every final answer
    has at least the visits of every report of its query before it, and all it asked for unless the
    query had its 8 s (KaTrain's own clock, from sending the query, runs at least as long as the
    engine's, which counts only the time the position was searched)."""
    app = KaTrainStandIn()
    config = katrains_defaults(tmp_path, max_visits=200)  # docs/use-in-katrain.md's setting for a laptop
    load = busy_loops(2 * (os.cpu_count() or 1), seconds=360)
    engine = KataGoEngine(app, config)
    try:
        nodes = KaTrainSGF.parse_file(GAME).nodes_in_tree
        analyse_all(engine, nodes, 330)
    finally:
        engine.shutdown(finish=False)
        for process in load:
            process.kill()
            process.wait()
    errors = [line for level, line in app.lines if level == OUTPUT_ERROR]
    assert not errors and not app.popups, (errors, app.popups)
    reports: dict[str, list[int]] = {}
    finals: dict[str, tuple[int, float]] = {}
    for _, line in app.lines:
        found = ANSWER_LOG.match(line)
        if found:
            seconds, query_id, stage, visits = found.groups()
            assert visits != "n/a" and query_id not in finals, line  # nothing after the final answer
            if stage == "done":
                finals[query_id] = (int(visits), float(seconds))
            else:
                reports.setdefault(query_id, []).append(int(visits))
    assert len(finals) == len(nodes) and reports, (len(finals), len(nodes))
    asked = config["max_visits"]
    for query_id, (visits, seconds) in finals.items():
        earlier = reports.get(query_id, [])
        assert earlier == sorted(earlier) and all(v <= visits for v in earlier), (query_id, earlier, visits)
        assert visits == asked or seconds >= config["max_time"] - 0.05, (query_id, visits, seconds)
    assert all(node.analysis_complete for node in nodes)
    # KaTrain's game tree holds the final answers (its points lost come from them)
    assert sorted(node.root_visits for node in nodes) == sorted(v for v, _ in finals.values())
    cut = sum(1 for visits, _ in finals.values() if visits < asked)
    print(f"{len(nodes)} positions at {asked} visits, {config['max_time']:g} s each, {len(load)} busy loops: "
          f"{len(nodes) - cut} answered with all their visits, {cut} at the time limit "
          f"(fewest {min(v for v, _ in finals.values())} visits); {sum(map(len, reports.values()))} reports")
