#!/usr/bin/env bash
# The test command of the README: installs what the tests need, then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# GNU Go (the rules oracle and a match opponent) and Xvfb (the window on a real X server)
if { ! command -v gnugo >/dev/null && [ ! -x /usr/games/gnugo ]; } || ! command -v Xvfb >/dev/null; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq gnugo xvfb >/dev/null
fi
python3 -m pip install -q -c constraints.txt -e '.[test]'
python3 -m ruff check .
python3 -m pytest -q "$@"
