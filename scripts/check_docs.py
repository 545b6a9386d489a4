"""Run every command the docs show and compare its output with what the page shows.

Vocabulary (how a page shows commands, README.md and docs/ alike):

- **session**: a fenced block tagged ``console``. Each command starts with ``$ ``; a line
  ending in ``\\`` goes on with the next one, and a here-document (``<<'EOF'`` ... ``EOF``)
  takes its lines with it. The lines after a command, up to the next ``$ ``, are its
  **shown output**. A command with no shown output only has to succeed (exit 0).
- **shown output** matches the real output (stdout and stderr together, progress bars
  left out, trailing spaces ignored) line by line, except that a line ``...`` stands for any
  number of lines, ``...`` inside a line for any text, and runs of spaces for any run of
  spaces (column widths follow the numbers). Under a ``<!-- numbers vary -->`` mark every
  number of the block's shown output stands for any number: use it only where the numbers
  legitimately change from run to run or machine to machine (timings, a net's win rates:
  each net call takes a random symmetry; GNU Go's games: it seeds itself).
- **mark**: an HTML comment on the lines right above a block's fence.
  ``<!-- not run in tests: REASON -->`` shows a command that is not run (it needs a GPU,
  another machine, hours...); ``<!-- slow: REASON -->`` runs only with ``--slow`` (pytest's
  ``slow`` marker); ``<!-- numbers vary -->`` as above.
- **tutorial blocks**: ``python`` and ``bash`` blocks of docs/tutorials/ are run, in order, by
  scripts/run_tutorial.py (tests/test_tutorials.py); this script leaves them to it. Elsewhere
  a ``python`` block runs as it is, and a shell command must be a session or marked.
- **output block**: a block tagged ``output`` right after a ``python`` block (or, in a tutorial,
  a ``bash`` block) is that block's shown output, matched as a session's is.
- **command-like line**: in any other block (``text``, ``sh``, ``json``, untagged), a line that
  starts with ``$ `` or with a program a reader would type (``zero9``, ``python3``, ``pip``...).
  Such a block must be marked: it would be a command nobody checks.

Each page runs in its own scratch folder that holds links to the clone's ``example-data``,
``scripts``, ``docs`` and ``minitrain.sh`` (so paths read as they do from the clone's root;
a command that writes into the clone fails the check), with ``zero9`` on PATH running this
checkout. Usage::

    python3 scripts/check_docs.py README.md docs/*.md docs/tutorials/*.md
    python3 scripts/check_docs.py --slow --list docs/cli-autotrain.md
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from doc_pages import OUTPUT, ROOT, Block, output_matches, page_blocks, terminal_text

LINKED = ("example-data", "scripts", "docs", "minitrain.sh")
PROGRAMS = ("zero9", "python3", "python", "pip", "bash", "sh", "./minitrain.sh", "make", "tar", "mkdir",
            "git", "ray", "sudo", "apt-get", "gogui-twogtp", "leelaz", "autogtp", "install", "export", "cat")
ASSIGNMENT = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+")
COMMAND_TIMEOUT_S = 600


@dataclass
class Command:
    """A ``$ `` command of a session with the output the page shows for it."""

    text: str
    shown: list[str] = field(default_factory=list)


def looks_like_command(line: str) -> bool:
    """A line a reader would type into a shell."""
    text = line.strip()
    if text.startswith("$ "):
        return True
    words = ASSIGNMENT.sub("", text).split()
    if words[:1] == ["zero9"]:  # 'zero9 0.1.0 (...)' is a banner, 'zero9 demo' a command
        return len(words) > 1 and words[1][0].isalpha()
    return bool(words) and words[0] in PROGRAMS


def session_commands(block: Block) -> list[Command]:
    """Split a console block into its commands and their shown output."""
    commands: list[Command] = []
    lines = block.code.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line.startswith("$ "):
            if not commands:
                raise ValueError(f"{block.where}: a console block starts with a '$ ' command, not {line!r}")
            commands[-1].shown.append(line)
            continue
        text = line[2:]
        while text.endswith("\\") and index < len(lines):
            text += "\n" + lines[index]
            index += 1
        heredoc = re.search(r"<<-?\s*'?(\w+)'?", text)
        if heredoc:
            end = heredoc.group(1)
            while index < len(lines):
                text += "\n" + lines[index]
                index += 1
                if lines[index - 1].strip() == end:
                    break
            else:
                raise ValueError(f"{block.where}: the here-document of {line!r} never ends with {end}")
        commands.append(Command(text))
    return commands


def scratch_folder(base: Path, page: Path) -> tuple[Path, dict]:
    """The page's working folder (links to the clone's data) and the environment its commands run in."""
    work = base / page.stem
    work.mkdir(parents=True)
    for name in LINKED:
        (work / name).symlink_to(ROOT / name)
    bin_dir = base / "bin"
    if not bin_dir.exists():
        bin_dir.mkdir()
        shim = bin_dir / "zero9"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m zero9 "$@"\n')
        shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg", "TQDM_DISABLE": "1", "COLUMNS": "100"}
    return work, env


def run_command(command: Command, block: Block, work: Path, env: dict) -> list[str]:
    """Run one command in the page's folder; the problems found (empty: it ran and its output fits)."""
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command.text], cwd=work, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                          timeout=COMMAND_TIMEOUT_S)
    real = terminal_text(done.stdout)
    problems = []
    if done.returncode != 0:
        problems.append(f"exited with {done.returncode}")
    if command.shown and not output_matches(command.shown, real, block.numbers_vary):
        problems.append("its output differs from the page:\n--- shown\n" + "\n".join(command.shown)
                        + "\n--- real\n" + real)
    if problems:
        return [f"{block.where}: $ {command.text}\n  " + "\n  ".join(problems)
                + ("" if command.shown else "\n--- real\n" + real[-3000:])]
    return []


