"""zero9 client against a real zero9 server: the command end to end, and no finished game lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import default_ctrl_c

pytest.importorskip("fastapi", reason="the server extra: pip install '.[server]'")

from zero9.distributed.client import Outbox, Upload, fetch_network, http, play_selfplay  # noqa: E402
from zero9.distributed.local import LocalServer  # noqa: E402

pytestmark = pytest.mark.timeout(600)
# A random 1x8 net at 2 visits can end a game in 10 moves (two passes), and resign where its raw net
# sees an even game: the server's shortest-game rule and its resignation check (tests/test_server_attacks.py)
# would refuse such uploads at random, so these servers hand out tasks that never resign and take short games.
TINY = ("--blocks", "1", "--filters", "8", "--visits", "2", "--rate-limit", "0", "--min-moves", "0",
        "--resign-pct", "0")
# faulthandler on: a client that does not answer Ctrl-C is sent SIGABRT and prints where it sat
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONFAULTHANDLER": "1"}


def client_command(url: str, cache, *args: str) -> list[str]:
    return [sys.executable, "-m", "zero9", "client", url, "--cache", str(cache), "--device", "cpu", *args]


def test_client_command_plays_uploads_and_keeps_sgf(tmp_path):
    with LocalServer(tmp_path / "run", *TINY) as server:
        keep = tmp_path / "keep"
        done = subprocess.run(client_command(server.client_url("ann"), tmp_path / "cache", "-g", "2",
                                             "--max-games", "2",
                                             "--keep-sgf", str(keep)),
                              capture_output=True, text=True, timeout=500, env=ENV)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "2 games played, 2 uploads accepted, 0 pending" in done.stdout
        assert "games_per_hour" in done.stderr  # the tqdm line
        assert len(list(keep.glob("*.sgf"))) == 2
        assert server.status()["games"] == 2
        nets = list((tmp_path / "cache" / "networks").glob("*.gz"))
        assert [p.stem for p in nets] == [server.status()["best_network"]]


def test_finished_game_waits_while_server_is_down(tmp_path):
    run_dir, cache = tmp_path / "run", tmp_path / "cache"
    server = LocalServer(run_dir, *TINY).start()
    url = server.client_url("ann")
    task = json.loads(http(f"{url}/get-task/18"))
    net = fetch_network(server.url, cache, task["hash"], task["hash_gzip_hash"])
    upload = play_selfplay([task], net, "cpu", leaves=4)[0]
    server.stop()

    outbox = Outbox(url, cache)
    outbox.add(upload)
    outbox.send_all()
    assert outbox.count() == 1 and outbox.sent == 0  # kept on disk, retried later
    restarted = LocalServer(run_dir, *TINY, port=server.port).start()
    try:
        outbox.send_all(wait=True)  # after the backoff
        assert outbox.count() == 0 and outbox.sent == 1
        assert restarted.status()["games"] == 1
    finally:
        restarted.stop()


def test_refused_upload_moves_aside_with_its_reason(tmp_path):
    with LocalServer(tmp_path / "run", *TINY) as server:
        outbox = Outbox(server.client_url("ann"), tmp_path / "cache")
        bogus = Upload("submit", {"random_seed": "77"}, {"sgf": b"", "trainingdata": b""})
        outbox.add(bogus)
        outbox.send_all()
        assert outbox.count() == 0 and outbox.sent == 0
        reasons = list((tmp_path / "cache" / "refused").glob("*.reason.txt"))
        assert len(reasons) == 1 and "HTTP 400" in reasons[0].read_text()


def test_ctrl_c_keeps_finished_games(tmp_path):
    with LocalServer(tmp_path / "run", *TINY) as server:
        cache = tmp_path / "cache"
        process = subprocess.Popen(client_command(server.client_url("ann"), cache, "-g", "1"),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                                   preexec_fn=default_ctrl_c)
        deadline = time.monotonic() + 300
        while server.status()["games"] < 1 and time.monotonic() < deadline:
            time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        try:
            out, err = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
            out, err = process.communicate(timeout=60)
            raise AssertionError(f"the client ignored Ctrl-C for 120 s; its stacks:\n{err[-6000:]}") from None
        assert process.returncode == 130, err[-2000:]
        pending = list((cache / "pending").glob("*.json"))
        for path in pending:
            Upload.load(path)  # whole, sendable
        assert server.status()["games"] >= 1
