#!/usr/bin/env bash
# Builds everything present and runs every test: GoogleTest (ctest) and the shared gradient vectors.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/build-native.sh"
echo "== native tests (ctest) =="
(cd "$root/build/native" && ctest -j "$(nproc)" --output-on-failure)
if [ -x "$root/build/native/bprop" ] && compgen -G "$root/tests/vectors/*.json" >/dev/null; then
  echo "== gradient vectors (native) =="
  "$root/build/native/bprop" check "$root"/tests/vectors/*.json
fi
