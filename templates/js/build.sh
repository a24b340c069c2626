#!/bin/sh
# Nothing to compile: the tool is source (tools/count.js), run as it is. Kept so that every template builds the
# same way (./build.sh, then reach-wasm pack validate .).
set -eu
cd "$(dirname "$0")"
echo "nothing to build: tools/ holds the tool's source"
