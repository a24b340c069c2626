#!/usr/bin/env bash
# Build the capsule's gzip writer (deflate.c) reproducibly: no libc, fixed flags, no debug info, relative source
# paths, custom sections stripped. scripts/gen-deflate-wasm.mjs embeds the result in src/capsule/_deflate-wasm.ts,
# and its --check mode (run by src/capsule/deflate.test.ts when clang is installed) compares a fresh build with it.
# Needs: clang and lld (Debian 12: clang 14). Usage: build.sh OUT.wasm
set -euo pipefail
out="$(realpath -m "${1:?usage: build.sh OUT.wasm}")"
cd "$(dirname "$0")"
export LC_ALL=C TZ=UTC SOURCE_DATE_EPOCH=0
# A fixed PATH: clang runs a `wasm-opt` it finds on PATH after linking, which would change the bytes.
env PATH=/usr/bin:/bin clang --target=wasm32-unknown-unknown -nostdlib -O2 -Wall -Wextra -Werror -fno-builtin \
  -ffile-prefix-map="$PWD"=. -Wl,--no-entry -Wl,--stack-first -Wl,--strip-all -Wl,-z,stack-size=65536 -o "$out" deflate.c
