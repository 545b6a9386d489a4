"""The AI levels as the docs describe them, against zero9/arena/levels.py (the one place they are set).

docs/levels.md has the table (visits, how many moves it chooses among, temperature) and names the
window's default; docs/cli-play.md describes each level in its ``--level NAME`` row and in the
comments of its examples (``# a weaker AI: 16 visits, one of its best three moves``). Any of them
drifting from ``LEVELS`` fails here, naming the page, the level and both values.
"""

from __future__ import annotations

import re
from pathlib import Path

from gui.engine import DEFAULT_LEVEL
from zero9.arena.levels import LEVELS, Level

ROOT = Path(__file__).resolve().parents[1]
LEVELS_PAGE = ROOT / "docs" / "levels.md"
PLAY_PAGE = ROOT / "docs" / "cli-play.md"
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                "nine": 9, "ten": 10}
POLICY_ALONE = re.compile(r"the net's policy|policy alone", re.I)


def number(word: str) -> int:
    return int(word) if word.isdigit() else NUMBER_WORDS[word.lower()]


def described(text: str) -> dict[str, float]:
    """What a description of a level says: visits, top_k (moves it chooses among), temperature."""
    said: dict[str, float] = {}
    if POLICY_ALONE.search(text):
        said["visits"] = 1
    visits = re.search(r"\b(\d[\d,]*) visits?\b", text)
    if visits:
        said["visits"] = int(visits.group(1).replace(",", ""))
    count = r"(\d+|" + "|".join(NUMBER_WORDS) + r")"
    among = (re.search(rf"\b(?:best|likeliest)\s+{count}\b", text, re.I)
             or re.search(rf"\b{count}\s+(?:best|likeliest)\b", text, re.I))
    if among:
        said["top_k"] = number(among.group(1))
    elif re.search(r"\bthe best move\b|\bits best move\b", text):
        said["top_k"] = 1
    return said


def actual(level: Level) -> dict[str, float]:
    return {"visits": level.visits, "top_k": level.top_k, "temperature": level.temperature}


def drift(page: Path, name: str, said: dict[str, float]) -> list[str]:
    held = actual(LEVELS[name])
    return [f"{page.relative_to(ROOT)}: {name} {key} {value:g}, levels.py has {held[key]:g}"
            for key, value in said.items() if held[key] != value]


def levels_page_table(page: Path = LEVELS_PAGE) -> dict[str, dict[str, float]]:
    """The level table (level | visits | chooses among | temperature) of levels.md or cli-play.md."""
    rows = {}
    for line in page.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].lower() in LEVELS:
            said = described(f"{cells[1]} visits, {cells[2]}" if cells[1].split()[0].isdigit() else cells[2])
            said["visits"] = int(cells[1].split()[0])
            said["temperature"] = float(cells[3])
            rows[cells[0].lower()] = said
    return rows


def play_page_descriptions() -> list[tuple[str, str]]:
    """(level, its description) from cli-play.md's --level row and its examples' comments."""
    found = []
    for line in PLAY_PAGE.read_text().splitlines():
        if line.startswith("| `--level NAME`"):
            found += re.findall(r"`(\w+)` \(([^)]*)\)", line)
        example = re.search(r"--level (\w+)\s.*#\s*(.*)$", line)
        if example:
            found.append((example.group(1), example.group(2)))
    return [(name.lower(), text) for name, text in found if name.lower() in LEVELS]


def test_levels_md_table_is_levels_py():
    rows = levels_page_table()
    assert sorted(rows) == sorted(LEVELS), f"docs/levels.md's table lists {sorted(rows)}"
    problems = [p for name, said in rows.items() for p in drift(LEVELS_PAGE, name, said)]
    assert problems == []


def test_levels_md_names_the_windows_default():
    default = re.search(r"(\w+) is the window's default", LEVELS_PAGE.read_text())
    assert default is not None and default.group(1).lower() == DEFAULT_LEVEL, (
        f"docs/levels.md names {default and default.group(1)} the window's default; gui/engine.py has "
        f"{DEFAULT_LEVEL}")


def test_cli_play_md_describes_the_levels_of_levels_py():
    rows = levels_page_table(PLAY_PAGE)
    assert sorted(rows) == sorted(LEVELS), f"docs/cli-play.md's level table lists {sorted(rows)}"
    problems = [p for name, said in rows.items() for p in drift(PLAY_PAGE, name, said)]
    problems += [p for name, text in play_page_descriptions()
                 for p in drift(PLAY_PAGE, name, described(text))]
    default = re.search(r"\*\*(\w+) is the default\*\*", PLAY_PAGE.read_text())
    if default is None or default.group(1).lower() != DEFAULT_LEVEL:
        problems.append(f"docs/cli-play.md calls {default and default.group(1)} the default; "
                        f"gui/engine.py has {DEFAULT_LEVEL}")
    assert problems == []


def test_a_drifted_description_is_caught():
    assert described("8 visits, one of its best 4") == {"visits": 8, "top_k": 4}
    assert described("the net's policy, one of its 8 likeliest moves") == {"visits": 1, "top_k": 8}
    assert described("a weaker AI: 32 visits, one of its best two moves") == {"visits": 32, "top_k": 2}
    assert described("200 visits, the default") == {"visits": 200}
    assert drift(PLAY_PAGE, "club", {"visits": 32, "top_k": 2}) == [
        f"docs/cli-play.md: club visits 32, levels.py has {LEVELS['club'].visits}",
        f"docs/cli-play.md: club top_k 2, levels.py has {LEVELS['club'].top_k}"]
