#!/usr/bin/env bash
# Issue 35 on a 4-GPU host (nvidia-h100-x4 / nvidia-h200-x4): the host bench, then a leg of the
# concurrent autotrain (zero9.learn.loop.concurrent: a trainer beside self-play, one inference server
# per GPU) continuing the shipped 9x9 Go net (10x64, ownership head) with a score head added.
#   bash scripts/device/host_leg.sh check                   -> the GPUs and torch, in one line each
#   bash scripts/device/host_leg.sh bench                   -> $OUT/bench-selfplay-host.json, bench.log
#   HOURS=0.2 setsid bash scripts/device/host_leg.sh leg &  (background; resumes .hostcarry/host-go9.tgz,
#                                                            else the last leg in docs/runs/host-go9/)
#   bash scripts/device/host_leg.sh stop                    (SIGINT the leg; waits until it has saved)
#   bash scripts/device/host_leg.sh pack                    -> $OUT/host-go9.tgz (no chunks), host-go9.log
# The pack holds status, config, logs, the published net and the trainer's saved step
# (nets/train_state.pt, when a training round was under way): untar it into .hostcarry's run
# directory (or docs/runs/host-go9/legN) and rerun `leg` to continue. Chunks are training data and
# do not travel (a fresh leg refills its window, as go9_pachi.sh's legs did).
# The recipe is go9_pachi.sh's (Gumbel 32, 10x64, 1024 games and 400 steps a round, batch 512).
set -u
source scripts/device/setup.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
run=/tmp/runs/host-go9
mkdir -p /tmp/runs
case "${1:-}" in
  check)
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
    python3 -c 'import torch, os; print("torch", torch.__version__, "gpus", torch.cuda.device_count(), "cores", os.cpu_count())' ;;
  bench)  # N GPUs against the first alone in one run and one pool, then the concurrent loop's self-play share
    python3 scripts/bench_selfplay.py --device cuda --gpus "${GPUS:-4}" --game go --size 9 --blocks 10 \
      --filters 128 --games-parallel 64 --leaves 8 --in-flight 2 --seconds "${SECONDS_MEASURED:-40}" \
      --warmup "${WARMUP:-20}" --train-seconds "${TRAIN_SECONDS:-120}" \
      --json "$OUT/bench-selfplay-host.json" 2>&1 | tee "$OUT/bench.log" | grep -v "self-play:" ;;
  leg)
    last=$(ls -d docs/runs/host-go9/leg* 2>/dev/null | sort -V | tail -1)
    if [ ! -d $run ]; then
      if [ -f .hostcarry/host-go9.tgz ]; then mkdir -p $run && tar xzf .hostcarry/host-go9.tgz -C $run
      elif [ -n "$last" ]; then mkdir -p $run && cp -r "$last"/{status.json,config.json,logs,nets} $run/; fi
    fi
    python3 -m zero9 autotrain --dir $run --game go --size 9 --komi 7.5 --blocks 10 --filters 64 --score-head \
      --init-from example-data/go_9x9_best.pt --concurrent \
      --gumbel --visits 32 --pcr 1 --games-per-gen 1024 --games-parallel 96 --leaves 4 \
      --steps 400 --batch-size 512 --opening-moves 8 --window-min 150000 \
      --eval-games 0 --no-plots --no-sgf --hours "${HOURS:-0.2}" --device cuda --seed "${SEED:-35}" \
      >> /tmp/runs/host-go9.log 2>&1 &
    echo $! > /tmp/runs/host-go9.pid
    wait ;;
  stop)
    pid=$(cat /tmp/runs/host-go9.pid)
    kill -INT "$pid" 2>/dev/null
    for _ in $(seq 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    tail -5 /tmp/runs/host-go9.log ;;
  pack)
    cd $run || exit 1
    best=$(python3 -c "import json; print(json.load(open('status.json'))['best'])")
    extra=(); [ -f nets/train_state.pt ] && extra+=(nets/train_state.pt)
    tar czf "$OUT/host-go9.tgz" status.json config.json logs "nets/$best.pt" "${extra[@]}"
    cp /tmp/runs/host-go9.log "$OUT/"
    ls -la "$OUT"; grep '"kind": "test"' logs/train_log.jsonl | tail -2 ;;
  *) echo "usage: host_leg.sh check|bench|leg|stop|pack" >&2; exit 2 ;;
esac
