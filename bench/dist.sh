#!/usr/bin/env bash
# Data-parallel speed on this host: training throughput of 1 rank against 2 ranks (one thread each), W1-like
# (the mlp, batch 128) and W4-like (the cnn, batch 32) on Fashion-MNIST, and a 100 MB float32 allreduce through
# bprop::dist against plain MPI_Allreduce. Needs the native build with MPI (build/native) and
# dataset-fashion-mnist. Usage: bash bench/dist.sh [images per run, default 25600]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bprop="$root/build/native/bprop"
check="$root/build/native/tests/dist/dist_check"
images=${1:-25600}
mpirun=(mpirun --allow-run-as-root --oversubscribe)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# images/s of the (only) epoch, from the line "epoch 1/1  train loss ... N img/s ..."
rate() { grep -Eo '[0-9]+ img/s' "$1" | tail -1 | cut -d' ' -f1; }

for spec in "mlp 128" "cnn 32"; do
  read -r model batch <<<"$spec"
  common=(train --model "$model" --batch-size "$batch" --epochs 1 --limit "$images" --test-limit 100
          --optimizer sgd --lr 0.01 --schedule constant --threads 1 --out "$tmp/$model.safetensors")
  "$bprop" "${common[@]}" >"$tmp/one.txt" 2>/dev/null
  "${mpirun[@]}" -np 2 "$bprop" "${common[@]}" --data-parallel >"$tmp/two.txt" 2>/dev/null
  one=$(rate "$tmp/one.txt")
  two=$(rate "$tmp/two.txt")
  echo "$model batch $batch: 1 rank $one img/s, 2 ranks $two img/s, speed-up $(echo "scale=2; $two / $one" | bc)"
done
"${mpirun[@]}" -np 2 "$check" bench-allreduce
