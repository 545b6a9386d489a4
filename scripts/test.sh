#!/usr/bin/env bash
# The test command of the README: installs what the tests need, then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# GNU Go (the rules oracle and a match opponent) and Xvfb (the window on a real X server)
if { ! command -v gnugo >/dev/null && [ ! -x /usr/games/gnugo ]; } || ! command -v Xvfb >/dev/null; then
  # apt_get.sh waits for another apt process's lock instead of failing at once
  bash scripts/apt_get.sh update -qq && bash scripts/apt_get.sh install -y -qq gnugo xvfb >/dev/null
fi
# The README's install made .venv (Debian's Python refuses pip outside one): use it when it is there.
if [ -z "${VIRTUAL_ENV:-}" ] && [ -f .venv/bin/activate ]; then
  . .venv/bin/activate
fi
python3 -m pip install -q -c constraints.txt -e '.[test]'
python3 -m ruff check .
python3 -m pytest -q "$@"
