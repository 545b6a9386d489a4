#!/usr/bin/env bash
# The one-line teaching entry, like leelaz-ninenine's minitrain.sh:
#   ./minitrain.sh gomoku8     8x8 five-in-a-row
#   ./minitrain.sh go9         9x9 Go, komi 7.5
# It runs `zero9 autotrain` with defaults for this machine (a CPU desktop, or bigger
# ones when torch sees a GPU), then says where the plots are and how to play the net.
# Interrupt it whenever you like (Ctrl-C): running it again continues the same run.
# Extra options go straight to zero9 autotrain, e.g. ./minitrain.sh gomoku8 --hours 2
set -euo pipefail
cd "$(dirname "$0")"
preset="${1:-}"
shift || true
if [ -z "$preset" ] || [[ "$preset" == -* ]]; then
  echo "usage: ./minitrain.sh gomoku8|go9 [more zero9 autotrain options]" >&2
  exit 2
fi
ZERO9=(python3 -m zero9)
gpu=$(python3 -c 'import torch; print(torch.cuda.is_available())' 2>/dev/null || echo False)
dir="${RUN_DIR:-runs/$preset}"

case "$preset:$gpu" in
  gomoku8:False)  # measured on a 2-core desktop: docs/runs/minitrain-gomoku8/, tutorial 5
    opts=(--game gomoku --size 8 --connect 5 --blocks 3 --filters 32 --visits 100 --pcr 0.25 --fast-visits 20
          --games-per-gen 256 --games-parallel 32 --leaves 4 --steps 80 --batch-size 128
          --window-min 5000 --randomcnt 2 --eval-games 4 --anchors random,mcts:200 --hours 0.47) ;;
  gomoku8:True)
    opts=(--game gomoku --size 8 --connect 5 --blocks 6 --filters 64 --visits 200
          --games-per-gen 512 --games-parallel 128 --steps 2000 --batch-size 256
          --eval-games 10 --anchors random,mcts:200,mcts:1000 --hours 2) ;;
  go9:False)
    opts=(--game go --size 9 --komi 7.5 --blocks 4 --filters 32 --gumbel --visits 64
          --games-per-gen 64 --games-parallel 24 --leaves 4 --steps 500 --batch-size 128
          --opening-moves 10 --eval-games 4 --anchors random,mcts:100 --hours 8) ;;
  go9:True)  # the shipped net's recipe: 94% vs GNU Go level 10 after 59 min on one H100 + 16 cores
    opts=(--game go --size 9 --komi 7.5 --blocks 10 --filters 64 --gumbel --visits 32 --pcr 1
          --games-per-gen 1024 --games-parallel 96 --leaves 4 --steps 400 --batch-size 512
          --opening-moves 8 --window-min 150000 --eval-games 4 --hours 1) ;;
  *)
    echo "unknown preset '$preset': expected gomoku8 or go9" >&2
    exit 2 ;;
esac

echo "zero9 autotrain into $dir (GPU: $gpu)"
status=0
"${ZERO9[@]}" autotrain --dir "$dir" "${opts[@]}" "$@" || status=$?
"${ZERO9[@]}" plot "$dir" >/dev/null 2>&1 || true
best=$(python3 -c "import json,sys; print(json.load(open('$dir/status.json'))['best'])" 2>/dev/null || true)
echo
echo "plots:      $dir/plots/ (losses.png, elo.png, selfplay.png)"
echo "ratings:    $dir/ratings/ratings.json"
# the window needs the run's game and size, or it opens 9x9 Go and refuses the net
play=()
for i in "${!opts[@]}"; do
  case "${opts[$i]}" in --game|--size|--komi) play+=("${opts[$i]}" "${opts[$((i + 1))]}") ;; esac
done
if [ -n "$best" ]; then
  echo "best net:   $dir/nets/$best.pt"
  echo "play it:    zero9 play ${play[*]} --net $dir/nets/$best.pt"
fi
echo "continue:   ./minitrain.sh $preset $*"
exit $status
