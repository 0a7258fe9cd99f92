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
# Package size: what a browser downloads. The first total is the module (wasm + glue) and the entry
# (web/index.js); the second adds the ES modules the entry imports (every other web/*.js).
gz() { gzip -9c "$1" | wc -c; }
js="$root/web/dist/bprop.mjs"
wasm="$root/web/dist/bprop.wasm"
entry="$root/web/index.js"
raw=$(( $(wc -c <"$js") + $(wc -c <"$wasm") + $(wc -c <"$entry") ))
gzsum=$(( $(gz "$js") + $(gz "$wasm") + $(gz "$entry") ))
rest_gz=0
for f in "$root"/web/*.js; do
  [ "$f" = "$entry" ] || rest_gz=$(( rest_gz + $(gz "$f") ))
done
js_raw=$(( $(wc -c <"$js") + $(wc -c <"$entry") ))
js_gz=$(( $(gz "$js") + $(gz "$entry") ))
printf 'bprop wasm package size: wasm %d B (%d gzip), js %d B (glue + entry, %d gzip), ' \
  "$(wc -c <"$wasm")" "$(gz "$wasm")" "$js_raw" "$js_gz"
printf 'total %d B raw, %d B gzip\n' "$raw" "$gzsum"
printf 'bprop wasm package size with the modules the entry imports (web/*.js): %d B gzip\n' "$(( gzsum + rest_gz ))"
