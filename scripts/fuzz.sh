#!/usr/bin/env bash
# A longer fuzzing run than the test's: random and hostile vector files through the native and WebAssembly
# builds for --seconds (default 60) from --seed (default: from the clock), then every regression file.
# Prints each finding with minimal vector files (also written to test-output/fuzz/); exit status 1 when
# something was found. Options: node tests/fuzz/run.mjs --help. Builds first when a build is missing.
#   bash scripts/fuzz.sh --seconds 600 --seed 42      (or: npm run fuzz -- --seconds 600 --seed 42)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -x build/native/bprop ] || bash scripts/build-native.sh
[ -f web/dist/bprop.wasm ] || bash scripts/build-wasm.sh
exec node tests/fuzz/run.mjs "$@"
