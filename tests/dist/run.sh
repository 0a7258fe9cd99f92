#!/usr/bin/env bash
# One multi-process check of bprop::dist: run.sh CASE PATH/TO/dist_check (ctest runs one test per case).
#   equivalence-N-MODEL-OPT  N ranks reach the one-process parameters after 20 steps (1e-5 relative)
#   overlap                  bucket allreduces run while the backward still runs (timestamps)
#   fault-exit, fault-throw  rank 1 exits / throws at step 5: mpirun ends non-zero within 30 s, the output
#                            names rank 1, and no rank is left running
#   fault-hang               rank 1 sleeps at step 5: the watchdog (BPROP_DIST_TIMEOUT=5) aborts the job
#   gpt-cli                  mpirun -np 2 bprop train --model gpt --data-parallel: the validation losses of one process
#   cli                      mpirun -np 2 bprop train --data-parallel: one log and one checkpoint (rank 0), the
#                            same losses and accuracies as one process; --resume goes on from it on every rank
#   batchnorm                batch-norm statistics differ between ranks by default, equal with average_state
#   loss-scale               dynamic loss scaling: rank 1's infinite loss at step 3 skips that step on every
#                            rank and halves the scale; parameters and scale equal one process's
#   mismatch                 rank 1 holds another model: every rank reports it, naming rank 1
set -uo pipefail
case_name=$1
bin=$2
mpirun=${BPROP_MPIRUN:-mpirun}
# As root in CI; more ranks than cores on a 2-core machine.
launch=("$mpirun" --allow-run-as-root --oversubscribe)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

fail() {
  echo "---- output ----"
  cat "$out"
  echo "FAIL ($case_name): $*"
  exit 1
}

