"""The server's SGF checks cost time linear in the bytes received (issue 42): hostile SGFs up to the
1 MiB limit, through the server's own path (bounded gunzip, shape count, parse and replay).

A 114-byte gzip of 50,000 ``[`` without a ``]`` took 36.6 s in the shape count (a regular
expression retried from every ``[``: quadratic, 20,000 -> 6.4 s, 40,000 -> 28 s), and the parser
behind it was quadratic in the same input. Timed: run under ``flock /tmp/zero9-timing.lock``.
"""

from __future__ import annotations

import gzip
import time

import pytest

from zero9.distributed.config import Limits, TaskOptions
from zero9.distributed.validation import Rejected, check_sgf_shape
from zero9.games import BLACK, make_game

pytest.importorskip("sqlalchemy", reason="the server extra: pip install '.[server]'")
from zero9.distributed.server import Server  # noqa: E402

pytestmark = pytest.mark.timeout(120)
HEAD = b"(;GM[1]FF[4]SZ[9]KM[7.5]RE[B+R]"
KIB = 1024


def hostile(n: int) -> dict[str, bytes]:
    """SGFs of about ``n`` bytes that once cost the shape count or the parser more than linear time,
    or that a linear scan must still get through (long values, escapes, structure in comments)."""
    return {
        "unclosed [": b"[" * n,
        "unclosed [ after a root": HEAD + b"C[" + b"[" * n,
        "backslashes": HEAD + b"C[" + b"\\" * n,
        "closed ] run": HEAD + b"]" * n + b")",
        "empty values": HEAD + b"C" + b"[]" * (n // 2) + b";B[ee])",
        "empty properties": HEAD + b"AA[]" * (n // 4) + b";B[ee])",
        "a comment of ( and ;": HEAD + b"C[" + b"(;" * (n // 2) + b"];B[ee])",
        "escaped brackets": HEAD + b"C[" + b"\\]" * (n // 2) + b"];B[ee])",
        "blanks between nodes": HEAD + b"C[x]" + b" " * n + b";B[ee])",
        "many move nodes": HEAD + b";B[ee];W[]" * (n // 10) + b")",
        "line breaks in a comment": HEAD + b"C[" + b"\r\n" * (n // 2) + b"];B[ee])",
        "line breaks between nodes": HEAD + b";B[ee]" + b"\n" * n + b";W[])",
        "a long property name": HEAD + b"C" * n + b"[x];B[ee])",
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Server:
    return Server(tmp_path_factory.mktemp("sgf-time"), make_game("go", 9, komi=7.5), TaskOptions())


def seconds_to_check(server: Server, sgf: bytes) -> float:
    """Wall time of the server's SGF path on ``sgf`` gzip'd (accepted or refused: both are fine)."""
    form = {"movescount": "1"}
    upload = gzip.compress(sgf)
    start = time.perf_counter()
    try:
        server._replay(form, upload, BLACK)
    except Rejected:
        pass
    return time.perf_counter() - start


def best_of(server: Server, sgf: bytes, runs: int = 3) -> float:
    return min(seconds_to_check(server, sgf) for _ in range(runs))


def test_the_114_byte_bracket_bomb_is_refused_at_once(server):
    bomb = gzip.compress(b"[" * 50_000)
    assert len(bomb) < 200
    start = time.perf_counter()
    with pytest.raises(Rejected) as refused:
        server._replay({"movescount": "1"}, bomb, BLACK)
    assert time.perf_counter() - start < 1.0, "the bomb took a second or more"
    assert refused.value.status in (400, 413) and "'['" in refused.value.reason


def test_sgf_checks_are_linear_up_to_the_1_mib_limit(server):
    assert Limits().sgf == 1024 * KIB
    small, large = hostile(256 * KIB), hostile(1024 * KIB - len(HEAD) - 64)
    slow = {}
    total_small = total_large = 0.0
    for name in small:
        assert len(large[name]) <= Limits().sgf, name
        t_small, t_large = best_of(server, small[name]), best_of(server, large[name])
        total_small, total_large = total_small + t_small, total_large + t_large
        if t_large >= 1.0:
            slow[name] = round(t_large, 3)
    assert not slow, f"1 MiB took a second or more: {slow}"
    # linear: four times the bytes, about four times the time (quadratic would be sixteen); the
    # 50 ms absorbs timer noise when every check takes a few milliseconds
    assert total_large < 8 * total_small + 0.05, (total_small, total_large)


@pytest.mark.parametrize("sgf, words", [
    (HEAD + b";B[ee]C[abc )", "without its closing ']'"),
    (HEAD + b"C[a\\", "without its closing ']'"),
    (HEAD + b";B[ee](;W[aa]))", "2 game trees or variations"),
    (HEAD + b";B[ee]" * 1001 + b")", "1002 nodes"),
    (HEAD + b"C" + b"[]" * 4000 + b";B[ee])", "'[' (property values)"),
    (HEAD + b"C[" + b"\n" * (64 << 10) + b"];B[ee])", "bytes in property values"),
])
def test_shape_refusals_name_what_is_wrong(sgf, words):
    with pytest.raises(Rejected) as refused:
        check_sgf_shape(sgf, 1000)
    assert words in refused.value.reason


def test_a_plain_game_with_escapes_and_brackets_in_its_comment_passes_the_shape():
    check_sgf_shape(HEAD + b"C[a \\] b [x\\] (;)]" + b";B[ee];W[]" * 400 + b")", 1000)
