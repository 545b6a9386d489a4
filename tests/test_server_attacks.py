"""Issue 36's attacks on zero9 server, each against a real server on 127.0.0.1 (bounded loops).

A hostile student on the class network tries: forged match results (anonymous, for tasks not
theirs, games too short to be real, plausible fakes later revoked), hoarding match tasks, junk
training data, slowloris and slow bodies, hanging up mid-upload, an SGF of 120,000 variations,
numbers and headers that used to give 500s, a spoofed X-Forwarded-For, and a full disk. Each
test says what the server now answers.
"""

from __future__ import annotations

import gzip
import json
import random
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the server extra: pip install '.[server]'")

from helpers import random_win

from zero9.distributed.client import (  # noqa: E402
    Refused,
    ServerError,
    Upload,
    fetch_network,
    http,
    multipart,
    play_selfplay,
)
from zero9.distributed.local import LocalServer  # noqa: E402
from zero9.distributed.variants import Variants  # noqa: E402
from zero9.games import BLACK, WHITE, make_game  # noqa: E402
from zero9.games.sgf import write_sgf  # noqa: E402
from zero9.nn.chunks import ChunkData, lz_chunk_text, parse_lz_chunk  # noqa: E402
from zero9.nn.features import encode  # noqa: E402

pytestmark = pytest.mark.timeout(600)
ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "example-data" / "go_9x9_best.txt.gz"
HEADER_SECONDS, BODY_SECONDS, LEASE_MINUTES = 1.0, 2.0, 0.05
ARGS = ("--blocks", "1", "--filters", "8", "--visits", "2", "--rate-limit", "0", "--elo1", "400",
        "--header-timeout", str(HEADER_SECONDS), "--body-timeout", str(BODY_SECONDS),
        "--connections-per-address", "40", "--match-lease", str(LEASE_MINUTES), "--resign-pct", "0")
FORGED = b"(;GM[1]FF[4]SZ[9]KM[7.5]RE[B+R];B[ee])"  # the one-move "win"


def get_task(url: str) -> dict:
    return json.loads(http(f"{url}/get-task/18"))


def post(url: str, upload: Upload, headers: dict | None = None) -> dict:
    body, content_type = multipart(upload.fields, upload.files)
    headers = {"Content-Type": content_type, **(headers or {})}
    return json.loads(http(f"{url}/{upload.endpoint}", body, headers))


def status_code(call) -> int:
    """The HTTP status a refused call got (Refused carries 'HTTP 4xx: reason'; ServerError 5xx)."""
    try:
        call()
    except (Refused, ServerError) as e:
        return int(str(e).split("HTTP ")[1][:3])
    return 200


def reason(call) -> str:
    with pytest.raises(Refused) as refused:
        call()
    return str(refused.value)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with LocalServer(tmp_path_factory.mktemp("attacks") / "run", *ARGS, log_through_pipe=True) as s:
        yield s


@pytest.fixture(scope="module")
def real_game(server, tmp_path_factory) -> Upload:
    """A real self-play game, uploaded by roster client 'ann' (so she has data in the window)."""
    url = server.client_url("ann")
    task = get_task(url)
    net = fetch_network(server.url, tmp_path_factory.mktemp("cache"), task["hash"], task["hash_gzip_hash"])
    for _ in range(8):  # a random 1x8 net can pass out in under the 20 moves this server takes
        game = play_selfplay([task], net, "cpu", leaves=4)[0]
        task = get_task(url)  # a fresh seed for the next try
        if int(game.fields["movescount"]) >= 20:
            break
    assert post(url, game)["accepted"]
    server.ann = url
    return game


def as_new_task(url: str, game: Upload, **fields) -> Upload:
    task = get_task(url)
    assert task["cmd"] == "selfplay"
    return Upload("submit", dict(game.fields, random_seed=task["random_seed"], networkhash=task["hash"],
                                 **fields), dict(game.files))


def log_of(server) -> str:
    return server.log.read_text(errors="replace")


# --- who may do what ------------------------------------------------------------------------------


def test_anonymous_clients_get_no_work_and_unknown_credentials_nothing(server):
    assert "roster" in reason(lambda: get_task(server.url))  # 403: ask the teacher for a credential
    forged = Upload("submit-match", {"random_seed": "5", "winnercolor": "black"},
                    {"sgf": gzip.compress(FORGED)})
    assert status_code(lambda: post(server.url, forged)) == 403
    assert status_code(lambda: get_task(f"{server.url}/c/z9c-{'0' * 32}")) == 403
    assert status_code(lambda: get_task(f"{server.url}/c/..%2F..%2Fetc")) == 403
    assert server.status()["match_games"] == 0


