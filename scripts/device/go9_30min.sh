#!/usr/bin/env bash
# Issue 9's Go measurement: 9x9 Go from zero on one H100 + 16 cores, the net at 30 minutes of
# autotrain kept, training on as long as the machines allow, then each kept net at 400
# visits against GNU Go level 10. A machine goes back after 30 minutes held, so the run takes
# two legs and the run directory travels between them:
#   leg 1 (from zero):       HOURS=0.37 setsid bash scripts/device/go9_30min.sh train
#                            bash scripts/device/go9_30min.sh pack    -> $OUT/go9.tgz.part*
#   here:                    cat .../go9.tgz.part* > .gocarry/go9.tgz
#   leg 2 (carry .gocarry):  HOURS=0.3 setsid bash scripts/device/go9_30min.sh resume
#                            bash scripts/device/go9_30min.sh nets    -> $OUT: the kept nets, logs
#   leg 3 (carry .gocarry):  TARGET_S=3600 setsid bash scripts/device/go9_30min.sh extend
#                            (.gocarry/go9.tgz made from docs/runs/go9-h100-38min and the shipped net)
# `resume` trains until the run's wall_seconds (status.json: the autotrain processes' own
# time, machine starts not counted) would pass 30 minutes with one more round, copies the best
# net to /tmp/runs/net30.pt, then trains HOURS more. The matches (`match NET`) run here or there.
# Training is train_go9.sh's (Gumbel 32, 10x64, ownership head) with seed 4 and a window of at
# least 150k positions (about two rounds: the first rounds overfit the value head on one).
set -u
source scripts/device/setup.sh
run=/tmp/runs/go9
export SEED=4 WINDOW_MIN=150000
ROUND_SECONDS=90  # one round's length: autotrain checks --hours only between rounds
mkdir -p /tmp/runs
wall() { python3 -c "import json; print(json.load(open('$run/status.json'))['wall_seconds'])"; }
case "${1:-}" in
  train)
    HOURS="${HOURS:-0.37}" bash scripts/device/train_go9.sh
    touch /tmp/runs/go9.trained ;;
  pack)  # the newest chunks that fit in PACK_BYTES, with everything else but the SGFs and old nets
    bash scripts/device/pack_run.sh $run go9 "${PACK_BYTES:-28000000}" ;;
  resume)
    [ -d $run ] || { mkdir -p $run && tar xzf .gocarry/go9.tgz -C $run; }
    left=$(python3 -c "print(max(0.0, 1800 - $ROUND_SECONDS - $(wall)) / 3600)")
    HOURS="$left" bash scripts/device/train_go9.sh
    cp "$(best_net $run)" /tmp/runs/net30.pt
    echo "{\"net\": \"$(basename "$(best_net $run)" .pt)\", \"wall_seconds\": $(wall)}" > /tmp/runs/net30.json
    HOURS="${HOURS:-0.3}" bash scripts/device/train_go9.sh
    touch /tmp/runs/go9.trained ;;
  extend)  # leg 3: on from the run as committed (its chunks never came back) until TARGET_S seconds
    [ -d $run ] || { mkdir -p $run && tar xzf .gocarry/go9.tgz -C $run; }
    # No chunks on disk: the first round trains one pass over its own games, the second one pass
    # over two rounds' (400 steps on one round overfit the value head, see above). extend.g keeps
    # the round leg 3 began at, so that a rerun of this mode resumes instead of starting over.
    [ -f /tmp/runs/extend.g ] || python3 -c "import json; print(json.load(open('$run/status.json'))['generation'])" \
      > /tmp/runs/extend.g
    g=$(cat /tmp/runs/extend.g)
    GENERATIONS=$((g + 1)) STEPS=130 HOURS=1 bash scripts/device/train_go9.sh
    GENERATIONS=$((g + 2)) STEPS=260 HOURS=1 bash scripts/device/train_go9.sh
    HOURS=$(python3 -c "print(max(0.0, ${TARGET_S:-3600} - $ROUND_SECONDS - $(wall)) / 3600)") \
      bash scripts/device/train_go9.sh
    touch /tmp/runs/go9.trained ;;
  nets)  # the kept nets and the run's logs and ratings, for the matches and the docs
    cp /tmp/runs/net30.pt /tmp/runs/net30.json "$OUT/" 2>/dev/null
    cp "$(best_net $run)" "$OUT/final.pt"
    tar czf "$OUT/go9-logs.tgz" -C $run status.json config.json ratings logs
    cp /tmp/runs/go9.log "$OUT/" ; ls -la "$OUT" ;;
  match)  # NET at 400 visits against GNU Go level 10, 15 games at a time on this machine
    OMP_NUM_THREADS=1 python3 -m zero9 match "$2@400" gnugo:10 --game go --size 9 --komi 7.5 \
      --games "${GAMES:-100}" --parallel 15 --device cuda --seed 30 --sgf-dir /tmp/runs/go9_eval \
      > /tmp/runs/go9_eval.log 2>&1
    touch /tmp/runs/go9.done ;;
  *) echo "usage: go9_30min.sh train|pack|resume|extend|nets|match NET" >&2; exit 2 ;;
esac
