#!/usr/bin/env bash
# Issue 9's Go measurement: 9x9 Go from zero for 30 minutes of autotrain on one H100 + 16
# cores, then the final net at 400 visits against GNU Go level 10. A machine goes back after
# 30 minutes held, so the run takes two legs and the run directory travels between them:
#   leg 1 (from zero, HOURS=0.4):      setsid bash scripts/device/go9_30min.sh train
#                                      bash scripts/device/go9_30min.sh pack   -> $OUT/go9.tgz.part*
#   here:                              cat .../go9.tgz.part* > .gocarry/go9.tgz
#   leg 2 (carry .gocarry):            setsid bash scripts/device/go9_30min.sh resume
# `resume` trains until status.json's wall_seconds reaches 30 minutes, then plays the match.
# Training is train_go9.sh's (Gumbel 32, 10x64) with seed 3, and the ownership head (on by default).
set -u
source scripts/device/setup.sh
run=/tmp/runs/go9
train() {  # $1: hours for this leg
  HOURS="$1" SEED=3 bash scripts/device/train_go9.sh
  touch /tmp/runs/go9.trained
}
mkdir -p /tmp/runs
case "${1:-}" in
  train)
    train "${HOURS:-0.4}" ;;
  pack)  # the newest chunks that fit in about 40 MB, with everything else but the SGFs and old nets
    cd $run || exit 1
    best=$(python3 -c "import json; print(json.load(open('status.json'))['best'])")
    keep=() total=0
    for d in $(ls -d chunks/gen* | sort -r); do
      s=$(du -sb "$d" | cut -f1); [ $((total + s)) -gt 40000000 ] && break
      keep+=("$d"); total=$((total + s))
    done
    tar czf /tmp/go9.tgz status.json config.json ratings logs "nets/$best.pt" "${keep[@]}"
    cd /tmp && split -b 15M -d go9.tgz "$OUT/go9.tgz.part"
    ls -la "$OUT"; echo "carried ${#keep[@]} rounds of chunks, $total bytes" ;;
  resume)
    [ -d $run ] || { mkdir -p $run && tar xzf .gocarry/go9.tgz -C $run; }
    left=$(python3 -c "import json; print(max(0.0, 1800 - json.load(open('$run/status.json'))['wall_seconds']) / 3600)")
    train "$left"; bash "$0" match ;;
  oneshot)  # one machine only: HOURS of training from zero, then the match
    train "${HOURS:-0.3}"; bash "$0" match ;;
  match)
    best=$(python3 -c "import json; print(json.load(open('$run/status.json'))['best'])")
    OMP_NUM_THREADS=1 python3 -m zero9 match "$run/nets/$best.pt@400" gnugo:10 --game go --size 9 --komi 7.5 \
      --games "${GAMES:-100}" --parallel 15 --device cuda --seed 30 --sgf-dir /tmp/runs/go9_eval \
      > /tmp/runs/go9_eval.log 2>&1
    touch /tmp/runs/go9.done ;;
  *) echo "usage: go9_30min.sh train|pack|resume|oneshot|match" >&2; exit 2 ;;
esac
