"""A docs page as scripts/check_docs.py and scripts/run_tutorial.py read it: its fenced blocks, the marks
above them, and how a block's shown output is matched against what really printed.

Vocabulary (scripts/check_docs.py's docstring says what each means to a reader):

- **block**: a fenced block (its language, code and first line) with the marks in the HTML
  comments right above its fence: ``<!-- not run in tests: REASON -->``, ``<!-- slow: REASON -->``,
  ``<!-- numbers vary -->``.
- **output block**: a block tagged ``output``, the shown output of the block before it.
- **match**: the shown lines against the real output, line by line: ``...`` alone on a line is
  any lines, ``...`` in a line any text, runs of spaces any run of spaces, and under
  ``numbers vary`` every number any number; progress bars and carriage-return overwrites are
  left out as a terminal shows them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```([\w+-]*)[^\n]*\n(.*?)^```\s*$", re.S | re.M)
OUTPUT = "output"
NOT_RUN = re.compile(r"<!--\s*not run in tests:\s*(.+?)\s*-->")
SLOW = re.compile(r"<!--\s*slow:\s*(.+?)\s*-->")
NUMBERS_VARY = re.compile(r"<!--\s*numbers vary\s*-->")
NUMBER = r"[-+]?\d[\d,]*(?:\.\d+)?"
PROGRESS_BAR = re.compile(r"^.*\d+%\|.*\|.*\[.*\]\s*$")


def code_blocks(markdown: str) -> list[tuple[str, str, int]]:
    """(language, code, line number) of each fenced block, in order."""
    blocks = []
    for match in FENCE.finditer(markdown):
        line = markdown.count("\n", 0, match.start()) + 1
        blocks.append((match.group(1).lower(), match.group(2), line))
    return blocks


@dataclass
class Block:
    """One fenced block of a page and the marks above it."""

    path: Path
    line: int
    language: str
    code: str
    not_run: str | None = None
    slow: str | None = None
    numbers_vary: bool = False

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path}:{self.line}"


def page_blocks(path: Path) -> list[Block]:
    """Every fenced block of a page, with the marks in the comment lines right above its fence."""
    lines = path.read_text().splitlines()
    blocks = []
    for language, code, line in code_blocks(path.read_text()):
        above = []
        index = line - 2  # the line before the fence, 0-based
        while index >= 0 and (lines[index].strip().startswith("<!--") or not lines[index].strip()):
            above.append(lines[index])
            index -= 1
        marks = "\n".join(above)
        not_run, slow = NOT_RUN.search(marks), SLOW.search(marks)
        blocks.append(Block(path, line, language, code, not_run and not_run.group(1), slow and slow.group(1),
                            bool(NUMBERS_VARY.search(marks))))
    return blocks


def line_pattern(line: str, numbers_vary: bool) -> str:
    """A regular expression for one shown line: '...' is any text, spaces any spaces, numbers maybe any."""
    pieces = []
    for part in re.split(r"(\.\.\.| +)", line.rstrip()):
        if part == "...":
            pieces.append(".*")
        elif part.strip() == "" and part:
            pieces.append(" *" if numbers_vary else " +")
        elif numbers_vary:
            pieces.append(NUMBER.join(re.escape(text) for text in re.split(NUMBER, part)))
        else:
            pieces.append(re.escape(part))
    return "".join(pieces)


def output_matches(shown: list[str], real: str, numbers_vary: bool) -> bool:
    """Whether the real output fits the shown lines ('...' alone on a line: any lines, none included)."""
    pattern = "".join(r"(?:[^\n]*\n)*?" if line.strip() == "..." else line_pattern(line, numbers_vary) + r"\n"
                      for line in shown)
    return re.fullmatch(pattern, real) is not None


def terminal_text(raw: str) -> str:
    """What a terminal keeps of an output: the last of each carriage-return line, no progress bars."""
    kept = []
    for line in raw.split("\n"):
        line = line.split("\r")[-1].rstrip()
        if not PROGRESS_BAR.match(line):
            kept.append(line)
    text = "\n".join(kept).strip("\n")
    return text + "\n" if text else ""
