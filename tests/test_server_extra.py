"""``zero9 server`` without the ``server`` extra: one line naming the install command, exit 2 (issue 37).

The extra's packages are hidden from a child interpreter (``sys.modules[name] = None`` makes
``import name`` fail as if it were not installed); ``zero9 client`` and ``zero9 trainer`` need
none of them and still start.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HIDE = ("import sys\n"
        "for name in ('fastapi', 'uvicorn', 'sqlalchemy', 'multipart', 'starlette'):\n"
        "    sys.modules[name] = None\n"
        "from zero9.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n")


def zero9_without_extra(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", HIDE, *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)


def test_server_without_the_extra_says_what_to_install(tmp_path):
    done = zero9_without_extra("server", str(tmp_path / "run"))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'zero9[server]'" in lines[0], done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "run").exists()
    assert zero9_without_extra("server", "--help").returncode == 0  # the options read without the extra


def test_client_and_trainer_need_no_extra():
    for command in ("client", "trainer"):
        done = zero9_without_extra(command, "--help")
        assert done.returncode == 0 and "usage: zero9 " + command in done.stdout, done.stderr
