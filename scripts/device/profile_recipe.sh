# A py-spy profile of every process of the Go recipe's self-play bench on the GPU machine (issue 40):
# the bench in the background, 25 s of samples once it measures, raw stacks into $OUT.
source scripts/device/setup.sh
python3 -c "from zero9.learn.selfplay.lockstep import warm_up_native; warm_up_native()"
python3 scripts/bench_selfplay.py --device cuda --game go --size 9 --blocks 10 --filters 64 --gumbel --visits 32 \
  --games-parallel 96 --leaves 4 --workers 15 --seconds 40 --warmup 10 > "$OUT/profiled-recipe.log" 2>&1 &
bench=$!
for _ in $(seq 120); do grep -q "net ready" "$OUT/profiled-recipe.log" && break; sleep 1; done
sleep 15
/tmp/site/bin/py-spy record --subprocesses -d 25 -r 100 -f raw -p $bench -o "$OUT/spy-recipe.txt" 2>&1 | tail -2
wait $bench
grep -E "evaluations|self-play:|waiting|ratio" "$OUT/profiled-recipe.log"
nproc; lscpu | grep -E "Thread|Core|Socket|Model name"
gzip -f "$OUT/spy-recipe.txt"
