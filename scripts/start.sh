#!/usr/bin/env bash
# Builds bprop and runs the native seed demos.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/build-native.sh"
for demo in cube custom_cell custom_primitive linear_bce; do
  echo "== demos/native/$demo.cpp =="
  "$root/build/native/demo_$demo"
done
