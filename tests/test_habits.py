"""Habits the code keeps (issue 43): no dead code, and no import cycle among the scripts.

Dead code is what vulture finds with the project's settings (``pyproject.toml`` [tool.vulture]:
zero9/, gui/, scripts/ and tests/, each exception named in ``vulture_whitelist.py`` with its
reason); ``.pre-commit-config.yaml`` runs the same check before each commit.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def vulture(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vulture", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_vulture_finds_no_dead_code():
    done = vulture()
    assert "No module named vulture" not in done.stderr, "vulture is a test dependency: pip install '.[test]'"
    assert done.returncode == 0 and not done.stdout, f"dead code (delete it, or name why it lives in " \
        f"vulture_whitelist.py):\n{done.stdout}{done.stderr}"


def test_vulture_would_see_a_dead_function(tmp_path):
    # the check above can fail: a function nothing calls, in a file of its own
    (tmp_path / "sample.py").write_text("def used():\n    return 1\n\n\ndef forgotten():\n    return 2\n\n\n"
                                        "print(used())\n")
    done = vulture("sample.py", cwd=tmp_path)
    assert done.returncode == 3 and "unused function 'forgotten'" in done.stdout and "used'" not in \
        done.stdout.replace("forgotten", "")


def script_imports() -> dict[str, set[str]]:
    """For each module of scripts/, the other modules of scripts/ it imports (at the top or in a function)."""
    names = {path.stem for path in (ROOT / "scripts").glob("*.py")}
    graph = {}
    for path in (ROOT / "scripts").glob("*.py"):
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module)
        graph[path.stem] = found & names - {path.stem}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each import cycle of ``graph``, once per module it passes through (a depth-first walk)."""
    found = []

    def walk(path: list[str]) -> None:
        for nxt in sorted(graph.get(path[-1], ())):
            if nxt == path[0]:
                found.append(path + [nxt])
            elif nxt not in path and nxt > path[0]:  # each cycle from its smallest module only
                walk(path + [nxt])

    for start in sorted(graph):
        walk([start])
    return found


def test_no_import_cycle_among_the_scripts():
    graph = script_imports()
    assert "doc_pages" in graph["check_docs"] and "doc_pages" in graph["run_tutorial"]
    assert not cycles(graph), f"import cycles in scripts/: {cycles(graph)}"


def test_the_cycle_check_sees_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