case $case_name in
  equivalence-*)
    IFS=- read -r _ np model opt <<<"$case_name"
    timeout 100 "${launch[@]}" -np "$np" "$bin" equivalence "$model" "$opt" >"$out" 2>&1 || fail "exit status $?"
    grep -q "max relative difference" "$out" || fail "no comparison printed"
    cat "$out"
    ;;
  overlap | batchnorm | loss-scale)
    timeout 100 "${launch[@]}" -np 2 "$bin" "$case_name" >"$out" 2>&1 || fail "exit status $?"
    cat "$out"
    ;;
  fault-exit | fault-throw | fault-hang)
    start=$(date +%s)
    # The watchdog's limit is set too, in case the launcher does not stop the job itself.
    limit=20
    [ "$case_name" = fault-hang ] && limit=5
    timeout 60 "${launch[@]}" -x BPROP_DIST_TIMEOUT=$limit -np 3 "$bin" "$case_name" >"$out" 2>&1
    rc=$?
    elapsed=$(($(date +%s) - start))
    [ "$rc" -ne 0 ] || fail "mpirun exited 0"
    [ "$rc" -ne 124 ] || fail "the job hung (killed by timeout after 60 s)"
    [ "$elapsed" -le 30 ] || fail "the other ranks took ${elapsed} s to stop (limit 30 s)"
    # What the user sees: for an exit, the launcher naming the failed process ([[job,1],1] is rank 1); for a
    # throw, rank 1's own last words before MPI_Abort; for a hang, the watchdog's message.
    if [ "$case_name" = fault-hang ]; then
      grep -q "made no progress for 5 s" "$out" || fail "no watchdog message"
    elif [ "$case_name" = fault-exit ]; then
      grep -Eq "Process name: \[\[[0-9]+,[0-9]+\],1\]" "$out" || fail "the launcher's message does not name rank 1"
    else
      # Open MPI's own "MPI_ABORT was invoked on rank 1" is lost now and then (its help messages race with the
      # dying process), so the check is on rank 1's line, written before it aborts the job.
      grep -q "bprop dist: rank 1: training failed: injected failure" "$out" || fail "no message names rank 1"
    fi
    grep -q "training finished although" "$out" && fail "a rank finished training"
    sleep 1
    if pgrep -f "$bin $case_name" >/dev/null; then fail "ranks are still running after mpirun returned"; fi
    echo "mpirun exited $rc after ${elapsed} s:"
    grep -E "Process name|MPI_ABORT was|bprop dist: rank" "$out" | head -5
    ;;
  cli)
    # bprop sits next to the tests directory of the build; the data is Debian's dataset-fashion-mnist.
    bprop="$(dirname "$bin")/../../bprop"
    data=/usr/share/datasets/fashion-mnist
    [ -e "$data/train-images-idx3-ubyte.gz" ] || [ -e "$data/train-images-idx3-ubyte" ] || { echo "SKIP: no $data"; exit 0; }
    dir=$(mktemp -d)
    trap 'rm -rf "$dir" "$out"' EXIT
    args=(train --model mlp --epochs 2 --limit 1000 --test-limit 300 --batch-size 50 --seed 3 --threads 1)
    "$bprop" "${args[@]}" --data-parallel --out "$dir/one.safetensors" >"$dir/one.txt" 2>"$dir/one.err" || fail "one process failed"
    timeout 100 "${launch[@]}" -np 2 "$bprop" "${args[@]}" --data-parallel --out "$dir/two.safetensors" \
      >"$dir/two.txt" 2>"$dir/two.err" || { cat "$dir/two.err" >"$out"; fail "2 ranks failed"; }
    cat "$dir/two.txt" "$dir/two.err" >"$out"
    grep -q "data parallel on one process" "$dir/one.err" || fail "one process did not say which implementation runs"
    [ "$(grep -c "data parallel on MPI" "$dir/two.err")" -eq 1 ] || fail "rank 0 did not say (once) that MPI runs"
    [ "$(grep -c '^saved ' "$dir/two.txt")" -eq 1 ] || fail "expected one 'saved' line (rank 0 only)"
    [ -s "$dir/two.safetensors" ] || fail "no checkpoint"
    # The epoch lines without their timing fields: the same losses and accuracies.
    strip() { grep '^epoch' "$1" | sed -E 's/  [0-9.]+ s  [0-9]+ img\/s.*//'; }
    [ "$(strip "$dir/one.txt" | wc -l)" -eq 2 ] || fail "expected 2 epoch lines"
    diff <(strip "$dir/one.txt") <(strip "$dir/two.txt") || fail "2 ranks report other losses than one process"
    # Resume: every rank reads the checkpoint and goes on from it (epoch 3 of 3), as one process does.
    resume=(train --model mlp --epochs 3 --limit 1000 --test-limit 300 --threads 1 --data-parallel
            --resume "$dir/two.safetensors")
    "$bprop" "${resume[@]}" --out "$dir/r1.safetensors" >"$dir/r1.txt" 2>>"$out" || fail "resume (one process) failed"
    timeout 100 "${launch[@]}" -np 2 "$bprop" "${resume[@]}" --out "$dir/r2.safetensors" >"$dir/r2.txt" 2>>"$out" ||
      fail "resume (2 ranks) failed"
    diff <(strip "$dir/r1.txt") <(strip "$dir/r2.txt") || fail "2 ranks resume differently from one process"
    # And it did start from the checkpoint: its first epoch's training loss is well below a fresh start's.
    fresh=$(grep '^epoch 1/2' "$dir/two.txt" | awk '{print $5}')
    resumed=$(grep '^epoch 3/3' "$dir/r2.txt" | awk '{print $5}')
    echo "training loss of the first epoch: fresh $fresh, resumed $resumed"
    awk -v a="$resumed" -v b="$fresh" 'BEGIN { exit !(a < 0.8 * b) }' || fail "the resumed run did not start from the checkpoint"
    strip "$dir/two.txt"
    ;;
  gpt-cli)
    # bprop train --model gpt --data-parallel on 2 ranks (each half of every micro-batch, gradients summed) reports
    # the validation losses of one process, and rank 0 alone saves.
    bprop="$(dirname "$bin")/../../bprop"
    text="$(dirname "$0")/../../demos/web/data/fortunes/train.txt"
    dir=$(mktemp -d)
    trap 'rm -rf "$dir" "$out"' EXIT
    args=(train --model gpt --data "text:$text" --context 32 --layers 2 --heads 2 --width 32 --batch-size 8
          --grad-accum 2 --steps 30 --warmup 5 --eval-interval 10 --eval-batches 4 --sample-tokens 0 --threads 1)
    "$bprop" "${args[@]}" --out "$dir/one.safetensors" >"$dir/one.txt" 2>"$dir/one.err" || { cat "$dir/one.err" >"$out"; fail "one process failed"; }
    timeout 100 "${launch[@]}" -np 2 "$bprop" "${args[@]}" --data-parallel --out "$dir/two.safetensors" \
      >"$dir/two.txt" 2>"$dir/two.err" || { cat "$dir/two.err" >"$out"; fail "2 ranks failed"; }
    cat "$dir/two.txt" >"$out"
    [ "$(grep -c '^saved ' "$dir/two.txt")" -eq 1 ] || fail "expected one 'saved' line (rank 0 only)"
    [ "$(grep -c '^step .* val loss' "$dir/one.txt")" -eq 3 ] || fail "expected 3 validations"
    # Summed over ranks in another order, the losses agree to the printed 4 decimals.
    diff <(grep '^step .* val loss' "$dir/one.txt") <(grep '^step .* val loss' "$dir/two.txt") || fail "2 ranks report other losses"
    grep 'val loss' "$dir/two.txt"
    ;;
  mismatch)
    timeout 60 "${launch[@]}" -np 3 "$bin" mismatch >"$out" 2>&1 || fail "exit status $?"
    n=$(grep -c "the ranks do not hold the same model" "$out")
    [ "$n" -eq 3 ] || fail "expected the error on all 3 ranks, got $n"
    # Rank 1 alone: "rank(s) 1 (8 tensors) differ from rank 0's (6 tensors)".
    grep -q "rank(s) 1 ([0-9]* tensors) differ from rank 0's" "$out" || fail "the message does not name rank 1 alone"
    head -1 "$out" | cut -c1-300
    ;;
  *)
    echo "unknown case '$case_name'" >&2
    exit 2
    ;;
esac
echo "PASS ($case_name)"
