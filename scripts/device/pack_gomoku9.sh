#!/usr/bin/env bash
# On the GPU machine, after train_gomoku9.sh was started in the background: wait up to WAIT_S
# seconds for it to finish, then pack what exists so far (logs, ratings, status, the best net,
# the console and match logs and SGFs; no chunks) into $OUT/gomoku9.tgz and print a summary.
# Packing at the end of every call keeps the results even if the machine goes back before the
# next call.
set -u
source scripts/device/setup.sh
end=$(( $(date +%s) + ${WAIT_S:-0} ))
while [ ! -f /tmp/runs/gomoku9.done ] && [ "$(date +%s)" -lt "$end" ]; do sleep 5; done
run=/tmp/runs/gomoku9
pack=/tmp/pack/gomoku9
rm -rf /tmp/pack && mkdir -p "$pack"
cp "$run"/status.json "$run"/config.json "$pack"/ 2>/dev/null
cp -r "$run"/logs "$run"/ratings "$pack"/ 2>/dev/null
best=$(python3 -c "import json; print(json.load(open('$run/status.json'))['best'])" 2>/dev/null)
[ -n "$best" ] && cp "$run/nets/$best.pt" "$pack"/
tr '\r' '\n' < /tmp/runs/gomoku9.log | grep -v '%|' > "$pack"/console.log
for seed in 5 6; do
  cp /tmp/runs/gm_eval_seed$seed.log "$pack"/ 2>/dev/null
  [ -d /tmp/runs/gm_eval_seed$seed ] && cp -r /tmp/runs/gm_eval_seed$seed "$pack"/
done
[ -f /tmp/runs/gomoku9.done ] && touch "$pack"/done
tar -C /tmp/pack -czf "$OUT"/gomoku9.tgz gomoku9
python3 - <<'PY'
import json
try:
    s = json.load(open("/tmp/runs/gomoku9/status.json"))
    print("status:", {k: s.get(k) for k in ("generation", "games", "best", "wall_seconds")})
except OSError:
    pass
PY
grep -h "self-play gen\|win rate" /tmp/runs/gomoku9.log /tmp/runs/gm_eval_seed*.log 2>/dev/null | tail -6
ls -la "$OUT"
