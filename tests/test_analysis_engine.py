"""``zero9 analysis``, KataGo's JSON analysis engine, with the shipped 9x9 net: responses field by field,
perspective, errors and warnings that leave the engine serving, terminate, batching, the command line."""

import glob
import io
import json
import os
import subprocess
import sys

import pytest

from zero9.cli.analysis import net_finder, read_config
from zero9.protocols.analysis_engine import AnalysisEngine
from zero9.protocols.analysis_query import KNOWN_FIELDS

ROOT = os.path.join(os.path.dirname(__file__), "..")
MOVE_KEYS = {"move", "visits", "utility", "winrate", "scoreMean", "scoreStdev", "scoreLead", "prior", "lcb",
             "order", "pv"}
TOP_ROWS = [["B", f"{c}{r}"] for c in "ABCDEFGHJ" for r in (7, 8, 9)]  # Black owns the top third


@pytest.fixture(scope="module")
def nets():
    return net_finder(None, "cpu")


def run(nets, queries, **options) -> list[dict]:
    out = io.StringIO()
    engine = AnalysisEngine(nets, out, default_visits=24, seed=1, **options)
    lines = [q if isinstance(q, str) else json.dumps(q) for q in queries]
    engine.serve(io.StringIO("\n".join(lines) + "\n"))
    return [json.loads(line) for line in out.getvalue().splitlines()]


def query(qid, moves=(), **fields) -> dict:
    return {"id": qid, "moves": list(moves), "rules": "chinese-ogs", "komi": 7.5, "boardXSize": 9,
            "boardYSize": 9, "maxVisits": 24, **fields}


def test_one_response_per_turn_with_katagos_fields(nets):
    q = query("a", [["B", "E5"], ["W", "C3"]], analyzeTurns=[0, 1, 2], includeOwnership=True,
              includePolicy=True, includePVVisits=True)
    responses = [r for r in run(nets, [q]) if "warning" not in r]
    assert sorted(r["turnNumber"] for r in responses) == [0, 1, 2]
    for r in responses:
        assert r["id"] == "a" and r["isDuringSearch"] is False
        assert r["moveInfos"] and all(MOVE_KEYS <= set(m) for m in r["moveInfos"])
        assert [m["order"] for m in r["moveInfos"]] == list(range(len(r["moveInfos"])))
        assert all(len(m["pvVisits"]) == len(m["pv"]) for m in r["moveInfos"])
        assert 20 <= r["rootInfo"]["visits"] <= 24
        assert {"winrate", "scoreLead", "utility", "visits"} <= set(r["rootInfo"])
        assert len(r["ownership"]) == 81 and all(-1 <= v <= 1 for v in r["ownership"])
        policy = r["policy"]
        assert len(policy) == 82 and 0.9 < sum(p for p in policy if p >= 0) <= 1.0001
    after_e5 = next(r for r in responses if r["turnNumber"] == 1)
    # KataGo's order: row 9 first, so E5 is index 4*9+4, and E5 (occupied) is illegal (-1)
    assert after_e5["policy"][4 * 9 + 4] == -1
    assert after_e5["ownership"][4 * 9 + 4] > 0.5  # Black's view (the default): E5 is Black's


@pytest.mark.parametrize("perspective", ["BLACK", "SIDETOMOVE"])
def test_values_are_in_the_configured_perspective(nets, perspective):
    q = query("p", [["B", "E1"]], initialStones=TOP_ROWS, analyzeTurns=[0, 1],
              overrideSettings={"reportAnalysisWinratesAs": perspective}, includeOwnership=True)
    responses = {r["turnNumber"]: r for r in run(nets, [q]) if "turnNumber" in r}
    black_view = responses[0]["rootInfo"]  # black to move at turn 0
    assert black_view["winrate"] > 0.9 and black_view["scoreLead"] > 10
    after = responses[1]  # white to move after B E1
    if perspective == "BLACK":
        assert after["rootInfo"]["winrate"] > 0.9 and after["rootInfo"]["scoreLead"] > 10
        assert after["ownership"][0] > 0.5  # A9, Black's stone
    else:
        assert after["rootInfo"]["winrate"] < 0.1 and after["rootInfo"]["scoreLead"] < -10
        assert after["ownership"][0] < -0.5
    assert after["rootInfo"]["currentPlayer"] == "W"


