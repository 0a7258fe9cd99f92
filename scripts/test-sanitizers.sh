#!/usr/bin/env bash
# The native tests again under AddressSanitizer + UndefinedBehaviorSanitizer: the GoogleTest suite, the shared
# vectors and the fuzzer (its regression files and a fixed seed's cases), in a build of their own
# (build/sanitize, -O1 with debug info). The fuzzer reads the op catalogue from the plain build/native/bprop.
# Any report fails the run: sanitizers stop at the first error (-fno-sanitize-recover). This build is also the one
# without MPI (BPROP_MPI=OFF): bprop must build and its one-process bprop::dist must work without Open MPI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/sanitize"
bash "$root/scripts/setup.sh"
# (configured every time: cheap, and a build folder from before new targets were added learns them first)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DBPROP_SANITIZE=ON -DBPROP_MPI=OFF > /dev/null
cmake --build "$build" -j "$(nproc)" --target bprop_tests bprop bprop_ascend_tests fake_ascend_tests
# allocator_may_return_null: an allocation too large for the machine returns null, which bprop turns into a
# MemoryError (the tests check that); without it ASan stops the program instead.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:abort_on_error=0:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
echo "== GoogleTest suite under ASan + UBSan =="
# One process for the whole suite (ctest would start one per test). The timing-sensitive BLAS test is kept: it
# compares kernels, not times.
"$build/bprop_tests" --gtest_brief=1
echo "== gradient vectors under ASan + UBSan =="
"$build/bprop" check "$root"/tests/vectors/*.json
echo "== the Ascend backend on the fake CANN under ASan + UBSan (the fake's own rules, the backend, the vectors) =="
"$build/tests/fake_ascend/fake_ascend_tests" --gtest_brief=1
"$build/tests/ascend/bprop_ascend_tests" --gtest_brief=1
ASCEND_HOME_PATH="$build/fake_ascend" "$build/bprop" check --device ascend "$root"/tests/vectors/*.json
echo "== fuzzer under ASan + UBSan: the regression files and a fixed seed's 40,000 cases =="
# The sanitizers find what does not crash the plain build (a read past an empty buffer, an overflow); the
# generated cases are compared with the plain native build too (docs/fuzzing.md).
node "$root/tests/fuzz/run.mjs" --builds native,sanitize --rounds 20 --seed 20261201
