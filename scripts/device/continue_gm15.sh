#!/usr/bin/env bash
# Continue the Gomoku 15x15 transfer run of ab_x4.sh on one GPU + 16 cores, then the issue's
# measurement: the final net at 400 visits against gomokubench at its hardest level, 100
# games alternating colours. The run directory travels in .x4carry/gm15 (status, config,
# ratings, logs, the best net with its optimizer state, the newest four rounds of chunks).
# Run in the background (setsid); HOURS sets the extra training (default 0.135 = 8 min).
set -u
source scripts/device/setup.sh
mkdir -p /tmp/runs
[ -d /tmp/runs/gm15 ] || cp -r .x4carry/gm15 /tmp/runs/gm15
python3 -m zero9 autotrain --dir /tmp/runs/gm15 --game gomoku --size 15 --connect 5 --blocks 6 --filters 64 \
  --visits 160 --pcr 0.25 --fast-visits 32 --games-per-gen 1536 --games-parallel 96 --leaves 8 --workers 15 \
  --steps 120 --batch-size 512 --window-min 30000 --eval-games 4 --anchors random,gomokubench:easy \
  --hours "${HOURS:-0.135}" --device cuda --seed 13 > /tmp/runs/gm15.log 2>&1
touch /tmp/runs/gm15.trained
OMP_NUM_THREADS=1 python3 -m zero9 match "$(best_net /tmp/runs/gm15)@400" gomokubench:hard --game gomoku \
  --size 15 --games 100 --parallel 15 --device cuda --move-timeout 60 --seed 22 --sgf-dir /tmp/runs/gm15_eval \
  > /tmp/runs/gm15_eval.log 2>&1
touch /tmp/runs/gm15.done
