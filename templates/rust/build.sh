#!/bin/sh
# Build tools/count.wasm from src/count.rs with rustc for wasm32-wasi (no cargo, no crates: offline). Debian 12:
# apt-get install -y rustc libstd-rust-dev-wasm32 (rustc 1.63, /usr/bin/rustc). With rustup instead:
# rustup target add wasm32-wasip1 and RUST_TARGET=wasm32-wasip1. `reach-wasm doctor` says what is present.
set -eu
cd "$(dirname "$0")"
RUSTC="${RUSTC:-/usr/bin/rustc}"
[ -x "$RUSTC" ] || RUSTC=rustc
TARGET="${RUST_TARGET:-wasm32-wasi}"
env PATH=/usr/bin:/bin:"$(dirname "$(command -v "$RUSTC")")" LC_ALL=C "$RUSTC" --target "$TARGET" --edition 2021 \
  -C opt-level=2 -C strip=symbols -C debuginfo=0 --remap-path-prefix="$PWD"=. -o tools/count.wasm src/count.rs
echo "built tools/count.wasm"
