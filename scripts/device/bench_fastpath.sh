# The fast path's self-play benches on the GPU machine (issue 40): each bench_selfplay run with its
# same-run ceiling, JSON and log into $OUT. Usage: bash scripts/device/bench_fastpath.sh NAME... with
# NAME among recipe, 10x128, gomoku15, recipe-8cores (SECONDS / WARMUP: the measured and warm-up time).
source scripts/device/setup.sh
SECONDS_MEASURED=${SECONDS_MEASURED:-30}
WARMUP=${WARMUP:-15}
python3 -c "import numba, numpy, torch; print('numba', numba.__version__, 'numpy', numpy.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))"
python3 -c "from zero9.learn.selfplay.lockstep import warm_up_native as w; import time; t = time.time(); w(); print(f'native steps compiled in {time.time() - t:.0f} s')"
common="--device cuda --seconds $SECONDS_MEASURED --warmup $WARMUP"
for name in "$@"; do
  case $name in
    recipe) args="--game go --size 9 --blocks 10 --filters 64 --gumbel --visits 32 --games-parallel 96 --leaves 4 --workers 15";;
    10x128) args="--game go --size 9 --blocks 10 --filters 128 --visits 400 --games-parallel 64 --leaves 8 --workers 15";;
    gomoku15) args="--game gomoku --size 15 --blocks 6 --filters 64 --visits 160 --games-parallel 96 --leaves 8 --workers 15";;
    recipe-8cores) args="--game go --size 9 --blocks 10 --filters 64 --gumbel --visits 32 --games-parallel 96 --leaves 4 --workers 7"
                   pin="taskset -c 0-7";;
  esac
  echo "=== $name: $args"
  ${pin:-} python3 scripts/bench_selfplay.py $common $args --json "$OUT/bench-selfplay-h200-$name.json" 2>&1 \
    | grep -v "^W[0-9]" | tee "$OUT/bench-selfplay-h200-$name.log" | tail -12
  pin=""
done
