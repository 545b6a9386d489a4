#!/bin/sh
# Prepare Sabaki's own analysis parser (src/modules/analysis.js, parseAnalysis) for
# tests/test_gtp_kata.py, in ~/.cache/zero9/sabaki-parser (or $ZERO9_SABAKI_PARSER).
# Usage: scripts/setup_sabaki_parser.sh [SABAKI_CLONE]   (default: download from GitHub)
# Needs node (>= 18) and npm; Sabaki's file is fetched, never copied into zero9's tree.
set -eu
SABAKI_COMMIT=5e3d874a
DEST=${ZERO9_SABAKI_PARSER:-$HOME/.cache/zero9/sabaki-parser}
mkdir -p "$DEST"
if [ $# -ge 1 ]; then
    git -C "$1" show "$SABAKI_COMMIT:src/modules/analysis.js" > "$DEST/analysis.js"
else
    full=$(git ls-remote https://github.com/SabakiHQ/Sabaki.git | awk '{print $1}' | grep "^$SABAKI_COMMIT" | head -n 1)
    curl -fsSL "https://raw.githubusercontent.com/SabakiHQ/Sabaki/${full:-master}/src/modules/analysis.js" \
        -o "$DEST/analysis.js"
fi
echo "$SABAKI_COMMIT" > "$DEST/SABAKI_COMMIT"
cd "$DEST"
echo '{"name": "sabaki-parser", "private": true, "type": "module"}' > package.json
npm install --no-audit --no-fund @sabaki/go-board@1 > /dev/null
# One kata-analyze line per input line in, Sabaki's parsed variations (JSON) out.
cat > run.mjs <<'JS'
import Board from '@sabaki/go-board'
import {parseAnalysis} from './analysis.js'
let input = ''
process.stdin.on('data', d => (input += d))
process.stdin.on('end', () => {
  const board = Board.fromDimensions(9, 9)
  const lines = input.split('\n').filter(l => l.startsWith('info '))
  console.log(JSON.stringify(lines.map(l => parseAnalysis(l, board, 'float'))))
})
JS
echo "Sabaki's parser is ready in $DEST"
