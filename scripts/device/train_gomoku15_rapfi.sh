#!/usr/bin/env bash
# Issue 26 on one GPU + 16 cores: continue the shipped 15x15 Gomoku net (6x64, freestyle) with
# the recipe that made it (docs/training-the-shipped-nets.md), Rapfi at 10k nodes among the
# rating anchors so the run draws its own curve against it; then the declared match
# (docs/runs/gomoku15-rapfi/DECLARATION.md): the run's final best net at 400 visits against
# Rapfi classical at 10,000 nodes a move, all 60 shipped openings twice with colours swapped,
# and the shipped net in the same 120 games as the reference.
# Rapfi (built from github.com/dhbloo/rapfi, see docs/opponents.md) travels in .devtmp/rapfi.
# Run in the background (setsid); HOURS sets the training (default 0.30 = 18 min).
set -u
source scripts/device/setup.sh
mkdir -p /tmp/runs
[ -x /tmp/rapfi/pbrain-rapfi ] || cp -r .devtmp/rapfi /tmp/rapfi
RAPFI="pbrain:max_node=10000 /tmp/rapfi/pbrain-rapfi"
python3 -m zero9 autotrain --dir /tmp/runs/gm15r --game gomoku --size 15 --connect 5 --blocks 6 --filters 64 \
  --init-from example-data/gomoku_15x15_best.pt \
  --visits 160 --pcr 0.25 --fast-visits 32 --games-per-gen 1536 --games-parallel 96 --leaves 8 --workers 15 \
  --steps 120 --batch-size 512 --window-min 30000 --eval-games 6 --anchors "random,gomokubench:hard,$RAPFI" \
  --hours "${HOURS:-0.30}" --device cuda --seed 26 > /tmp/runs/gm15r.log 2>&1
touch /tmp/runs/gm15r.trained
best=$(python3 -c "import json; print(json.load(open('/tmp/runs/gm15r/status.json'))['best'])")
match() {  # NET NAME: the declared 120 games against Rapfi 10k
  OMP_NUM_THREADS=1 python3 -m zero9 match "$1@400" "$RAPFI" --game gomoku --size 15 \
    --openings example-data/openings_gomoku_15x15.txt --games 120 --parallel 15 --device cuda --seed 1 \
    --move-timeout 60 --sgf-dir "/tmp/runs/$2_sgf" > "/tmp/runs/$2.log" 2>&1
}
match "/tmp/runs/gm15r/nets/$best.pt" final_vs_rapfi10k
touch /tmp/runs/gm15r.final
match example-data/gomoku_15x15_best.pt shipped_vs_rapfi10k
touch /tmp/runs/gm15r.done
