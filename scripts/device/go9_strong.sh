#!/usr/bin/env bash
# Issue 44: the shipped 9x9 Go net continued with a trained score head, KataGo's analysis of the
# review's games, and the declared matches (docs/runs/go9-strong/declaration.md). On one GPU machine:
#   setsid bash scripts/device/go9_strong.sh train &   # the training leg, in the background
#   bash scripts/device/go9_strong.sh katago-part N    # N = 1 to 5: KataGo and its net in five calls
#                                                      # (carry .kgcarry/pN: a call carries 64 MiB)
#   setsid bash scripts/device/go9_strong.sh analyse & # KataGo's analysis of the 64 review games
#   bash scripts/device/go9_strong.sh stop|graft|match|pack
# `graft` gives the shipped net the run's score head training without changing its play (only the
# score head learns); `match` plays the declared matches on the GPU; `pack` brings the run back
# (logs, nets, a sample of chunks) with the matches and KataGo's replies.
set -u
source scripts/device/setup.sh
run=/tmp/runs/strong
kg=/opt/kg
mkdir -p /tmp/runs $kg
latest() { python3 -c "import json; print(json.load(open('$run/status.json'))['best'])"; }
katago_env() {
  mkdir -p /etc/OpenCL/vendors && echo /usr/lib/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
  export LD_LIBRARY_PATH=$kg/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}
case "${1:-}" in
  train)
    python3 -m zero9 autotrain --dir $run --device cuda --init-from example-data/go_9x9_best.pt \
      --blocks 10 --filters 64 --ownership --score-head --score-weight "${SCORE_WEIGHT:-10}" \
      --resign-threshold -1 --visits "${VISITS:-64}" --eval-games 0 --seed 44 \
      --hours "${HOURS:-0.27}" > /tmp/runs/strong.log 2>&1
    touch /tmp/runs/strong.trained ;;
  stop)  # SIGINT: the round in progress saves and the run exits 0
    pkill -INT -f "zero9 autotrain --dir $run"; sleep 20; tail -3 /tmp/runs/strong.log ;;
  katago-part)
    cp ".kgcarry/p$2/"* $kg/ && ls -la $kg
    if [ "$(ls $kg/part0? 2>/dev/null | wc -l)" = 5 ]; then
      cat $kg/part0? | tar xf - -C $kg && tar xJf $kg/katago-bin.tar.xz -C $kg
      rm -f $kg/part0? && katago_env && $kg/katago version
    fi ;;
  analyse)
    katago_env
    python3 scripts/review_vs_katago.py katago --katago $kg/katago --model $kg/b10c384h6nbttflrs.bin.gz \
      --games-from levels --games 64 --katago-visits 150 --replies /tmp/runs/katago-replies.jsonl \
      > /tmp/runs/katago.log 2>&1
    touch /tmp/runs/katago.done ;;
  graft)
    python3 scripts/graft_score_head.py example-data/go_9x9_best.pt $run/chunks --device cuda \
      --out /tmp/runs/grafted.pt > /tmp/runs/graft.log 2>&1; tail -5 /tmp/runs/graft.log ;;
  match)
    katago_env
    net=$run/nets/$(latest).pt
    export OMP_NUM_THREADS=1
    cat > $kg/gtp.cfg <<EOF
logDir = /tmp/runs/katago-gtp-logs
logAllGTPCommunication = false
logSearchInfo = false
logToStderr = false
rules = chinese
maxVisits = 1
numSearchThreads = 1
allowResignation = false
# KataGo 1.18.1's GTP mode refuses a config without these, resignation off or not
resignThreshold = -0.90
resignConsecTurns = 3
EOF
    python3 -m zero9 match "$net@100" example-data/go_9x9_best.pt@100 --game go --size 9 --komi 7.5 \
      --games 40 --parallel 15 --openings example-data/openings_go_9x9.txt --device cuda --seed 441 \
      --sgf-dir /tmp/runs/shipped_sgf > /tmp/runs/shipped.log 2>&1
    python3 -m zero9 match "$net@400" gnugo:10 --game go --size 9 --komi 7.5 --games 100 --parallel 15 \
      --device cuda --seed 442 --sgf-dir /tmp/runs/gnugo10_sgf > /tmp/runs/gnugo10.log 2>&1
    python3 -m zero9 match "$net@400" \
      "gtp:$kg/katago gtp -model $kg/b10c384h6nbttflrs.bin.gz -config $kg/gtp.cfg" --game go --size 9 \
      --komi 7.5 --games 40 --parallel 8 --device cuda --seed 443 --sgf-dir /tmp/runs/katago1_sgf \
      > /tmp/runs/katago1.log 2>&1
    tail -n 3 /tmp/runs/shipped.log /tmp/runs/gnugo10.log /tmp/runs/katago1.log ;;
  pack)
    cd $run || exit 1
    cp "nets/$(latest).pt" "$OUT/final.pt"; [ -f /tmp/runs/grafted.pt ] && cp /tmp/runs/grafted.pt "$OUT/"
    # the last 4,000 games' chunks: held-out games for the score calibration, and the graft's data
    find chunks -name "*.npz" | sort | tail -n 4000 > /tmp/runs/chunk-list
    tar czf "$OUT/chunks.tgz" -T /tmp/runs/chunk-list
    tar czf "$OUT/strong.tgz" status.json config.json logs -C /tmp/runs strong.log \
      $(cd /tmp/runs && ls -d graft.log katago.log katago-replies.jsonl shipped.log shipped_sgf gnugo10.log \
        gnugo10_sgf katago1.log katago1_sgf 2>/dev/null)
    ls -la "$OUT" ;;
  *) echo "usage: go9_strong.sh train|stop|katago-part N|analyse|graft|match|pack" >&2; exit 2 ;;
esac
