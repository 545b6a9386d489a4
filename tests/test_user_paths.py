"""Every path a user names to ``supervised``, ``review``, ``play`` and ``analysis`` is read only if it
is a regular file of bounded size (issue 42, item 6): a named pipe (which would block), ``/dev/zero``
(which never ends), a file over the reader's cap or a missing file is one line naming the path and the
problem, exit status 2, and nothing is written.

The commands run through ``zero9.cli.main`` in one child process under RLIMIT_AS (its size after
imports plus 1 GiB) and an alarm per command, so a reader that reads everything fails with a
MemoryError and one that blocks on a pipe fails as "hung", instead of eating the machine or the
test's time. Every file is real: pipes made with os.mkfifo, sparse files over each cap.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from zero9.cli.analysis import MAX_CONFIG_BYTES
from zero9.games.sgf import MAX_SGF_BYTES
from zero9.learn.training.supervised import MAX_COLLECTION_BYTES, dump_supervised
from zero9.nn.checkpoint import MAX_CHECKPOINT_BYTES

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(600)
GO_GAME = "(;GM[1]FF[4]SZ[9]KM[7.5]RE[B+R];B[ee];W[cc];B[gc];W[cg];B[gg])"

SCRIPT = r"""
import contextlib, io, json, resource, signal, sys
import torch  # noqa: F401  (imported before the limit: its libraries' address space is not a read)
import zero9.cli.analysis, zero9.cli.play, zero9.cli.review, zero9.cli.supervised  # noqa: F401
from zero9.cli import main

vm = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + (1 << 30), resource.RLIM_INFINITY))


class Hung(BaseException):
    pass


def hung(*_):
    raise Hung()


signal.signal(signal.SIGALRM, hung)
results = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    signal.alarm(20)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = main(argv)
    except Hung:
        status = "hung"
    except MemoryError:
        status = "MemoryError"
    except BaseException as e:
        status = f"{type(e).__name__}: {e}"
    finally:
        signal.alarm(0)
    results.append([status, err.getvalue()])
print("RESULT " + json.dumps(results))
"""


def run_commands(commands: list[list[str]]) -> list[tuple[object, str]]:
    done = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(commands)], capture_output=True,
                          text=True, timeout=500, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "SDL_VIDEODRIVER": "dummy",
                               "OMP_NUM_THREADS": "1"})
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line is not None, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads(line[len("RESULT "):])


def sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def test_every_path_argument_takes_only_a_bounded_regular_file(tmp_path):
    fifo = tmp_path / "fifo.sgf"
    os.mkfifo(fifo)
    game = tmp_path / "game.sgf"
    game.write_text(GO_GAME)
    out = tmp_path / "out"
    # (command with {} for the path, the reader's cap)
    readers = [(["supervised", "{}", "--out", str(out)], MAX_COLLECTION_BYTES),
               (["review", "{}", "--no-plot"], MAX_SGF_BYTES),
               (["review", str(game), "--net", "{}", "--no-plot"], MAX_CHECKPOINT_BYTES),
               (["play", "--sgf", "{}"], MAX_SGF_BYTES),
               (["play", "--net", "{}"], MAX_CHECKPOINT_BYTES),
               (["analysis", "-model", "{}"], MAX_CHECKPOINT_BYTES),
               (["analysis", "-config", "{}"], MAX_CONFIG_BYTES)]
    cases = []  # (command, path, words the one line must hold, in lower case)
    for k, (command, cap) in enumerate(readers):
        large = sparse(tmp_path / f"large-{k}.sgf", cap + 1)
        for path, words in ((fifo, "named pipe, not a regular file"),
                            (Path("/dev/zero"), "character device, not a regular file"),
                            (large, "larger than the"), (tmp_path / "missing.sgf", "no")):
            cases.append(([a.replace("{}", str(path)) for a in command], path, words))
    results = run_commands([argv for argv, _, _ in cases])
    problems = []
    for (argv, path, words), (status, err) in zip(cases, results, strict=True):
        lines = err.strip().splitlines()
        ok = (status == 2 and len(lines) == 1 and str(path) in lines[0] and words in lines[0].lower()
              and "Traceback" not in err)
        if not ok:
            problems.append(f"zero9 {' '.join(argv)}: {status!r}, {err[-300:]!r}")
    assert not problems, "\n".join(problems)
    assert not out.exists()  # supervised refused before it wrote anything


def test_supervised_lists_a_pipe_in_a_folder_as_unreadable_and_converts_the_rest(tmp_path):
    folder = tmp_path / "games"
    folder.mkdir()
    (folder / "a.sgf").write_text(GO_GAME)
    os.mkfifo(folder / "b.sgf")
    sparse(folder / "c.sgf", MAX_COLLECTION_BYTES + 1)
    from zero9.games import make_game

    report = dump_supervised([folder], tmp_path / "out", make_game("go", 9))
    assert report["games"] == 1
    reasons = dict(report["unreadable"])
    assert reasons[str(folder / "b.sgf")].endswith("is a named pipe, not a regular file")
    assert f"larger than the {MAX_COLLECTION_BYTES:,} bytes" in reasons[str(folder / "c.sgf")]
