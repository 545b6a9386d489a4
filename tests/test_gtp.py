"""GTP transcripts: every command, the malformed lines (state untouched), ids, CRLF, EOF, lz-analyze."""

import os
import subprocess
import sys
import time

import pytest

from zero9.arena.gtpclient import GTPClient, find_gnugo, gnugo_command
from zero9.games import make_game
from zero9.games.sgf import read_sgf
from zero9.protocols.gtp import COMMANDS, GTPEngine, LeelaZeroOptions
from zero9.protocols.gtp.clock import Clock
from zero9.protocols.gtp.core import fixed_handicap_points
from zero9.search.player import NetSource

SHIPPED = os.path.join(os.path.dirname(__file__), "..", "example-data", "initial_9x9.txt.gz")


def engine(game="go", size=9, visits=4, **options) -> GTPEngine:
    return GTPEngine(make_game(game, size), NetSource(None), LeelaZeroOptions(visits=visits, **options))


def ok(e: GTPEngine, line: str) -> str:
    reply = e.handle(line)
    assert reply.startswith("="), f"{line!r} -> {reply!r}"
    assert reply.endswith("\n\n")
    return reply[1:].strip()


def snapshot(e: GTPEngine) -> tuple:
    return (e.game.to_dict(), ok(e, "printsgf"), ok(e, "move_history"), ok(e, "showboard"),
            ok(e, "captures b"), tuple(e.setup))


def test_administrative_commands_and_ids():
    e = engine()
    assert e.handle("12 protocol_version") == "=12 2\n\n"
    assert e.handle("name") == "= zero9\n\n"
    assert ok(e, "version")
    assert e.handle("3 known_command lz-analyze") == "=3 true\n\n"
    assert ok(e, "known_command fly") == "false"
    listed = ok(e, "list_commands").split("\n")
    assert listed == COMMANDS
    for needed in ("boardsize", "heatmap", "lz-genmove_analyze", "is_legal", "all_legal", "list_stones",
                   "captures", "autotrain", "kgs-genmove_cleanup", "printsgf", "loadsgf"):
        assert needed in listed
    assert e.handle("7 frobnicate").startswith("?7 unknown command")
    assert e.handle("quit") == "= \n\n" and e.quit


def test_comments_blank_lines_crlf_tabs_and_case():
    e = engine()
    assert e.execute("") is None and e.execute("   # just a comment") is None
    assert e.handle("5 play\tB\tE5  # a comment\r\n") == "=5 \n\n"
    assert e.handle("PLAY w d4\r\n") == "= \n\n"
    assert ok(e, "list_stones black") == "E5"
    assert ok(e, "list_stones w") == "D4"
    # I is skipped: J is the ninth column, I is no vertex
    assert ok(e, "play b J9") == ""
    assert e.handle("play w I1").startswith("?")


MALFORMED = [
    "frobnicate", "play", "play b", "play b e5 e6", "play x e5", "play b z1", "play b e10", "play b e5",
    "undo undo", "boardsize", "boardsize 4", "boardsize 20", "boardsize nine", "komi", "komi abc", "komi inf",
    "genmove", "genmove purple", "kgs-genmove_cleanup", "fixed_handicap", "fixed_handicap 1",
    "fixed_handicap 10", "fixed_handicap 2", "place_free_handicap x", "set_free_handicap a1",
    "set_free_handicap a1 a1", "loadsgf", "loadsgf /nonexistent/game.sgf", "time_settings 1 2",
    "time_settings a b c", "time_left b x 0", "time_left q 10 0", "kgs-time_settings",
    "kgs-time_settings foo",
    "kgs-time_settings byoyomi 1 2", "heatmap 9", "heatmap x", "final_status_list", "final_status_list foo",
    "is_legal b", "all_legal", "list_stones purple", "captures q", "lz-analyze foo bar",
    "lz-genmove_analyze b x y", "lz-setoption name", "lz-setoption name nosuch value 3", "protocol_version 1",
    "known_command", "printsgf a b", "autotrain x", "autotrain x y",
]


