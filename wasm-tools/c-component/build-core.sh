#!/usr/bin/env bash
# Build the core module of the C example component (wordcount.c) reproducibly: no libc, fixed flags, no debug info,
# relative source paths, custom sections stripped. wasm-tools/component/build.mjs (--c-component) wraps it into a
# component with jco; scripts/build-tools.sh --check rebuilds it and compares it with build/wordcount.core.wasm.
# Needs: clang and lld (Debian 12: clang 14). Usage: build-core.sh OUT.wasm
set -euo pipefail
out="$(realpath -m "${1:?usage: build-core.sh OUT.wasm}")"
cd "$(dirname "$0")"
export LC_ALL=C TZ=UTC SOURCE_DATE_EPOCH=0
# A fixed PATH: clang runs a `wasm-opt` it finds on PATH after linking, which would change the bytes.
env PATH=/usr/bin:/bin clang --target=wasm32-unknown-unknown -nostdlib -O2 -Wall -Wextra -Werror -fno-builtin \
  -ffile-prefix-map="$PWD"=. -Wl,--no-entry -Wl,--stack-first -Wl,--strip-all -o "$out" wordcount.c
