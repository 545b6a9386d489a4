"""docs/architecture.md's reading order: the files a student reads to see how self-play chooses a move.

The section ``## Reading order`` opens the file; each item names a file in backticks
with its line count, ``1. `zero9/search/puct.py` (426 lines): ...``, and a ``Total:``
line sums them. This test keeps the section true: every file exists, opens with a
docstring that defines its vocabulary, and has the line count listed (``wc -l``), and
the total is at most 1,800 lines (issue 34: readable twins of the search, the planes and the game).
The order closes (issue 43): the files import only each other, the standard library, numpy and
torch, so a student reads nothing else to follow one move (``zero9.settings``, the defaults, named
below, is the one exception).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
LIMIT = 1800  # issue 34: the reading order may grow to about 1,800 lines if it must
ITEM = re.compile(r"^\d+\. `([^`]+)` \(([\d,]+) lines\)")
TOTAL = re.compile(r"^Total: ([\d,]+) lines\.")
THIRD_PARTY = {"numpy", "torch"}
# zero9.settings holds every default as a plain dataclass and imports nothing of zero9; the files
# take their options from it (SearchConfig, NetConfig, SelfPlayConfig) so that a default lives in one
# place (docs/architecture.md, Layers).
DEFAULTS = "zero9.settings"


def reading_order() -> tuple[list[tuple[str, int]], int | None]:
    """The (path, listed lines) items of the section, and its listed total."""
    sections = re.split(r"^## ", DOC.read_text(encoding="utf-8"), flags=re.M)
    assert len(sections) > 1 and sections[1].startswith("Reading order\n"), \
        "docs/architecture.md must open with a '## Reading order' section"
    items, total = [], None
    for line in sections[1].splitlines():
        if m := ITEM.match(line):
            items.append((m.group(1), int(m.group(2).replace(",", ""))))
        elif m := TOTAL.match(line):
            total = int(m.group(1).replace(",", ""))
    return items, total


def line_count(path: Path) -> int:
    """What ``wc -l`` prints: the number of newline characters."""
    return path.read_bytes().count(b"\n")


def test_the_reading_order_is_current_and_at_most_1800_lines():
    items, total = reading_order()
    assert len(items) >= 5, f"the reading order lists {len(items)} files"
    stale = []
    for name, listed in items:
        path = ROOT / name
        assert path.is_file(), f"the reading order lists {name}, which does not exist"
        if line_count(path) != listed:
            stale.append(f"{name}: listed {listed}, has {line_count(path)}")
    assert not stale, "docs/architecture.md's reading order has stale line counts: " + "; ".join(stale)
    counted = sum(listed for _, listed in items)
    assert total == counted, f"the reading order's Total line says {total}, its files add up to {counted}"
    assert counted <= LIMIT, f"the reading order is {counted} lines, more than {LIMIT}"


def test_each_file_opens_with_a_docstring_that_defines_its_vocabulary():
    for name, _ in reading_order()[0]:
        assert (ROOT / name).is_file(), f"the reading order lists {name}, which does not exist"
        docstring = ast.get_docstring(ast.parse((ROOT / name).read_text(encoding="utf-8"))) or ""
        assert "Vocabulary" in docstring, f"{name} has no module docstring defining its vocabulary"


def test_the_reading_order_follows_one_move_through_the_layers():
    # rules before inputs before the net before the search before self-play: each file only
    # needs the ones above it.
    layers = ["games", "nn", "search", "learn"]
    order = [layers.index(name.split("/")[1]) for name, _ in reading_order()[0]]
    assert order == sorted(order) and set(order) == set(range(len(layers)))


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside a function: ``from a.b import c`` gives
    ``a.b.c`` when that is a module of zero9, else ``a.b``."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                is_module = (ROOT / (full.replace(".", "/") + ".py")).is_file()
                names.add(full if is_module else node.module)
    return names


def outside_imports(files: list[str]) -> list[str]:
    """``"FILE imports MODULE"`` for each import of ``files`` that is none of them, the standard library,
    numpy, torch or the defaults."""
    modules = {name.removesuffix(".py").replace("/", ".") for name in files}
    outside = []
    for name in files:
        for module in sorted(imported_modules(ROOT / name)):
            top = module.split(".")[0]
            if module in modules or module == DEFAULTS or top == "__future__":
                continue
            if top != "zero9" and (top in sys.stdlib_module_names or top in THIRD_PARTY):
                continue
            outside.append(f"{name} imports {module}")
    return outside


def test_the_reading_order_imports_only_itself_the_standard_library_numpy_and_torch():
    outside = outside_imports([name for name, _ in reading_order()[0]])
    assert not outside, "the reading order must stand alone: " + "; ".join(outside)


def test_the_import_check_sees_what_is_outside_the_order():
    # it can fail: the fast tree's imports (a package, another search module) are outside a list of
    # the readable files plus puct.py
    files = [name for name, _ in reading_order()[0]] + ["zero9/search/puct.py"]
    assert "zero9/search/puct.py imports zero9.search.gcpause" in outside_imports(files)
    assert outside_imports(["zero9/search/gumbel.py"])[0] == "zero9/search/gumbel.py imports zero9.games"
