"""``zero9 client`` against a hostile server on 127.0.0.1 (issue 36, item 4).

The server (a few lines of http.server) sends what a hostile server, or anyone in between on
plain HTTP, could: a batch whose second task's seed is a path, a gzip bomb whose hashes match,
garbage instead of JSON, 503s; or nothing listens at all. The client must write nothing outside
its cache, stay bounded in memory, retry with backoff and end with one clear line (exit 1), no
traceback, and honour ``--timeout``.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from zero9.distributed.client import ServerError, checked_task
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
