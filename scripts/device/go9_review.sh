#!/usr/bin/env bash
# Issue 44's review against KataGo and the KataGo match (docs/runs/go9-strong/declaration.md), on one
# GPU machine. KataGo (KaTrain 1.20's OpenCL build and its b10c384 net, 68 MB) travels in parts, one a
# call (a call's working tree stays under 64 MiB); the nets in .kgcarry/nets:
#   bash scripts/device/go9_review.sh part N       # N = 0 .. 3 (carry .kgcarry/pN, the first also nets)
#   setsid bash scripts/device/go9_review.sh go &  # KataGo's analysis, then match C; zero9's reviews
#   bash scripts/device/go9_review.sh pack          # -> $OUT
set -u
source scripts/device/setup.sh
kg=/opt/kg
out=/tmp/review
games="--games-from levels --games ${GAMES:-32}"
mkdir -p $kg $out
katago_env() {
  mkdir -p /etc/OpenCL/vendors && echo /usr/lib/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
  export LD_LIBRARY_PATH=$kg/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}
case "${1:-}" in
  part)
    cp ".kgcarry/p$2/"* $kg/ && { [ -d .kgcarry/nets ] && cp .kgcarry/nets/* $kg/ || true; }
    if [ "$(ls $kg/part0? 2>/dev/null | wc -l)" = 4 ]; then
      cat $kg/part0? | tar xf - -C $kg && tar xJf $kg/katago-bin.tar.xz -C $kg && rm -f $kg/part0?
      katago_env && $kg/katago version
    fi
    ls $kg ;;
  go)
    katago_env
    export OMP_NUM_THREADS=1
    for net in shipped grafted; do
      path=$kg/$net.pt; [ $net = shipped ] && path=example-data/go_9x9_best.pt
      python3 scripts/review_vs_katago.py zero9 $games --visits 200 --net $path --device cuda --jobs 8 \
        --zero9-json $out/zero9-$net.json > $out/zero9-$net.log 2>&1
    done &
    python3 scripts/review_vs_katago.py katago --katago $kg/katago --model $kg/b10c384h6nbttflrs.bin.gz \
      $games --katago-visits 150 --replies $out/katago-replies.jsonl > $out/katago.log 2>&1
    cat > $kg/gtp.cfg <<EOF
logDir = $out/katago-gtp-logs
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
    python3 -m zero9 match "$kg/final.pt@400" \
      "gtp:$kg/katago gtp -model $kg/b10c384h6nbttflrs.bin.gz -config $kg/gtp.cfg" --game go --size 9 \
      --komi 7.5 --games 40 --parallel 8 --device cuda --seed 443 --sgf-dir $out/katago1_sgf \
      > $out/katago1.log 2>&1
    wait
    touch $out/done ;;
  pack)
    ls -la $out; tail -n 3 $out/*.log
    tar czf "$OUT/review.tgz" -C $out . ;;
  *) echo "usage: go9_review.sh part N|go|pack" >&2; exit 2 ;;
esac