def test_bad_queries_get_katagos_error_objects_and_the_engine_keeps_serving(nets):
    bad = [
        "{not json",
        json.dumps({"moves": [], "rules": "chinese"}),
        query("occupied", [["B", "E5"], ["W", "E5"]]),
        query("offboard", [["B", "Z5"]]),
        query("komi", komi=400),
        query("half", komi=7.3),
        query("size", boardXSize=13, boardYSize=13),
        query("square", boardYSize=7),
        query("turns", analyzeTurns=[5]),
        query("visits", maxVisits=0),
        query("rules", rules="no-such-rules"),
        {"id": "noboard", "moves": [], "rules": "chinese"},
        {"id": "act", "action": "fly"},
    ]
    good = query("good", [["B", "C3"]], unknownField=1, rules="japanese")
    out = run(nets, bad + [good])
    errors = [r for r in out if "error" in r]
    assert errors[0] == {"error": errors[0]["error"]} and "json" in errors[0]["error"].lower()
    assert errors[1]["field"] == "id"
    by_id = {r["id"]: r for r in errors[2:]}
    assert by_id["occupied"]["field"] == "moves" and "Illegal move 1" in by_id["occupied"]["error"]
    assert by_id["offboard"]["field"] == "moves"
    assert by_id["komi"]["field"] == "komi" and by_id["half"]["field"] == "komi"
    assert by_id["size"]["field"] == "boardXSize" and "13x13" in by_id["size"]["error"]
    assert by_id["square"]["field"] == "boardYSize"
    assert by_id["turns"]["field"] == "analyzeTurns" and by_id["visits"]["field"] == "maxVisits"
    assert by_id["rules"]["field"] == "rules" and by_id["noboard"]["field"] == "boardXSize"
    assert by_id["act"]["field"] == "action"
    warnings = {r["field"]: r for r in out if "warning" in r}
    assert warnings["unknownField"]["id"] == "good" and "scoring" in warnings["rules"]["warning"]
    answered = [r for r in out if r.get("id") == "good" and "moveInfos" in r]
    assert len(answered) == 1 and answered[0]["turnNumber"] == 1


# The JSON type each query field takes (KataGo's docs/Analysis_Engine.md); "rules" also a string.
FIELD_TYPES = {
    "moves": list, "initialStones": list, "analyzeTurns": list, "avoidMoves": list, "allowMoves": list,
    "priorities": list, "overrideSettings": dict, "rules": (str, dict), "initialPlayer": str,
    "whiteHandicapBonus": str, "komi": float, "boardXSize": int, "boardYSize": int, "maxVisits": int,
    "priority": int, "reportDuringSearchEvery": float, "rootPolicyTemperature": float,
    "rootFpuReductionMax": float, "includeOwnership": bool, "includeOwnershipStdev": bool,
    "includeMovesOwnership": bool, "includeMovesOwnershipStdev": bool, "includePolicy": bool,
    "includePVVisits": bool,
}
WRONG_VALUES = [True, 5, 5.5, "x", [["x", 5]], {"a": [1]}]


