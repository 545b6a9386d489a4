"""zero9 server over real HTTP: the task cycle, the bad-upload battery, and kill -9 durability.

Every test talks to a real ``zero9 server`` process (uvicorn + SQLite in WAL mode) on
127.0.0.1 with a tiny random net, and uploads games really played by zero9's client code.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sqlite3
import threading
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the server extra: pip install '.[server]'")

from zero9.distributed.client import (  # noqa: E402
    Refused,
    Upload,
    fetch_network,
    http,
    multipart,
    play_selfplay,
)
from zero9.distributed.local import LocalServer  # noqa: E402
from zero9.distributed.variants import Variants  # noqa: E402
from zero9.games import make_game  # noqa: E402

pytestmark = pytest.mark.timeout(600)
# A random 1x8 net at 2 visits can end a game in 10 moves (two passes), and resign where its raw net
# sees an even game: the server's shortest-game rule and its resignation check (tests/test_server_attacks.py)
# would refuse such uploads at random, so these servers hand out tasks that never resign and take short games.
TINY = ("--blocks", "1", "--filters", "8", "--visits", "2", "--rate-limit", "0", "--min-moves", "0",
        "--resign-pct", "0")


def get_task(url: str) -> dict:
    return json.loads(http(f"{url}/get-task/18"))


def post(url: str, upload: Upload, headers: dict | None = None) -> bytes:
    body, content_type = multipart(upload.fields, upload.files)
    return http(f"{url}/{upload.endpoint}", body, {"Content-Type": content_type, **(headers or {})})


def play_one(url: str, cache: Path) -> Upload:
    task = get_task(url)
    assert task["cmd"] == "selfplay"
    net = fetch_network(url, cache, task["hash"], task["hash_gzip_hash"])
    return play_selfplay([task], net, "cpu", leaves=4)[0]


def with_new_seed(url: str, upload: Upload) -> Upload:
    """The same real game as the answer to a fresh task (the server does not tie content to seeds)."""
    task = get_task(url)
    return Upload(upload.endpoint, dict(upload.fields, random_seed=task["random_seed"]), dict(upload.files))


def stored_state(run_dir: Path) -> tuple[list[str], int, int]:
    files = sorted(str(p.relative_to(run_dir)) for d in ("chunks", "sgf", "matches", "networks")
                   for p in (run_dir / d).iterdir())
    with sqlite3.connect(run_dir / "server.db") as db:
        games = db.execute("select count(*) from games").fetchone()[0]
        match_games = db.execute("select count(*) from match_games").fetchone()[0]
    return files, games, match_games


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("server") / "run"
    with LocalServer(run_dir, *TINY) as s:
        s.curl = s.client_url("tester")  # the URL with a roster credential in it
        yield s


@pytest.fixture(scope="module")
def game_upload(server, tmp_path_factory):
    return play_one(server.curl, tmp_path_factory.mktemp("cache"))


def test_task_network_and_accepted_game(server, game_upload, tmp_path):
    task = get_task(server.curl)
    assert task["cmd"] == "selfplay" and task["required_client_version"] == "18"
    assert set(task["options"]) == {"visits", "playouts", "resignation_percent", "randomcnt", "noise"}
    assert all(isinstance(v, str) for v in task["options"].values())  # autogtp reads strings
    gz = http(f"{server.url}/networks/{task['hash']}.gz")
    assert hashlib.sha256(gz).hexdigest() == task["hash_gzip_hash"]
    assert hashlib.sha256(gzip.decompress(gz)).hexdigest() == task["hash"]
    assert http(f"{server.url}/best-network") == gz

    before = server.status()["games"]
    answer = json.loads(post(server.curl, game_upload))
    assert answer["accepted"] and answer["positions"] == int(game_upload.fields["movescount"]) - (
        1 if b"+R" in gzip.decompress(game_upload.files["sgf"]) else 0)
    status = server.status()
    assert status["games"] == before + 1 and status["clients_last_hour"] >= 1
    chunks = list((server.run_dir / "chunks").iterdir())
    assert any(p.read_bytes() == game_upload.files["trainingdata"] for p in chunks)


def bad_uploads(server, good: Upload) -> dict[str, tuple[Upload, dict]]:
    """name -> (upload, extra headers): each must be refused with a 4xx."""
    url = server.curl
    sgf = gzip.decompress(good.files["sgf"]).decode()
    chunk = gzip.decompress(good.files["trainingdata"])

    def variant(fields=None, files=None) -> Upload:
        u = with_new_seed(url, good)
        u.fields.update(fields or {})
        u.files.update(files or {})
        return u

    first_move = sgf.index(";B[")
    point = sgf[first_move + 3:first_move + 5]
    illegal = sgf[:first_move] + f";B[{point}];W[{point}]" + sgf[first_move + 6:]  # W onto B's stone
    flipped = "white" if good.fields["winnercolor"] == "black" else "black"
    bomb = gzip.compress(b"0" * (64 << 20))
    cases = {
        "truncated gzip": variant(files={"trainingdata": good.files["trainingdata"][:-30]}),
        "gzip bomb": variant(files={"trainingdata": bomb}),
        "wrong net hash": variant(fields={"networkhash": "f" * 64}),
        "illegal game": variant(files={"sgf": gzip.compress(illegal.encode())}),
        "result disagrees": variant(fields={"winnercolor": flipped}),
        "wrong move count": variant(fields={"movescount": "3"}),
        "chunk disagrees": variant(files={"trainingdata": gzip.compress(chunk.replace(b"\n1\n", b"\n0\n", 1))
                                          }),
        "unknown seed": variant(fields={"random_seed": "12345"}),
        "wrong options hash": variant(fields={"options_hash": "abcdef"}),
        "oversized body": variant(files={"sgf": b"\0" * (5 << 20)}),
    }
    out = {name: (u, {}) for name, u in cases.items()}
    out["replayed seed"] = (good, {})  # accepted once already by the test above
    path_upload = variant()
    out["path in a file name"] = (path_upload, {"filename": "../../etc/evil"})
    out["wrong API key"] = (Upload("submit-network", {}, {"weights": b"x"}), {"X-Api-Key": "wrong"})
    return out


def post_with_filename(url: str, upload: Upload, filename: str) -> bytes:
    body, content_type = multipart(upload.fields, upload.files)
    body = body.replace(b'filename="sgf.gz"', f'filename="{filename}"'.encode())
    return http(f"{url}/{upload.endpoint}", body, {"Content-Type": content_type})


def test_bad_upload_battery(server, game_upload):
    if not server.status()["games"]:
        post(server.curl, game_upload)
    files, games, match_games = stored_state(server.run_dir)
    for name, (upload, extra) in bad_uploads(server, game_upload).items():
        with pytest.raises(Refused) as refused:
            if "filename" in extra:
                post_with_filename(server.curl, upload, extra["filename"])
            else:
                post(server.curl, upload, extra)
        code = int(str(refused.value).split()[1].rstrip(":"))
        assert 400 <= code < 500 and code != 429, (name, str(refused.value))
        assert stored_state(server.run_dir) == (files, games, match_games), f"{name} left something behind"
    log = server.log.read_text()
    assert "refused POST /submit" in log and "inflates to more than" in log


def test_kill9_during_uploads_loses_nothing(tmp_path, game_upload):
    """Uploads from 8 threads, kill -9 mid-way, restart: every 200 is there, whole, and nothing else is."""
    kill9_during_uploads(tmp_path, game_upload, threads=8, kill_after=40)


def test_kill9_during_a_burst_of_group_commits_loses_nothing(tmp_path, game_upload):
    """48 clients at once, so the group commit writes batches of many uploads; kill -9 in the burst."""
    status = kill9_during_uploads(tmp_path, game_upload, threads=48, kill_after=120)
    batches, entries = status["group_commit"]["batches"], status["group_commit"]["entries"]
    assert entries > batches, f"no batch held more than one entry ({batches} batches, {entries} entries)"


def kill9_during_uploads(tmp_path: Path, game_upload: Upload, threads: int, kill_after: int) -> dict:
    """Upload from ``threads`` threads, kill -9 the server after ``kill_after`` 200s, restart, check
    that every 200 is in the database with whole files and that no other file survived; returns the
    server's status from just before the kill."""
    run_dir = tmp_path / "run"
    server = LocalServer(run_dir, *TINY).start()
    url = server.client_url("tester")
    template = Upload("submit", dict(game_upload.fields), dict(game_upload.files))
    template.fields["networkhash"] = get_task(url)["hash"]
    variants = Variants(make_game("go", 9, komi=7.5), game_upload.files["sgf"],
                        game_upload.files["trainingdata"])

    def new_game() -> Upload:  # a game counts once: each upload is another game
        sgf, chunk, fields = variants.make()
        return with_new_seed(url, Upload("submit", dict(template.fields, **fields),
                                         {"sgf": sgf, "trainingdata": chunk}))

    accepted: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def uploader() -> None:
        while not stop.is_set():
            try:
                u = new_game()
                post(url, u)
            except Exception:
                return  # the server is gone
            with lock:
                accepted.append(u.fields["random_seed"])

    workers = [threading.Thread(target=uploader) for _ in range(threads)]
    for t in workers:
        t.start()
    while len(accepted) < kill_after:
        threading.Event().wait(0.05)
    status = server.status()
    server.kill()
    stop.set()
    for t in workers:
        t.join(30)
    restarted = LocalServer(run_dir, *TINY, port=server.port).start()
    try:
        with sqlite3.connect(run_dir / "server.db") as db:
            rows = db.execute("select seed, sgf_file, chunk_file from games").fetchall()
        seeds = {str(seed) for seed, _, _ in rows}
        assert set(accepted) <= seeds, "an upload that got a 200 is missing"
        referenced = set()
        for _, sgf_file, chunk_file in rows:
            for name in (sgf_file, chunk_file):
                data = (run_dir / name).read_bytes()
                gzip.decompress(data)  # whole
                assert hashlib.sha256(data).hexdigest()[:16] in name  # named by its content
                referenced.add(name)
        on_disk = {str(p.relative_to(run_dir)) for d in ("chunks", "sgf") for p in (run_dir / d).iterdir()}
        assert on_disk == referenced, "a file without a row (or a temporary file) survived the restart"
        assert restarted.status()["games"] == len(rows)
    finally:
        restarted.stop()
    return status
