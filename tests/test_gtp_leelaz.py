"""zero9 gtp as a drop-in leelaz: autogtp's and Lizzie's command lines, strict options, Leela Zero's
analyze-tag grammar (the cases of its own gtests.cpp), dump_training / dump_supervised, play after two
passes, smarter passing and the verbose table."""

import argparse
import copy
import io
import os
import re
import subprocess
import sys
import time

import pytest

from zero9.cli import gtp as gtp_cli
from zero9.games import make_game
from zero9.nn.chunks import read_chunk
from zero9.protocols.gtp import BANNER, LEELAZ_VERSION, GTPEngine, LeelaZeroOptions
from zero9.protocols.gtp.analysis import parse_analyze_tags
from zero9.protocols.gtp.loop import serve
from zero9.protocols.gtp.options import SETTINGS, GTPFailure
from zero9.search.player import NetSource

ROOT = os.path.join(os.path.dirname(__file__), "..")
SHIPPED = os.path.join(ROOT, "example-data", "go_9x9_best.txt.gz")
AUTOGTP_TUNE = "--batchsize=5 --tune-only -w {net}"
AUTOGTP_GAME = "-p 0 -v {v} -r 0 -m 2 -t 1 -d -n --noponder -s 7 --gpu=0 -g -q -w {net}"
LIZZIE = "--gtp --lagbuffer 0 --weights {net}"


def engine(size=9, visits=4, log=None, **options) -> GTPEngine:
    options = LeelaZeroOptions(visits=visits, **options)
    return GTPEngine(make_game("go", size), NetSource(None), options, log=log)


def ok(e: GTPEngine, line: str) -> str:
    reply = e.handle(line)
    assert reply.startswith("="), f"{line!r} -> {reply!r}"
    return reply[1:].strip()


def leelaz(args: str, **kw) -> subprocess.Popen:
    """``zero9 gtp`` started the way a tool starts leelaz (the program name aside)."""
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.Popen([sys.executable, "-m", "zero9", "gtp", *args.split()], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **kw)


# ------------------------------------------------------------------------------ command lines


def test_autogtp_tune_only_prints_the_version_autogtp_parses_and_exits_0():
    proc = leelaz(AUTOGTP_TUNE.format(net=SHIPPED))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    # autogtp's Management::runTuningProcess: the text after "Leela Zero " up to the next space.
    start = out.index("Leela Zero ") + len("Leela Zero ")
    assert out[start:out.index(" ", start)] == LEELAZ_VERSION == "0.17"


def test_autogtp_game_line_plays_and_dump_training_feeds_zero9_train(tmp_path):
    proc = leelaz(AUTOGTP_GAME.format(v=6, net=SHIPPED))
    moves = "".join(f"genmove {'bw'[i % 2]}\n" for i in range(12))
    script = f"version\n{moves}dump_training w {tmp_path}/game.txt\nquit\n"
    out, err = proc.communicate(script, timeout=300)
    assert proc.returncode == 0, err
    replies = [r for r in out.split("\n\n") if r.strip()]
    assert replies[0] == "= 0.17"
    assert all(r.startswith("= ") for r in replies), replies
    assert err == ""  # -q: nothing on stderr
    chunk = read_chunk(tmp_path / "game.txt.0.gz")  # Leela Zero's OutputChunker name
    assert len(chunk) == 12 and chunk.size == 9
    assert sorted(set(chunk.value.tolist())) == [-1.0, 1.0]
    assert (chunk.value[chunk.to_play == 2] == 1).all()  # white won

    from zero9.cli import train
    run = tmp_path / "run"
    (run / "chunks").mkdir(parents=True)
    (tmp_path / "game.txt.0.gz").rename(run / "chunks" / "game.gz")
    parser = argparse.ArgumentParser()
    train.add_arguments(parser)
    targs = parser.parse_args(["--dir", str(run), "--game", "go", "--size", "9", "--blocks", "1",
                               "--filters", "8", "--steps", "4", "--batch-size", "8", "--window-min", "0",
                               "--device", "cpu", "--no-progress"])
    assert train.run(targs) == 0
    assert list((run / "nets").glob("*.pt"))


