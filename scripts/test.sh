#!/usr/bin/env bash
# The test command of the README: installs what the tests need, then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# GNU Go (the rules oracle and a match opponent), Xvfb (the window on a real X server), and for
# zero9 server's tests: PostgreSQL, Chromium + chromedriver (the status page), Leela Zero (its autogtp)
# and curl (what autogtp talks to the server with).
missing=""
{ command -v gnugo >/dev/null || [ -x /usr/games/gnugo ]; } || missing="$missing gnugo"
command -v Xvfb >/dev/null || missing="$missing xvfb"
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$missing postgresql"
command -v chromium >/dev/null || missing="$missing chromium"
command -v chromedriver >/dev/null || missing="$missing chromium-driver"
[ -x /usr/lib/leelaz/bin/autogtp ] || command -v autogtp >/dev/null || missing="$missing leela-zero"
command -v curl >/dev/null || missing="$missing curl"
if [ -n "$missing" ]; then
  # apt_get.sh waits for another apt process's lock (unattended upgrades on a fresh machine)
  bash scripts/apt_get.sh update -qq
  DEBIAN_FRONTEND=noninteractive bash scripts/apt_get.sh install -y -qq $missing >/dev/null
fi
# The README's install made .venv (Debian's Python refuses pip outside one): use it when it is there.
if [ -z "${VIRTUAL_ENV:-}" ] && [ -f .venv/bin/activate ]; then
  . .venv/bin/activate
fi
python3 -m pip install -q -c constraints.txt -e '.[test]'
python3 -m ruff check .
python3 -m pytest -q "$@"
