"""``zero9 client`` against a hostile server on 127.0.0.1 (issue 36, item 4; issue 42, item 6).

The server (a few lines of http.server) sends what a hostile server, or anyone in between on
plain HTTP, could: a batch whose second task's seed is a path, a gzip bomb whose hashes match,
garbage instead of JSON, 503s, a task that asks for millions of visits; or nothing listens at
all; or (a raw socket server) an answer trickled a byte a second. The client must write nothing outside
its cache, stay bounded in memory, retry with backoff and end with one clear line (exit 1), no
traceback, and honour ``--timeout``.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from zero9.distributed.client import (
    HTTP_TIMEOUT,
    NET_TIMEOUT,
    Outbox,
    ServerError,
    checked_task,
    fetch_network,
    http,
)
from zero9.distributed.config import TASK_OPTION_LIMITS
from zero9.distributed.local import free_port

pytestmark = pytest.mark.timeout(300)
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
GOOD = {"cmd": "selfplay", "hash": "a" * 64, "hash_gzip_hash": "b" * 64, "random_seed": "12345",
        "options": {"visits": "2", "playouts": "0", "resignation_percent": "5", "randomcnt": "0",
                    "noise": "true"},
        "options_hash": "abc123", "required_client_version": "18"}


def gzip_bomb(inflated: int) -> bytes:
    """``inflated`` zero bytes as gzip, built a mebibyte at a time (a few hundred kilobytes)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    return b"".join(packer.compress(block) for _ in range(inflated >> 20)) + packer.flush()


