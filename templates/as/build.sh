#!/bin/sh
# Build tools/count.wasm from src/count.ts with the AssemblyScript compiler (no other package). Offline once asc is
# installed: npm install -g assemblyscript@0.28.20, or point ASC at an asc binary. `reach-wasm doctor` finds it.
set -eu
cd "$(dirname "$0")"
ASC="${ASC:-asc}"
"$ASC" src/count.ts --runtime stub --use abort=src/count/abort --exportStart _start -O3 --noAssert \
  -o tools/count.wasm
echo "built tools/count.wasm"
