#!/usr/bin/env bash
# Issue 44: the shipped 9x9 Go net continued with a trained score head, and the declared matches A and B
# (docs/runs/go9-strong/declaration.md); KataGo's part is scripts/device/go9_review.sh. On one GPU machine:
#   setsid bash scripts/device/go9_strong.sh train &   # the training leg, in the background
#   bash scripts/device/go9_strong.sh stop|graft|match|pack
# `graft` gives the shipped net a score head fitted on the leg's games without changing its play
# (scripts/graft_score_head.py); `match` plays A and B on the GPU; `pack` brings the run back (logs,
# nets, a sample of chunks: the last 500 games' fit one call's 16 MiB) with the matches.
set -u
source scripts/device/setup.sh
run=/tmp/runs/strong
mkdir -p /tmp/runs
case "${1:-}" in
  train)
    python3 -m zero9 autotrain --dir $run --device cuda --init-from example-data/go_9x9_best.pt \
      --blocks 10 --filters 64 --ownership --score-head --score-weight "${SCORE_WEIGHT:-10}" \
      --resign-threshold -1 --visits "${VISITS:-64}" --eval-games 0 --seed 44 \
      --hours "${HOURS:-0.27}" > /tmp/runs/strong.log 2>&1
    touch /tmp/runs/strong.trained ;;
  stop)  # SIGINT: the round in progress saves and the run exits 0
    pkill -INT -f "zero9 autotrain --dir $run"; sleep 20; tail -3 /tmp/runs/strong.log ;;
  graft)
    python3 scripts/graft_score_head.py example-data/go_9x9_best.pt $run/chunks --device cuda \
      --out /tmp/runs/grafted.pt > /tmp/runs/graft.log 2>&1; tail -5 /tmp/runs/graft.log ;;
  match)
    net=$(best_net $run)
    export OMP_NUM_THREADS=1
    python3 -m zero9 match "$net@100" example-data/go_9x9_best.pt@100 --game go --size 9 --komi 7.5 \
      --games 40 --parallel 15 --openings example-data/openings_go_9x9.txt --device cuda --seed 441 \
      --sgf-dir /tmp/runs/shipped_sgf > /tmp/runs/shipped.log 2>&1
    python3 -m zero9 match "$net@400" gnugo:10 --game go --size 9 --komi 7.5 --games 100 --parallel 15 \
      --device cuda --seed 442 --sgf-dir /tmp/runs/gnugo10_sgf > /tmp/runs/gnugo10.log 2>&1
    tail -n 3 /tmp/runs/shipped.log /tmp/runs/gnugo10.log ;;
  pack)
    cd $run || exit 1
    cp "$(best_net $run)" "$OUT/final.pt"; [ -f /tmp/runs/grafted.pt ] && cp /tmp/runs/grafted.pt "$OUT/"
    # the last 500 games' chunks (games played out are long: 4,000 were 55 MB, over a file's 16 MiB)
    find chunks -name "*.npz" | sort | tail -n 500 > /tmp/runs/chunk-list
    tar czf "$OUT/chunks.tgz" -T /tmp/runs/chunk-list
    tar czf "$OUT/strong.tgz" status.json config.json logs -C /tmp/runs strong.log \
      $(cd /tmp/runs && ls -d graft.log shipped.log shipped_sgf gnugo10.log gnugo10_sgf 2>/dev/null)
    ls -la "$OUT" ;;
  *) echo "usage: go9_strong.sh train|stop|graft|match|pack" >&2; exit 2 ;;
esac