def test_every_malformed_line_gets_a_question_mark_and_changes_nothing(tmp_path):
    e = engine()
    for line in ("play b e5", "play w c3", "play b d3", "play w d4"):
        ok(e, line)
    before = snapshot(e)
    for line in MALFORMED:
        reply = e.handle("9 " + line)
        assert reply.startswith("?9 "), f"{line!r} -> {reply!r}"
        assert reply.endswith("\n\n")
        assert len(reply.strip()) > 3, f"{line!r} has no message"
        assert snapshot(e) == before, f"{line!r} changed the state"
    bad = tmp_path / "bad.sgf"
    bad.write_text("(;GM[1]SZ[9];B[ee];W[ee])")  # the second move is on an occupied point
    reply = e.handle(f"loadsgf {bad}")
    assert reply.startswith("?") and "bad.sgf" in reply
    bad.write_text("this is not an SGF file")
    assert "bad.sgf" in e.handle(f"loadsgf {bad}")
    assert snapshot(e) == before


def test_undo_with_nothing_to_undo_and_after_moves():
    e = engine()
    assert e.handle("undo").startswith("? cannot undo")
    assert e.handle("last_move").startswith("? no previous move")
    ok(e, "play b e5")
    ok(e, "play w c3")
    assert ok(e, "last_move") == "white C3"
    assert ok(e, "move_history") == "white C3\nblack E5"
    ok(e, "undo")
    assert ok(e, "move_history") == "black E5"
    ok(e, "undo")
    assert ok(e, "list_stones b") == ""
    assert e.handle("undo").startswith("?")


def test_captures_is_legal_all_legal_and_suicide():
    e = engine()
    # black surrounds the white stone at A1 corner: W A1, B A2, B B1 captures
    for line in ("play b a2", "play w a1", "play b b1"):
        ok(e, line)
    assert ok(e, "captures b") == "1" and ok(e, "captures w") == "0"
    assert ok(e, "list_stones w") == ""
    # A1 is now suicide for white (no liberties, captures nothing)
    assert ok(e, "is_legal w a1") == "0"
    assert ok(e, "is_legal w e5") == "1"
    legal = ok(e, "all_legal w").split()
    assert "A1" not in legal and "E5" in legal and "A2" not in legal and len(legal) == 81 - 2 - 1
    assert e.handle("play w a1").startswith("? illegal move A1")


def test_playing_out_of_turn_inserts_a_filler_pass_that_undo_removes():
    e = engine()
    ok(e, "play w e5")  # black to move: a black pass goes first
    assert ok(e, "move_history") == "white E5"
    assert e.position.to_play == 1 and e.position.move_number == 2
    ok(e, "undo")
    assert e.position.move_number == 0


def test_final_score_counts_area_and_komi():
    # Dead stones are found by playing on with the net (tests/test_gtp_kata.py, against GNU Go);
    # without stones there is nothing to play out: area 0 - 0, less komi.
    e = engine()
    assert ok(e, "final_score") == "W+7.5"
    ok(e, "komi 0.5")
    assert ok(e, "final_score") == "W+0.5"
    assert ok(e, "final_status_list alive") == ok(e, "final_status_list dead") == ""
    assert ok(e, "final_status_list seki") == ""
    assert e.handle("final_status_list living").startswith("? bad status")


def test_boardsize_clear_board_and_komi():
    e = engine()
    ok(e, "play b e5")
    ok(e, "boardsize 13")
    assert e.game.size == 13 and ok(e, "list_stones b") == ""
    ok(e, "play b g7")
    ok(e, "clear_board")
    assert ok(e, "list_stones b") == ""
    ok(e, "komi 6.5")
    assert e.game.komi == 6.5


@pytest.mark.skipif(not os.path.exists(SHIPPED), reason="no shipped net")
def test_boardsize_the_net_cannot_serve_is_refused_clearly():
    e = GTPEngine(make_game("go", 9), NetSource(SHIPPED), LeelaZeroOptions(visits=2))
    reply = e.handle("boardsize 13")
    assert reply.startswith("? unacceptable size") and "9x9" in reply
    assert e.game.size == 9


@pytest.mark.skipif(find_gnugo() is None, reason="GNU Go not installed")
def test_fixed_handicap_matches_gnu_go():
    with GTPClient(gnugo_command(level=1, size=9)) as gnugo:
        for size in (9, 13, 19, 7):
            gnugo.send(f"boardsize {size}")
            limit = 4 if size == 7 else 9
            for stones in range(2, limit + 1):
                gnugo.send("clear_board")
                theirs = set(gnugo.send(f"fixed_handicap {stones}").split())
                game = make_game("go", size)
                ours = {game.action_to_vertex(p) for p in fixed_handicap_points(size, stones)}
                assert ours == theirs, (size, stones)


