# Sourced at the start of every command on the GPU machine (no network there).
# Before the first call, on a machine with network, fetch what the GPU box lacks into ignored folders:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 -d .whl sgfmill==1.1.1
#   mkdir -p .devcarry && (cd .devcarry && apt-get download gnugo)
# and carry .whl and .devcarry with the call.
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD
[ -x /tmp/gg/usr/games/gnugo ] || { mkdir -p /tmp/gg && dpkg -x .devcarry/gnugo_*_amd64.deb /tmp/gg; }
export PATH=/tmp/gg/usr/games:$PATH
