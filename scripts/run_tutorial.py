"""Run every code block of a tutorial, in order, as a reader would.

A tutorial is Markdown. Fenced blocks tagged ``python`` run in one shared Python
namespace (so later blocks see earlier names); blocks tagged ``bash`` run in a
shell. Blocks tagged anything else (``text``, ``console``, ``sgf``) are shown,
not run. The blocks run with the working directory set to ``--workdir``
(default: the tutorial's own folder, so figures land beside it).

``--quick`` sets ``ZERO9_QUICK=1`` in the environment: tutorials read it to
shrink their settings, and the test suite uses it so the docs cannot drift from
the code. Usage::

    python3 scripts/run_tutorial.py docs/tutorials/01-rules.md
    python3 scripts/run_tutorial.py --quick --workdir /tmp/t docs/tutorials/*.md
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

FENCE = re.compile(r"^```([\w+-]*)[^\n]*\n(.*?)^```\s*$", re.S | re.M)
RUNNABLE = ("python", "bash")


def code_blocks(markdown: str) -> list[tuple[str, str, int]]:
    """(language, code, line number) of each fenced block, in order."""
    blocks = []
    for match in FENCE.finditer(markdown):
        line = markdown.count("\n", 0, match.start()) + 1
        blocks.append((match.group(1).lower(), match.group(2), line))
    return blocks


def run_tutorial(path: Path, workdir: Path, quick: bool) -> float:
    """Run one tutorial's blocks; raise RuntimeError naming the failing block. Returns seconds."""
    start = time.perf_counter()
    if quick:
        os.environ["ZERO9_QUICK"] = "1"
    os.environ.setdefault("MPLBACKEND", "Agg")
    workdir.mkdir(parents=True, exist_ok=True)
    namespace: dict = {"__name__": "__tutorial__"}
    old_cwd = Path.cwd()
    os.chdir(workdir)
    try:
        for language, code, line in code_blocks(path.read_text()):
            if language not in RUNNABLE:
                continue
            where = f"{path}:{line} ({language} block)"
            if language == "python":
                try:
                    exec(compile(code, where, "exec"), namespace)
                except Exception as error:
                    raise RuntimeError(f"{where} failed: {error!r}") from error
            else:
                done = subprocess.run(["bash", "-euo", "pipefail", "-c", code], env=os.environ.copy())
                if done.returncode != 0:
                    raise RuntimeError(f"{where} exited with {done.returncode}")
    finally:
        os.chdir(old_cwd)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("tutorials", nargs="+", type=Path)
    parser.add_argument("--quick", action="store_true", help="small settings (ZERO9_QUICK=1)")
    parser.add_argument("--workdir", type=Path, help="run here instead of beside each tutorial")
    args = parser.parse_args()
    for path in args.tutorials:
        seconds = run_tutorial(path.resolve(), (args.workdir or path.parent).resolve(), args.quick)
        print(f"{path}: ran in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
