"""Gomocup (piskvork) protocol transcripts: START, BEGIN, TURN, BOARD ... DONE, INFO, timeouts, errors."""

import subprocess
import sys

import pytest

from zero9.games.gomoku import point_from_xy, xy_from_point
from zero9.protocols.pbrain import PbrainEngine
from zero9.search.player import NetSource


def brain(visits=4) -> PbrainEngine:
    return PbrainEngine(NetSource(None), visits=visits, seed=1)


def move_of(reply: list[str], size: int = 15) -> int:
    assert len(reply) == 1, reply
    x, y = (int(v) for v in reply[0].split(","))
    return point_from_xy(x, y, size)


def test_coordinates_put_piskvork_row_zero_on_top():
    assert point_from_xy(0, 0, 15) == 14 * 15  # top-left = A15
    assert xy_from_point(0, 15) == "0,14"  # A1 is the bottom-left
    for p in (0, 7, 112, 224):
        x, y = (int(v) for v in xy_from_point(p, 15).split(","))
        assert point_from_xy(x, y, 15) == p


def test_transcript_start_begin_turn_takeback_about_end():
    b = brain()
    assert b.execute("START 15") == ["OK"]
    assert b.execute("INFO timeout_turn 1000") == []
    assert b.execute("INFO timeout_match 60000") == []
    assert b.execute("INFO time_left 60000") == []
    assert b.execute("INFO max_memory 83886080") == []
    first = move_of(b.execute("BEGIN"))
    assert b.position.board_array()[first] == 1  # we are black
    reply = b.execute("TURN 0,0")
    ours = move_of(reply)
    board = b.position.board_array()
    assert board[point_from_xy(0, 0, 15)] == 2 and board[ours] == 1
    assert b.execute(f"TAKEBACK {reply[0]}") == ["OK"]
    assert b.position.board_array()[ours] == 0
    assert b.execute("about")[0].startswith('name="zero9"')
    assert b.execute("RESTART") == ["OK"] and b.position.move_number == 0
    assert b.execute("END") == [] and b.quit


def test_board_done_builds_the_position_and_answers():
    b = brain()
    b.execute("START 15")
    # opponent (2) has one more stone: they are black, we are white and to move
    lines = ["BOARD", "7,7,2", "8,8,1", "7,8,2", "9,9,1", "7,9,2"]
    for line in lines:
        assert b.execute(line) == []
    reply = b.execute("DONE")
    ours = move_of(reply)
    board = b.position.board_array()
    assert (board == 2).sum() == 3 and (board == 1).sum() == 3  # black = them, white = us
    assert board[point_from_xy(7, 7, 15)] == 1  # their first stone is black (colour 1 in zero9)
    assert board[ours] == 2


def test_bad_input_gets_error_and_unknown_gets_unknown():
    b = brain()
    assert b.execute("TURN 1,1")[0].startswith("ERROR no game")
    assert b.execute("START 3")[0].startswith("ERROR")
    assert b.execute("START x")[0].startswith("ERROR")
    assert b.execute("RECTSTART 15,20")[0].startswith("ERROR")
    assert b.execute("START 15") == ["OK"]
    assert b.execute("TURN 99,99")[0].startswith("ERROR") and b.position.move_number == 0
    assert b.execute("TURN 1;1")[0].startswith("ERROR")
    move_of(b.execute("TURN 1,1"))
    assert b.execute("TURN 1,1")[0].startswith("ERROR")  # occupied
    assert b.execute("INFO rule 4")[0].startswith("ERROR rule 4: renju")
    assert b.execute("INFO timeout_turn soon")[0].startswith("ERROR")
    assert b.execute("TAKEBACK 5,5")[0].startswith("ERROR")
    assert b.execute("FLY 1")[0].startswith("UNKNOWN")
    assert b.execute("BEGIN")[0].startswith("ERROR")  # the board is not empty
    b.execute("BOARD")
    assert b.execute("1,2,7")[0].startswith("ERROR")  # bad field ends the BOARD
    assert b.execute("BOARD") == [] and b.execute("1,1,1") == [] and b.execute("2,2,1") == []
    assert b.execute("DONE")[0].startswith("ERROR impossible BOARD")


@pytest.mark.timeout(120)
def test_timeout_turn_cuts_a_huge_search_short():
    b = brain(visits=10**7)
    b.execute("START 15")
    b.execute("INFO timeout_turn 400")
    assert b.budget() <= 0.4
    move_of(b.execute("BEGIN"))  # would take hours at 10^7 visits without the time limit
    b.execute("INFO timeout_turn 0")  # 0: move at once
    assert b.budget() <= 0.05
    b.execute("INFO timeout_turn 30000")
    b.execute("INFO timeout_match 10000")
    b.execute("INFO time_left 2000")
    assert b.budget() < 0.2  # the match clock is the tighter limit
    move_of(b.execute("TURN 0,0"))


def test_exact_five_rule_switches_the_variant():
    b = brain()
    b.execute("INFO rule 1")
    b.execute("START 15")
    assert b.game.to_dict()["variant"] == "standard"


@pytest.mark.timeout(120)
def test_subprocess_transcript_with_board_and_timeout():
    proc = subprocess.Popen([sys.executable, "-m", "zero9", "pbrain", "-w", "uniform", "-v", "1000000"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def send(line: str) -> None:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()

        send("START 15")
        assert proc.stdout.readline().strip() == "OK"
        send("INFO timeout_turn 500")
        send("INFO timeout_match 0")
        for line in ("BOARD", "7,7,1", "8,7,2", "7,8,1", "8,8,2", "DONE"):
            send(line)
        reply = proc.stdout.readline().strip()  # a million visits take hours: only the limit answers in time
        x, y = (int(v) for v in reply.split(","))
        assert (x, y) not in {(7, 7), (8, 7), (7, 8), (8, 8)} and 0 <= x < 15 and 0 <= y < 15
        send("TURN 0,0")
        assert "," in proc.stdout.readline()
        send("ABOUT")
        assert 'name="zero9"' in proc.stdout.readline()
        send("END")
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
