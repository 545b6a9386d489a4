"""Run every code block of a tutorial, in order, as a reader would.

A tutorial is Markdown. Fenced blocks tagged ``python`` run in one shared Python
namespace (so later blocks see earlier names); blocks tagged ``bash`` run in a
shell. Blocks tagged anything else (``text``, ``console``, ``sgf``) are shown,
not run. The blocks run with the working directory set to ``--workdir``
(default: the tutorial's own folder, so figures land beside it).

A block tagged ``output`` right after a runnable block shows what that block prints
(stdout; a bash block's stderr too), and the run fails when the real output does not
fit it. It fits as in scripts/check_docs.py: a line ``...`` stands for any lines, ``...``
inside a line for any text, and under a ``<!-- numbers vary -->`` mark every number for any
number (the quick settings print other counts than the full ones).

``--quick`` sets ``ZERO9_QUICK=1`` in the environment: tutorials read it to
shrink their settings, and the test suite uses it so the docs cannot drift from
the code. Usage::

    python3 scripts/run_tutorial.py docs/tutorials/01-rules.md
    python3 scripts/run_tutorial.py --quick --workdir /tmp/t docs/tutorials/*.md
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path

from doc_pages import OUTPUT, code_blocks, output_matches, page_blocks, terminal_text

RUNNABLE = ("python", "bash")


class _Tee(io.StringIO):
    """Keeps what a block prints and passes it on to the terminal."""

    def __init__(self, terminal):
        super().__init__()
        self.terminal = terminal

    def write(self, text: str) -> int:
        self.terminal.write(text)
        return super().write(text)

    def flush(self) -> None:
        self.terminal.flush()


def run_python(code: str, where: str, namespace: dict) -> str:
    """Run a python block in the shared namespace; what it printed."""
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        try:
            exec(compile(code, where, "exec"), namespace)
        except Exception as error:
            raise RuntimeError(f"{where} failed: {error!r}") from error
    return tee.getvalue()


def run_bash(code: str, where: str) -> str:
    """Run a bash block, echoing its output as it comes; what it printed (stdout and stderr)."""
    process = subprocess.Popen(["bash", "-euo", "pipefail", "-c", code], env=os.environ.copy(), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    printed = []
    for line in process.stdout:
        sys.stdout.write(line)
        printed.append(line)
    if process.wait() != 0:
        raise RuntimeError(f"{where} exited with {process.returncode}")
    return "".join(printed)


def check_output(path: Path, shown: str, line: int, printed: str) -> None:
    """Raise RuntimeError when ``printed`` does not fit the output block at ``line``."""
    numbers_vary = any(block.line == line and block.numbers_vary for block in page_blocks(path))
    real = terminal_text(printed)
    if not output_matches(shown.splitlines(), real, numbers_vary):
        raise RuntimeError(f"{path}:{line} (output block): the block before it printed something else\n"
                           f"--- shown\n{shown}--- printed\n{real}")


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
        blocks = code_blocks(path.read_text())
        for index, (language, code, line) in enumerate(blocks):
            if language not in RUNNABLE:
                continue
            where = f"{path}:{line} ({language} block)"
            printed = run_python(code, where, namespace) if language == "python" else run_bash(code, where)
            following = blocks[index + 1] if index + 1 < len(blocks) else None
            if following is not None and following[0] == OUTPUT:
                check_output(path, following[1], following[2], printed)
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