def read_until(proc: subprocess.Popen, pattern: str, seconds: float = 120) -> str:
    """Lines from the engine until one matches ``pattern`` (bounded in time)."""
    seen, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        assert line, "engine closed its output: " + "".join(seen)
        seen.append(line)
        if re.search(pattern, line):
            return "".join(seen)
    raise AssertionError(f"no {pattern!r} within {seconds} s: " + "".join(seen))


def test_lizzie_default_line_starts_analyses_and_plays():
    proc = leelaz(LIZZIE.format(net=SHIPPED))
    # Lizzie 0.7.4's start-up, then an analysis it stops by sending the next command.
    proc.stdin.write("1 name\n2 version\n3 boardsize 9\n4 komi 7.5\n5 lz-analyze 10\n")
    proc.stdin.flush()
    start = read_until(proc, "^info move ")
    assert start.startswith("=1 zero9\n\n=2 0.17\n\n=3 \n\n=4 \n\n=5\ninfo move ")
    proc.stdin.write("6 play b e5\n7 genmove w\n8 lz-analyze 10 avoid b D4,C3:C4 1\n")
    proc.stdin.flush()
    after = read_until(proc, "^=8$")
    after += read_until(proc, "^info move ")
    assert re.search(r"=6 \n\n=7 [A-J]\d\n\n=8\ninfo move", after)
    eighth = after[after.index("=8\n"):]
    out, err = proc.communicate("9 quit\n", timeout=120)
    assert not re.search(r"move (D4|C3|C4) ", eighth + out)
    assert out.endswith("=9 \n\n")
    assert err.startswith(BANNER)
    assert re.search(r"^ *[A-J]\d -> +\d+ \(V: [\d.]+%\) \(LCB: [\d.]+%\) \(N: [\d.]+%\) PV: ", err, re.M)


def test_every_leelaz_017_flag_is_accepted():
    parser = argparse.ArgumentParser()
    gtp_cli.add_arguments(parser)
    argv = ("-g --gtp -t 1 --threads 2 -p 5 --playouts 5 -v 5 --visits 5 -b 0 --lagbuffer 100 -r 5 "
            "--resignpct -1 -w uniform -l /tmp/x.log --logfile /tmp/x.log -q --quiet --timemanage off "
            "--noponder --benchmark --cpu-only --gpu 0 --gpu=1 --full-tuner --tune-only --batchsize=5 "
            "--batchsize 0 --precision half -n --noise -s 7 --seed 7 -d --dumbpass -m 30 --randomcnt 30 "
            "--randomvisits 10 --randomtemp 0.5")
    args = parser.parse_args(argv.split())
    got = (args.gtp, args.lagbuffer, args.gpu, args.batchsize, args.randomtemp)
    assert got == (True, 100, [0, 1], 0, 0.5)


@pytest.mark.parametrize("bad", ["-v -1", "-v 1e20", "-v nan", "-p x", "-r 200", "-r -2", "-m -1",
                                 "-t 100000", "-b -1", "--randomtemp 0", "--randomtemp nan",
                                 "--randomtemp -1", "-s -1",
                                 "--batchsize=-1", "--gpu=-1", "--timemanage sometimes", "--precision double",
                                 "-v"])
def test_bad_command_line_values_exit_2_with_a_reason(bad, capsys):
    parser = argparse.ArgumentParser(prog="zero9 gtp")
    gtp_cli.add_arguments(parser)
    with pytest.raises(SystemExit) as exit_info:
        parser.parse_args(bad.split())
    assert exit_info.value.code == 2
    assert "argument" in capsys.readouterr().err


