#!/usr/bin/env bash
# A leg's net against Pachi and GNU Go on one GPU machine, the runs side by side under a time limit
# (docs/runs/host-go9/leg1-matches/DECLARATION.md):
#   LIMIT=180 bash scripts/device/leg_matches.sh NET   -> $OUT/{pachi201,pachi202,gnugo301}.{log,tgz}
set -u
source scripts/device/setup.sh
export ZERO9_PACHI=$PWD/.devtmp/pachi OMP_NUM_THREADS=1
net=$1
play() {  # NAME OPPONENT SEED
  timeout "${LIMIT:-180}" python3 -m zero9 match "$net@400" "$2" --game go --size 9 --komi 7.5 \
    --games 10 --parallel 10 --device cuda --seed "$3" --sgf-dir "/tmp/m/$1_sgf" > "$OUT/$1.log" 2>&1
}
mkdir -p /tmp/m
play pachi201 pachi:20000 201 &
play pachi202 pachi:20000 202 &
play gnugo301 gnugo:10 301 &
wait
for n in pachi201 pachi202 gnugo301; do
  tar czf "$OUT/$n.tgz" -C /tmp/m "${n}_sgf" 2>/dev/null; echo "== $n"; grep -v "^\s*$" "$OUT/$n.log" | tail -4
done
