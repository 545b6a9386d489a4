"""Load on one zero9 server: N simulated clients doing get-task + submit of a real game, for D seconds.

    python3 scripts/bench_server.py [--clients 200] [--duration 60] [--slowloris 300] [--forgers 4]
                                    [--out FILE.json]

What it does, all on 127.0.0.1:

1. starts ``zero9 server`` (SQLite, a tiny random net, ``--rate-limit 0`` because every
   simulated client shares one address) in a temporary run directory;
2. plays six real self-play games with zero9's client code and keeps the one nearest 100
   moves (so runs compare like with like; a random net's games run 60 to 160 moves) as the
   base of the uploads: the server counts a game once, so every upload is another game, a
   variant of the base (:mod:`zero9.distributed.variants`: its first moves, a few random legal
   ones, two passes; 70 to 110 moves), made before the load starts, each sent with a fresh
   ``random_seed`` from the client's own ``get-task`` and checked in full (gzip, SGF replay,
   chunk agreement, the game's digest, files written and fsync'd, one transaction);
3. the **reference**, measured in the same run: the same uploads through the server's
   ``submit_game`` called in-process, one at a time, no HTTP (what the validation and storage
   cost alone);
4. the **load**: ``--clients`` asyncio clients in this one process, each on its own keep-alive
   connection, loop get-task -> submit until ``--duration`` seconds pass (bounded: each loop
   also stops after ``--max-requests`` requests). With ``--interval S`` each client starts a
   new cycle every S seconds, as a real client does between games (a cycle that ends late
   starts the next at once; those are counted); with 0 they send as fast as answers come, so
   the latency is the queue in front of a saturated server. The requests are bytes built
   once; a submit only puts its task's seed and its length in;
5. afterwards every upload that got a 200 is looked up in the database and on disk.

Each simulated client is a roster client with its own credential (in the path, as autogtp
carries it) and its own source address (127.0.1.1, 127.0.1.2, ...: one machine per student).
Beside the load, two attackers can run (issue 36), both bounded by ``--duration``:

- ``--slowloris N``: N connections from 127.0.0.2 that send a request's headers a byte a second
  and never finish them, reopened as the server closes them (its header deadline and its
  connection cap per address);
- ``--forgers N``: N connections that post forged results as fast as they are answered: the
  issue's one-move "win" to ``/submit-match`` anonymously, and as roster client ``mallory`` for
  her self-play task; a one-move self-play game; an SGF of 120,000 variations (1.5 KB gzip'd).
  Every forgery must be refused with a 4xx (``forgeries_accepted`` must stay 0).

It prints uploads/s, requests/s, p50/p99 latency of each request kind, errors, the ratio of
the served upload rate to the in-process reference, whether every accepted upload is stored,
and the CPU seconds the server's processes and the simulated clients used during the load
(the clients run on the same cores: ``client_cpu_share`` is their part), and ``bar_met``:
issue 21's bar (200 clients for 60 s: at least 200 uploads/s, a submit p99 under 500 ms,
0 errors, every accepted upload stored).
With ``--interval 1.0`` 200 clients offer exactly 200 uploads/s (a little less is served, as
the first cycles are spread over the first second): ``--interval 0.9`` offers 222.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from zero9.distributed import db  # noqa: E402
from zero9.distributed.client import Upload, fetch_network, http, multipart, play_selfplay  # noqa: E402
from zero9.distributed.config import TaskOptions  # noqa: E402
from zero9.distributed.local import LocalServer  # noqa: E402
from zero9.distributed.roster import Roster  # noqa: E402
from zero9.distributed.server import Caller, Server  # noqa: E402
from zero9.distributed.variants import Variants  # noqa: E402
from zero9.games import make_game  # noqa: E402

CANDIDATE_GAMES, TYPICAL_MOVES = 6, 100  # the upload: of 6 real games, the one nearest 100 moves
BAR_UPLOADS_PER_S, BAR_P99_MS = 200, 500  # issue 21's bar for 200 clients on the 2-core machine
SERVER_ARGS = ("--blocks", "1", "--filters", "8", "--visits", "8", "--rate-limit", "0")


FORGED = b"(;GM[1]FF[4]SZ[9]KM[7.5]RE[B+R];B[ee])"  # issue 36's one-move "win"
VARIATIONS = b"(;GM[1]FF[4]SZ[9]KM[7.5]RE[B+R]" + b"(;B[ee])" * 120_000 + b")"


def get_task_request(prefix: str) -> bytes:
    return f"GET {prefix}/get-task/18 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n".encode()
SEED_MARK = b"\0seed\0"  # where each request's random_seed goes in the pre-built upload body


class SubmitRequest:
    """The bytes of a ``POST /submit`` built before the load; each request only puts its seed (and
    length) in."""

    def __init__(self, body: bytes, content_type: str, path: str = "/submit"):
        self.before, self.after = body.split(SEED_MARK)
        self.head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n".encode()
        self.length = len(self.before) + len(self.after)

    def with_seed(self, seed: bytes) -> bytes:
        return b"".join((self.head, b"Content-Length: %d\r\n\r\n" % (self.length + len(seed)), self.before,
                         seed, self.after))


async def exchange(reader, writer, request: bytes) -> tuple[int, bytes]:
    """Send one pre-built HTTP/1.1 request on a keep-alive connection: (status, body)."""
    writer.write(request)
    await writer.drain()
    status_line = await reader.readline()
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    return int(status_line.split()[1]), await reader.readexactly(length)


async def simulated_client(port: int, number: int, prefix: str, games: list[tuple[bytes, str]],
                           deadline: float, interval: float, max_requests: int, stats: dict) -> None:
    address = f"127.0.{1 + number // 250}.{1 + number % 250}"  # a machine of its own
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(address, 0))
    get_task = get_task_request(prefix)
    try:
        sent = 0
        start = time.monotonic() + interval * random.random()  # spread the clients' first cycles
        while start < deadline and sent < max_requests:
            if start > time.monotonic():
                await asyncio.sleep(start - time.monotonic())
            t0 = time.perf_counter()
            status, answer = await exchange(reader, writer, get_task)
            stats["get-task"].append(time.perf_counter() - t0)
            sent += 1
            if status != 200:
                stats["errors"].append(f"get-task {status} {answer[:80]!r}")
                break
            seed = json.loads(answer)["random_seed"]
            if not games:
                stats["games_ran_out"] += 1
                break
            body, content_type = games.pop()
            submit = SubmitRequest(body, content_type, f"{prefix}/submit")
            t0 = time.perf_counter()
            status, answer = await exchange(reader, writer, submit.with_seed(seed.encode()))
            stats["submit"].append(time.perf_counter() - t0)
            sent += 1
            if status == 200:
                stats["accepted"].append(seed)
            else:
                stats["errors"].append(f"submit {status} {answer[:80]!r}")
            start += interval
            if start < time.monotonic():
                stats["late"] += interval > 0
                start = time.monotonic()
    finally:
        writer.close()


async def slowloris(port: int, connections: int, deadline: float, stats: dict) -> None:
    """``connections`` sockets from 127.0.0.2 that never finish their headers, reopened when closed."""

    async def one() -> None:
        while time.monotonic() < deadline:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=("127.0.0.2", 0))
            except OSError:
                await asyncio.sleep(1.0)
                continue
            stats["slowloris_opened"] += 1
            try:
                writer.write(b"POST /submit HTTP/1.1\r\nHost: x\r\n")
                while time.monotonic() < deadline and not reader.at_eof():
                    writer.write(b"X")
                    await writer.drain()
                    try:
                        await asyncio.wait_for(reader.read(100), 1.0)
                    except TimeoutError:
                        pass
            except OSError:
                pass
            finally:
                writer.close()
            stats["slowloris_closed_by_server"] += time.monotonic() < deadline
            await asyncio.sleep(0.2)

    await asyncio.gather(*(one() for _ in range(connections)))


async def forger(port: int, mallory: str, deadline: float, max_requests: int, stats: dict) -> None:
    """Forged results as fast as they are answered (see the module docstring); any 200 is a failure."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=("127.0.0.3", 0))
    forged_gz, variations_gz = gzip.compress(FORGED), gzip.compress(VARIATIONS)
    match_fields = {"winnerhash": "0" * 64, "loserhash": "1" * 64, "winnercolor": "black", "movescount": "1",
                    "score": "B+R", "options_hash": "000000", "random_seed": SEED_MARK.decode()}
    forgeries = [SubmitRequest(*multipart(match_fields, {"sgf": forged_gz}), "/submit-match"),
                 SubmitRequest(*multipart(match_fields, {"sgf": forged_gz}), f"{mallory}/submit-match")]
    for sgf in (forged_gz, variations_gz):
        fields = {"networkhash": "0" * 64, "clientversion": "18", "options_hash": "000000", "movescount": "1",
                  "winnercolor": "black", "random_seed": SEED_MARK.decode()}
        forgeries.append(SubmitRequest(*multipart(fields, {"sgf": sgf, "trainingdata": forged_gz}),
                                       f"{mallory}/submit"))
    get_task = get_task_request(mallory)
    try:
        sent = 0
        while time.monotonic() < deadline and sent < max_requests:
            status, answer = await exchange(reader, writer, get_task)
            seed = json.loads(answer)["random_seed"].encode() if status == 200 else b"1"
            forgery = forgeries[sent % len(forgeries)]
            status, answer = await exchange(reader, writer, forgery.with_seed(seed))
            sent += 2
            stats["forgeries"] += 1
            if status == 200:
                stats["forgeries_accepted"] += 1
            elif status >= 500:
                stats["errors"].append(f"forgery {status} {answer[:80]!r}")
            if b"connection: close" in answer.lower():
                break
    finally:
        writer.close()


