"""SGF game records: round trips for Go and Gomoku, setup stones, results, GNU Go's own files, bad input."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from zero9.arena.gtpclient import GTPClient, gnugo_command
from zero9.games import BLACK, WHITE, make_game
from zero9.games.sgf import (
    MAX_SGF_BYTES,
    MAX_SGF_VARIATIONS,
    SgfError,
    moves_from_position,
    parse_sgf,
    read_sgf,
    save_sgf,
    split_collection,
    start_position,
    write_sgf,
)


def vertices(game, points) -> set[str]:
    return {game.action_to_vertex(p) for p in points}


def test_go_round_trip_with_setup_passes_result_and_root_properties():
    game = make_game("go", 9, komi=6.5, move_cap=100)
    e5, c3, g7 = (game.vertex_to_action(v) for v in ("E5", "C3", "G7"))
    moves = [(WHITE, e5), (BLACK, game.pass_action), (WHITE, c3)]
    props = {"PB": "zero9 [a]\\b", "PW": "GNU Go", "GN": "game 7", "C": 'line one\nline "two" ]',
             "EV": "Ünïcode"}
    text = write_sgf(game, moves, "W+R", setup=[(BLACK, g7), (BLACK, c3 + 2)], properties=props)
    assert text.startswith("(;GM[1]FF[4]CA[UTF-8]") and "SZ[9]" in text and "KM[6.5]" in text
    assert "AB[gc][eg]" in text and ";W[ee]" in text and ";B[]" in text and "RE[W+R]" in text
    record = parse_sgf(text)
    assert record.game == game and record.game.to_dict()["move_cap"] == 100  # through ZG
    assert sorted(record.setup) == sorted([(BLACK, g7), (BLACK, c3 + 2)])
    assert record.moves == moves and record.actions == [e5, game.pass_action, c3]
    assert record.result == "W+R" and record.black == props["PB"] and record.white == "GNU Go"
    for key, value in props.items():
        assert record.properties[key] == value
    assert record.properties["RU"] == "Tromp-Taylor"
    # Plain actions alternate from Black; a final position writes its own history.
    final = game.play_moves([e5, c3, game.pass_action])
    assert moves_from_position(final) == [(BLACK, e5), (WHITE, c3), (BLACK, game.pass_action)]
    assert write_sgf(game, final) == write_sgf(game, [e5, c3, game.pass_action])


def test_gomoku_round_trip_keeps_its_rules_in_zg():
    game = make_game("gomoku", 9, connect=4)
    moves = [40, 41, 31, 32, 22, 23, 13]
    text = write_sgf(game, moves, "B+", properties={"PB": "a", "PW": "b"})
    assert "GM[4]" in text and "KM[" not in text and '"connect": 4' in text
    record = parse_sgf(text)
    assert record.game == game and record.game.name == "gomoku" and record.actions == moves
    assert [c for c, _ in record.moves] == [BLACK, WHITE] * 3 + [BLACK] and record.result == "B+"
    # What was read writes back the same (AP and the like are not doubled).
    assert write_sgf(record.game, record.moves, record.result, properties=record.properties) == text
    # A Gomoku file from another program (no ZG) gets make_game's defaults.
    other = parse_sgf("(;GM[4]SZ[15];B[hh];W[ih])")
    assert other.game == make_game("gomoku", 15) and other.actions == [112, 113]


@pytest.mark.parametrize("result", ["B+3.5", "W+R", "0", "?", "B+T", "W+F"])
def test_results_are_kept_as_written(result):
    game = make_game("go", 5, komi=0.5)
    assert parse_sgf(write_sgf(game, [12], result)).result == result


def test_no_result_writes_no_re_and_defaults_fill_in():
    text = write_sgf(make_game("go", 7), [])
    assert "RE[" not in text and parse_sgf(text).result == ""
    record = parse_sgf("(;SZ[9];B[tt];W[aa])")  # no GM: Go; tt: an old-style pass; no KM: the default
    assert record.game == make_game("go", 9) and record.moves == [(BLACK, 81), (WHITE, 72)]


def test_a_real_collection_from_gnu_go_and_zero9(gnugo_path, tmp_path):
    game = make_game("go", 9, komi=5.5)
    with GTPClient(gnugo_command(level=0, size=9, komi=5.5), timeout=60) as gnugo:
        gnugo.send("fixed_handicap 2")
        for colour in ("w", "b", "w", "b"):
            gnugo.send(f"genmove {colour}")
        stones = {c: set(gnugo.send(f"list_stones {c}").split()) for c in ("black", "white")}
        theirs = gnugo.send("printsgf")  # GNU Go writes the whole board as AB/AW setup stones
    ours = write_sgf(game, [(WHITE, 40), (BLACK, 31), (WHITE, 81)], "B+2.5", setup=[(BLACK, 20), (BLACK, 60)],
                     properties={"GN": "(tricky) [name]"})
    variations = "(;GM[1]SZ[9]RE[W+R];B[ee]C[main];W[cc](;B[gg];W[gc])(;B[cg]))"
    path = tmp_path / "games.sgf"
    path.write_text(theirs + "\n" + ours + "\n" + variations + "\n")
    games = [parse_sgf(g) for g in split_collection(path.read_bytes())]
    assert len(games) == 3
    gg = games[0]
    assert gg.game.size == 9 and gg.game.komi == 5.5 and gg.moves == []
    assert vertices(game, [p for c, p in gg.setup if c == BLACK]) == {v.upper() for v in stones["black"]}
    assert vertices(game, [p for c, p in gg.setup if c == WHITE]) == {v.upper() for v in stones["white"]}
    assert gg.properties["AP"].startswith("GNU Go")
    assert games[1].properties["GN"] == "(tricky) [name]" and games[1].setup == [(BLACK, 20), (BLACK, 60)]
    assert games[2].moves == [(BLACK, 40), (WHITE, 56), (BLACK, 24), (WHITE, 60)]  # the main line only
    assert read_sgf(path).properties["AP"].startswith("GNU Go")  # a file reads as its first game


def test_gnu_go_loads_what_zero9_writes(gnugo_path, tmp_path):
    game = make_game("go", 9, komi=7.5)
    position = game.play_moves(["E5", "C3", "pass", "G7", "D4"])
    path = save_sgf(tmp_path / "deep" / "g.sgf", write_sgf(game, position, properties={"PB": "x"}))
    with GTPClient(gnugo_command(level=0, size=9), timeout=60) as gnugo:
        assert gnugo.send(f"loadsgf {path}").lower() == "white"  # the side to move next
        for colour, name in ((BLACK, "black"), (WHITE, "white")):
            board = position.board_array()
            ours = vertices(game, [p for p in range(81) if board[p] == colour])
            assert set(gnugo.send(f"list_stones {name}").upper().split()) == ours


def test_save_is_atomic_and_creates_folders(tmp_path):
    text = write_sgf(make_game("go", 9), [40])
    path = save_sgf(tmp_path / "a" / "b" / "g.sgf", text)
    assert path.read_text() == text and [p.name for p in path.parent.iterdir()] == ["g.sgf"]


@pytest.mark.parametrize("text,reason,words", [
    ("this is not sgf", "unreadable SGF", "no SGF data"),
    ("(;GM[2]SZ[8];B[dd])", "unknown game", "GM[2]"),
    ("(;GM[4]SZ[9];B[ee];W[])", "pass in a game without passes", "move 2"),
    ("(;GM[1]SZ[9];B[ee];AB[cc];W[dd])", "setup stones", "node 2"),
    ("(;GM[1]SZ[9]AE[aa];B[ee])", "setup stones", "AE"),
    ("(;GM[1]SZ[9]ZG[{oops];B[ee])", "bad game parameters", "ZG"),
    ("(;GM[1]SZ[9]ZG[{\"bogus\": 1}])", "bad game parameters", "bogus"),
    ("(;GM[1]SZ[9]KM[lots])", "bad game parameters", "KM"),
    ("(;GM[1]SZ[9];B[ee];W[zz])", "unreadable SGF", "W[zz]"),
    ("(;GM[1]SZ[99])", "unreadable SGF", "size"),
])
def test_malformed_sgf_gives_a_clear_error(text, reason, words):
    with pytest.raises(SgfError, match=reason) as err:
        parse_sgf(text)
    assert err.value.reason == reason and words in str(err.value)


def test_file_errors_name_the_file(tmp_path):
    with pytest.raises(ValueError, match="cannot read SGF file .*missing.sgf"):
        read_sgf(tmp_path / "missing.sgf")
    bad = tmp_path / "bad.sgf"
    bad.write_text("(;GM[4]SZ[9];B[])")
    with pytest.raises(SgfError, match=r"bad SGF file .*bad.sgf: pass in a game without passes"):
        read_sgf(bad)


def test_writing_refuses_what_sgf_cannot_hold():
    go = make_game("go", 9)
    bad = (([82], "move 1"), ([(3, 4)], "bad colour"), ([40, -1], "move 2"), ([40.0], "move 1"))
    for moves, words in bad:
        with pytest.raises(ValueError, match=words):
            write_sgf(go, moves)
    with pytest.raises(ValueError, match="GM comes from the game"):
        write_sgf(go, [], properties={"GM": "4"})
    with pytest.raises(ValueError, match="bad SGF property name 'pb'"):
        write_sgf(go, [], properties={"pb": "x"})
    with pytest.raises(ValueError, match="setup stone 1: point 81 is off the 9x9 board"):
        write_sgf(go, [], setup=[(BLACK, 81)])
    with pytest.raises(ValueError, match="move 1"):
        write_sgf(make_game("gomoku", 9), [81])  # Gomoku has no pass action


def test_importing_and_writing_need_no_sgfmill():
    code = ("import sys; sys.modules['sgfmill'] = None\n"
            "from zero9.games import make_game; from zero9.games.sgf import write_sgf\n"
            "print(write_sgf(make_game('go', 9), [40], 'B+R'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert ";B[ee]" in out.stdout


def test_handicap_and_setup_stones_are_read_written_back_and_make_the_start():
    text = "(;GM[1]FF[4]SZ[9]KM[0.5]HA[2]AB[cg][gc]AW[ee];W[dd];B[cc])"
    record = parse_sgf(text)
    game = record.game
    assert record.handicap == 2 and record.properties["HA"] == "2"
    c3, g7, e5 = (game.vertex_to_action(v) for v in ("C3", "G7", "E5"))
    assert sorted(record.setup) == sorted([(BLACK, c3), (BLACK, g7), (WHITE, e5)])
    start = record.start_position()
    assert start.to_play == WHITE  # the first move is White's
    board = start.board_array().reshape(-1)
    assert sorted(p for p in range(81) if board[p] == BLACK) == [c3, g7]
    assert [p for p in range(81) if board[p] == WHITE] == [e5]
    back = parse_sgf(write_sgf(game, record.moves, setup=record.setup, properties=record.properties))
    assert back.setup == record.setup and back.handicap == 2 and back.moves == record.moves
    assert parse_sgf("(;GM[1]SZ[9];B[ee])").handicap == 0
    with pytest.raises(ValueError, match="setup stone 2"):
        start_position(game, [(BLACK, 40), (WHITE, 40)])
    gomoku = make_game("gomoku", 9)
    with pytest.raises(ValueError, match="no pass"):
        start_position(gomoku, [(BLACK, 40)], first=BLACK)


def test_a_huge_or_hostile_sgf_is_refused_at_once(tmp_path):
    hostile = b"(;GM[1]SZ[9]" + b"(;B[aa])" * 120_000 + b")"  # about 1 MiB of variations
    assert len(hostile) < MAX_SGF_BYTES
    with pytest.raises(SgfError, match="too large: 120,001 nodes"):  # counted, never parsed
        parse_sgf(hostile)
    wide = b"(;GM[1]SZ[9]" + b"(;C[x])" * (MAX_SGF_VARIATIONS + 1) + b")"
    with pytest.raises(SgfError, match="variations"):
        parse_sgf(wide)
    # ';' and '(' inside comments are text, not nodes
    chatty = b"(;GM[1]SZ[9]C[" + b";(" * 100_000 + b"];B[ee](;W[dd])(;W[cc]))"
    assert parse_sgf(chatty).moves[0][1] == 40
    big = tmp_path / "big.sgf"
    big.write_bytes(b"(;GM[1]SZ[9]C[" + b"x" * MAX_SGF_BYTES + b"])")
    with pytest.raises(ValueError, match="larger than"):
        read_sgf(big)
    fifo = tmp_path / "pipe.sgf"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        read_sgf(fifo)