class Hostile(BaseHTTPRequestHandler):
    mode = "escape"
    bomb, bomb_text_hash = b"", ""
    calls = 0

    def log_message(self, *args) -> None:
        pass

    def answer(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        Hostile.calls += 1
        if self.mode == "503":
            return self.answer(503, b"down for maintenance")
        if self.mode == "garbage":
            return self.answer(200, b"<html>surprise</html>")
        if self.mode == "greedy":  # a search that would grow the client by gigabytes
            task = dict(GOOD, options=dict(GOOD["options"], visits="9999999"))
            return self.answer(200, json.dumps(task).encode())
        if self.mode == "escape":  # the first task of a batch is fine, the second names a path
            task = dict(GOOD, random_seed="../../../PWNED-client") if Hostile.calls % 2 == 0 else GOOD
            return self.answer(200, json.dumps(task).encode())
        if self.path.startswith("/networks/"):
            return self.answer(200, self.bomb)
        task = dict(GOOD, hash=self.bomb_text_hash, hash_gzip_hash=hashlib.sha256(self.bomb).hexdigest())
        return self.answer(200, json.dumps(task).encode())


BOMB_SIZE = 300 << 20  # inflates past the client's 256 MiB cap


@pytest.fixture(scope="module")
def hostile():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def run_client(url: str, cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "zero9", "client", url, "--cache", "cache", "--device", "cpu",
               "--keep-sgf", "keep", "--retries", "2", *args]
    env = {**ENV, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def assert_clear_failure(done: subprocess.CompletedProcess, words: str) -> None:
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("zero9 client: giving up:") and words in last, last


def test_checked_task_refuses_every_path_and_odd_value():
    assert checked_task(json.dumps(GOOD).encode())["random_seed"] == "12345"
    bad = [dict(GOOD, random_seed="../x"), dict(GOOD, random_seed="0"), dict(GOOD, random_seed="1" * 20),
           dict(GOOD, hash="../../etc/passwd"), dict(GOOD, hash_gzip_hash="A" * 64),
           dict(GOOD, options_hash="../x"), dict(GOOD, options=dict(GOOD["options"], visits="1e9")),
           dict(GOOD, cmd="rm"), {"cmd": "match", **{k: GOOD[k] for k in ("random_seed", "options")}},
           {"cmd": "wait", "minutes": "1e9"}, dict(GOOD, required_client_version="x")]
    for task in bad:
        with pytest.raises(ServerError):
            checked_task(json.dumps(task).encode())
    for garbage in (b"", b"[1]", b"\xff\xfe", b"{\"cmd\": 5}"):
        with pytest.raises(ServerError):
            checked_task(garbage)


def test_no_path_escape_from_any_task_of_a_batch(hostile, tmp_path):
    Hostile.mode = "escape"
    done = run_client(hostile, tmp_path, "-g", "2", "--max-games", "2")
    assert_clear_failure(done, "random_seed")
    assert not list(tmp_path.rglob("PWNED*")) and not list(tmp_path.parent.rglob("PWNED*"))


def test_a_gzip_bomb_net_with_matching_hashes_is_refused_within_memory(hostile, tmp_path):
    Hostile.mode, Hostile.bomb = "bomb", gzip_bomb(BOMB_SIZE)
    Hostile.bomb_text_hash = hashlib.sha256(bytes(BOMB_SIZE)).hexdigest()  # the hashes match: a "real" net
    assert len(Hostile.bomb) < (1 << 20)
    done = run_client(hostile, tmp_path, "--max-games", "1")
    assert_clear_failure(done, "wrong sha256")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # of the largest child so far
    assert peak < 1.5 * (1 << 30), f"the client peaked at {peak / (1 << 30):.1f} GiB"
    assert not list((tmp_path / "cache" / "networks").glob("*.gz"))


@pytest.mark.parametrize("mode, words", [("garbage", "not JSON"), ("503", "HTTP 503")])
def test_garbage_and_503_end_in_one_clear_line(hostile, tmp_path, mode, words):
    Hostile.mode = mode
    done = run_client(hostile, tmp_path, "--max-games", "1")
    assert_clear_failure(done, words)


def test_refused_connection_one_line_and_timeout_honoured(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens
    done = run_client(url, tmp_path, "--max-games", "1")
    assert_clear_failure(done, "Connection refused")
    start = time.monotonic()
    done = run_client(url, tmp_path, "--max-games", "1", "--retries", "1000", "--timeout", "0.2")
    assert time.monotonic() - start < 12 + 20, "--timeout 0.2 (12 s) was not honoured"  # + start-up
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "0 games played" in done.stdout


def test_server_url_with_a_credential_is_not_printed(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/c/z9c-{'5' * 32}"
    done = run_client(url, tmp_path, "--max-games", "1")
    assert "5" * 32 not in done.stderr + done.stdout


def test_task_options_over_the_limits_are_refused_by_name():
    top = dict(GOOD["options"], **{key: str(limit) for key, limit in TASK_OPTION_LIMITS.items()})
    assert checked_task(json.dumps(dict(GOOD, options=top)).encode())["options"] == top  # the limits play
    for key, limit in TASK_OPTION_LIMITS.items():
        for task in (dict(GOOD, options=dict(GOOD["options"], **{key: str(limit + 1)})),
                     {"cmd": "match", **{k: GOOD["hash"] for k in ("black_hash", "white_hash")},
                      **{k: GOOD["hash_gzip_hash"] for k in ("black_hash_gzip_hash", "white_hash_gzip_hash")},
                      **{k: GOOD[k] for k in ("random_seed", "options_hash")},
                      "options": dict(GOOD["options"], **{key: "9" * 12})}):
            with pytest.raises(ServerError, match=f"{key} .* is not a whole number from 0 to {limit:,}"):
                checked_task(json.dumps(task).encode())
    with pytest.raises(ServerError, match="neither visits nor playouts"):
        checked_task(json.dumps(dict(GOOD, options=dict(GOOD["options"], visits="0", playouts="0"))).encode())


def test_a_task_of_millions_of_visits_is_refused_in_one_line(hostile, tmp_path):
    Hostile.mode = "greedy"
    done = run_client(hostile, tmp_path, "--max-games", "1")
    assert_clear_failure(done, "visits '9999999' is not a whole number from 0 to 20,000")
    assert "getting work failed (" in done.stdout + done.stderr  # each refusal is reported as it comes


class Trickle:
    """A raw socket server on 127.0.0.1 that answers every request one byte a second: its status line
    (``head``) or, after whole headers, a body of 10,000 bytes (``body``); each answer ends after 120 s."""

    def __init__(self, where: str):
        self.where = where
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.stop = threading.Event()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.answer, args=(conn,), daemon=True).start()

    def answer(self, conn: socket.socket) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Length: 10000\r\n\r\n"
        with conn:
            conn.recv(65536)
            if self.where == "body":
                conn.sendall(head)
            end = time.monotonic() + 120
            while not self.stop.is_set() and time.monotonic() < end:
                try:
                    conn.sendall(head[:1] if self.where == "head" else b"x")
                except OSError:
                    return  # the client hung up
                self.stop.wait(1.0)

    def close(self) -> None:
        self.stop.set()
        self.listener.close()


@pytest.fixture(params=["head", "body"])
def trickle(request):
    server = Trickle(request.param)
    yield server
    server.close()


def test_a_trickled_answer_is_cut_off_at_the_timeout(trickle):
    start = time.monotonic()
    with pytest.raises(ServerError, match="no whole answer within 3 s"):
        http(f"{trickle.url}/get-task/18", timeout=3)
    assert time.monotonic() - start < 3 + 2


def test_client_timeout_bounds_a_server_that_trickles(trickle, tmp_path):
    start = time.monotonic()
    try:  # --timeout 0.1: 6 s; a byte a second keeps a socket's own timeout (6 s) from ever firing
        done = run_client(trickle.url, tmp_path, "--max-games", "1", "--retries", "1000", "--timeout", "0.1",
                          timeout=90)
    except subprocess.TimeoutExpired:
        raise AssertionError("the client ran past 90 s against --timeout 0.1 (6 s)") from None
    assert time.monotonic() - start < 6 + 30, "--timeout 0.1 (6 s) was not honoured"  # + start-up
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "no whole answer within" in done.stdout + done.stderr and "0 games played" in done.stdout


def test_a_damaged_pending_upload_is_set_aside_and_named(tmp_path):
    outbox = Outbox(f"http://127.0.0.1:{free_port()}", tmp_path / "cache")  # nothing listens
    (outbox.pending / "0001-5.json").write_text("{not json")
    outbox.send_all()
    assert outbox.count() == 0
    reason = (tmp_path / "cache" / "refused" / "0001-5.reason.txt").read_text()
    assert reason.startswith("pending upload ") and "0001-5.json is damaged" in reason


def test_the_documented_limits_are_the_code_s():
    text = " ".join((Path(__file__).resolve().parents[1] / "docs" / "cli-client.md").read_text().split())
    limits = TASK_OPTION_LIMITS
    visits, randomcnt, resign = (f"{limits[k]:,}" for k in ("visits", "randomcnt", "resignation_percent"))
    assert (f"`visits` and `playouts` at most {visits}, `randomcnt` at most {randomcnt}, "
            f"`resignation_percent` at most {resign}") in text
    assert limits["visits"] == limits["playouts"]
    assert (f"within {HTTP_TIMEOUT:.0f} s (a net's download within {NET_TIMEOUT / 60:.0f} minutes)") in text
    assert inspect.signature(http).parameters["timeout"].default == HTTP_TIMEOUT
    assert inspect.signature(fetch_network).parameters["timeout"].default == NET_TIMEOUT


def test_a_server_refuses_task_options_its_clients_would_refuse(tmp_path):
    """The limits hold on both sides: a server whose tasks every client would refuse does not start."""
    command = [sys.executable, "-m", "zero9", "server", str(tmp_path / "run"), "--visits", "9999999"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    want = "clients would refuse these task options: visits '9999999' is not a whole number from 0 to 20,000"
    assert want in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "run").exists()  # refused before anything was made
