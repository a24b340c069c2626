#!/bin/sh
# Assemble tools/count.wasm from src/count.wat with binaryen's wasm-as (reach-wasm ships binaryen: `reach-wasm doctor`
# prints its path; or npm install -g binaryen). Offline. Override with WASM_AS=...
set -eu
cd "$(dirname "$0")"
WASM_AS="${WASM_AS:-wasm-as}"
"$WASM_AS" --enable-bulk-memory src/count.wat -o tools/count.wasm
echo "built tools/count.wasm"