def test_handicap_commands_place_black_stones_and_white_moves_next():
    e = engine()
    assert set(ok(e, "fixed_handicap 3").split()) == {"C3", "G7", "C7"}
    assert e.position.to_play == 2
    assert sorted(ok(e, "list_stones b").split()) == ["C3", "C7", "G7"]
    assert e.handle("undo").startswith("?")  # handicap is not a move
    ok(e, "clear_board")
    assert ok(e, "set_free_handicap e5 d4") == "E5 D4"
    ok(e, "clear_board")
    assert len(ok(e, "place_free_handicap 4").split()) == 4
    ok(e, "clear_board")
    assert len(ok(e, "place_free_handicap 12").split()) == 12


def test_printsgf_and_loadsgf_round_trip_with_handicap(tmp_path):
    e = engine()
    ok(e, "komi 0.5")
    ok(e, "fixed_handicap 2")
    for line in ("play w e5", "play b e4", "play w pass", "play b d5"):
        ok(e, line)
    text = ok(e, "printsgf")
    assert text.startswith("(;GM[1]") and "SZ[9]" in text and "KM[0.5]" in text
    assert "AB[cg][gc]" in text or "AB[gc][cg]" in text
    assert ";W[ee]" in text and ";B[ef]" in text and ";W[]" in text and ";B[de]" in text
    path = tmp_path / "game.sgf"
    ok(e, f"printsgf {path}")
    other = engine()
    ok(other, f"loadsgf {path}")
    assert snapshot(other) == snapshot(e)
    ok(other, f"loadsgf {path} 3")  # up to (not including) move 3
    assert ok(other, "move_history") == "black E4\nwhite E5"
    record = read_sgf(path)
    assert record.game.komi == 0.5 and len(record.actions) == 4


def test_genmove_cleanup_and_time_controls():
    e = engine(visits=8, seed=1)
    move = ok(e, "genmove b")
    assert move.lower() != "resign"
    assert ok(e, "list_stones b") == (move if move != "pass" else "")
    ok(e, "time_settings 2 0 0")  # absolute 2 s
    ok(e, "time_left w 2 0")
    assert ok(e, "genmove w")
    ok(e, "kgs-time_settings byoyomi 0 1 3")
    assert ok(e, "kgs-genmove_cleanup b") != "pass"
    ok(e, "kgs-time_settings none")
    ok(e, "time_settings 0 1 0")  # byo-yomi time with no stones: no time limit
    assert e.clock.kind == "none"


def test_clock_budgets():
    absolute = Clock("absolute", 60)
    assert 0 < absolute.budget(1, 81) < 60 / 8
    canadian = Clock.canadian(0, 30, 10)
    canadian.set_left(1, 30, 10)
    assert canadian.budget(1, 50) == pytest.approx(0.85 * 3 - canadian.lag)
    byoyomi = Clock("byoyomi", 0, 5, 3)
    byoyomi.set_left(2, 5, 3)
    assert 3 < byoyomi.budget(2, 40) < 5
    assert Clock().budget(1, 81) is None
    absolute.spend(1, 10)
    assert absolute.left[1][0] == 50


@pytest.mark.skipif(not os.path.exists(SHIPPED), reason="no shipped net")
def test_heatmap_prints_leela_zero_layout_under_symmetries():
    e = GTPEngine(make_game("go", 9), NetSource(SHIPPED), LeelaZeroOptions(visits=2))
    ok(e, "play b e5")
    maps = {}
    for sym in ("", " 0", " 5"):
        lines = ok(e, "heatmap" + sym).split("\n")
        assert len(lines) == 11
        rows = [[int(v) for v in line.split()] for line in lines[:9]]
        assert all(len(r) == 9 for r in rows)
        assert rows[4][4] == 0  # E5 is occupied: printed as 0
        assert 900 <= sum(map(sum, rows)) + int(lines[9].split(":")[1]) <= 1000
        assert lines[9].startswith("pass: ") and lines[10].startswith("winrate: ")
        assert 0 <= float(lines[10].split(":")[1]) <= 1
        maps[sym] = rows
    assert maps[""] == maps[" 0"]


