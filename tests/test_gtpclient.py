"""zero9.arena.gtpclient against a real GNU Go, and against small misbehaving engines (real processes)."""

from __future__ import annotations

import sys
import textwrap

import pytest

from zero9.arena.gtpclient import GTPClient, GTPEngineError, GTPError, gnugo_command

FAKE_ENGINE = textwrap.dedent("""
    import sys, time
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "crash":
            sys.stderr.write("fake: going down\\n"); sys.stderr.flush(); sys.exit(3)
        if cmd[0] == "hang":
            time.sleep(60)
        if cmd[0] == "garbage":
            print("hello there", flush=True); continue
        if cmd[0] == "quit":
            print("=\\n", flush=True); break
        if cmd[0] == "lines":
            print("= first\\n  second\\n\\n", end="", flush=True); continue
        print(f"= {' '.join(cmd[1:])}\\n", flush=True)
""")


@pytest.fixture
def fake(tmp_path):
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)
    return [sys.executable, str(script)]


def test_gnugo_command_line(gnugo_path):
    cmd = gnugo_command(level=3, size=9, komi=7.5)
    assert cmd[0] == gnugo_path
    assert cmd[1:5] == ["--mode", "gtp", "--level", "3"]
    assert "--chinese-rules" in cmd and "--positional-superko" in cmd
    assert cmd.count("--capture-all-dead") == 1  # Tromp-Taylor needs dead stones off the board
    assert cmd[cmd.index("--boardsize") + 1] == "9" and cmd[cmd.index("--komi") + 1] == "7.5"


def test_talks_to_gnugo(gnugo_path):
    with GTPClient(gnugo_command(level=1), timeout=30) as gg:
        assert gg.send("name") == "GNU Go"
        assert gg.send("protocol_version") == "2"
        assert gg.send("get_komi") == "7.5"
        assert gg.send("play b D4") == ""
        assert gg.send("list_stones black") == "D4"
        move = gg.send("genmove w")
        assert move.upper() != "D4" and len(move) >= 2
        board = gg.send("showboard")
        assert board.splitlines()[0].strip() == "A B C D E F G H J" and board.count("\n") >= 10
        with pytest.raises(GTPError, match="illegal move") as err:
            gg.send("play b D4")
        assert err.value.message == "illegal move" and err.value.command == "play b D4"
        assert gg.send("list_stones black") == "D4"  # still usable after a failure
        proc = gg.proc
    assert proc.poll() is not None  # the with block stopped it


def test_multi_line_replies_and_bad_commands(fake):
    with GTPClient(fake, timeout=10, name="fake") as e:
        assert e.send("echo a b") == "a b"
        assert e.send("lines") == "first\n  second"
        for bad in ("", "two\nlines"):
            with pytest.raises(ValueError, match="bad GTP command"):
                e.send(bad)


def test_crash_is_reported_with_the_engine_name(fake):
    e = GTPClient(fake, timeout=10, name="fakebot")
    assert e.send("echo x") == "x"
    with pytest.raises(GTPEngineError, match=r"fakebot.*(closed its output|exited).*code 3") as err:
        e.send("crash")
    assert "going down" in str(err.value)
    with pytest.raises(GTPEngineError, match="fakebot"):
        e.send("echo again")


def test_timeout_stops_the_engine(fake):
    e = GTPClient(fake, timeout=0.5, name="slowpoke")
    with pytest.raises(GTPEngineError, match="slowpoke did not answer 'hang' within 0.5 s"):
        e.send("hang")
    assert e.proc.poll() is not None


def test_not_gtp_and_missing_engine(fake, tmp_path):
    with GTPClient(fake, timeout=10) as e, pytest.raises(GTPEngineError, match="not a GTP reply"):
        e.send("garbage")
    with pytest.raises(GTPEngineError, match="cannot start engine"):
        GTPClient([str(tmp_path / "no-such-engine")])
    with pytest.raises(ValueError, match="empty engine command"):
        GTPClient([])
