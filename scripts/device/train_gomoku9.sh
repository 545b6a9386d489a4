#!/usr/bin/env bash
# 9x9 freestyle Gomoku from zero on the whole GPU machine (16 cores + one GPU), then the
# issue's measurement: the final net at 400 visits against pure MCTS with 5000 playouts,
# 100 games alternating colours (seed 5), and a second 100 games (seed 6) as a repeat.
# Run in the background (setsid) so that it outlives one device call; logs and the run
# directory are under /tmp/runs.
#   GAMES=1280 STEPS=300: the H200 run that ships (15 rounds in 9.3 min there, 13 on an H100)
#   GAMES=1024 STEPS=240: the same samples per position in shorter rounds (19 rounds in 9.1 min
#                         on an H100, 92.5% in the seed-5 match: the bar is still missed)
# Third H100 attempt, declared before running: the same recipe (GAMES=1024 STEPS=240, seed 1,
# --hours 0.15) on a faster loop: a round's overhead (reading the whole window again, a GPU
# readback per loss term per step, pageable copies, counting and sorting every chunk file,
# matplotlib after every round) took ~11 s of a ~27 s round. The decided measurement is again
# the seed-5 match; the seed-6 match is a repeat. Watch it with pack_gomoku9.sh.
# Result: 22 rounds in 9.5 min, 95.5% in the seed-5 match (98.5% in the repeat): the bar is met.
set -u
source scripts/device/setup.sh
GAMES=${GAMES:-1024}
STEPS=${STEPS:-240}
mkdir -p /tmp/runs
python3 -m zero9 autotrain --dir /tmp/runs/gomoku9 --game gomoku --size 9 --connect 5 \
  --blocks 6 --filters 64 --visits 160 --pcr 1 --games-per-gen "$GAMES" --games-parallel 96 --leaves 8 \
  --workers 15 --steps "$STEPS" --batch-size 512 --window-min 30000 \
  --eval-games 4 --anchors random,mcts:200 --hours 0.15 --device cuda --seed 1 \
  > /tmp/runs/gomoku9.log 2>&1
best=$(python3 -c "import json; print(json.load(open('/tmp/runs/gomoku9/status.json'))['best'])")
for seed in 5 6; do
  python3 -m zero9 match "/tmp/runs/gomoku9/nets/$best.pt@400" mcts:5000 --game gomoku --size 9 \
    --games 100 --parallel 15 --move-timeout 120 --seed $seed --sgf-dir /tmp/runs/gm_eval_seed$seed \
    > /tmp/runs/gm_eval_seed$seed.log 2>&1
done
touch /tmp/runs/gomoku9.done