def wrong_types(kind) -> list:
    """The values of WRONG_VALUES that are not of JSON type ``kind`` (an integer is a number)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    accepted = tuple(int if k is float else k for k in kinds) + kinds
    return [v for v in WRONG_VALUES
            if not isinstance(v, accepted) or (isinstance(v, bool) and bool not in kinds)]


def test_nothing_a_client_sends_stops_the_engine(nets):
    """Wrong types in every field, huge numbers, deep nesting, big lines: each is an error for its query
    (naming the field where one is wrong), and the engine serves the next query."""
    assert set(FIELD_TYPES) == KNOWN_FIELDS - {"id"}  # every field is tried
    lines, expected = [], {}
    for name, kind in FIELD_TYPES.items():
        values = wrong_types(kind) + ([10**400, -(10**400)] if kind in (int, float) else [])
        for i, value in enumerate(values):
            qid = f"{name}-{i}"
            lines.append(json.dumps({**query(qid, [["B", "E5"]]), name: value}))
            expected[qid] = name
    overrides = [{"maxTime": "8"}, {"maxTime": 10**400}, {"maxTime": [8]},
                 {"reportAnalysisWinratesAs": ["BLACK"]}, {"reportAnalysisWinratesAs": 5}]
    for i, value in enumerate(overrides):
        lines.append(json.dumps(query(f"override-{i}", overrideSettings=value)))
        expected[f"override-{i}"] = "overrideSettings"
    deep = "[" * 1000 + "]" * 1000  # 2 KB nested 1,000 deep
    lines += [
        deep,
        '{"id": "deep", "moves": ' + deep + "}",
        '{"id": "digits", "komi": 1' + "0" * 5000 + "}",  # more digits than Python turns into an int
        json.dumps(query("passes", [["B", "pass"], ["W", "pass"]] * 5000)),  # 10,000 moves on 9x9
        json.dumps(query("turns", [["B", "E5"]], analyzeTurns=[1] * 10_000)),
        json.dumps({"id": "t", "action": "terminate", "terminateId": "x", "turnNumbers": [[1], {}]}),
        json.dumps({"id": "a", "action": [["x"]]}),
    ]
    expected.update({"deep": None, "digits": None, "passes": "moves", "turns": "analyzeTurns",
                     "t": "terminateId", "a": "action"})
    lines.append(json.dumps(query("good", [["B", "E5"]])))
    out = run(nets, lines)
    errors = [r for r in out if "error" in r]
    assert not any("internal" in r["error"] for r in errors), errors
    by_id = {r["id"]: r for r in errors if "id" in r}
    for qid, name in expected.items():
        assert qid in by_id, qid
        assert by_id[qid].get("field") == name, (qid, by_id[qid])
        assert len(json.dumps(by_id[qid])) < 400  # the client's value shown in part
    no_id = [r for r in errors if "id" not in r]  # the bare nesting: no id to read
    assert len(no_id) == 1 and list(no_id[0]) == ["error"] and "nested 1000 deep" in no_id[0]["error"]
    assert "nested 1001 deep" in by_id["deep"]["error"] and "digits" in by_id["digits"]["error"]
    answered = [r["id"] for r in out if "moveInfos" in r]
    assert answered == ["good"]  # every other query refused, the next one served


def test_actions_terminate_and_reports_during_search(nets):
    ponder = query("ponder", maxVisits=10_000_000, reportDuringSearchEvery=0.01)
    out = run(nets, [{"id": "v", "action": "query_version"}, query("plain"), ponder,
                     {"id": "t", "action": "terminate", "terminateId": "ponder"},
                     {"id": "c", "action": "clear_cache"}])
    assert out[0]["version"] and out[0]["action"] == "query_version"
    assert {"id": "t", "action": "terminate", "terminateId": "ponder"} in out
    assert {"id": "c", "action": "clear_cache"} in out
    final = [r for r in out if r.get("id") == "ponder" and r.get("isDuringSearch") is False]
    assert len(final) == 1  # exactly one final response, results or noResults
    assert [r for r in out if r.get("id") == "plain" and "moveInfos" in r]
    # A reporting turn that is not terminated reports during its search, then once at the end.
    out = run(nets, [query("r", maxVisits=64, reportDuringSearchEvery=0.001)])
    during = [r for r in out if r.get("isDuringSearch")]
    last = [r for r in out if r.get("isDuringSearch") is False]
    assert during and len(last) == 1 and last[0]["rootInfo"]["visits"] >= 60
    assert all(r["rootInfo"]["visits"] < last[0]["rootInfo"]["visits"] for r in during)


def test_a_round_cut_short_by_another_turns_time_limit_keeps_the_turns_visits(nets):
    """KaTrain's case: a reporting turn batched with a turn whose time limit ends the batch early.
    Its search goes on from the tree it has, so no later response has fewer visits."""
    out = io.StringIO()
    engine = AnalysisEngine(nets, out, default_visits=24, seed=1, batch=4)
    engine.handle_line(json.dumps(query("long", [["B", "E5"]], maxVisits=200, reportDuringSearchEvery=0.001)))
    for _ in range(3):  # rounds of 16, 32, 64 visits, alone
        engine._analyse_batch(engine._take_batch())
    engine.handle_line(json.dumps(query("hurry", [["B", "C3"]], maxVisits=200,
                                        overrideSettings={"maxTime": 1e-6})))
    first = engine._take_batch()
    assert sorted(item.turn.query_id for item in first) == ["hurry", "long"]
    engine._analyse_batch(first)  # cut after its first net call by hurry's limit
    while engine._queue:
        engine._analyse_batch(engine._take_batch())
    responses = [json.loads(line) for line in out.getvalue().splitlines()]
    long = [r["rootInfo"]["visits"] for r in responses if r.get("id") == "long"]
    final = [r for r in responses if r.get("id") == "long" and not r["isDuringSearch"]]
    assert len(final) == 1 and responses.index(final[0]) == max(i for i, r in enumerate(responses)
                                                                if r.get("id") == "long")
    assert long[:3] == [16, 32, 64] and long == sorted(long) and long[-1] == 200, long
    hurry = [r for r in responses if r.get("id") == "hurry"]
    assert len(hurry) == 1 and 0 < hurry[0]["rootInfo"]["visits"] < 200  # answered at its limit


def test_turns_share_net_calls(nets):
    moves = [["B", "E5"], ["W", "C3"], ["B", "G7"], ["W", "C7"], ["B", "G3"], ["W", "E3"], ["B", "E7"],
             ["W", "C5"]]
    batched = AnalysisEngine(nets, io.StringIO(), default_visits=24, seed=1)
    batched.serve(io.StringIO(json.dumps(query("all", moves, analyzeTurns=list(range(9)))) + "\n"))
    one_by_one = AnalysisEngine(nets, io.StringIO(), default_visits=24, seed=1, batch=1)
    one_by_one.serve(io.StringIO(json.dumps(query("all", moves, analyzeTurns=list(range(9)))) + "\n"))
    assert batched.positions_analysed == one_by_one.positions_analysed == 9
    calls_batched, calls_single = batched._evaluators[9].calls, one_by_one._evaluators[9].calls
    assert calls_batched * 3 < calls_single, (calls_batched, calls_single)


def test_katrains_command_line_works_with_only_the_program_name_changed(tmp_path):
    katrain = pytest.importorskip("katrain")
    base = os.path.dirname(katrain.__file__)
    config = os.path.join(base, "KataGo", "analysis_config.cfg")
    model = (glob.glob(os.path.join(base, "models", "*.bin.gz")) or [config])[0]  # KataGo's net, not zero9's
    assert read_config(config, [])["reportAnalysisWinratesAs"] == "BLACK"
    line = json.dumps(query("k", [["B", "E5"]], maxVisits=16, includeOwnership=True)) + "\n"
    result = subprocess.run([sys.executable, "-m", "zero9", "analysis", "-model", model, "-config", config,
                             "-override-config", f"homeDataDir={tmp_path}", "-analysis-threads", "4"],
                            input=line, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": ROOT})
    assert result.returncode == 0, result.stderr
    assert "not a zero9 net" in result.stderr and "shipped" in result.stderr
    responses = [json.loads(x) for x in result.stdout.splitlines()]
    answer = [r for r in responses if "moveInfos" in r]
    assert len(answer) == 1 and len(answer[0]["ownership"]) == 81
