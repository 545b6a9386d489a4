"""Gomocup (piskvork) protocol transcripts: START, BEGIN, TURN, BOARD ... DONE, INFO, timeouts, errors."""

import subprocess
import sys
import time

import pytest

from zero9 import __version__
from zero9.games.gomoku import point_from_xy, xy_from_point
from zero9.protocols.pbrain import ABOUT, PbrainEngine
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
    assert b.execute("INFO rule 8")[0].startswith("ERROR rule 8: caro")
    assert b.execute("INFO timeout_turn soon")[0].startswith("ERROR")
    assert b.execute("TAKEBACK 5,5")[0].startswith("ERROR")
    assert b.execute("FLY 1")[0].startswith("UNKNOWN")
    assert b.execute("BEGIN")[0].startswith("ERROR")  # the board is not empty
    before = b.position
    assert b.execute("BOARD") == []
    assert b.execute("1,2,7") == [] and b.execute("3,3,1") == []  # a bad line: reported at DONE
    assert b.execute("DONE") == ["ERROR bad BOARD line '1,2,7': the last field must be 1, 2 or 3; "
                                 "the position is unchanged"]
    assert b.position is before
    assert b.execute("BOARD") == [] and b.execute("1,1,1") == [] and b.execute("2,2,1") == []
    assert b.execute("DONE")[0].startswith("ERROR impossible BOARD")
    assert b.position is before


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


def about_and_end(proc: subprocess.Popen, send) -> float:
    """The end of every subprocess transcript: ABOUT answers, END exits 0 well inside the protocol's
    example kill limit of 1 s (measured 0.01 s; 0.5-1.0 s before the brain skipped torch's teardown).
    Returns the seconds from END to the exit."""
    send("ABOUT")
    assert proc.stdout.readline().strip() == ABOUT
    started = time.monotonic()
    send("END")
    assert proc.wait(timeout=30) == 0
    seconds = time.monotonic() - started
    assert seconds < 1.0, f"the brain took {seconds:.2f} s to exit after END"
    assert proc.stdout.read() == ""  # nothing after END, nothing lost before it
    return seconds


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
        send("TURN 0,0" if (x, y) != (0, 0) else "TURN 1,1")  # any free point
        assert "," in proc.stdout.readline()
        about_and_end(proc, send)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_every_malformed_unit_gets_one_answer_and_changes_nothing():
    b = brain()
    b.execute("START 9")
    move_of(b.execute("TURN 4,4"), 9)
    for unit in (["BOARD", "x", "DONE"], ["BOARD", "1,1", "DONE"], ["BOARD", "9,9,1", "DONE"],
                 ["BOARD", "1,1,1", "1,1,2", "DONE"], ["BOARD", "-1,0,1", "DONE"], ["TURN 4,4"], ["TURN 4"],
                 ["TURN"], ["TAKEBACK 0,0"], ["INFO rule x"], ["INFO rule 8"], ["INFO rule -1"],
                 ["INFO rule 99"], ["INFO timeout_turn 1.5"], ["START 4"], ["START 26"], ["START"],
                 # a finished game (their five on the bottom row): ERROR the game is over, not a crash
                 ["BOARD", *[f"{2 * k},0,1" for k in range(5)], *[f"{k},8,2" for k in range(5)], "DONE"]):
        before = (b.game, b.position, b.variant)
        replies = [r for line in unit for r in b.execute(line)]
        assert len(replies) == 1 and replies[0].startswith("ERROR"), (unit, replies)
        assert (b.game, b.position, b.variant) == before, unit
    # A command inside a BOARD block drops the block and runs.
    assert b.execute("BOARD") == [] and b.execute("1,1,1") == []
    assert b.execute("ABOUT")[0].startswith('name="zero9"')
    assert b.position.move_number == 2


def test_rule_change_mid_game_replays_the_moves():
    b = brain()
    b.execute("START 20")
    move_of(b.execute("TURN 10,10"), 20)
    moves = b.position.move_number
    assert b.execute("INFO rule 1") == [] and b.game.variant == "standard"
    assert b.position.move_number == moves and b.game.size == 20
    assert b.execute("INFO rule 2") == [] and b.game.variant == "freestyle"  # continuous game: freestyle


