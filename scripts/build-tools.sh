#!/usr/bin/env bash
# Build the example WebAssembly tools reproducibly into wasm-tools/build/ and write wasm-tools/build/SHA256SUMS.
# Needs: clang, lld, wasi-libc, libclang-rt-dev-wasm32, rustc, libstd-rust-dev-wasm32 (Debian 12) and the pinned AssemblyScript toolchain in
# wasm-tools/node_modules (installed here with `npm ci` when missing). See wasm-tools/README.md.
# Usage: scripts/build-tools.sh [--check]   (--check: rebuild into a temp dir and compare with the committed hashes)
set -euo pipefail
cd "$(dirname "$0")/../wasm-tools"
export LC_ALL=C TZ=UTC SOURCE_DATE_EPOCH=0

out=build
if [[ "${1:-}" == "--check" ]]; then out="$(mktemp -d)"; fi
mkdir -p "$out"

if [[ ! -x node_modules/.bin/asc ]]; then npm ci --no-audit --no-fund >/dev/null; fi

# C: fixed flags, no debug info, relative source paths, custom sections stripped.
CFLAGS=(--target=wasm32-wasi --sysroot=/usr -O2 -Wall -Werror -Wno-unused-result
        -ffile-prefix-map="$PWD"=. -Wl,--strip-all)
# clang runs `wasm-opt` after linking when it finds one on PATH; `npm run` puts binaryen's wasm-opt there
# (node_modules/.bin), which changed the bytes. Run clang with a fixed PATH so the output never depends on it.
cc() { env PATH=/usr/bin:/bin clang "${CFLAGS[@]}" "$@"; }
cc c-sha/main.c -o "$out/c-sha.wasm"
cc fixtures/hang.c -o "$out/hang.wasm"
cc fixtures/membomb.c -o "$out/membomb.wasm"
cc fixtures/escape.c -o "$out/escape.wasm"
cc fixtures/links.c -o "$out/links.wasm"
cc -Wl,--allow-undefined fixtures/reach-call.c -o "$out/reach-call.wasm"

# Rust std (Debian rustc + libstd-rust-dev-wasm32; /usr/bin/rustc, never a rustup toolchain on PATH): no debug info,
# symbols stripped, source paths remapped.
env PATH=/usr/bin:/bin /usr/bin/rustc --target wasm32-wasi -C opt-level=2 -C strip=symbols -C debuginfo=0 \
  --remap-path-prefix="$PWD"=. -o "$out/rs-stats.wasm" rs-stats/src/main.rs

# AssemblyScript + @assemblyscript/wasi-shim (stub runtime: one-shot commands never need a collector).
node_modules/.bin/asc as-wordcount/assembly/index.ts \
  --config node_modules/@assemblyscript/wasi-shim/asconfig.json \
  -O3 --runtime stub --noAssert -o "$out/as-wordcount.wasm"

(cd "$out" && sha256sum -- *.wasm > SHA256SUMS)

# The example packs carry copies of some tools (a pack is self-contained): pack path <- built file.
PACK_TOOLS=(
  "../packs/hello/tools/wordcount.wasm as-wordcount.wasm"
  "../packs/notes/tools/checksum.wasm c-sha.wasm"
  "../packs/notes/tools/stats.wasm rs-stats.wasm"
  "../packs/hanging_tool_fail/tools/hang.wasm hang.wasm"
)
for pair in "${PACK_TOOLS[@]}"; do
  set -- $pair
  if [[ "$out" == build ]]; then cp "$out/$2" "$1"
  elif ! cmp -s "$out/$2" "$1"; then echo "build-tools: $1 is not the rebuilt $2; run npm run build:tools" >&2; exit 1; fi
done
if ! cmp -s js-slugify/tool.js ../packs/notes/tools/slugify.js; then
  if [[ "$out" == build ]]; then cp js-slugify/tool.js ../packs/notes/tools/slugify.js
  else echo "build-tools: packs/notes/tools/slugify.js differs from wasm-tools/js-slugify/tool.js" >&2; exit 1; fi
fi

# The C example component (wasm-tools/c-component/): both modes rebuild its core module with clang and compare it with
# the committed one, and check the committed files against c-component/build/SHA256SUMS. The component around the
# core module is made with jco (wasm-tools/component/node_modules, not part of a fresh clone): rebuild it with
# `cd wasm-tools/component && npm ci && node build.mjs --c-component`, which also runs c-component/build-core.sh.
core="$(mktemp)"
bash c-component/build-core.sh "$core"
if ! cmp -s "$core" c-component/build/wordcount.core.wasm; then
  rm -f "$core"
  echo "build-tools: c-component/wordcount.c does not rebuild to c-component/build/wordcount.core.wasm;" \
    "run (cd wasm-tools/component && npm ci && node build.mjs --c-component)" >&2
  exit 1
fi
rm -f "$core"
(cd c-component/build && sha256sum --check --quiet SHA256SUMS) ||
  { echo "build-tools: wasm-tools/c-component/build does not match its SHA256SUMS" >&2; exit 1; }

if [[ "$out" != build ]]; then
  if diff -u build/SHA256SUMS "$out/SHA256SUMS"; then echo "build-tools: reproducible, hashes match"; else
    echo "build-tools: the rebuilt tools differ from wasm-tools/build (see diff above)" >&2; exit 1; fi
  rm -rf "$out"
else
  cat "$out/SHA256SUMS"
fi
