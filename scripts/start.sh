#!/usr/bin/env bash
# Builds what is missing (native library and seed demos, the GPT's text corpus, the WebAssembly package), runs the
# native seed demos, then serves the browser demos on http://localhost:${PORT:-8080}/demos/web/ (PORT or --port N to change).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -f node_modules/@dagrejs/dagre/dist/dagre.esm.js ] && [ -x node_modules/.bin/esbuild ] || npm ci --no-audit --no-fund
bash scripts/build-native.sh
# The GPT's text corpus (bprop train --model gpt), from the Debian package fortunes that setup installed.
[ -s build/data/fortunes/train.txt ] || node scripts/make-text-corpus.mjs
for demo in cube custom_cell custom_primitive linear_bce; do
  echo "== demos/native/$demo.cpp =="
  "build/native/demo_$demo"
done
# -s: a zero-length wasm means a build was interrupted while writing it.
if [ ! -s web/dist/bprop.wasm ] || [ ! -f web/dist/bprop.mjs ] || [ ! -f web/dist/bprop.cjs ]; then bash scripts/build-wasm.sh; fi
port="${PORT:-8080}"
if [ "${1:-}" = "--port" ] && [ -n "${2:-}" ]; then port=$2; fi
echo "bprop demos: http://localhost:${port}/demos/web/"
exec node scripts/serve.mjs --port "$port"