def test_logfile_keeps_both_directions(tmp_path):
    e = engine()
    log = tmp_path / "lz.log"
    with open(log, "a") as transcript:
        serve(e, io.StringIO("name\nplay b e5\n"), io.StringIO(), transcript)
    assert log.read_text() == "name\n= zero9\n\nplay b e5\n= \n\n"


# ------------------------------------------------------------------------------ strict options


def settings_state(e: GTPEngine) -> tuple:
    p = e.player
    return (copy.deepcopy(e.options), copy.deepcopy(p.config), copy.deepcopy(p.play), e.clock.kind,
            e.clock.main, e.clock.byo_time, e.clock.byo_stones, dict(e.clock.left), e.clock.lag,
            e.game.to_dict(), ok(e, "printsgf"))


BATTERY = ["nan", "NaN", "inf", "-inf", "-1", "0", "1e20", "1e308", str(10**30), "abc", "", "3 4"]
# Which battery values each setting accepts (anything else must be refused and change nothing).
ACCEPTED = {
    "visits": {"0"}, "playouts": {"0"}, "time": {"0"}, "lagbuffer": {"0"}, "randomcnt": {"0"},
    "resign percentage": {"-1", "0"}, "pondering": {"0"}, "lcb": {"0"}, "noise": {"0"},
    "fpu_reduction": {"0"},
}


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_lz_setoption_battery_refuses_and_changes_nothing(name):
    e = engine()
    ok(e, "play b e5")
    for value in BATTERY:
        before = settings_state(e)
        reply = e.handle(f"lz-setoption name {name} value {value}".rstrip())
        if value in ACCEPTED.get(name, set()):
            assert reply.startswith("="), (value, reply)
            continue
        assert reply.startswith("? "), (value, reply)
        assert len(reply.strip()) > 3  # a reason
        assert settings_state(e) == before, value
    assert re.fullmatch(r"[A-J]\d|pass", ok(e, "genmove w"))  # no state left behind breaks the search


def test_root_parallel_and_batch_size_zero_leave_genmove_working():
    e = engine()
    for line in ("lz-setoption name root_parallel value 0", "lz-setoption name batch_size value 0",
                 "lz-setoption name c_puct value -1", "lz-setoption name visits value 1e20"):
        assert e.handle(line).startswith("?"), line
    assert ok(e, "genmove b")
    assert e.handle("lz-setoption name c_puct value 2.5") == "= \n\n" and e.player.config.c_puct == 2.5


@pytest.mark.parametrize("command,values", [
    ("komi {}", ["nan", "inf", "1e308", "-1e308", "82", "abc", ""]),
    ("boardsize {}", ["nan", "0", "-9", "4", "20", "1e3", "9.5", ""]),
    ("time_settings {} 10 1", ["nan", "-1", "1e20", str(10**12), "x"]),
    ("time_settings 60 {} 1", ["nan", "-1", "1e20", "x"]),
    ("time_settings 60 10 {}", ["-1", "100000", "x"]),
    ("time_left b {} 0", ["nan", "1e20", str(10**12), "x"]),
    ("time_left b 10 {}", ["-1", "1e9", "x"]),
    ("kgs-time_settings byoyomi 60 10 {}", ["-1", "100000", "nan"]),
    ("kgs-time_settings absolute {}", ["-5", "1e20", "inf"]),
    ("heatmap {}", ["8", "-1", "nan"]),
])
def test_game_settings_refuse_bad_numbers_and_change_nothing(command, values):
    e = engine()
    ok(e, "play b e5")
    for value in values:
        before = settings_state(e)
        reply = e.handle(command.format(value).strip())
        assert reply.startswith("? "), (command, value, reply)
        assert settings_state(e) == before
    ok(e, "komi 6.5")
    assert e.game.komi == 6.5


def test_boardsize_the_net_cannot_play_is_refused_with_a_line_on_stderr():
    source = NetSource(SHIPPED, device="cpu")
    log = io.StringIO()
    e = GTPEngine(make_game("go", 9), source, LeelaZeroOptions(visits=2), log=log)
    reply = e.handle("boardsize 19")
    assert reply.startswith("? unacceptable size") and "9x9" in reply
    assert "set the GUI's board size to 9" in log.getvalue()
    assert e.game.size == 9


