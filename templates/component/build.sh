#!/bin/sh
# Build tools/count.component.wasm from src/count.c: clang makes the core module (no libc; Debian: apt-get install
# -y clang lld), jco embeds the world of wit/tool.wit and makes the component (jco ships with reach-wasm:
# `reach-wasm doctor` prints its path; or npm install -g @bytecodealliance/jco@1.17.0). Offline. Override the tools
# with CLANG=... and JCO=...
set -eu
cd "$(dirname "$0")"
CLANG="${CLANG:-clang}"
JCO="${JCO:-jco}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# A fixed PATH: clang runs a `wasm-opt` it finds on PATH after linking, which would change the bytes.
env PATH=/usr/bin:/bin LC_ALL=C "$CLANG" --target=wasm32-unknown-unknown -nostdlib -O2 -Wall -Wextra -Werror \
  -fno-builtin -ffile-prefix-map="$PWD"=. -Wl,--no-entry -Wl,--stack-first -Wl,--strip-all \
  -o "$tmp/count.core.wasm" src/count.c
"$JCO" embed --wit wit/tool.wit --world-name tool -o "$tmp/count.embedded.wasm" "$tmp/count.core.wasm"
"$JCO" new -o tools/count.component.wasm "$tmp/count.embedded.wasm"
echo "built tools/count.component.wasm"
