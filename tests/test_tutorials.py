"""Every tutorial runs as written (at its quick settings), so the course cannot drift from the code."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("[0-9][0-9]-*.md"))


def test_there_are_tutorials():
    assert len(TUTORIALS) >= 1, "docs/tutorials/ holds no numbered tutorial"


def test_the_work_dir_the_docs_suggest_is_git_ignored():
    """docs/index.md runs tutorials with ``--workdir course``: their figures and scratch stay out of git."""
    dirs = set(re.findall(r"run_tutorial\.py --workdir (\S+)", (ROOT / "docs" / "index.md").read_text()))
    assert dirs, "docs/index.md shows no run_tutorial.py --workdir command"
    for name in dirs:
        probe = f"{name}/01-rules/figure.png"
        done = subprocess.run(["git", "check-ignore", "-q", "--no-index", probe], cwd=ROOT, timeout=30)
        assert done.returncode == 0, f"{probe} is not git-ignored (.gitignore)"


@pytest.mark.parametrize("tutorial", TUTORIALS, ids=[t.stem for t in TUTORIALS])
def test_tutorial_runs(tutorial, tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "run_tutorial.py"), "--quick", "--workdir", str(tmp_path),
         str(tutorial)],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert done.returncode == 0, f"{tutorial.name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