def test_bad_numbers_and_headers_are_4xx_never_500(server, real_game):
    url = server.ann
    for seed in ("²", "9" * 20, "-1", "0", "1e3", "١٢٣"):
        bad = as_new_task(url, real_game)
        bad.fields["random_seed"] = seed
        assert status_code(lambda b=bad: post(url, b)) == 400, seed
    bad = as_new_task(url, real_game, movescount="²")
    assert status_code(lambda: post(url, bad)) == 400
    weights = Upload("submit-network", {"training_steps": "²"}, {"weights": b"x"})
    for key in ("wrong", "kéy\u00ff", ""):
        assert status_code(lambda k=key: post(server.url, weights, {"X-Api-Key": k})) == 403
    raw = socket.create_connection(("127.0.0.1", server.port), timeout=5)  # a raw non-ASCII byte
    raw.sendall(b"POST /submit-network HTTP/1.1\r\nHost: x\r\nX-Api-Key: \xff\xfe\r\n"
                b"Content-Length: 0\r\n\r\n")
    assert raw.recv(100).startswith(b"HTTP/1.1 403")
    raw.close()
    assert "Traceback" not in log_of(server)


def test_an_sgf_of_120000_variations_is_refused_fast(server, real_game):
    variations = b"(;GM[1]FF[4]SZ[9]KM[7.5]RE[B+R]" + b"(;B[ee])" * 120_000 + b")"
    assert len(variations) > 900_000
    bomb = as_new_task(server.ann, real_game)
    bomb.files["sgf"] = gzip.compress(variations)
    assert len(bomb.files["sgf"]) < 20_000
    start = time.perf_counter()
    text = reason(lambda: post(server.ann, bomb))
    assert time.perf_counter() - start < 1.0, "the refusal took a second or more of server time"
    assert "HTTP 413" in text and "'[' (property values)" in text  # 120,005 values: counted first
    nodes = as_new_task(server.ann, real_game)
    nodes.files["sgf"] = gzip.compress(b"(;GM[1]FF[4]SZ[9]KM[7.5]" + b";B[tt];W[tt]" * 600 + b")")
    assert "HTTP 413" in reason(lambda: post(server.ann, nodes))


def test_junk_training_data_is_refused_and_stores_nothing(server, real_game):
    url = server.ann
    before = server.status()["games"]
    game = make_game("go", 9, komi=7.5)
    one_pass = Upload("submit", dict(real_game.fields), {
        "sgf": gzip.compress(write_sgf(game, [(BLACK, game.pass_action)], "W+7.5").encode()),
        "trainingdata": real_game.files["trainingdata"]})
    short = as_new_task(url, one_pass, movescount="1", winnercolor="white")
    assert "20 moves or more" in reason(lambda: post(url, short))

    chunk = parse_lz_chunk(gzip.decompress(real_game.files["trainingdata"]).decode())

    def with_policy(change) -> Upload:
        policy = chunk.policy.copy()
        change(policy)
        changed = type(chunk)(chunk.planes, chunk.to_play, policy, chunk.value)
        upload = as_new_task(url, real_game)
        upload.files["trainingdata"] = gzip.compress(lz_chunk_text(changed).encode())
        return upload

    stones = (chunk.planes[:, 0] + chunk.planes[:, 8]).reshape(len(chunk), 81) > 0
    at = int(np.flatnonzero(stones.any(axis=1))[0])  # the first position with a stone on the board
    taken = int(np.flatnonzero(stones[at])[0])
    first_move = np.flatnonzero(stones[1])  # where the first move went (none: a pass)
    elsewhere = next(a for a in range(81) if a not in first_move)

    def on_stone(policy):  # all of a policy on an occupied point
        policy[at] = 0
        policy[at, taken] = 1

    def nothing_on_played(policy):  # all of the first policy on a move the game did not play
        policy[0] = 0
        policy[0, elsewhere if len(first_move) else 0] = 1

    def negative(policy):
        policy[2, :2] = [1.5, -0.5]

    assert "occupied point" in reason(lambda: post(url, with_policy(on_stone)))
    assert "no weight" in reason(lambda: post(url, with_policy(nothing_on_played)))
    assert "negative" in reason(lambda: post(url, with_policy(negative)))
    assert server.status()["games"] == before


# --- the HTTP edge --------------------------------------------------------------------------------


def attacker_socket(port: int) -> socket.socket:
    """A connection from 127.0.0.2 (the same machine, another address than the honest clients')."""
    return socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.2", 0))


def closed_by_server(sock: socket.socket) -> bool:
    try:
        sock.settimeout(0.05)
        return sock.recv(100) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


