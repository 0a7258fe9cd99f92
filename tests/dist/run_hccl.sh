#!/usr/bin/env bash
# One multi-process check of bprop::dist's HCCL implementation on the fake CANN and libhccl.so, two fake NPUs,
# two ranks: run_hccl.sh CASE PATH/TO/hccl_check FAKE_CANN_HOME (ctest runs one test per case).
#   collectives   device allreduce / broadcast through HCCL, float64 and host tensors through MPI
#   mismatch      the ranks allreduce different counts: both report the disagreement within 30 s
#   equivalence   DataParallel on the NPUs reaches the one-process parameters, with no CPU fallback
#   cli           mpirun -np 2 bprop train --data-parallel --device ascend: HCCL runs, one checkpoint
set -uo pipefail
case_name=$1
bin=$2
home=$3
mpirun=${BPROP_MPIRUN:-mpirun}
# The fake toolkit as a real one is found (ASCEND_HOME_PATH/lib64 holds libascendcl.so and libhccl.so), two
# devices per host; a short fake HCCL timeout, so a hang shows as an error.
launch=("$mpirun" --allow-run-as-root --oversubscribe -x ASCEND_HOME_PATH="$home" -x FAKE_ASCEND_DEVICES=2
        -x FAKE_HCCL_TIMEOUT=20 -np 2)
out=$(mktemp)
dir=$(mktemp -d)
trap 'rm -rf "$out" "$dir"' EXIT

fail() {
  echo "---- output ----"
  cat "$out"
  echo "FAIL ($case_name): $*"
  exit 1
}

case $case_name in
  collectives | equivalence)
    timeout 100 "${launch[@]}" "$bin" "$case_name" >"$out" 2>&1 || fail "exit status $?"
    cat "$out"
    ;;
  mismatch)
    start=$(date +%s)
    timeout 60 "${launch[@]}" "$bin" mismatch >"$out" 2>&1 || fail "exit status $?"
    elapsed=$(($(date +%s) - start))
    [ "$elapsed" -le 30 ] || fail "took ${elapsed} s"
    n=$(grep -c "^rank [01]: .*HcclAllReduce #0 of [45] FP32 SUM failed: the ranks disagree" "$out")
    [ "$n" -eq 2 ] || fail "expected the disagreement reported on both ranks, got $n"
    grep "^rank 0:" "$out" | cut -c1-400
    ;;
  cli)
    bprop="$(dirname "$bin")/../../bprop"
    data=/usr/share/datasets/fashion-mnist
    [ -e "$data/train-images-idx3-ubyte.gz" ] || [ -e "$data/train-images-idx3-ubyte" ] || { echo "SKIP: no $data"; exit 0; }
    args=(train --model mlp --epochs 1 --limit 240 --test-limit 60 --batch-size 40 --seed 3 --threads 1
          --data-parallel --device ascend --out "$dir/two.safetensors")
    timeout 100 "${launch[@]}" "$bprop" "${args[@]}" >"$dir/two.txt" 2>"$dir/two.err" ||
      { cat "$dir/two.txt" "$dir/two.err" >"$out"; fail "2 ranks failed"; }
    cat "$dir/two.txt" "$dir/two.err" >"$out"
    [ "$(grep -c "data parallel on HCCL (.*libhccl.so) on ascend:0" "$dir/two.err")" -eq 1 ] ||
      fail "rank 0 did not say (once) that HCCL runs"
    [ "$(grep -c '^saved ' "$dir/two.txt")" -eq 1 ] || fail "expected one 'saved' line (rank 0 only)"
    [ -s "$dir/two.safetensors" ] || fail "no checkpoint"
    grep -E "data parallel on|^epoch" "$dir/two.err" "$dir/two.txt" | cut -c1-300
    ;;
  *)
    echo "unknown case '$case_name'" >&2
    exit 2
    ;;
esac
echo "PASS ($case_name)"
