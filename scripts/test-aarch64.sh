#!/usr/bin/env bash
# Cross-builds bprop for aarch64 Linux (the Ascend hosts are aarch64) with Debian's g++-aarch64-linux-gnu and runs
# its tests under qemu-user: the GoogleTest suite (one process) and the shared gradient vectors. Prints how long
# each step took. Build: build/aarch64 (configured once; Release, no MPI), GoogleTest for aarch64:
# build/aarch64-deps (scripts/setup-aarch64.sh). BPROP_JOBS: parallel compile jobs (default 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build="$root/build/aarch64"
jobs=${BPROP_JOBS:-2}
qemu=(qemu-aarch64 -L /usr/aarch64-linux-gnu)

step_start=0
step() { step_start=$SECONDS; echo "== aarch64: $1 =="; }
took() { echo "-- $1: $((SECONDS - step_start)) s"; }

step "set-up (scripts/setup-aarch64.sh)"
bash "$root/scripts/setup-aarch64.sh"
took "set-up"

step "configure $build"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DBPROP_MPI=OFF -DBPROP_BUILD_TESTS=ON \
    -DCMAKE_PREFIX_PATH="$root/build/aarch64-deps/googletest"
fi
took "configure"

step "build bprop, bprop_tests (-j$jobs)"
cmake --build "$build" -j "$jobs" --target bprop bprop_tests
took "build"

for bin in "$build/bprop" "$build/bprop_tests"; do
  desc=$(file -b "$bin")
  echo "$(basename "$bin"): $desc"
  case "$desc" in
    *"ARM aarch64"*) ;;
    *) echo "aarch64: $bin is not an aarch64 program" >&2; exit 1 ;;
  esac
done

step "GoogleTest suite under qemu-aarch64"
"${qemu[@]}" "$build/bprop_tests" --gtest_brief=1
took "GoogleTest suite"

step "gradient vectors (bprop check) under qemu-aarch64"
"${qemu[@]}" "$build/bprop" check "$root"/tests/vectors/*.json
took "gradient vectors"
