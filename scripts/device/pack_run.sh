#!/usr/bin/env bash
# Pack an autotrain run directory so the next leg, on a fresh machine, can carry it back:
#   bash scripts/device/pack_run.sh RUN_DIR NAME [PACK_BYTES]   -> $OUT/NAME.tgz.part00, 01, ...
# status, config, ratings, logs, the best net and the newest rounds of chunks that fit in
# PACK_BYTES; no SGFs, no older nets. Parts of 15 MB, under what a device call brings back.
set -u
run=$1 name=$2 limit=${3:-28000000}
cd "$run" || exit 1
best=$(python3 -c "import json; print(json.load(open('status.json'))['best'])")
keep=() total=0
for d in $(ls -d chunks/gen* | sort -r); do
  s=$(du -sb "$d" | cut -f1); [ $((total + s)) -gt "$limit" ] && break
  keep+=("$d"); total=$((total + s))
done
tar czf "/tmp/$name.tgz" status.json config.json ratings logs "nets/$best.pt" "${keep[@]}"
cd /tmp && split -b 15M -d "$name.tgz" "$OUT/$name.tgz.part"
ls -la "$OUT"; echo "carried ${#keep[@]} rounds of chunks, $total bytes"
