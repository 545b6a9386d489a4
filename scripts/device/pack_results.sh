source scripts/device/setup.sh
end=$(( $(date +%s) + ${WAIT_S:-420} ))
while pgrep -f "runs/go9 " >/dev/null && [ $(date +%s) -lt $end ]; do sleep 5; done
pkill -f "runs/go9 " ; sleep 2
cd /tmp/runs
for r in go9 gomoku9; do
  best=$(python3 -c "import json; print(json.load(open('$r/status.json'))['best'])")
  mkdir -p /tmp/pack/$r; cp $r/status.json $r/config.json /tmp/pack/$r/; cp -r $r/ratings $r/logs /tmp/pack/$r/ 2>/dev/null
  cp $r/nets/$best.pt /tmp/pack/$r/; ls $r/nets/ | grep "$best" ; cp $r/nets/$best.txt.gz /tmp/pack/$r/ 2>/dev/null
  ls $r; ls $r/logs
done
cp gm_eval.log go9.log gomoku9.log /tmp/pack/
cd /tmp/pack && tar czf $OUT/pack.tgz . && ls -la $OUT; du -sh /tmp/pack/*
tail -c 600 /tmp/runs/go9.log | tr '\r' '\n' | tail -4
