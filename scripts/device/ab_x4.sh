#!/usr/bin/env bash
# Two A/Bs at equal compute on a 4-GPU machine (nvidia-h200-x4: 4 GPUs, 64 cores): four
# autotrain runs from scratch at once, each pinned to one GPU and its own 16 cores (the
# shape of one H100 machine), each for the same wall-clock time; then the matches that
# decide them. Run in the background (setsid); results under /tmp/x4. MINUTES sets each
# run's length (default 11).
#   Gomoku 15x15: from the shipped 9x9 net's tower (--init-from) | from zero
#   Go 9x9 (Gumbel 32, as train_go9.sh): ownership head | none
set -u
source scripts/device/setup.sh
hours=$(python3 -c "print(${MINUTES:-11} / 60)")
mkdir -p /tmp/x4
gomoku=(--game gomoku --size 15 --connect 5 --blocks 6 --filters 64 --visits 160 --pcr 0.25 --fast-visits 32
        --games-per-gen 1536 --games-parallel 96 --leaves 8 --workers 15 --steps 120 --batch-size 512
        --window-min 30000 --eval-games 4 --anchors random,gomokubench:easy --hours "$hours" --device cuda
        --seed 11)
go=(--game go --size 9 --komi 7.5 --blocks 10 --filters 64 --gumbel --visits 32 --pcr 1 --games-per-gen 1024
    --games-parallel 96 --leaves 4 --workers 15 --steps 400 --batch-size 512 --opening-moves 8
    --eval-games 4 --anchors random,gnugo:1 --hours "$hours" --device cuda --seed 12)
command -v taskset > /dev/null || taskset() { shift 2; "$@"; }  # (no pinning without util-linux)
arm() {  # arm GPU NAME OPTIONS...: one run on GPU $1 and cores 16*$1 .. 16*$1+15
  local gpu=$1 name=$2
  shift 2
  CUDA_VISIBLE_DEVICES=$gpu taskset -c "$((16 * gpu))-$((16 * gpu + 15))" \
    python3 -m zero9 autotrain --dir "/tmp/x4/$name" "$@" > "/tmp/x4/$name.log" 2>&1
}
arm 0 gm15-transfer "${gomoku[@]}" --init-from example-data/gomoku_9x9_best.pt &
arm 1 gm15-zero "${gomoku[@]}" &
arm 2 go-ownership "${go[@]}" --ownership &
arm 3 go-plain "${go[@]}" &
wait
touch /tmp/x4/trained
best() { best_net /tmp/x4/$1; }
# Matches: nets on the GPUs, one torch thread per game (many games share the cores).
export OMP_NUM_THREADS=1
m=(timeout 420 python3 -m zero9 match --device cuda --move-timeout 60)
CUDA_VISIBLE_DEVICES=0 "${m[@]}" "$(best gm15-transfer)@200" "$(best gm15-zero)@200" --game gomoku --size 15 \
  --games 40 --parallel 10 --seed 21 > /tmp/x4/h2h-gm15-transfer-vs-zero.log 2>&1 &
CUDA_VISIBLE_DEVICES=1 "${m[@]}" "$(best gm15-transfer)@400" gomokubench:hard --game gomoku --size 15 \
  --games 100 --parallel 20 --seed 22 --sgf-dir /tmp/x4/gb-transfer > /tmp/x4/gm15-transfer-vs-gomokubench-hard.log 2>&1 &
CUDA_VISIBLE_DEVICES=1 "${m[@]}" "$(best gm15-zero)@400" gomokubench:hard --game gomoku --size 15 \
  --games 40 --parallel 10 --seed 23 > /tmp/x4/gm15-zero-vs-gomokubench-hard.log 2>&1 &
CUDA_VISIBLE_DEVICES=2 "${m[@]}" "$(best go-ownership)@100" "$(best go-plain)@100" --game go --size 9 \
  --games 40 --parallel 12 --seed 24 > /tmp/x4/h2h-go-ownership-vs-plain.log 2>&1 &
for a in go-ownership go-plain; do
  CUDA_VISIBLE_DEVICES=3 "${m[@]}" "$(best $a)@100" gnugo:1 --game go --size 9 \
    --games 20 --parallel 6 --seed 25 > "/tmp/x4/$a-vs-gnugo1.log" 2>&1 &
done
wait
touch /tmp/x4/done