def test_lz_setoption_and_lz_genmove_analyze_transcript():
    e = engine(visits=6)
    ok(e, "lz-setoption name visits value 12")
    assert e.player.play.visits == 12
    ok(e, "lz-setoption name resign percentage value 0")
    assert e.player.play.resign_threshold is None
    reply = e.handle("4 lz-genmove_analyze b 1")
    lines = reply.split("\n")
    assert lines[0] == "=4"
    play = [line for line in lines if line.startswith("play ")]
    assert len(play) == 1 and reply.endswith("\n\n")
    info = [line for line in lines if line.startswith("info move")]
    assert info, reply
    fields = info[-1].split()
    for key in ("visits", "winrate", "prior", "lcb", "order", "pv"):
        assert key in fields
    assert e.position.last_move is not None


def test_gomoku_speaks_the_same_gtp():
    e = engine("gomoku", 15, visits=4)
    assert "fixed_handicap" not in ok(e, "list_commands").split("\n")
    assert e.handle("fixed_handicap 2").startswith("? fixed_handicap is for Go only")
    assert e.handle("play b pass").startswith("?")
    for line in ("play b h8", "play w a1", "play b h9", "play w a2", "play b h10", "play w a3", "play b h11",
                 "play w a4"):
        ok(e, line)
    assert e.handle("play w b1").startswith("?")  # black is to move and Gomoku has no pass
    ok(e, "play b h12")
    assert ok(e, "final_score") == "B+"
    assert e.handle("genmove w").startswith("? game over")
    ok(e, "undo")
    move = ok(e, "genmove b")
    assert move.upper() in [v for v in ok(e, "list_stones b").split()]


def test_autotrain_command_plays_selfplay_games_and_replies(tmp_path):
    from zero9.nn.checkpoint import save_checkpoint
    from zero9.nn.net import make_net

    game = make_game("go", 5)
    net_path = tmp_path / "tiny.pt"
    save_checkpoint(net_path, make_net(game, blocks=1, filters=8), {"game": game.to_dict()})
    e = GTPEngine(game, NetSource(net_path, device="cpu"), LeelaZeroOptions(visits=2, seed=3, device="cpu"))
    reply = e.handle(f"autotrain {tmp_path / 'data'} 1")
    assert reply.startswith("= 1 games"), reply
    assert any((tmp_path / "data").iterdir())


def _gtp_process(*extra):
    return subprocess.Popen([sys.executable, "-m", "zero9", "gtp", "-w", "uniform", "-v", "8", *extra],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_subprocess_survives_garbage_and_eof():
    proc = _gtp_process()
    out, err = proc.communicate(b"1 name\r\n\xff\xfe garbage \x00\x01\n\n# comment\n2 play b e5\n3 showboard",
                                timeout=60)
    text = out.decode()
    assert proc.returncode == 0, err
    assert "=1 zero9" in text and "? unknown command" in text and "=2 " in text and "=3 \n" in text
    # the last line had no newline and then EOF came: still answered, no hang


def test_subprocess_lz_analyze_streams_until_the_next_command():
    proc = _gtp_process()
    try:
        proc.stdin.write(b"play b e5\n5 lz-analyze w 5\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == b"= \n" and proc.stdout.readline() == b"\n"
        assert proc.stdout.readline() == b"=5\n"
        info = proc.stdout.readline().decode()
        assert info.startswith("info move ") and " visits " in info and " pv " in info, info
        time.sleep(0.2)
        proc.stdin.write(b"6 name\n")
        proc.stdin.flush()
        lines = []
        while True:  # the stream ends with an empty line, then 6's reply
            line = proc.stdout.readline().decode()
            lines.append(line)
            if line == "=6 zero9\n":
                break
        assert lines[-2] == "\n" and all(x.startswith("info move") for x in lines[:-2])
        proc.stdin.write(b"quit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_seed_repeats_genmove_net_symmetries_included():
    # -s N seeds the net's random symmetries too: before, two engines with one seed differed.
    net = NetSource(os.path.join(os.path.dirname(__file__), "..", "example-data", "go_9x9_best.pt"))

    def moves(seed: int) -> list[str]:
        e = GTPEngine(make_game("go", 9), net, LeelaZeroOptions(visits=60, seed=seed))
        return [ok(e, f"genmove {colour}") for colour in "bwbwbw"]

    first = moves(7)
    assert moves(7) == first
    assert any(moves(s) != first for s in (8, 9, 10)), "the seed should matter"
