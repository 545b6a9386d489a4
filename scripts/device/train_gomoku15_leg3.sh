#!/usr/bin/env bash
# Issue 26, the third leg on one GPU + 16 cores: continue the second leg's best net (8f4c090bb465,
# 44.5 GPU-minutes from zero, carried in .devtmp/) with the same recipe as
# train_gomoku15_rapfi.sh, no rating games (they cost 40% of the last leg), for the rest of the
# issue's hour: HOURS (default 0.2 = 12 min, plus the round in progress when the clock runs out).
# Run in the background (setsid); /tmp/runs/gm15r3.trained appears when it is done.
set -u
source scripts/device/setup.sh
mkdir -p /tmp/runs
python3 -m zero9 autotrain --dir /tmp/runs/gm15r3 --game gomoku --size 15 --connect 5 --blocks 6 --filters 64 \
  --init-from .devtmp/8f4c090bb465.pt \
  --visits 160 --pcr 0.25 --fast-visits 32 --games-per-gen 1536 --games-parallel 96 --leaves 8 --workers 15 \
  --steps 120 --batch-size 512 --window-min 30000 --eval-games 0 \
  --hours "${HOURS:-0.2}" --device cuda --seed 28 > /tmp/runs/gm15r3.log 2>&1
touch /tmp/runs/gm15r3.trained