# ------------------------------------------------------------------------------ analyze tags


def tag_cases(e: GTPEngine, text: str):
    try:
        return parse_analyze_tags(text.split(), e.position)
    except GTPFailure:
        return None


def expect(e, text, who=None, interval=None, avoided=None, colour=None, until=None):
    tags = tag_cases(e, text)
    if who is None:
        assert tags is None, text
        return
    assert tags is not None, text
    assert (tags.colour, tags.interval_cs, len(tags.avoid)) == (who, interval, avoided), text
    if avoided:
        assert (tags.avoid[0].colour, tags.avoid[0].until) == (colour, until), text


def test_analyze_tags_parse_as_leela_zero_gtests():
    """The cases of Leela Zero's src/tests/gtests.cpp (AnalyzeParse), on 19x19; B=1, W=2."""
    e = engine(size=19)
    expect(e, "b 50", 1, 50, 0)
    expect(e, "50 b", 1, 50, 0)
    expect(e, "b interval 50", 1, 50, 0)
    expect(e, "interval 50 b", 1, 50, 0)
    expect(e, "b interval")
    expect(e, "42 w", 2, 42, 0)
    expect(e, "1234", 1, 1234, 0)
    ok(e, "play b q16")
    expect(e, "1234", 2, 1234, 0)
    expect(e, "b 100 avoid b k10 1", 1, 100, 1, 1, 1)
    expect(e, "b 100 avoid b k10 1 avoid b a1 1", 1, 100, 2, 1, 1)
    expect(e, "b 100 avoid w k10 8", 1, 100, 1, 2, 8)
    ok(e, "play w q4")
    expect(e, "b 100 avoid b k10 8", 1, 100, 1, 1, 9)
    expect(e, "100 b avoid b k10 8", 1, 100, 1, 1, 9)
    expect(e, "b avoid b k10 8 100", 1, 100, 1, 1, 9)
    expect(e, "avoid b k10 8 100 b", 1, 100, 1, 1, 9)
    expect(e, "avoid b k10 8 100 w", 2, 100, 1, 1, 9)
    expect(e, "avoid b z10 8 100 w")
    expect(e, "avoid b k10 8 100 w bogus")
    expect(e, "avoid b k10 8 100 w avoid b pass 17", 2, 100, 2, 1, 9)
    expect(e, "avoid b k10 8 w avoid b pass 17", 2, 0, 2, 1, 9)
    ok(e, "clear_board")
    expect(e, "b avoid b a1 10 allow b t1 1")
    expect(e, "b avoid w a1 10 allow b t1 1", 1, 0, 1, 2, 9)
    expect(e, "b avoid b pass 10 allow b t1 1", 1, 0, 1, 1, 9)
    expect(e, "b avoid b resign 10 allow b t1 1", 1, 0, 1, 1, 9)
    expect(e, "b avoid w c3,c4,d3,d4 2 avoid b pass 50", 1, 0, 5, 2, 1)
    expect(e, "b avoid w c3,c4,d3,d4, 2 avoid b pass 50")
    ok(e, "clear_board")
    expect(e, "b avoid b q16 1", 1, 0, 1, 1, 0)
    for bad in (":", "d4:", "d14:", ":e3", "d:e3"):
        expect(e, f"b avoid b {bad} 1")
    expect(e, "b avoid b q16:q16 20", 1, 0, 1, 1, 19)
    for corners in ("q16:t19", "t19:q16", "t16:q19", "q19:t16"):
        expect(e, f"b avoid b {corners} 1", 1, 0, 16, 1, 0)
    expect(e, "b avoid b a1:t19 1", 1, 0, 361, 1, 0)
    expect(e, "b avoid b a1:t19 1 avoid w pass 1 avoid w resign 1", 1, 0, 363, 1, 0)
    expect(e, "b avoid b a1:t19,pass,resign 1", 1, 0, 363, 1, 0)
    assert e.handle("lz-analyze avoid b z10 8").startswith("? cannot parse analyze tags")