@pytest.mark.timeout(300)
def test_subprocess_20x20_exact_five_bad_board_then_a_good_game():
    proc = subprocess.Popen([sys.executable, "-m", "zero9", "pbrain", "-w", "uniform", "-v", "30", "-s", "3"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def send(*lines: str) -> None:
            proc.stdin.write("".join(line + "\n" for line in lines))
            proc.stdin.flush()

        def move() -> tuple[int, int]:
            x, y = (int(v) for v in proc.stdout.readline().strip().split(","))
            assert 0 <= x < 20 and 0 <= y < 20
            return x, y

        send("START 20", "INFO rule 1", "INFO timeout_turn 2000")
        assert proc.stdout.readline().strip() == "OK"
        send("BOARD", "10,10,1", "10,11,x", "9,9,2", "DONE")
        assert proc.stdout.readline().startswith("ERROR bad coordinates '10,11,x'")
        # Theirs: 0..2 and 4..6 on the top row, then 3 last: seven in a row, an overline, which does
        # not win under exact five, so we answer a move. Ours: scattered, no line.
        theirs = [f"{x},0,2" for x in (0, 1, 2, 4, 5, 6, 3)]
        ours = [f"{2 * k},{5 + 2 * k},1" for k in range(6)]
        lines = [line for pair in zip(theirs, ours + [""], strict=True) for line in pair if line]
        send("BOARD", *lines, "DONE")
        reply = move()
        assert reply[1] != 0 or reply[0] > 6
        send("INFO rule 0")  # freestyle: the overline would have ended the game before our move
        assert proc.stdout.readline().startswith("ERROR cannot switch to freestyle")
        send("RESTART", "BEGIN")
        assert proc.stdout.readline().strip() == "OK"
        first = move()
        send("TURN 0,0" if first != (0, 0) else "TURN 1,1")
        assert move() != first
        about_and_end(proc, send)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_renju_rule_4_keeps_black_off_forbidden_points():
    b = brain(visits=8)
    b.execute("START 15")
    assert b.execute("INFO rule 4") == [] and b.game.variant == "renju"
    # The opponent is black (one stone more): two twos around 7,7, a double three point for black.
    black = ["7,5,2", "7,6,2", "5,7,2", "6,7,2"]
    white = ["0,0,1", "14,0,1", "0,14,1"]
    lines = [line for pair in zip(black, white + [""], strict=True) for line in pair if line]
    assert b.execute("BOARD") == [] and all(b.execute(line) == [] for line in lines)
    ours = move_of(b.execute("DONE"))  # we (white) answer
    assert ours != point_from_xy(7, 7, 15)
    before = b.position
    assert b.execute("TURN 7,7") == ["ERROR illegal move H8: forbidden for black in renju (double three)"]
    assert b.position is before
    assert b.execute("INFO rule 0") == [] and b.game.variant == "freestyle"
    move_of(b.execute("TURN 7,7"))  # freestyle: the same move is fine


def test_about_names_only_what_is_known():
    about = brain().execute("ABOUT")
    assert about == [f'name="zero9", version="{__version__}", author="zero9 contributors"']
    assert "www" not in about[0] and "email" not in about[0]  # no page or address of our own: left out


def test_swap2board_opens_chooses_a_colour_and_stays_in_step():
    b = brain(visits=8)
    b.execute("START 15")
    b.execute("INFO timeout_turn 2000")
    # Case 1: the manager asks for the first three stones.
    assert b.execute("SWAP2BOARD") == []
    [reply] = b.execute("DONE")
    stones = [point_from_xy(*(int(v) for v in xy.split(",")), 15) for xy in reply.split()]
    assert len(stones) == 3 and len(set(stones)) == 3
    assert b.position.move_number == 3 and b.position.board_array()[stones[0]] == 1  # black first
    # Case 2: three stones; we take black (SWAP) or answer white's fourth move.
    opening = ["7,7", "8,7", "9,9"]
    assert b.execute("SWAP2BOARD") == [] and all(b.execute(line) == [] for line in opening)
    [reply] = b.execute("DONE")
    assert reply == "SWAP" or move_of([reply]) not in {point_from_xy(7, 7, 15), point_from_xy(8, 7, 15)}
    assert b.position.move_number == (3 if reply == "SWAP" else 4)
    # Case 3: five stones; SWAP or white's sixth move.
    for line in ["SWAP2BOARD", *opening, "8,8", "8,6"]:
        assert b.execute(line) == []
    [reply] = b.execute("DONE")
    assert reply == "SWAP" or b.position.move_number == 6
    # Malformed blocks: one ERROR at DONE each, and the next command is answered as usual.
    for unit, error in ((["SWAP2BOARD", "7,7", "DONE"], "ERROR SWAP2BOARD with 1 stone: expected 0, 3 or 5"),
                        (["SWAP2BOARD", "7,7", "x", "8,8", "DONE"], "ERROR bad coordinates 'x'"),
                        (["SWAP2BOARD", "7,7", "7,7", "8,8", "DONE"], "ERROR impossible SWAP2BOARD")):
        before = b.position
        replies = [r for line in unit for r in b.execute(line)]
        assert len(replies) == 1 and replies[0].startswith(error), (unit, replies)
        assert b.position is before
        assert b.execute("ABOUT") == [ABOUT]


def test_swap2board_needs_a_game():
    b = brain()
    assert b.execute("SWAP2BOARD")[0].startswith("ERROR no game")
    assert b.execute("DONE")[0].startswith("UNKNOWN")  # no block was opened: DONE alone is unknown


@pytest.mark.timeout(120)
def test_subprocess_swap2_then_board_then_a_quick_end():
    """Gomocup's swap2 exchange as a manager sends it, on the real brain: SWAP2BOARD blocks, then BOARD."""
    proc = subprocess.Popen([sys.executable, "-m", "zero9", "pbrain", "-w", "uniform", "-v", "50", "-s", "2"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def send(*lines: str) -> None:
            proc.stdin.write("".join(line + "\n" for line in lines))
            proc.stdin.flush()

        send("START 15", "INFO rule 1", "INFO timeout_turn 1000")
        assert proc.stdout.readline().strip() == "OK"
        send("SWAP2BOARD", "DONE")
        three = proc.stdout.readline().split()
        assert len(three) == 3 and all(len(xy.split(",")) == 2 for xy in three)
        send("SWAP2BOARD", *three, "DONE")
        choice = proc.stdout.readline().strip()
        assert choice == "SWAP" or len(choice.split(",")) == 2
        send("SWAP2BOARD", "7,7", "DONE")  # a bad block: one ERROR, nothing stray after it
        assert proc.stdout.readline().startswith("ERROR SWAP2BOARD with 1 stone")
        # The manager then sends the agreed position: we are white (their 2 black stones, our 1 white).
        send("BOARD", f"{three[0]},2", f"{three[1]},1", f"{three[2]},2", "DONE")
        x, y = (int(v) for v in proc.stdout.readline().strip().split(","))
        assert f"{x},{y}" not in three
        about_and_end(proc, send)
    finally:
        if proc.poll() is None:
            proc.kill()


# -- a size-independent net (pooled heads: zero9.nn.net) serves START 20; a fixed-size net refuses it --


def pooled_net_file(tmp_path) -> str:
    """A real tiny Gomoku net with pooled heads, made for 15x15, saved as a checkpoint."""
    import torch

    from zero9.games import make_game
    from zero9.nn.checkpoint import save_checkpoint
    from zero9.nn.heads import POOLED_HEADS, make_net

    torch.manual_seed(0)
    game = make_game("gomoku", 15)
    path = tmp_path / "gomoku_multi.pt"
    save_checkpoint(path, make_net(game, 2, 16, heads=POOLED_HEADS), {"game": game.to_dict()})
    return str(path)


def test_a_pooled_net_plays_start_20_15_and_9(tmp_path):
    b = PbrainEngine(NetSource(pooled_net_file(tmp_path), device="cpu"), visits=8, seed=1)
    for size in (20, 15, 9):
        assert b.execute(f"START {size}") == ["OK"]
        first = move_of(b.execute("BEGIN"), size)
        reply = b.execute("TURN 0,0" if xy_from_point(first, size) != "0,0" else "TURN 1,1")
        ours = move_of(reply, size)
        board = b.position.board_array()
        assert board.shape == (size * size,) and board[first] == 1 and board[ours] == 1
    assert b.execute("START 20") == ["OK"]
    for line in ("BOARD", "10,10,2", "11,11,1", "10,11,2"):
        assert b.execute(line) == []
    assert (b.position.board_array() != 0).sum() == 0  # nothing until DONE
    move_of(b.execute("DONE"), 20)
    assert (b.position.board_array() != 0).sum() == 4


def test_a_fixed_size_net_refuses_start_20_naming_its_size():
    from zero9.nn.checkpoint import default_net_path

    b = PbrainEngine(NetSource(default_net_path("gomoku", 15), device="cpu"), visits=4, seed=1)
    assert b.execute("START 20") == ["ERROR unacceptable size: the net gomoku_15x15_best.pt is for a 15x15 "
                                     "board, not 20x20"]
    assert b.game is None
    assert b.execute("START 15") == ["OK"]
    assert b.execute("START 20")[0].startswith("ERROR unacceptable size") and b.game.size == 15


@pytest.mark.timeout(120)
def test_subprocess_start_20_with_a_pooled_net(tmp_path):
    path = pooled_net_file(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "zero9", "pbrain", "-w", path, "-v", "16", "-s", "4",
                             "--device", "cpu"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def send(*lines: str) -> None:
            proc.stdin.write("".join(line + "\n" for line in lines))
            proc.stdin.flush()

        send("START 20", "INFO timeout_turn 2000")
        assert proc.stdout.readline().strip() == "OK"
        send("BEGIN")
        x, y = (int(v) for v in proc.stdout.readline().strip().split(","))
        assert 0 <= x < 20 and 0 <= y < 20
        send("TURN 19,19" if (x, y) != (19, 19) else "TURN 0,0")
        x2, y2 = (int(v) for v in proc.stdout.readline().strip().split(","))
        assert 0 <= x2 < 20 and 0 <= y2 < 20 and (x2, y2) not in ((x, y), (19, 19))
        send("START 26")
        assert proc.stdout.readline().startswith("ERROR unsupported size 26")
        about_and_end(proc, send)
    finally:
        if proc.poll() is None:
            proc.kill()