async def load(port: int, games: list[tuple[bytes, str]], prefixes: list[str], duration: float,
               interval: float, max_requests: int, slowloris_connections: int, forgers: int,
               mallory: str) -> dict:
    stats: dict = {"get-task": [], "submit": [], "accepted": [], "errors": [], "late": 0, "forgeries": 0,
                   "forgeries_accepted": 0, "slowloris_opened": 0, "slowloris_closed_by_server": 0,
                   "games_ran_out": 0}
    deadline = time.monotonic() + duration
    attackers = [slowloris(port, slowloris_connections, deadline, stats)] if slowloris_connections else []
    attackers += [forger(port, mallory, deadline, max_requests, stats) for _ in range(forgers)]
    attack = asyncio.gather(*attackers, return_exceptions=True)
    clients = [simulated_client(port, i, prefix, games, deadline, interval, max_requests, stats)
               for i, prefix in enumerate(prefixes)]
    results = await asyncio.gather(*clients, return_exceptions=True)
    stats["errors"] += [f"client failed: {r!r}" for r in results if isinstance(r, BaseException)]
    stats["errors"] += [f"attacker failed: {r!r}" for r in await attack if isinstance(r, BaseException)]
    return stats


def credentials(server: LocalServer, names: list[str]) -> list[str]:
    """Put ``names`` on the server's roster; each one's path prefix (``/c/CREDENTIAL``)."""
    engine = db.connect(f"sqlite:///{server.run_dir / 'server.db'}")
    try:
        roster = Roster(engine)
        return [f"/c/{roster.add(name)}" for name in names]
    finally:
        engine.dispose()