def test_lz_analyze_avoid_transcript_never_shows_an_avoided_move():
    e = engine(visits=60)
    ok(e, "play b e5")
    ok(e, "play w c3")
    reply = e.handle("lz-analyze avoid b D4,E4:F6 1 b 1", stream_seconds=5)
    assert reply.startswith("=\ninfo move ") and reply.endswith("\n\n")
    moves = set(re.findall(r"info move (\S+) ", reply))
    assert moves and not moves & {"D4", "E4", "E6", "F4", "F5", "F6"}
    allowed = e.handle("lz-analyze b 1 allow b C7,G7 1", stream_seconds=5)
    assert set(re.findall(r"info move (\S+) ", allowed)) <= {"C7", "G7", "pass"}
    e.options.visits = None


def test_lz_analyze_interval_0_prints_nothing_and_minmoves_pads():
    e = engine(visits=30)
    assert e.handle("lz-analyze 0", stream_seconds=1) == "=\n\n"
    e = engine(visits=2)
    reply = e.handle("lz-analyze b interval 1 minmoves 5", stream_seconds=2)
    assert len(re.findall(r"prior \d+", reply.split("\n")[1])) >= 5


def test_visits_bound_lz_analyze_which_then_ends_by_itself():
    e = engine(visits=25)
    out = io.StringIO()
    # No further input: the reply must still end (the empty line) once 25 visits are done.
    inp = io.StringIO("1 lz-analyze b 5\n")
    start = time.monotonic()
    serve(e, inp, out)
    assert out.getvalue().startswith("=1\ninfo move") and out.getvalue().endswith("\n\n")
    assert time.monotonic() - start < 60
    assert sum(s.visits for s in e.player.root_stats()) <= 25 + 8  # one batch of slack


def test_lz_genmove_analyze_with_avoid_plays_an_allowed_move():
    e = engine(visits=20)
    reply = e.handle("lz-genmove_analyze b 1 avoid b A1:H9 1")
    assert reply.startswith("=\n") and re.search(r"^play (J\d|pass)$", reply, re.M)


# ------------------------------------------------------------------------------ training data


def test_dump_training_and_dump_supervised_write_leela_zero_chunks(tmp_path):
    e = engine()
    assert e.handle(f"dump_training b {tmp_path}/none").startswith("? no training data")
    for colour in "bwbw":
        ok(e, f"genmove {colour}")
    assert e.handle(f"dump_training x {tmp_path}/t").startswith("? bad winner")
    assert e.handle("dump_training b").startswith("? wrong number")
    ok(e, f"dump_training b {tmp_path}/t")
    chunk = read_chunk(tmp_path / "t.0.gz")
    assert len(chunk) == 4 and chunk.value.tolist() == [1, -1, 1, -1]
    assert abs(chunk.policy.sum(axis=1) - 1).max() < 1e-5

    sgf = tmp_path / "games.sgf"
    sgf.write_text("(;GM[1]SZ[9]KM[7.5]RE[W+R];B[ee];W[cc];B[dc])(;GM[1]SZ[13]RE[B+R];B[aa])"
                   "(;GM[1]SZ[9]RE[B+3];B[cc];W[gg])")
    ok(e, f"dump_supervised {sgf} {tmp_path}/s")
    data = read_chunk(tmp_path / "s.0.gz")
    assert len(data) == 5  # the 13x13 game is skipped, as Leela Zero skips other sizes
    assert e.handle(f"dump_supervised {tmp_path}/missing.sgf {tmp_path}/s").startswith("? cannot read")


# ------------------------------------------------------------------------------ passes


