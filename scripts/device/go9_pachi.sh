#!/usr/bin/env bash
# Issue 25's Go net, in legs on one H100 + 16 cores: continue the shipped 9x9 net (58.9 GPU-min
# from zero, docs/runs/go9-h100-59min) with its recipe (train_go9.sh: Gumbel 32, 10x64) until
# the 2 H100-hours, Pachi at 1,000 playouts among the rating anchors for the curve
# (every 4th round, 8 games an opponent: rating every round cost a share of each round).
# A machine is held 30 minutes at most and a session has 30 device minutes, so a leg packs the
# run directory (status, config, ratings, logs, best net, the newest chunks) into $OUT and the
# next leg, in a later session, carries it back in .gocarry/go9p.tgz. The chunks (30 MB) are
# training data and are not committed: without them the next leg starts from the last leg committed
# in docs/runs/go9-pachi/legN (status, config, ratings, logs and the best net with its optimizer
# state) and refills its window as the first leg did. Pachi travels in .devtmp/pachi.
#   HOURS=0.15 setsid bash scripts/device/go9_pachi.sh leg      (resumes from .gocarry/go9p.tgz if there)
#   bash scripts/device/go9_pachi.sh pack                       -> $OUT/go9p.tgz.part*
#   here:  cat .../go9p.tgz.part* > .gocarry/go9p.tgz
#   bash scripts/device/go9_pachi.sh match NET PLAYOUTS GAMES    -> 400 visits against pachi:PLAYOUTS
set -u
source scripts/device/setup.sh
run=/tmp/runs/go9p
export ZERO9_PACHI=/tmp/z9/.devtmp/pachi SEED="${SEED:-25}" WINDOW_MIN=150000
mkdir -p /tmp/runs
train() {  # train_go9.sh's recipe in $run, Pachi among the anchors
  python3 -m zero9 autotrain --dir $run --game go --size 9 --komi 7.5 --blocks 10 --filters 64 \
    --init-from example-data/go_9x9_best.pt \
    --gumbel --visits 32 --pcr 1 --games-per-gen 1024 --games-parallel 96 --leaves 4 --workers 15 \
    --steps "$1" --batch-size 512 --opening-moves 8 --window-min $WINDOW_MIN \
    --eval-games 8 --rate-every 4 --anchors random,gnugo:1,pachi:1000 \
    --hours "$2" ${3:+--generations "$3"} --device cuda --seed "$SEED" >> /tmp/runs/go9p.log 2>&1
}
case "${1:-}" in
  leg)
    last=$(ls -d docs/runs/go9-pachi/leg* 2>/dev/null | sort -V | tail -1)
    if [ ! -d $run ]; then
      if [ -f .gocarry/go9p.tgz ]; then  # a packed run directory, chunks and all
        mkdir -p $run && tar xzf .gocarry/go9p.tgz -C $run
      elif [ -n "$last" ]; then  # the last committed leg: status, config, ratings, logs, best net; no chunks
        mkdir -p $run && cp -r "$last"/{status.json,config.json,ratings,logs,nets} $run/
      fi
    fi
    g=0
    [ -f $run/status.json ] && g=$(python3 -c "import json; print(json.load(open('$run/status.json'))['generation'])")
    if [ ! -d $run/chunks ]; then
      # A fresh window: the first round trains one pass over its own games, the second one pass
      # over two rounds' (400 steps on one round overfit the value head: go9_30min.sh).
      train 130 1 $((g + 1))
      train 260 1 $((g + 2))
    fi
    train 400 "${HOURS:-0.15}"
    touch /tmp/runs/go9p.trained ;;
  pack)  # the newest chunks that fit in PACK_BYTES, with everything else but the SGFs and old nets
    bash scripts/device/pack_run.sh $run go9p "${PACK_BYTES:-40000000}"
    cp /tmp/runs/go9p.log "$OUT/"; cp "$(best_net $run)" "$OUT/" ;;
  match)  # NET at 400 visits against Pachi at PLAYOUTS, GAMES games, colours alternating
    OMP_NUM_THREADS=1 python3 -m zero9 match "$2@400" "pachi:$3" --game go --size 9 --komi 7.5 \
      --games "$4" --parallel 15 --device cuda --seed 25 --sgf-dir "/tmp/runs/pachi$3_sgf" \
      > "/tmp/runs/pachi$3.log" 2>&1
    tail -3 "/tmp/runs/pachi$3.log" ;;
  *) echo "usage: go9_pachi.sh leg|pack|match NET PLAYOUTS GAMES" >&2; exit 2 ;;
esac
