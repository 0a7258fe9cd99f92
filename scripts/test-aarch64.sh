#!/usr/bin/env bash
# Cross-builds bprop for aarch64 Linux (the Ascend hosts are aarch64) with Debian's g++-aarch64-linux-gnu and runs its
# tests under qemu-user: the GoogleTest suite (one process), the shared gradient vectors, and the Ascend backend on
# the fake CANN (tests/fake_ascend: its own tests, the backend's, the vectors on the fake NPU). Prints how long each
# step took. Build: build/aarch64 (configured once; Release, no MPI); zlib and GoogleTest for aarch64:
# build/aarch64-deps/sysroot (scripts/setup-aarch64.sh). BPROP_JOBS: parallel compile jobs and test shards (default 2);
# BPROP_AARCH64_ASCEND=0 leaves out the fake CANN and the Ascend backend's tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build="$root/build/aarch64"
jobs=${BPROP_JOBS:-2}
ascend=${BPROP_AARCH64_ASCEND:-1}
all_start=$SECONDS

step_start=0
step() { step_start=$SECONDS; echo "== aarch64: $1 =="; }
took() { echo "-- $1: $((SECONDS - step_start)) s"; }

step "set-up (scripts/setup-aarch64.sh)"
bash "$root/scripts/setup-aarch64.sh"
took "set-up"

step "configure $build"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DBPROP_MPI=OFF -DBPROP_BUILD_TESTS=ON
fi
took "configure"

step "build bprop, bprop_tests (-j$jobs)"
cmake --build "$build" -j "$jobs" --target bprop bprop_tests
took "build"
programs=("$build/bprop" "$build/bprop_tests")
if [ "$ascend" != 0 ]; then
  step "build the fake CANN, fake_ascend_tests, bprop_ascend_tests (-j$jobs)"
  cmake --build "$build" -j "$jobs" --target fake_ascend fake_ascend_tests bprop_ascend_tests
  took "build (Ascend tests)"
  programs+=("$build/tests/fake_ascend/fake_ascend_tests" "$build/tests/ascend/bprop_ascend_tests"
             "$build"/fake_ascend/lib64/*.so)
fi

for bin in "${programs[@]}"; do
  desc=$(file -b "$bin")
  echo "${bin#"$build"/}: ${desc%%, BuildID*}"
  case "$desc" in
    *"ARM aarch64"*) ;;
    *) echo "aarch64: $bin is not for aarch64" >&2; exit 1 ;;
  esac
done

# Each program is run through a script in $build/qemu that starts it under qemu-aarch64 with the script as its
# argv[0]: GoogleTest's "threadsafe" death tests re-execute argv[0], and the host cannot execute an aarch64 program
# itself (no binfmt_misc registration for qemu here): execv would fail with "Exec format error".
mkdir -p "$build/qemu"
qemu_wrapper() {
  local wrapper="$build/qemu/$(basename "$1")"
  printf '#!/bin/sh\nexec qemu-aarch64 -L /usr/aarch64-linux-gnu -0 "$0" %q "$@"\n' "$1" >"$wrapper"
  chmod +x "$wrapper"
  echo "$wrapper"
}

step "GoogleTest suite under qemu-aarch64"
# Left out: AllocationFailure.IsAMemoryErrorAndTheLibraryGoesOn caps its child's address space with
# setrlimit(RLIMIT_AS), which qemu-user accepts but does not apply (it would limit qemu's own memory), so the 4 GiB
# allocation it expects to fail succeeds (and is written).
# The suite runs as $jobs shards side by side (qemu-user emulates one thread per thread: the shards use the cores
# the single-threaded tests leave idle); each shard's output is shown once it is done. The PyTorch reference curve
# compares its first 100 steps here (the whole 300-step curve is compared natively).
suite=$(qemu_wrapper "$build/bprop_tests")
shard_pids=()
for ((i = 0; i < jobs; ++i)); do
  GTEST_TOTAL_SHARDS=$jobs GTEST_SHARD_INDEX=$i BPROP_GPT_REFERENCE_STEPS=100 "$suite" --gtest_brief=1 \
    --gtest_filter=-AllocationFailure.IsAMemoryErrorAndTheLibraryGoesOn >"$build/qemu/shard$i.log" 2>&1 &
  shard_pids+=($!)
done
failed=0
for ((i = 0; i < jobs; ++i)); do
  wait "${shard_pids[$i]}" || failed=1
  echo "-- shard $((i + 1)) of $jobs:"
  cat "$build/qemu/shard$i.log"
done
[ "$failed" = 0 ] || { echo "aarch64: the GoogleTest suite failed under qemu" >&2; exit 1; }
took "GoogleTest suite"

step "gradient vectors (bprop check) under qemu-aarch64"
bprop=$(qemu_wrapper "$build/bprop")
"$bprop" check "$root"/tests/vectors/*.json
took "gradient vectors"

if [ "$ascend" != 0 ]; then
  step "the Ascend backend on the fake CANN under qemu-aarch64 (the fake's rules, the backend, the vectors)"
  "$(qemu_wrapper "$build/tests/fake_ascend/fake_ascend_tests")" --gtest_brief=1
  ascend_tests=$(qemu_wrapper "$build/tests/ascend/bprop_ascend_tests")
  "$ascend_tests" --gtest_brief=1
  # The tests that need a process of their own (two fake devices; the first Ascend 910), as ctest runs them.
  "$ascend_tests" --gtest_brief=1 --gtest_filter=AscendOps.MixingDevicesIsAnErrorNamingBoth
  "$ascend_tests" --gtest_brief=1 --gtest_filter=AscendFidelity.OnTheAtlasTrainingSeries*
  ASCEND_HOME_PATH="$build/fake_ascend" "$bprop" check --device ascend "$root"/tests/vectors/*.json
  FAKE_ASCEND_SOC=Ascend910A ASCEND_HOME_PATH="$build/fake_ascend" "$bprop" check --device ascend \
    "$root"/tests/vectors/*.json
  took "Ascend backend on the fake CANN"
fi
echo "== aarch64: all passed in $((SECONDS - all_start)) s =="
