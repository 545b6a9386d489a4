"""The same server on a real PostgreSQL: started here in its own data folder, on 127.0.0.1.

The flow: a real self-play game uploaded and accepted, a replay refused, a candidate net
submitted, its match games played by the client code until SPRT decides, a kill -9 and a
restart that keeps every accepted row.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the server extra: pip install '.[server]'")
pytest.importorskip("psycopg", reason="the server extra: pip install '.[server]'")

from zero9.distributed.client import (  # noqa: E402
    Refused,
    fetch_network,
    http,
    multipart,
    play_match_task,
    play_selfplay,
)
from zero9.distributed.local import LocalServer, free_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "example-data" / "go_9x9_best.txt.gz"
pytestmark = pytest.mark.timeout(900)


def postgres_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        pytest.fail("PostgreSQL is not installed (scripts/test.sh installs Debian's postgresql)")
    return found[-1]


def as_db_user(command: list[str]) -> list[str]:
    """initdb refuses root: run PostgreSQL as the 'postgres' user then."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


@pytest.fixture
def postgres(tmp_path):
    # pytest's folders are private to their owner; the 'postgres' user gets a folder of its own.
    top = Path(tempfile.mkdtemp(prefix="zero9-pg-")) if os.geteuid() == 0 else tmp_path
    data = top / "pgdata"
    data.mkdir()
    if os.geteuid() == 0:
        shutil.chown(top, "postgres")
        shutil.chown(data, "postgres")
    port = free_port()
    subprocess.run(as_db_user([postgres_bin("initdb"), "-D", str(data), "-U", "zero9", "-A", "trust"]),
                   check=True, capture_output=True)
    options = f"-h 127.0.0.1 -p {port} -k {data}"
    subprocess.run(as_db_user([postgres_bin("pg_ctl"), "-D", str(data), "-o", options, "-w", "-l",
                               str(data / "log"), "start"]), check=True, capture_output=True)
    try:
        yield f"postgresql+psycopg://zero9@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(as_db_user([postgres_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
                       capture_output=True)
        if top != tmp_path:
            shutil.rmtree(top, ignore_errors=True)


def get_task(url: str) -> dict:
    return json.loads(http(f"{url}/get-task/18"))


def post(url: str, endpoint: str, fields: dict, files: dict, headers: dict | None = None) -> dict:
    body, content_type = multipart(fields, files)
    return json.loads(http(f"{url}/{endpoint}", body, {"Content-Type": content_type, **(headers or {})}))


def test_server_flow_on_postgresql(tmp_path, postgres):
    run_dir, cache = tmp_path / "run", tmp_path / "cache"
    args = ("--db", postgres, "--blocks", "1", "--filters", "8", "--visits", "2", "--rate-limit", "0",
            "--elo1", "400", "--min-moves", "0", "--resign-pct", "0")
    server = LocalServer(run_dir, *args).start()
    try:
        assert not (run_dir / "server.db").exists()  # the rows are in PostgreSQL
        urls = [server.client_url("ann"), server.client_url("bob")]  # a decision counts two clients
        task = get_task(urls[0])
        net = fetch_network(server.url, cache, task["hash"], task["hash_gzip_hash"])
        game = play_selfplay([task], net, "cpu", leaves=4)[0]
        assert post(urls[0], "submit", game.fields, game.files)["accepted"]
        with pytest.raises(Refused, match="409"):
            post(urls[0], "submit", game.fields, game.files)

        key = (run_dir / "api_key").read_text().strip()
        post(server.url, "submit-network", {}, {"weights": SHIPPED.read_bytes()}, {"X-Api-Key": key})
        # Until SPRT decides: 5 straight wins at --elo1 400, but each lost game (at 2 visits the shipped
        # net sometimes loses to the random one) needs about 3 more, so 12 games were not always enough.
        for i in range(40):
            url = urls[i % 2]
            task = get_task(url)
            if task["cmd"] != "match":
                break
            black = fetch_network(server.url, cache, task["black_hash"], task["black_hash_gzip_hash"])
            white = fetch_network(server.url, cache, task["white_hash"], task["white_hash_gzip_hash"])
            upload = play_match_task(task, black, white, "cpu")
            post(url, "submit-match", upload.fields, upload.files)
        status = server.status()
        assert status["matches"][0]["decision"] == "H1", status["matches"]
        assert status["best_network"] != game.fields["networkhash"]
        server.kill()
        server = LocalServer(run_dir, *args, port=server.port).start()
        after = server.status()
        assert (after["games"], after["match_games"], after["best_network"]) == (
            status["games"], status["match_games"], status["best_network"])
    finally:
        server.stop()
