#!/usr/bin/env bash
# 9x9 Go from zero on the whole GPU machine (16 cores + one GPU): Gumbel root search at
# 32 simulations, 10 blocks x 64 filters, rated each round against random and GNU Go
# level 1. Run in the background (setsid); HOURS sets the length (default 0.2 = 12 min),
# SEED the seed (default 2), WINDOW_MIN the smallest training window in positions
# (default 10000), STEPS the training steps a round (default 400), GENERATIONS a round to stop
# after; the log is appended to, so a resumed run keeps its history.
# To continue on a fresh machine, carry back the run directory's status.json,
# config.json, ratings/, logs/, the best net and the newest chunks, and rerun.
set -u
source scripts/device/setup.sh
mkdir -p /tmp/runs
python3 -m zero9 autotrain --dir /tmp/runs/go9 --game go --size 9 --komi 7.5 --blocks 10 --filters 64 \
  --gumbel --visits 32 --pcr 1 --games-per-gen 1024 --games-parallel 96 --leaves 4 --workers 15 \
  --steps "${STEPS:-400}" --batch-size 512 --opening-moves 8 --window-min "${WINDOW_MIN:-10000}" \
  --eval-games 4 --anchors random,gnugo:1 \
  --hours "${HOURS:-0.2}" ${GENERATIONS:+--generations "$GENERATIONS"} --device cuda --seed "${SEED:-2}" >> /tmp/runs/go9.log 2>&1