def check_page(page: Path, base: Path, slow: bool, counts: dict) -> list[str]:
    """Run every runnable block of one page; the problems found, each naming its block."""
    problems: list[str] = []
    work = env = None
    tutorial = page.parent.name == "tutorials"
    blocks = page_blocks(page)
    for index, block in enumerate(blocks):
        if block.language == OUTPUT:
            continue  # the shown output of the block before it
        if block.not_run:
            counts["marked"].append(f"{block.where}: {block.not_run}")
            continue
        if tutorial and block.language in ("python", "bash"):
            counts["tutorial runner"] += 1
            continue
        if block.language not in ("console", "python"):
            shell = block.language in ("bash", "sh", "shell")
            if shell or any(map(looks_like_command, block.code.splitlines())):
                problems.append(f"{block.where}: shows commands in a '{block.language}' block: write them "
                                "as a console session ('$ ' prompts) or mark it "
                                "<!-- not run in tests: REASON -->")
            continue
        if block.slow and not slow:
            counts["slow"].append(f"{block.where}: {block.slow}")
            continue
        if work is None:
            work, env = scratch_folder(base, page)
        if block.language == "python":
            counts["run"] += 1
            following = blocks[index + 1] if index + 1 < len(blocks) else None
            paired = following is not None and following.language == OUTPUT
            shown = following.code.splitlines() if paired else []
            numbers_vary = following.numbers_vary if shown else block.numbers_vary
            problems += run_command(Command(f'"{sys.executable}" - <<\'PYTHON\'\n{block.code}PYTHON', shown),
                                    Block(block.path, block.line, block.language, block.code,
                                          numbers_vary=numbers_vary), work, env)
            continue
        try:
            commands = session_commands(block)
        except ValueError as error:
            problems.append(str(error))
            continue
        for command in commands:
            counts["run"] += 1
            start = time.monotonic()
            problems += run_command(command, block, work, env)
            counts["seconds"].append((time.monotonic() - start, f"{block.where}: $ {command.text[:70]}"))
    return problems


def clone_state() -> str:
    """The clone's changed and new files (git), to catch a documented command writing into the clone."""
    done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, text=True,
                          capture_output=True)
    return done.stdout if done.returncode == 0 else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pages", nargs="+", type=Path)
    parser.add_argument("--slow", action="store_true", help="also run the blocks marked <!-- slow: ... -->")
    parser.add_argument("--list", action="store_true", help="print what was run, marked and how long it took")
    args = parser.parse_args()
    counts: dict = {"run": 0, "tutorial runner": 0, "marked": [], "slow": [], "seconds": []}
    problems: list[str] = []
    before = clone_state()
    with tempfile.TemporaryDirectory(prefix="zero9-docs-") as base:
        for page in args.pages:
            problems += check_page(page.resolve(), Path(base), args.slow, counts)
    if clone_state() != before:
        problems.append("the commands changed files of the clone itself (git status):\n" + clone_state())
    if args.list:
        for seconds, what in sorted(counts["seconds"], reverse=True):
            print(f"{seconds:6.1f} s  " + what.replace("\n", " / "))
        for what in counts["marked"]:
            print(f"not run: {what}")
        for what in counts["slow"]:
            print(f"slow:    {what}")
    print(f"{counts['run']} commands run, {counts['tutorial runner']} blocks left to run_tutorial.py, "
          f"{len(counts['marked'])} blocks marked not run, {len(counts['slow'])} slow blocks left out")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
