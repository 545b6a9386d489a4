#!/usr/bin/env bash
# Issue 45: 9x9 Go from zero in 20 minutes on one GPU with nothing but `zero9 autotrain`'s defaults
# (the machine's recipe, zero9.settings.autotrain_recipe), then the declared matches
# (docs/runs/go9-zero20/declaration.md). On the device, in the background:
#   setsid bash scripts/device/go9_zero20.sh train    # 20 minutes; then: match; then: pack -> $OUT
# `train` runs the command a student types (plus --hours: the 20 minutes); `match` plays the run's
# final net at 400 visits, 100 games against GNU Go level 10 and 40 against the shipped net, 15 games
# at a time on the GPU; `pack` brings back the run without its chunks and SGFs, its final net and
# the matches.
set -u
source scripts/device/setup.sh
run=/tmp/runs/zero20
mkdir -p /tmp/runs
case "${1:-}" in
  train)
    python3 -m zero9 autotrain --dir $run --hours "${HOURS:-0.3333}" > /tmp/runs/zero20.log 2>&1
    touch /tmp/runs/zero20.trained ;;
  match)
    net=$(best_net $run)
    OMP_NUM_THREADS=1 python3 -m zero9 match "$net@400" gnugo:10 --game go --size 9 --komi 7.5 --games 100 \
      --parallel 15 --openings example-data/openings_go_9x9.txt --device cuda --seed 45 \
      --sgf-dir /tmp/runs/gnugo10_sgf > /tmp/runs/gnugo10.log 2>&1
    OMP_NUM_THREADS=1 python3 -m zero9 match "$net@400" example-data/go_9x9_best.pt@400 --game go --size 9 \
      --komi 7.5 --games 40 --parallel 15 --openings example-data/openings_go_9x9.txt --device cuda --seed 46 \
      --sgf-dir /tmp/runs/shipped_sgf > /tmp/runs/shipped.log 2>&1
    touch /tmp/runs/zero20.matched ;;
  pack)
    cd $run || exit 1
    mkdir -p /tmp/pack && cp "$(best_net $run)" /tmp/pack/final.pt
    tar czf "$OUT/zero20.tgz" status.json config.json ratings logs plots -C /tmp/runs zero20.log \
      $(cd /tmp/runs && ls -d gnugo10.log gnugo10_sgf shipped.log shipped_sgf 2>/dev/null)
    cp /tmp/pack/final.pt "$OUT/" ; ls -la "$OUT" ;;
  *) echo "usage: go9_zero20.sh train|match|pack" >&2; exit 2 ;;
esac