def test_slowloris_is_cut_off_and_honest_clients_get_through(server, real_game):
    sockets = []
    for _ in range(150):  # more than the 40 an address may hold
        try:
            sockets.append(attacker_socket(server.port))
        except OSError:
            pass
    for s in sockets:
        try:
            s.sendall(b"GET /status.json HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        except OSError:
            pass
    start = time.perf_counter()
    assert get_task(server.ann)["cmd"] in ("selfplay", "match")  # from 127.0.0.1: not shut out
    assert time.perf_counter() - start < 2.0
    over_cap = sum(closed_by_server(s) for s in sockets)
    assert over_cap >= len(sockets) - 40, "the cap per address let more than 40 connections stay"
    deadline = time.monotonic() + HEADER_SECONDS + 3
    while time.monotonic() < deadline and not all(closed_by_server(s) for s in sockets):
        for s in sockets:
            try:
                s.sendall(b"X")  # a byte at a time, as slowloris does
            except OSError:
                pass
        time.sleep(0.2)
    assert all(closed_by_server(s) for s in sockets), "a connection outlived the header deadline"
    for s in sockets:
        s.close()
    log = log_of(server)
    assert "did not send a request's headers within" in log and "Traceback" not in log
    assert log.count("connection refused") + log.count("connection closed") <= 10  # quiet


def test_slow_body_gets_408_and_hanging_up_one_line(server, real_game):
    submit = (server.ann.removeprefix(server.url) + "/submit").encode()  # a roster client's, slowly
    s = attacker_socket(server.port)
    s.sendall(b"POST " + submit + b" HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
              b"Content-Length: 100000\r\n\r\n")
    start, answer = time.monotonic(), b""
    while time.monotonic() - start < BODY_SECONDS + 5 and not answer:
        try:
            s.sendall(b"-")
            s.settimeout(0.25)
            answer = s.recv(200)
        except TimeoutError:
            pass
        except OSError:
            break
    s.close()
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert time.monotonic() - start < BODY_SECONDS + 3

    for _ in range(20):  # hang up mid-body, twenty times
        s = attacker_socket(server.port)
        s.sendall(b"POST " + submit + b" HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + b"-" * 500)
        s.close()
    time.sleep(0.5)
    log = log_of(server)
    assert "closed the connection during POST /submit" in log
    assert "Traceback" not in log and "ClientDisconnect" not in log
    assert log.count("client hung up") <= 3


def test_trusted_anonymous_quota_and_x_forwarded_for(tmp_path, real_game):
    """--trust-anonymous: anonymous clients play self-play, never a match game; the quota per client
    holds; X-Forwarded-For from 127.0.0.1 does not pick the address the rate limit counts."""
    args = ("--blocks", "1", "--filters", "8", "--visits", "2", "--rate-limit", "600", "--trust-anonymous",
            "--client-games-per-hour", "1", "--resign-pct", "0")
    with LocalServer(tmp_path / "run", *args) as server:
        assert post(server.url, as_new_task(server.url, real_game))["accepted"]
        over = as_new_task(server.url, real_game)
        with pytest.raises(ServerError, match="HTTP 429 .* the quota is 1"):  # 429: try again later
            post(server.url, over)
        key = (server.run_dir / "api_key").read_text().strip()
        post(server.url, Upload("submit-network", {}, {"weights": SHIPPED.read_bytes()}), {"X-Api-Key": key})
        time.sleep(1.1)  # the cached view of open matches
        assert {get_task(server.url)["cmd"] for _ in range(3)} == {"selfplay"}
        forged = Upload("submit-match", {"random_seed": "5"}, {"sgf": gzip.compress(FORGED)})
        assert status_code(lambda: post(server.url, forged)) == 400  # names no match task of theirs
        assert server.status()["clients"][0]["client"] == "anonymous@127.0.0.1"
        codes = [status_code(lambda i=i: http(f"{server.url}/status.json",
                                              headers={"X-Forwarded-For": f"10.0.0.{i}"}))
                 for i in range(150)]
        assert 429 in codes, codes  # a burst of 60, then 10 a second: the spoofed addresses don't count


def test_a_full_disk_is_507_and_one_log_line(server, real_game):
    sgf, chunk, fields = Variants(GO9, real_game.files["sgf"], real_game.files["trainingdata"]).make()
    upload = as_new_task(server.ann, Upload("submit", dict(real_game.fields, **fields),
                                            {"sgf": sgf, "trainingdata": chunk}))
    pid = server.process.pid
    limits = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (1, limits[1]))  # every file write past 1 byte fails
    try:
        codes = [status_code(lambda: post(server.ann, upload)) for _ in range(3)]
    finally:
        resource.prlimit(pid, resource.RLIMIT_FSIZE, limits)
    assert codes == [507, 507, 507], codes
    log = log_of(server)
    assert log.count("disk full") == 1 and "Traceback" not in log and "commit failed" not in log
    assert post(server.ann, upload)["accepted"]  # nothing half-stored: the same answer goes in now


# --- gating ---------------------------------------------------------------------------------------


def match_upload(task: dict, candidate: str, seed: int) -> Upload:
    """A plausible forged result of ``task``: a legal game the candidate wins."""
    winner = BLACK if task["black_hash"] == candidate else WHITE
    sgf, moves = random_win(winner, random.Random(seed), random_moves=120)
    loser = task["white_hash"] if winner == BLACK else task["black_hash"]
    colour = "black" if winner == BLACK else "white"
    fields = {"winnerhash": candidate, "loserhash": loser, "winnercolor": colour,
              "movescount": str(moves), "score": "", "options_hash": task["options_hash"],
              "random_seed": task["random_seed"], "clientversion": "18"}
    return Upload("submit-match", fields, {"sgf": gzip.compress(sgf)})


def test_gating_cannot_be_forged_hoarded_or_kept_after_revocation(server, real_game):
    key = (server.run_dir / "api_key").read_text().strip()
    start = server.status()["best_network"]
    candidate = post(server.url, Upload("submit-network", {}, {"weights": SHIPPED.read_bytes()}),
                     {"X-Api-Key": key})["hash"]
    mallory, bob = server.client_url("mallory"), server.client_url("bob")

    # hoarding: twenty get-task calls hold at most two match tasks; bob is not starved
    hoard = [get_task(mallory) for _ in range(20)]
    held = [t for t in hoard if t["cmd"] == "match"]
    assert len(held) == 2, [t["cmd"] for t in hoard]
    assert get_task(bob)["cmd"] == "match"
    # forging: a one-move game for her own task; another client's task; a task never handed out
    one_move = match_upload(held[0], candidate, 1)
    one_move.files["sgf"], one_move.fields["movescount"] = gzip.compress(FORGED), "1"
    one_move.fields["winnercolor"] = "black" if held[0]["black_hash"] == candidate else "white"
    assert status_code(lambda: post(mallory, one_move)) == 400
    assert status_code(lambda: post(bob, match_upload(held[1], candidate, 2))) == 403
    never = match_upload(dict(held[1], random_seed="12345"), candidate, 3)
    assert status_code(lambda: post(mallory, never)) == 400
    # leases expire: her tasks go back to the pool, and a late answer is refused
    time.sleep(LEASE_MINUTES * 60 + 0.5)
    assert status_code(lambda: post(mallory, match_upload(held[1], candidate, 4))) == 410
    assert server.status()["match_games"] == 0

    # plausible forged wins from two clients decide the match (elo1 400: five wins) ...
    ann = server.ann
    for i in range(5):
        url = (ann, bob)[i % 2]
        task = get_task(url)
        assert task["cmd"] == "match", (i, task["cmd"])
        post(url, match_upload(task, candidate, 10 + i))
    status = server.status()
    match = status["matches"][0]
    assert match["decision"] == "H1" and match["contributors"] == {"ann": 3, "bob": 2}
    assert status["best_network"] == candidate
    assert "ann (3), bob (2)" in log_of(server)

    # ... and revoking ann takes her games out of the window and re-counts the match
    chunks_before = len(list((server.run_dir / "chunks").iterdir()))
    done = subprocess.run([sys.executable, "-m", "zero9", "server", str(server.run_dir), "clients", "revoke",
                           "ann"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "counted again: [1]" in done.stdout
    status = server.status()
    assert status["matches"][0]["decision"] is None and status["best_network"] == start
    assert len(list((server.run_dir / "chunks").iterdir())) < chunks_before
    assert list((server.run_dir / "revoked" / "chunks").iterdir())
    clients = {c["client"]: c for c in status["clients"]}
    assert clients["ann"]["revoked"] and not clients["bob"]["revoked"]
    time.sleep(1.1)  # the roster cache
    assert status_code(lambda: get_task(ann)) == 403
    page = http(f"{server.url}/").decode()
    assert "mallory" in page and "revoked" in page


# --- resignations ---------------------------------------------------------------------------------


EDGE = [c for c in range(9)] + [9 * r for r in range(1, 9)]  # the first line: stones that die there
CENTRE = [9 * r + c for r in (3, 4, 5) for c in range(1, 8)]  # the middle of the board
GO9 = make_game("go", 9, komi=7.5)


def black_resigns(black: list[int], white: list[int]) -> list[tuple[int, int]]:
    """24 moves, Black's from ``black`` and White's from ``white`` in turn; Black is to move (and resigns)."""
    return [(colour, action) for pair in zip(black[:12], white[:12], strict=True)
            for colour, action in zip((BLACK, WHITE), pair, strict=True)]


def resigned_sgf(black: list[int], white: list[int]) -> tuple[bytes, int]:
    """The SGF of :func:`black_resigns` ending ``W+R``, and its moves."""
    moves = black_resigns(black, white)
    return write_sgf(GO9, moves, "W+R").encode(), len(moves)


def test_resignations_only_where_the_resigners_net_could_resign(tmp_path):
    """A W+R where Black's own net (the shipped one, raw winrate ~0.95 for Black) is winning is refused
    with the reason, in a match game and in self-play, and stores nothing; Black resigning a position
    it has lost (all its stones on the first line, White's in the middle: ~0.01) is accepted."""
    args = ("--net", str(SHIPPED), "--visits", "2", "--rate-limit", "0", "--elo1", "400")
    with LocalServer(tmp_path / "run", *args) as server:
        best = server.status()["best_network"]
        key = (server.run_dir / "api_key").read_text().strip()
        candidate = (ROOT / "example-data" / "initial_9x9.txt.gz").read_bytes()
        post(server.url, Upload("submit-network", {}, {"weights": candidate}), {"X-Api-Key": key})
        time.sleep(1.1)  # the cached view of open matches
        tasks = []  # (client URL, a match task in which the best (shipped) net plays Black)
        for name in ("carol", "dave", "erin"):
            url = server.client_url(name)
            tasks += [(url, t) for t in (get_task(url), get_task(url))
                      if t["cmd"] == "match" and t["black_hash"] == best]
        assert len(tasks) >= 2, tasks

        def match_result(task: dict, sgf: bytes, moves: int) -> Upload:
            fields = {"winnerhash": task["white_hash"], "loserhash": task["black_hash"],
                      "winnercolor": "white", "movescount": str(moves + 1), "score": "",
                      "options_hash": task["options_hash"], "random_seed": task["random_seed"],
                      "clientversion": "18"}
            return Upload("submit-match", fields, {"sgf": gzip.compress(sgf)})

        (url, task), (url2, task2) = tasks[:2]
        forged = match_result(task, *resigned_sgf(CENTRE, EDGE))
        refusal = reason(lambda: post(url, forged))
        assert "HTTP 400" in refusal and "black resigned at move 24" in refusal, refusal
        assert "gives it a winrate of 0.9" in refusal and "0.25 or less" in refusal, refusal
        assert server.status()["match_games"] == 0
        assert post(url2, match_result(task2, *resigned_sgf(EDGE, CENTRE)))["accepted"]
        assert server.status()["match_games"] == 1

        def selfplay(url: str, black: list[int], white: list[int]) -> Upload:
            moves = black_resigns(black, white)
            positions, p = [], GO9.new_position()
            for _, action in moves:
                positions.append(p)
                p = p.play(action)
            policy = np.zeros((len(moves), GO9.num_actions), np.float32)
            policy[np.arange(len(moves)), [a for _, a in moves]] = 1.0
            to_play = np.array([q.to_play for q in positions], np.int8)
            chunk = ChunkData(np.stack([encode(q) for q in positions]).astype(np.uint8), to_play, policy,
                              np.where(to_play == WHITE, 1.0, -1.0).astype(np.float32))
            task = next(t for t in (get_task(url) for _ in range(3)) if t["cmd"] == "selfplay")
            assert task["hash"] == best, task  # (a client holds two match tasks at most)
            fields = {"networkhash": task["hash"], "clientversion": "18", "movescount": str(len(moves) + 1),
                      "options_hash": task["options_hash"], "winnercolor": "white",
                      "random_seed": task["random_seed"]}
            return Upload("submit", fields, {"sgf": gzip.compress(write_sgf(GO9, moves, "W+R").encode()),
                                             "trainingdata": gzip.compress(lz_chunk_text(chunk).encode())})

        frank = server.client_url("frank")
        games = server.status()["games"]
        refusal = reason(lambda: post(frank, selfplay(frank, CENTRE, EDGE)))
        assert "black resigned at move 24" in refusal, refusal
        assert server.status()["games"] == games
        # another game (the match game's moves are kept: a game counts once), Black as lost
        assert post(frank, selfplay(frank, EDGE[::-1], CENTRE))["accepted"]
        assert server.status()["games"] == games + 1
        assert "Traceback" not in log_of(server)
