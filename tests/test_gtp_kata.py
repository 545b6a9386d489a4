"""KataGo's GTP extensions in ``zero9 gtp``, with the shipped 9x9 net: kata-analyze's format and ownership,
lz-analyze ownership, kata-genmove_analyze, rules, cputime, setup stones, and final_score /
final_status_list against real GNU Go on finished games from docs/runs; Sabaki's own parser."""

import glob
import json
import os
import re
import shutil
import subprocess

import pytest

from zero9.arena.gtpclient import find_gnugo
from zero9.games import make_game
from zero9.nn.checkpoint import default_net_path
from zero9.protocols.gtp import GTPEngine, LeelaZeroOptions
from zero9.search.player import NetSource

ROOT = os.path.join(os.path.dirname(__file__), "..")
KEYS = ["move", "visits", "utility", "winrate", "scoreMean", "scoreStdev", "scoreLead", "prior", "lcb",
        "order"]
SABAKI_PARSER = os.environ.get("ZERO9_SABAKI_PARSER", os.path.expanduser("~/.cache/zero9/sabaki-parser"))


@pytest.fixture(scope="module")
def source():
    return NetSource(default_net_path("go", 9), device="cpu")


def engine(source, visits=40, seed=1) -> GTPEngine:
    return GTPEngine(make_game("go", 9), source, LeelaZeroOptions(visits=visits, seed=seed))


def ok(e: GTPEngine, line: str, seconds: float = 60.0) -> str:
    reply = e.handle(line, seconds)
    assert reply.startswith("="), f"{line!r} -> {reply!r}"
    return reply[1:].strip()


def parse_kata_line(line: str) -> tuple[list[dict], list[float] | None]:
    """KataGo's kata-analyze line -> (entries, ownership): each entry's keys in order, pv, pvVisits."""
    ownership = None
    if " ownership " in f" {line} ":
        line, _, own = line.partition("ownership ")
        ownership = [float(x) for x in own.split()]
    entries = []
    for chunk in line.split("info ")[1:]:
        words = chunk.split()
        pv_at = words.index("pv")
        pairs = words[:pv_at]
        entry = {"keys": pairs[0::2], **dict(zip(pairs[0::2], pairs[1::2], strict=True))}
        rest = words[pv_at + 1:]
        if "pvVisits" in rest:
            k = rest.index("pvVisits")
            entry["pv"], entry["pvVisits"] = rest[:k], [int(v) for v in rest[k + 1:]]
        else:
            entry["pv"] = rest
        entries.append(entry)
    return entries, ownership


def test_kata_analyze_is_katagos_format_and_ends_at_the_visit_limit(source):
    e = engine(source)
    ok(e, "play b e5")
    reply = e.handle("kata-analyze w 1 ownership true pvVisits true", 60)
    assert reply.startswith("=\n") and reply.endswith("\n\n")
    lines = [line for line in reply.split("\n") if line.startswith("info")]
    assert lines, reply
    entries, ownership = parse_kata_line(lines[-1])
    assert [e["order"] for e in entries] == [str(i) for i in range(len(entries))]
    total = 0
    for entry in entries:
        assert entry["keys"] == KEYS, entry["keys"]
        w, u = float(entry["winrate"]), float(entry["utility"])
        assert 0 <= w <= 1 and abs(u - (2 * w - 1)) < 1e-4
        assert entry["scoreMean"] == entry["scoreLead"] and float(entry["scoreStdev"]) >= 0
        assert entry["pv"][0] == entry["move"] and len(entry["pvVisits"]) == len(entry["pv"])
        assert entry["pvVisits"][0] == int(entry["visits"])
        total += int(entry["visits"])
    assert 30 <= total <= 40  # -v 40: the last line is the 40-visit search (its root visits)
    assert ownership is not None and len(ownership) == 81 and all(-1 <= v <= 1 for v in ownership)
    # White to move: E5 (row 5, column E: index 4*9+4 in KataGo's top-left-first order) is black's
    assert ownership[4 * 9 + 4] < -0.5


def test_ownership_is_in_katagos_board_order_and_setup_stones_load(source, tmp_path):
    # Black walls off the top two rows, White the bottom two: AB/AW setup stones, no moves.
    top = "".join(f"[{c}a][{c}b]" for c in "abcdefghi")
    bottom = "".join(f"[{c}h][{c}i]" for c in "abcdefghi")
    sgf = tmp_path / "setup.sgf"
    sgf.write_text(f"(;GM[1]FF[4]SZ[9]KM[7.5]HA[9]AB{top}AW{bottom})")
    e = engine(source, visits=16)
    assert ok(e, f"loadsgf {sgf}") == ""
    assert ok(e, "list_stones b").count(" ") == 17 and "A9" in ok(e, "list_stones b")
    reply = e.handle("kata-analyze b 1 ownership true", 60)
    _, ownership = parse_kata_line([x for x in reply.split("\n") if x.startswith("info")][-1])
    assert min(ownership[:18]) > 0.5 and max(ownership[-18:]) < -0.5  # rows 9-8 black's, rows 2-1 white's