def reference_rate(uploads: list[Upload], folder: Path) -> float:
    """Uploads/s of the server's own submit_game, in-process, one at a time (validation + storage)."""
    server = Server(folder, make_game("go", 9), TaskOptions(visits=8))
    best = server.ensure_start_net(None, 1, 8)
    caller = Caller("reference", True)
    tasks = [server.get_task(caller) for _ in uploads]
    t0 = time.perf_counter()
    for task, upload in zip(tasks, uploads, strict=True):
        fields = dict(upload.fields, random_seed=task["random_seed"], networkhash=best)
        server.submit_game(fields, upload.files["sgf"], upload.files["trainingdata"], caller)
    return len(uploads) / (time.perf_counter() - t0)


def games_to_send(upload: Upload, net_hash: str, count: int) -> tuple[list[tuple[bytes, str]], list[Upload]]:
    """``count`` different games made from ``upload`` (as multipart bodies with a place for the seed),
    and 1 in 20 more as Uploads for the reference."""
    variants = Variants(make_game("go", 9), upload.files["sgf"], upload.files["trainingdata"])

    def one() -> Upload:
        sgf, chunk, fields = variants.make()
        return Upload("submit", dict(upload.fields, networkhash=net_hash, **fields),
                      {"sgf": sgf, "trainingdata": chunk})

    bodies = [multipart(dict(u.fields, random_seed=SEED_MARK.decode()), u.files)
              for u in (one() for _ in range(count))]
    return bodies, [one() for _ in range(max(50, count // 20))]


def group_cpu_seconds(group: int) -> float:
    """CPU seconds (user + system) used so far by the live processes of process group ``group``."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue  # it ended meanwhile
        if int(fields[2]) == group:  # pgrp; utime and stime follow at 11 and 12
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def percentile_ms(values: list[float], q: float) -> float:
    return float(np.percentile(values, q) * 1000) if values else float("nan")


def check_stored(run_dir: Path, accepted: list[str]) -> tuple[int, int]:
    """(accepted uploads missing from the database, rows whose files are missing)."""
    with sqlite3.connect(run_dir / "server.db") as db:
        rows = {str(seed): (sgf, chunk) for seed, sgf, chunk in
                db.execute("select seed, sgf_file, chunk_file from games")}
    missing_rows = sum(1 for seed in accepted if seed not in rows)
    missing_files = sum(1 for seed in accepted if seed in rows
                        and not all((run_dir / name).is_file() for name in rows[seed]))
    return missing_rows, missing_files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    parser.add_argument("--interval", type=float, default=0.0,
                        help="each client starts a cycle every this many seconds (0: as fast as answered)")
    parser.add_argument("--max-requests", type=int, default=100_000, help="per simulated client, at most")
    parser.add_argument("--reference-uploads", type=int, default=200)
    parser.add_argument("--games", type=int, default=0,
                        help="different games to make before the load (0: enough for --interval, or for "
                             "400 uploads/s in the closed loop)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="server processes")
    parser.add_argument("--slowloris", type=int, default=0, metavar="N",
                        help="also hold N slowloris connections (from 127.0.0.2)")
    parser.add_argument("--forgers", type=int, default=0, metavar="N",
                        help="also run N forged-result attackers (anonymous and roster client 'mallory')")
    parser.add_argument("--out", default=None, help="also write the figures here as JSON")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory(prefix="zero9-bench-server-") as tmp:
        tmp_path = Path(tmp)
        with LocalServer(tmp_path / "run", *SERVER_ARGS, "--workers", str(args.workers)) as server:
            prefixes = credentials(server, [f"student{i}" for i in range(args.clients)] + ["mallory"])
            mallory = prefixes.pop()
            task = json.loads(http(f"{server.url}{prefixes[0]}/get-task/18"))
            net = fetch_network(server.url, tmp_path / "cache", task["hash"], task["hash_gzip_hash"])
            seeds = range(1, 1 + CANDIDATE_GAMES)
            games = play_selfplay([dict(task, random_seed=str(seed)) for seed in seeds], net, "cpu", leaves=4)
            upload = min(games, key=lambda u: abs(int(u.fields["movescount"]) - TYPICAL_MOVES))
            moves = int(upload.fields["movescount"])
            size = sum(len(v) for v in upload.files.values())
            print(f"the base: a real {moves}-move 9x9 game, {size} bytes gzip'd (sgf + training data)")
            count = args.games or int(args.clients * (args.duration / (args.interval or 0.5) + 2))
            t0 = time.perf_counter()
            games, reference_games = games_to_send(upload, task["hash"], count)
            print(f"{count} different games made from it in {time.perf_counter() - t0:.0f} s")
            reference = reference_rate(reference_games[:args.reference_uploads], tmp_path / "reference")
            print(f"reference: {reference:.1f} uploads/s through submit_game in-process, one at a time")
            server_cpu, client_cpu = group_cpu_seconds(server.process.pid), time.process_time()
            t0 = time.monotonic()
            stats = asyncio.run(load(server.port, games, prefixes, args.duration,
                                     args.interval, args.max_requests, args.slowloris, args.forgers, mallory))
            elapsed = time.monotonic() - t0
            client_cpu = time.process_time() - client_cpu
            server_cpu = group_cpu_seconds(server.process.pid) - server_cpu
            group_commit = server.status().get("group_commit")  # one worker process's writer
            missing_rows, missing_files = check_stored(server.run_dir, stats["accepted"])
            log_size = server.log.stat().st_size
        figures = {
            "clients": args.clients, "interval_s": args.interval, "server_workers": args.workers,
            "seconds": round(elapsed, 1),
            "uploads_accepted": len(stats["accepted"]),
            "uploads_per_s": round(len(stats["accepted"]) / elapsed, 1),
            "requests_per_s": round((len(stats["get-task"]) + len(stats["submit"])) / elapsed, 1),
            "submit_p50_ms": round(percentile_ms(stats["submit"], 50), 1),
            "submit_p99_ms": round(percentile_ms(stats["submit"], 99), 1),
            "get_task_p50_ms": round(percentile_ms(stats["get-task"], 50), 1),
            "get_task_p99_ms": round(percentile_ms(stats["get-task"], 99), 1),
            "errors": len(stats["errors"]), "late_cycles": stats["late"],
            "games_ran_out": stats["games_ran_out"],
            "slowloris_connections": args.slowloris, "slowloris_opened": stats["slowloris_opened"],
            "slowloris_closed_by_server": stats["slowloris_closed_by_server"],
            "forgers": args.forgers, "forgeries_refused": stats["forgeries"] - stats["forgeries_accepted"],
            "forgeries_accepted": stats["forgeries_accepted"],
            "server_cpu_s": round(server_cpu, 1), "client_cpu_s": round(client_cpu, 1),
            "client_cpu_share": round(client_cpu / max(client_cpu + server_cpu, 1e-9), 2),
            "server_cpu_ms_per_upload": round(1000 * server_cpu / max(len(stats["accepted"]), 1), 2),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "group_commit_of_one_worker": group_commit,
            "reference_uploads_per_s": round(reference, 1),
            "ratio_to_reference": round(len(stats["accepted"]) / elapsed / reference, 2),
            "accepted_missing_from_db": missing_rows, "accepted_missing_files": missing_files,
            "cpu_cores": os.cpu_count(), "game_moves": moves, "server_log_bytes": log_size,
        }
        stored = not missing_rows and not missing_files
        figures["bar_met"] = (args.clients >= 200 and args.duration >= 60  # the bar's own load
                              and figures["uploads_per_s"] >= BAR_UPLOADS_PER_S and figures["errors"] == 0
                              and figures["submit_p99_ms"] < BAR_P99_MS and stored
                              and not stats["forgeries_accepted"])
    for error in stats["errors"][:5]:
        print("error:", error)
    print(json.dumps(figures, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if not (stats["errors"] or missing_rows or missing_files or stats["forgeries_accepted"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
