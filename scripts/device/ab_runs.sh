#!/usr/bin/env bash
# A/B runs at equal compute on the GPU machine (16 cores + one GPU): six autotrain runs
# from zero at the same time, each with the same workers and the same wall-clock time,
# then matches between the resulting nets. Run in the background (setsid); results
# under /tmp/ab. MINUTES sets each run's length (default 8).
#   Gomoku 9x9 (3 self-play workers each): PUCT 160 visits | PUCT 32 | Gumbel 32 | PCR (160 / 32)
#   Go 9x9 (2 workers each): Gumbel 32 | Gumbel 32 + ownership head
set -u
source scripts/device/setup.sh
hours=$(python3 -c "print(${MINUTES:-8} / 60)")
mkdir -p /tmp/ab
gomoku=(--game gomoku --size 9 --connect 5 --blocks 6 --filters 64 --games-per-gen 256 --games-parallel 96
        --leaves 8 --workers 3 --steps 60 --batch-size 512 --window-min 10000 --eval-games 4
        --anchors random --hours "$hours" --device cuda --seed 7)
go=(--game go --size 9 --komi 7.5 --blocks 10 --filters 64 --gumbel --visits 32 --pcr 1 --games-per-gen 192
    --games-parallel 96 --leaves 4 --workers 2 --steps 80 --batch-size 512 --opening-moves 8
    --eval-games 4 --anchors random --hours "$hours" --device cuda --seed 8)
declare -A arms=(
  [gm-puct160]="--visits 160 --pcr 1"
  [gm-puct32]="--visits 32 --pcr 1"
  [gm-gumbel32]="--gumbel --visits 32 --pcr 1"
  [gm-pcr]="--visits 160 --pcr 0.25 --fast-visits 32"
)
for arm in "${!arms[@]}"; do
  # shellcheck disable=SC2086
  python3 -m zero9 autotrain --dir "/tmp/ab/$arm" "${gomoku[@]}" ${arms[$arm]} > "/tmp/ab/$arm.log" 2>&1 &
done
python3 -m zero9 autotrain --dir /tmp/ab/go-gumbel32 "${go[@]}" > /tmp/ab/go-gumbel32.log 2>&1 &
python3 -m zero9 autotrain --dir /tmp/ab/go-ownership "${go[@]}" --ownership > /tmp/ab/go-ownership.log 2>&1 &
wait
best() { best_net /tmp/ab/$1; }
m=(python3 -m zero9 match)
# OMP_NUM_THREADS=1: a dozen matches share 16 cores; nets on the GPU (on the CPU with
# torch's default threads they crawled: 1-2 games in 8 minutes)
export OMP_NUM_THREADS=1
"${m[@]}" "$(best gm-gumbel32)@32" "$(best gm-puct32)@32" --game gomoku --size 9 --games 60 --parallel 2 \
  --seed 4 > /tmp/ab/h2h-gumbel32-vs-puct32-at32visits.log 2>&1 &
for arm in gm-puct32 gm-gumbel32 gm-pcr; do
  "${m[@]}" "$(best gm-puct160)@200" "$(best $arm)@200" --game gomoku --size 9 --games 40 --parallel 3 \
    --seed 3 --device cuda > "/tmp/ab/h2h-puct160-vs-$arm.log" 2>&1 &
done
for arm in gm-puct160 gm-puct32 gm-gumbel32 gm-pcr; do
  "${m[@]}" "$(best $arm)@200" mcts:1000 --game gomoku --size 9 --games 20 --parallel 2 --seed 5 \
    --device cuda > "/tmp/ab/$arm-vs-mcts1000.log" 2>&1 &
done
# The two Go runs were still at random strength after 8 minutes with 2 workers each, so
# no match between them is played: it would measure nothing.
wait
touch /tmp/ab/done