def test_play_and_genmove_go_on_after_two_passes_and_undo_returns():
    e = engine()
    for line in ("play b e5", "play w pass", "play b pass"):
        ok(e, line)
    assert e.position.is_terminal()
    ok(e, "play w c3")
    assert ok(e, "list_stones w") == "C3"
    assert re.fullmatch(r"[A-J]\d|pass|resign", ok(e, "genmove b"))
    ok(e, "undo")
    ok(e, "undo")
    assert ok(e, "list_stones w") == ""
    assert re.fullmatch(r"[A-J]\d|pass", ok(e, "kgs-genmove_cleanup w"))
    ok(e, "komi 0.5")  # a rebuild replays the passes and the moves after them
    assert "B[ee]" in ok(e, "printsgf")
    assert e.handle("play b e5").startswith("? ")  # occupied: refused, nothing changed
    assert not e.position.is_terminal() or e.position.passes >= 2


def test_smarter_passing_and_dumbpass():
    # White passed and black is ahead (Tromp-Taylor: 81 - 7.5): Leela Zero passes to win.
    e = engine(log=io.StringIO())
    ok(e, "play b e5")
    ok(e, "play w pass")
    assert ok(e, "genmove b") == "pass"
    assert "Passing wins" in e.log.getvalue()
    # -d: the search decides alone, and no pass heuristics are applied.
    dumb = engine(log=io.StringIO(), dumbpass=True, seed=3)
    ok(dumb, "play b e5")
    ok(dumb, "play w pass")
    ok(dumb, "genmove b")
    assert "Passing" not in dumb.log.getvalue()
    # Black behind (a lone white stone): a pass the search wanted becomes its best other move.
    e = engine(visits=16, log=io.StringIO())
    ok(e, "play w e5")
    position = e.position
    e.player.choose(position)
    assert e.policy.smarter_pass(position, e.game.pass_action, e.player.root_stats()) != e.game.pass_action
    assert "Avoiding pass because it loses." in e.log.getvalue()


def test_verbose_table_on_stderr_unless_quiet():
    log = io.StringIO()
    e = engine(visits=12, log=log)
    ok(e, "genmove b")
    lines = log.getvalue().strip().split("\n")
    assert re.fullmatch(r" *\S+ -> +\d+ \(V: +[\d.]+%\) \(LCB: +[\d.]+%\) \(N: +[\d.]+%\) PV: .+", lines[0])
    assert lines[-1] == "12 visits"
    quiet = engine(visits=12, log=None)
    ok(quiet, "genmove b")  # log=None is -q: nothing to write to


def test_at_the_move_cap_genmove_passes_and_the_game_stays_scored():
    """autogtp knows no move cap: after ours it asks for moves, and two passes must end its game."""
    e = GTPEngine(make_game("go", 5, move_cap=4), NetSource(None), LeelaZeroOptions(visits=2, dumbpass=True))
    for move in ("play b c3", "play w b2", "play b d4", "play w b4"):
        assert e.handle(move).startswith("=")
    assert e.position.is_terminal() and e.position.passes == 0
    score = e.handle("final_score")
    assert e.handle("genmove b") == "= pass\n\n"
    assert e.handle("play w pass") == "= \n\n"  # another engine's pass: nothing changes
    assert len(e.history) == 5 and e.handle("final_score") == score  # 4 moves, scored as it stood
    assert e.handle("play b a1").startswith("?")  # stones stay refused


def test_the_server_takes_autogtps_trailing_passes_after_the_cap():
    from zero9.distributed.validation import Rejected, replay_sgf
    from zero9.games.sgf import write_sgf

    game = make_game("go", 5, move_cap=4)
    moves = [(1, 12), (2, 6), (1, 18), (2, 16)]  # c3, b2, d4, b4
    position = game.play_moves([a for _, a in moves])
    winner = position.winner()
    sgf = write_sgf(game, moves, position.result_string()).encode()
    for count in (4, 5, 6):
        assert replay_sgf(game, sgf, count, winner).final.winner() == winner
    with pytest.raises(Rejected):
        replay_sgf(game, sgf, 7, winner)
