source scripts/device/setup.sh
nvidia-smi -L; python3 -c "import torch, tqdm, sgfmill; print(torch.__version__)"; gnugo --version | head -1
mkdir -p /tmp/runs
timeout 170 python3 scripts/bench_selfplay.py --device cuda --game go --size 9 --blocks 10 --filters 128 --workers 14 --games-parallel 64 --leaves 8 --seconds 45 --warmup 25 2>&1 | grep -v "it/s\|game/s" | tee $OUT/bench_selfplay.txt
setsid nohup python3 -m zero9 autotrain --dir /tmp/runs/gomoku9 --game gomoku --size 9 --connect 5 --blocks 6 --filters 64 --visits 160 --pcr 0.25 --fast-visits 32 --games-per-gen 256 --games-parallel 64 --leaves 8 --workers 6 --steps 600 --batch-size 256 --eval-games 4 --anchors random,mcts:1000 --hours 0.16 --device cuda --seed 1 > /tmp/runs/gomoku9.log 2>&1 &
setsid nohup python3 -m zero9 autotrain --dir /tmp/runs/go9 --game go --size 9 --komi 7.5 --blocks 10 --filters 64 --gumbel --visits 32 --games-per-gen 256 --games-parallel 64 --leaves 4 --workers 8 --steps 800 --batch-size 256 --opening-moves 8 --eval-games 4 --anchors random --hours 0.38 --device cuda --seed 2 > /tmp/runs/go9.log 2>&1 &
for i in $(seq 1 40); do sleep 10; [ $((i % 6)) = 0 ] && { date; tail -c 400 /tmp/runs/gomoku9.log | tr '\r' '\n' | tail -2; tail -c 400 /tmp/runs/go9.log | tr '\r' '\n' | tail -2; nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader; }; done
cp /tmp/runs/gomoku9.log $OUT/; cp /tmp/runs/go9.log $OUT/
