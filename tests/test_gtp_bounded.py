"""Bounded reads in ``zero9 gtp``: no FIFO, device or huge file is read by loadsgf / dump_supervised,
and a line without a newline never grows past the line cap (the engine answers it and stays in step)."""

import io
import os
import subprocess
import sys
import threading

import pytest

from zero9.games import make_game
from zero9.games.sgf import MAX_SGF_BYTES
from zero9.protocols.gtp import GTPEngine, LeelaZeroOptions
from zero9.protocols.gtp.loop import MAX_LINE_CHARS, serve
from zero9.search.player import NetSource

ROOT = os.path.join(os.path.dirname(__file__), "..")


def engine() -> GTPEngine:
    return GTPEngine(make_game("go", 9), NetSource(None), LeelaZeroOptions(visits=4))


def answer_within(e: GTPEngine, line: str, seconds: float = 10.0) -> str:
    """The reply to ``line``, failing the test if it takes longer (a FIFO must never block)."""
    out: list[str] = []
    worker = threading.Thread(target=lambda: out.append(e.handle(line)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert out, f"{line!r} did not answer within {seconds} s"
    return out[0]


@pytest.mark.parametrize("command", ["loadsgf {}", "dump_supervised {} out"])
def test_devices_and_fifos_are_refused_at_once(tmp_path, command):
    e = engine()
    e.handle("play b e5")
    before = e.handle("printsgf")
    reply = answer_within(e, command.format("/dev/zero"))
    assert reply.startswith("? ") and "/dev/zero" in reply and "not a regular file" in reply, reply
    fifo = tmp_path / "game.sgf"
    os.mkfifo(fifo)
    reply = answer_within(e, command.format(fifo))
    assert reply.startswith("? ") and str(fifo) in reply and "not a regular file" in reply, reply
    assert e.handle("printsgf") == before  # nothing changed


def test_a_huge_sgf_is_refused_naming_the_file_and_the_limit(tmp_path):
    e = engine()
    big = tmp_path / "big.sgf"
    big.write_bytes(b"(;GM[1]FF[4]SZ[9]C[" + b"x" * MAX_SGF_BYTES + b"])")
    reply = e.handle(f"loadsgf {big}")
    assert reply.startswith("? ") and str(big) in reply and f"{MAX_SGF_BYTES:,} bytes" in reply, reply
    missing = tmp_path / "missing.sgf"
    reply = e.handle(f"loadsgf {missing}")
    assert reply.startswith("? ") and str(missing) in reply


def test_a_good_sgf_still_loads(tmp_path):
    e = engine()
    path = tmp_path / "g.sgf"
    path.write_text("(;GM[1]FF[4]SZ[9]KM[7.5];B[ee];W[cc])")
    assert e.handle(f"loadsgf {path}") == "= \n\n"
    assert e.handle("move_history") == "= white C7\nblack E5\n\n"


def test_an_overlong_line_is_answered_once_and_the_engine_stays_in_step():
    limit = 1000
    lines = ("1 name\n" + "2 play b " + "x" * (3 * limit) + "\n3 play b e5\n"
             + "y" * (limit + 1) + "\n4 name\n")
    out = io.StringIO()
    serve(engine(), io.StringIO(lines), out, limit=limit)
    replies = out.getvalue().split("\n\n")[:-1]
    assert replies[0] == "=1 zero9"
    assert replies[1].startswith("?2 line too long") and f"{limit:,} characters" in replies[1]
    assert replies[2] == "=3 "
    assert replies[3].startswith("? line too long")
    assert replies[4] == "=4 zero9"
    assert len(replies) == 5
    assert MAX_LINE_CHARS == 1 << 20


def _child_max_rss_kib(stdin_chunks) -> tuple[str, int]:
    """Run ``zero9 gtp -w uniform -q``, feed it the chunks, return (stdout, its peak RSS in KiB)."""
    env = {**os.environ, "PYTHONPATH": ROOT}
    proc = subprocess.Popen([sys.executable, "-m", "zero9", "gtp", "-w", "uniform", "-q", "-v", "2"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    reader_out: list[bytes] = []
    reader = threading.Thread(target=lambda: reader_out.append(proc.stdout.read()), daemon=True)
    reader.start()
    for chunk in stdin_chunks:
        proc.stdin.write(chunk)
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join(30)
    assert proc.returncode == 0
    return reader_out[0].decode(), usage.ru_maxrss


def test_a_100_mib_line_without_newline_keeps_memory_bounded():
    plain, plain_rss = _child_max_rss_kib([b"1 name\nquit\n"])
    mib = b"z" * (1 << 20)
    flood, flood_rss = _child_max_rss_kib([b"1 name\n2 play b "] + [mib] * 100 + [b"\n3 name\nquit\n"])
    assert plain.startswith("=1 zero9")
    replies = flood.split("\n\n")
    assert replies[0] == "=1 zero9" and replies[1].startswith("?2 line too long") and replies[2] == "=3 zero9"
    # A 100 MiB line held whole would be 100+ MiB (decoded, more); pieces of 1 MiB cost a few MiB.
    assert flood_rss - plain_rss < 40 * 1024, (plain_rss, flood_rss)
