#!/usr/bin/env bash
# Builds the WebAssembly module with Emscripten into web/dist/ (bprop.mjs, the ES-module glue, + bprop.wasm), the
# CommonJS entry web/dist/bprop.cjs (tools/build-cjs.mjs, with esbuild from npm ci), and prints the size.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Debian's Emscripten finds its Node modules only through NODE_PATH.
export NODE_PATH="${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs"
if ! command -v emcc >/dev/null 2>&1; then
  echo "bprop build-wasm: installing the Debian package emscripten"
  if [ "$(id -u)" -ne 0 ]; then
    echo "bprop build-wasm: root is needed to install it (run as root, or: sudo apt-get install -y emscripten)" >&2
    exit 1
  fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q emscripten
fi
bash "$root/scripts/setup.sh"
build="$root/build/wasm"
if [ ! -f "$build/CMakeCache.txt" ]; then
  emcmake cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DEigen3_DIR=/usr/share/eigen3/cmake -Dnlohmann_json_DIR=/usr/share/cmake/nlohmann_json
fi
cmake --build "$build" -j "$(nproc)"
if [ ! -x "$root/node_modules/.bin/esbuild" ]; then
  (cd "$root" && npm ci --no-audit --no-fund)
fi
node "$root/tools/build-cjs.mjs"
# Package size: what a browser downloads (tools/package-size.mjs).
node "$root/tools/package-size.mjs"
