#!/usr/bin/env bash
# Issue 35 item 3 on a GPU machine: one Gomoku net for 15x15 and Gomocup's 20x20 (pooled heads,
# zero9/learn/loop/multisize.py), started from the shipped 15x15 net's tower with its policy and value
# distilled into the new heads, then self-play and training on both sizes; the declared matches
# against Rapfi classical at 10,000 nodes (Rapfi travels in .devtmp/rapfi, as for
# train_gomoku15_rapfi.sh). Each leg resumes the run at its round (carry .gmcarry/gm-multi.tgz).
#   ROUNDS=40 setsid bash scripts/device/gomoku_multisize.sh leg &   (background)
#   bash scripts/device/gomoku_multisize.sh pack                     -> $OUT/gm-multi.tgz (no SGFs)
#   bash scripts/device/gomoku_multisize.sh match15 NET              -> 120 games from the balanced openings
#   bash scripts/device/gomoku_multisize.sh match20 NET OPENINGS     -> the 20x20 games (make the openings
#                                                                       first: scripts/make_openings.py --size 20)
set -u
source scripts/device/setup.sh
run=/tmp/runs/gm-multi
mkdir -p /tmp/runs
RAPFI="pbrain:max_node=10000 /tmp/rapfi/pbrain-rapfi"
rapfi() { [ -x /tmp/rapfi/pbrain-rapfi ] || cp -r .devtmp/rapfi /tmp/rapfi; }
case "${1:-}" in
  leg)
    [ -d $run ] || { [ -f .gmcarry/gm-multi.tgz ] && mkdir -p $run && tar xzf .gmcarry/gm-multi.tgz -C $run; }
    python3 scripts/train_multisize.py --dir $run --sizes 15,20 --device cuda --workers 15 \
      --init example-data/gomoku_15x15_best.pt --distill-games 512 --distill-steps 2000 \
      --rounds "${ROUNDS:-40}" --games 256 --visits 160 --pcr 0.25 --fast-visits 32 --steps 600 \
      --batch-size 512 --window-min 30000 --seed 35 --no-sgf >> /tmp/runs/gm-multi.log 2>&1
    touch /tmp/runs/gm-multi.trained ;;
  pack)
    tar czf "$OUT/gm-multi.tgz" -C $run --exclude='*.sgf' . && cp /tmp/runs/gm-multi.log "$OUT/"
    ls -la "$OUT" ;;
  match15)
    rapfi
    OMP_NUM_THREADS=1 python3 -m zero9 match "$2@400" "$RAPFI" --game gomoku --size 15 \
      --openings example-data/openings_gomoku_15x15.txt --games 120 --parallel 15 --device cuda --seed 1 \
      --move-timeout 60 --sgf-dir /tmp/runs/multi15_sgf > "$OUT/multi15_vs_rapfi10k.log" 2>&1
    tail -3 "$OUT/multi15_vs_rapfi10k.log" ;;
  match20)
    rapfi
    OMP_NUM_THREADS=1 python3 -m zero9 match "$2@400" "$RAPFI" --game gomoku --size 20 \
      --openings "$3" --games 120 --parallel 15 --device cuda --seed 1 \
      --move-timeout 60 --sgf-dir /tmp/runs/multi20_sgf > "$OUT/multi20_vs_rapfi10k.log" 2>&1
    tail -3 "$OUT/multi20_vs_rapfi10k.log" ;;
  *) echo "usage: gomoku_multisize.sh leg|pack|match15 NET|match20 NET OPENINGS" >&2; exit 2 ;;
esac
