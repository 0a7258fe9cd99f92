#!/usr/bin/env bash
# Builds the WebAssembly module with Emscripten into web/dist/ (bprop.cjs + bprop.wasm) and prints its size.
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
# Package size: what a browser downloads.
js="$root/web/dist/bprop.cjs"
wasm="$root/web/dist/bprop.wasm"
entry_bytes=$(cat "$root/web/index.js" | wc -c)
entry_gz=$(gzip -9c "$root/web/index.js" | wc -c)
raw=$(( $(wc -c <"$js") + $(wc -c <"$wasm") + entry_bytes ))
gz=$(( $(gzip -9c "$js" | wc -c) + $(gzip -9c "$wasm" | wc -c) + entry_gz ))
printf 'bprop wasm package size: wasm %d B, js %d B (glue + entry), total %d B raw, %d B gzip\n' \
  "$(wc -c <"$wasm")" "$(( $(wc -c <"$js") + entry_bytes ))" "$raw" "$gz"
