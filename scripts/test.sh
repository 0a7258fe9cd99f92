#!/usr/bin/env bash
# Builds everything present and runs every test: GoogleTest (ctest), the shared gradient vectors natively,
# then the WebAssembly build and the JavaScript tests (which run the same vectors), the browser tests, and the
# aarch64 cross build (the Ascend hosts' architecture) with its tests under qemu.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -x node_modules/.bin/esbuild ] || npm ci --no-audit --no-fund
bash scripts/build-native.sh
echo "== native tests (ctest) =="
(cd build/native && ctest -j "$(nproc)" --output-on-failure)
echo "== gradient vectors (native bprop check) =="
build/native/bprop check tests/vectors/*.json
bash scripts/test-sanitizers.sh
echo "== WebAssembly build =="
bash scripts/build-wasm.sh
echo "== JavaScript tests (node --test) =="
bash scripts/setup-node22.sh  # the package is also run in Node 22 (tests/js/package.test.mjs)
node --test tests/js/
echo "== browser tests (headless Chromium) =="
bash scripts/setup.sh chromium
node --test tests/browser/
echo "== demo pages (headless Chromium) =="
node --test tests/demos/
echo "== aarch64 (Ascend hosts): cross build, tests under qemu =="
bash scripts/test-aarch64.sh
