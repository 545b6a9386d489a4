"""Every command README.md and docs/ show runs, and its output is the one the page shows.

scripts/check_docs.py does the work (its docstring says how a page shows a command, and how
a block is marked as not run or slow); here each page is one test, so a failure names it.
The tutorials' python and bash blocks are run by tests/test_tutorials.py.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from check_docs import looks_like_command, session_commands  # noqa: E402
from doc_pages import Block, output_matches, page_blocks  # noqa: E402

DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md")), *sorted((DOCS / "tutorials").glob("*.md"))]
SLOW_PAGES = [page for page in PAGES if any(block.slow for block in page_blocks(page))]


def check(page: Path, *flags: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_docs.py"), *flags, str(page)],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, f"{page.relative_to(ROOT)}:\n{done.stdout[-2000:]}\n{done.stderr[-6000:]}"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_commands_run_and_print_what_the_page_shows(page):
    check(page)


@pytest.mark.slow
@pytest.mark.parametrize("page", SLOW_PAGES, ids=[str(p.relative_to(ROOT)) for p in SLOW_PAGES])
def test_slow_page_commands(page):
    check(page, "--slow")


def test_shown_output_matching():
    shown = ["go on 9x9, net 51bcc069b326 (.../go_9x9_best.pt)", "...", "result B+14.5 after 113 moves"]
    real = ("go on 9x9, net 51bcc069b326 (/x/y/go_9x9_best.pt)\n1.B E5\n2.W G5\n"
            "result B+14.5 after 113 moves\n")
    assert output_matches(shown, real, numbers_vary=False)
    assert not output_matches(shown, real.replace("B+14.5", "B+2.5"), numbers_vary=False)
    assert output_matches(shown, real.replace("B+14.5", "B+2.5"), numbers_vary=True)
    assert not output_matches(shown, real.replace("B+14.5", "W+2.5"), numbers_vary=True)  # only numbers vary
    assert not output_matches(shown, real + "an extra line\n", numbers_vary=False)
    assert output_matches(["a  b", "c"], "a b\nc\n", numbers_vary=False)  # column widths follow the numbers


def test_sessions_split_into_commands_with_their_output(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- numbers vary -->\n```console\n$ zero9 gtp -q <<'EOF'\nname\nEOF\n= zero9\n\n"
                    "$ zero9 convert a.txt \\\n    b.pt\nwrote b.pt\n```\n")
    [block] = page_blocks(page)
    assert block.numbers_vary and not block.not_run
    commands = session_commands(block)
    assert [c.text for c in commands] == ["zero9 gtp -q <<'EOF'\nname\nEOF",
                                          "zero9 convert a.txt \\\n    b.pt"]
    assert [c.shown for c in commands] == [["= zero9", ""], ["wrote b.pt"]]


def test_an_unmarked_command_outside_a_session_is_refused(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```text\nzero9 demo --seed 1\n```\n\n<!-- not run in tests: hours -->\n```text\n"
                    "zero9 autotrain --hours 8\n```\n\n"
                    "```text\nzero9 0.1.0 (Leela Zero 0.17 compatible)\n```\n")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_docs.py"), str(page)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "page.md:1: shows commands in a 'text' block" in done.stderr
    # the second block is marked; a banner is no command
    assert "page.md:6" not in done.stderr and "page.md:11" not in done.stderr
    assert looks_like_command("$ ls") and looks_like_command("HOURS=1 bash x.sh")
    assert not looks_like_command("zero9 0.1.0 (Leela Zero 0.17 compatible)")
    assert isinstance(page_blocks(page)[1], Block) and page_blocks(page)[1].not_run == "hours"


def test_tutorial_output_blocks_are_checked(tmp_path):
    """An ``output`` block after a runnable block must fit what the block printed."""
    page = tmp_path / "01-page.md"

    def run(shown: str, mark: str = "") -> subprocess.CompletedProcess:
        page.write_text(f"```python\nprint('moves: 122, result W+38.5')\n```\n\n{mark}```output\n{shown}\n"
                        "```\n```bash\necho from bash >&2\n```\n```output\nfrom bash\n```\n")
        return subprocess.run([sys.executable, str(ROOT / "scripts" / "run_tutorial.py"), "--workdir",
                               str(tmp_path / "work"), str(page)], capture_output=True, text=True, timeout=60)

    assert run("moves: 122, result W+38.5").returncode == 0
    wrong = run("moves: 122, result B+38.5")
    assert wrong.returncode != 0 and "01-page.md:5 (output block)" in wrong.stderr
    assert run("moves: 90, result W+2.5").returncode != 0
    assert run("moves: 90, result W+2.5", "<!-- numbers vary -->\n").returncode == 0
    assert run("moves: ...").returncode == 0  # '...' inside a line: any text
