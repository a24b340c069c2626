#!/bin/sh
# Build tools/count.wasm from src/count.c with clang + wasi-libc (Debian: apt-get install -y clang lld wasi-libc
# libclang-rt-dev-wasm32). Offline; `reach-wasm doctor` says what is missing. Override the compiler with CLANG=...
set -eu
cd "$(dirname "$0")"
CLANG="${CLANG:-clang}"
SYSROOT="${WASI_SYSROOT:-/usr}"
# A fixed PATH: clang runs a `wasm-opt` it finds on PATH after linking, which would change the bytes.
env PATH=/usr/bin:/bin LC_ALL=C "$CLANG" --target=wasm32-wasi --sysroot="$SYSROOT" -O2 -Wall -Werror \
  -ffile-prefix-map="$PWD"=. -Wl,--strip-all -o tools/count.wasm src/count.c
echo "built tools/count.wasm"
