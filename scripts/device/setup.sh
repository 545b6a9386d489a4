# Sourced at the start of every command on the GPU machine (no network there).
# Before the first call, on a machine with network, fetch what the GPU box lacks into ignored folders:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 -d .whl sgfmill==1.1.1
#   mkdir -p .devcarry && (cd .devcarry && apt-get download gnugo)
# and, for the Ray benchmark, Ray itself (its wheel is over the 64 MiB a call carries, so
# carry it unpacked without its Java jars, dashboard build and libraries zero9 does not use):
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
#       -d /tmp/w ray==2.60.0 jsonschema jsonschema-specifications referencing rpds-py
#   unzip -q /tmp/w/ray-*.whl -d /tmp/r && rm -rf /tmp/r/ray/{jars,dashboard/client/build,rllib,data,serve,tune,train,llm}
#   mkdir -p .raycarry && tar -C /tmp/r -cJf .raycarry/ray-min.tar.xz . && mv /tmp/w/[jr][se]*.whl .raycarry/
# and carry .whl, .devcarry (and .raycarry) with the call.
# Every command works in a copy of the repository, /tmp/z9: each device call resyncs the working
# tree, and a worker process that imports zero9 during a resync fails (a Go run's second leg died
# so: "No module named 'zero9.games.go'"). Later calls add new files (carried folders) to the copy
# without overwriting: a script changed here reaches a machine's copy only on a fresh machine.
if [ "$PWD" != /tmp/z9 ]; then
  cp -rn . /tmp/z9 2>/dev/null  # -n: never overwrite what a running job may be reading
  cd /tmp/z9 || exit 1
fi
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
if [ -d .raycarry ] && [ ! -d /tmp/site/ray ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .raycarry/*.whl
  tar -C /tmp/site -xJf .raycarry/ray-min.tar.xz
fi
export PYTHONPATH=/tmp/site:$PWD
[ -x /tmp/gg/usr/games/gnugo ] || { mkdir -p /tmp/gg && dpkg -x .devcarry/gnugo_*_amd64.deb /tmp/gg; }
export PATH=/tmp/gg/usr/games:$PATH
# The path of an autotrain run's best net: best_net RUN_DIR -> RUN_DIR/nets/<hash>.pt
best_net() { echo "$1/nets/$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['best'])" "$1/status.json").pt"; }