def test_lz_analyze_with_ownership_keeps_leela_zeros_numbers(source):
    e = engine(source, visits=24)
    reply = e.handle("lz-analyze 1 ownership true", 60)
    line = [x for x in reply.split("\n") if x.startswith("info")][-1]
    head, _, own = line.partition(" ownership ")
    assert len(own.split()) == 81
    first = head.split(" info ")[0].split()
    assert first[:2] == ["info", "move"] and first[5] == "winrate" and first[6].isdigit()  # x 10000
    assert "scoreLead" not in head


def test_kata_genmove_analyze_posts_its_analysis_then_plays(source):
    e = engine(source, visits=24)
    reply = e.handle("kata-genmove_analyze b 1", 60)
    lines = reply.strip().split("\n")
    assert lines[0] == "=" and lines[-1].startswith("play ")
    entries, _ = parse_kata_line(lines[-2])
    move = lines[-1].split()[1]
    assert move == entries[0]["move"]  # the best move, as genmove would have it (no random moves)
    assert ok(e, "last_move") == f"black {move}"


def test_rules_and_cputime(source):
    e = engine(source)
    rules = json.loads(ok(e, "kata-get-rules"))
    assert rules == {"hasButton": False, "ko": "POSITIONAL", "scoring": "AREA", "suicide": False,
                     "tax": "NONE", "whiteHandicapBonus": "0"}
    assert ok(e, 'kata-set-rules {"ko":"POSITIONAL","scoring":"AREA","suicide":false}') == ""
    reply = e.handle("kata-set-rules japanese")
    assert reply.startswith("? ") and "scoring" in reply and "TERRITORY" in reply
    assert e.handle("kata-set-rules tromp-taylor").startswith("? ")  # suicide is legal there, not here
    assert e.handle("kata-set-rules nonsense").startswith("? unknown rules")
    before = float(ok(e, "cputime"))
    ok(e, "genmove b")
    assert float(ok(e, "cputime")) > before
    for name in ("kata-analyze", "kata-genmove_analyze", "kata-get-rules", "kata-set-rules", "cputime"):
        assert ok(e, f"known_command {name}") == "true"


def _finished_games() -> list[str]:
    """Finished (two passes) 9x9 games of docs/runs, the three that taught the aftermath rules first."""
    hard = ["docs/runs/levels/level_club-vs-level_casual/game-0020.sgf",  # a dead group in atari
            "docs/runs/go9-h100-59min/eval38-device_sgf/game-0085.sgf",  # seki with an eye
            "docs/runs/levels/level_casual-vs-level_beginner/game-0017.sgf",  # a dead stone and dame
            "tests/data/gnugo-dead-stones-left.sgf"]  # GNU Go's own end: Tromp-Taylor W+20.5, GNU Go B+9.5
    more = sorted(glob.glob(os.path.join(ROOT, "docs/runs/go9-h100-38min/eval30_sgf/*.sgf")))[:9]
    return [os.path.join(ROOT, h) for h in hard] + more


def _gnugo_score(path: str) -> str:
    out = subprocess.run([find_gnugo(), "--chinese-rules", "--score", "aftermath", "-l", path],
                         capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"(Black|White) wins by ([\d.]+) points", out)
    assert m, out
    return f"{m.group(1)[0]}+{float(m.group(2)):g}"


@pytest.mark.skipif(find_gnugo() is None, reason="GNU Go is not installed")
def test_final_score_agrees_with_gnu_go_on_finished_games(source):
    for path in _finished_games():
        e = engine(source)
        assert ok(e, f"loadsgf {path}") == ""
        assert ok(e, "final_score") == _gnugo_score(path), path
    e = engine(source)
    ok(e, f"loadsgf {_finished_games()[0]}")
    dead = ok(e, "final_status_list dead").split()
    assert len(dead) >= 25 and "E1" in dead  # white's 30-stone group in atari
    assert set(dead).isdisjoint(ok(e, "final_status_list alive").split())
    e = engine(source)
    ok(e, f"loadsgf {_finished_games()[1]}")
    assert "F9" in ok(e, "final_status_list seki").split()


@pytest.mark.skipif(not os.path.isfile(os.path.join(SABAKI_PARSER, "analysis.js"))
                    or shutil.which("node") is None,
                    reason="Sabaki's parser not prepared: run scripts/setup_sabaki_parser.sh (node, npm)")
def test_sabakis_own_parser_reads_a_score_lead(source):
    e = engine(source, visits=24)
    reply = e.handle("kata-analyze B 10", 60)  # what Sabaki sends: colour, interval
    lines = [x for x in reply.split("\n") if x.startswith("info")]
    ours, _ = parse_kata_line(lines[-1])
    result = subprocess.run(["node", "run.mjs"], cwd=SABAKI_PARSER, input="\n".join(lines),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    parsed = json.loads(result.stdout)[-1]
    assert len(parsed) == len(ours)
    for theirs, mine in zip(parsed, ours, strict=True):
        assert theirs["scoreLead"] is not None
        assert abs(theirs["scoreLead"] - float(mine["scoreLead"])) < 1e-9
        assert abs(theirs["winrate"] - 100 * float(mine["winrate"])) < 1e-6
