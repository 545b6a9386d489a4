source scripts/device/setup.sh
for i in $(seq 1 54); do
  sleep 10
  if [ ! -f /tmp/runs/gm_eval_started ] && ! pgrep -f "runs/gomoku9 " >/dev/null; then
    touch /tmp/runs/gm_eval_started
    best=$(best_net /tmp/runs/gomoku9)
    echo "gomoku9 done, best $best"; cat /tmp/runs/gomoku9/status.json
    setsid nohup python3 -m zero9 match $best@400 mcts:5000 --game gomoku --size 9 --games 100 --parallel 7 --move-timeout 120 --seed 5 --sgf-dir /tmp/runs/gm_eval > /tmp/runs/gm_eval.log 2>&1 &
  fi
  [ $((i % 9)) = 0 ] && { date; tail -c 300 /tmp/runs/go9.log | tr '\r' '\n' | tail -1; tail -n 2 /tmp/runs/gm_eval.log 2>/dev/null; }
done
cd /tmp/runs && tar czf $OUT/gomoku9.tgz --exclude='gomoku9/chunks' --exclude='gomoku9/sgf' gomoku9 gm_eval.log 2>/dev/null; ls -la $OUT
