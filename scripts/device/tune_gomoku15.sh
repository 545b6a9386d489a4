#!/usr/bin/env bash
# Issue 26 without more training: the shipped 15x15 net's search settings, chosen against Rapfi on
# a tuning set of openings, then the declared match on the match set (DECLARATION-search.md).
#   setsid bash scripts/device/tune_gomoku15.sh     (one GPU + 16 cores; results in /tmp/tune)
# 1. sweep: each setting below plays the 120 games of the tuning set (60 openings that share none
#    with the match set, example-data/openings_gomoku_15x15_tuning.txt, twice with colours swapped)
#    at 400 visits, threat search off, against Rapfi classical at 10,000 nodes, --seed 1;
# 2. the setting with the most points (wins + half the draws; ties to the earlier line) plays the
#    declared 120 games of the match set (example-data/openings_gomoku_15x15.txt) with --threats,
#    as the 40.0% of the twelfth session was played.
# Rapfi (built from github.com/dhbloo/rapfi, docs/opponents.md) travels in .devtmp/rapfi.
set -u
source scripts/device/setup.sh
[ -x /tmp/rapfi/pbrain-rapfi ] || cp -r .devtmp/rapfi /tmp/rapfi
NET=example-data/gomoku_15x15_best.pt
RAPFI="pbrain:max_node=10000 /tmp/rapfi/pbrain-rapfi"
out=/tmp/tune
mkdir -p $out
settings=(  # name: options of zero9 match
  "k8:"
  "k1:--batch-size 1"
  "k1-c2:--batch-size 1 --c-puct 2"
  "k1-c4.5:--batch-size 1 --c-puct 4.5"
  "k1-lcb:--batch-size 1 --lcb"
  "k1-fpu1:--batch-size 1 --fpu-reduction 1"
)
match() {  # NAME OPENINGS OPTIONS...: 120 games against Rapfi 10k
  local name=$1 openings=$2
  shift 2
  OMP_NUM_THREADS=1 python3 -m zero9 match "$NET@400" "$RAPFI" --game gomoku --size 15 \
    --openings "$openings" --games 120 --parallel 15 --device cuda --seed 1 --move-timeout 60 \
    --sgf-dir "$out/${name}_sgf" "$@" > "$out/$name.log" 2>&1
  tail -3 "$out/$name.log"
}
best="" best_points=-1
for s in "${settings[@]}"; do
  name=${s%%:*} opts=${s#*:}
  # shellcheck disable=SC2086
  match "tuning-$name" example-data/openings_gomoku_15x15_tuning.txt $opts
  points=$(python3 -c "
import re; t = open('$out/tuning-$name.log').read()
m = re.search(r'(\d+) wins, (\d+) losses, (\d+) draws', t); print(int(m[1]) * 2 + int(m[3]) if m else -1)")
  echo "$name: $points half-points" | tee -a $out/sweep.txt
  if [ "$points" -gt "$best_points" ]; then best=$name best_opts=$opts best_points=$points; fi
done
echo "chosen: $best ($best_opts), $best_points half-points on the tuning set" | tee -a $out/sweep.txt
touch $out/swept
# shellcheck disable=SC2086
match "declared-$best" example-data/openings_gomoku_15x15.txt --threats $best_opts
touch $out/done
