"""Leela Zero's own client against zero9 server: Debian's autogtp (AutoGTP v18), unchanged.

autogtp reaches its built-in server (https://zero.sjeng.org/) with the ``curl`` program and
runs ``leelaz`` from PATH. Two small wrappers go first on PATH: ``curl`` rewrites the built-in
address to the local server, ``leelaz`` runs ``zero9 gtp`` with the same arguments (its
``--tune-only`` banner, ``-g -q -w ...`` games and GTP ``dump_training`` are the Leela Zero
drop-in of issue 22). autogtp must finish a self-play task and a match task, and the server
must accept both uploads.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the server extra: pip install '.[server]'")

from zero9.distributed.client import http, multipart  # noqa: E402
from zero9.distributed.local import LocalServer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "example-data" / "go_9x9_best.txt.gz"
BUILT_IN_SERVER = "https://zero.sjeng.org/"
AUTOGTP_SECONDS = 420
pytestmark = pytest.mark.timeout(1200)


def find_autogtp() -> str:
    for candidate in (shutil.which("autogtp"), "/usr/lib/leelaz/bin/autogtp"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail("autogtp is not installed (scripts/test.sh installs Debian's leela-zero)")


def write_wrappers(bin_dir: Path, url: str) -> None:
    bin_dir.mkdir()
    real_curl = shutil.which("curl")
    if real_curl is None:
        pytest.fail("curl is not installed")
    curl = bin_dir / "curl"
    curl.write_text(f"""#!/bin/sh
# autogtp's curl, pointed at the local zero9 server instead of {BUILT_IN_SERVER}
for arg do
  shift
  case "$arg" in
    {BUILT_IN_SERVER}*) arg="{url}/${{arg#{BUILT_IN_SERVER}}}" ;;
  esac
  set -- "$@" "$arg"
done
exec {real_curl} "$@"
""")
    leelaz = bin_dir / "leelaz"
    leelaz.write_text(f"""#!/bin/sh
# autogtp's leelaz: zero9 gtp with the same arguments
export PYTHONPATH={ROOT}${{PYTHONPATH:+:$PYTHONPATH}}
exec {sys.executable} -m zero9 gtp --tromp-taylor "$@"
""")
    for script in (curl, leelaz):
        script.chmod(0o755)


def run_autogtp(work: Path, bin_dir: Path, transcript: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "OMP_NUM_THREADS": "1",
           "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([find_autogtp(), "--single", "-g", "1"], cwd=work, env=env, capture_output=True,
                          text=True, timeout=AUTOGTP_SECONDS)
    with open(transcript, "a") as f:
        f.write(f"$ autogtp --single -g 1   (exit {done.returncode})\n{done.stdout}\n{done.stderr}\n")
    return done


def test_stock_autogtp_plays_selfplay_and_match(tmp_path):
    args = ("--blocks", "1", "--filters", "8", "--visits", "2", "--randomcnt", "4", "--rate-limit", "0",
            "--min-moves", "0", "--resign-pct", "0")
    with LocalServer(tmp_path / "run", *args) as server:
        work, bin_dir, transcript = tmp_path / "work", tmp_path / "bin", tmp_path / "autogtp.txt"
        work.mkdir()
        write_wrappers(bin_dir, server.client_url("autogtp"))  # the credential rides in the address

        done = run_autogtp(work, bin_dir, transcript)
        log = transcript.read_text()
        assert server.status()["games"] == 1, log[-4000:]
        assert "refused" not in server.log.read_text(), server.log.read_text()[-2000:]
        assert [c["client"] for c in server.status()["clients"] if c["games"]] == ["autogtp"]

        key = (server.run_dir / "api_key").read_text().strip()
        body, content_type = multipart({}, {"weights": SHIPPED.read_bytes()})
        http(f"{server.url}/submit-network", body, {"Content-Type": content_type, "X-Api-Key": key})
        done = run_autogtp(work, bin_dir, transcript)
        log = transcript.read_text()
        assert done.returncode == 0, log[-4000:]
        assert server.status()["match_games"] == 1, log[-4000:]
        assert "refused" not in server.log.read_text(), server.log.read_text()[-2000:]
