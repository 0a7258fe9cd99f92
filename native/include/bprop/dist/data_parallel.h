// DataParallel: the same model on every rank, each rank on its own part of the global batch, gradients summed
// over the ranks before every optimizer step, so that N ranks with global batch B take the same steps as one
// process with batch B.
//
// - At construction every rank checks that all ranks hold the same parameters (names, shapes, dtypes, count);
//   a mismatch is a ValueError on every rank naming the ranks that differ, raised before any gradient is
//   exchanged. Then rank 0's parameters and state (batch-norm statistics included) are broadcast.
// - step() weights each rank's mean loss by its share of the global batch (local / global images), so the sum
//   over ranks is the global batch's mean loss, uneven slices and a short last batch included.
// - Gradients travel in buckets of about bucket_mb MiB (25, as PyTorch DDP), filled in reverse parameter order
//   (the order the backward finishes them). A bucket's allreduce starts (MPI_Iallreduce) the moment its last
//   gradient is final (bprop::OnGradReady), while the rest of the backward runs; buckets start in the same order
//   on every rank. Each gradient is copied into its bucket when it is final (the gradients a backward produces
//   are fresh tensors, and may share storage with each other, so the backward cannot write into the bucket);
//   the optimizer reads the reduced gradients as views into the buckets.
// - On an Ascend NPU (dist::Backend::HCCL) the parameters and the buckets live on the rank's NPU: rank 0's
//   parameters are broadcast by HCCL, gradients are copied into the buckets on the device's stream, and each
//   full bucket's HcclAllReduce is queued there in place, behind the backward's kernels; step() waits for the
//   stream once, before the optimizer. float64 buckets (HCCL reduces none) travel through the host and MPI.
// - Not synchronised by default: batch-norm moving statistics stay per rank (average_state averages them after
//   each step; batch statistics in the forward are never synchronised: no SyncBatchNorm); anything the caller
//   computes from the outputs (losses, accuracy) is local until it reduces it (dist::allreduce).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "bprop/amp.h"
#include "bprop/cell.h"
#include "bprop/nn/optim.h"

namespace bprop::dist {

struct DataParallelOptions {
  /// Bucket size in MiB (a parameter larger than this gets a bucket of its own).
  double bucket_mb = 25.0;
  /// Average the model's non-trainable state (batch-norm moving statistics) over the ranks after every step, so
  /// every rank holds the same statistics. This is not SyncBatchNorm: each rank still normalises with its own
  /// slice's batch statistics in the forward. Off by default (statistics stay per rank, as in PyTorch DDP).
  bool average_state = false;
};

/// When each bucket's allreduce started and was seen finished, in seconds from the start of the step.
struct BucketTiming {
  int64_t bytes = 0;
  double launched = 0.0;
  double finished = 0.0;
};
struct StepTiming {
  double backward_end = 0.0;  // value_and_grad returned: forward and backward done
  double reduced = 0.0;       // every bucket reduced
  std::vector<BucketTiming> buckets;  // in launch order
};

class DataParallel {
 public:
  /// dist::init() must have run. `optimizer` updates (a subset of) the model's parameters.
  DataParallel(std::shared_ptr<Cell> model, std::shared_ptr<optim::Optimizer> optimizer,
               DataParallelOptions options = {});

  /// One step: runs fn(inputs) -> (mean loss over the local images, aux...) under value_and_grad with respect
  /// to the optimizer's parameters, reduces the gradients in buckets during the backward, and applies the
  /// optimizer. local_count / global_count weight the local loss. A rank whose slice of the batch is empty
  /// (local_count 0) passes no inputs: it contributes zero gradients and gets an empty Value back. Returns fn's
  /// value (the unweighted local loss, aux...).
  Value step(const Fn& fn, const std::vector<Tensor>& inputs, int64_t local_count, int64_t global_count);

  /// Loss scaling for mixed precision (nullptr: none): step() then differentiates the weighted loss times the scale,
  /// unscales the reduced gradients and skips the update when any is not finite, then adjusts the scale. Every rank
  /// decides alike: the flag is computed from the reduced gradients, and a non-finite gradient on any rank makes
  /// their sum non-finite on every rank (inf and nan survive a sum).
  void set_loss_scaler(std::shared_ptr<amp::LossScaler> scaler) { scaler_ = std::move(scaler); }
  const std::shared_ptr<amp::LossScaler>& loss_scaler() const { return scaler_; }
  /// Whether the last step was skipped for non-finite gradients (always false without a loss scaler).
  bool last_step_overflowed() const { return overflowed_; }

  /// Copies rank 0's parameters and state to every rank (after loading a checkpoint on rank 0, say), with the loss
  /// scaler's state when there is one.
  void broadcast_parameters();

  int rank() const { return rank_; }
  int world() const { return world_; }
  size_t bucket_count() const;
  const StepTiming& last_step() const { return timing_; }
  Cell& model() { return *model_; }
  optim::Optimizer& optimizer() { return *optimizer_; }

  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

 private:
  struct Buckets;
  void check_same_parameters();
  void average_state();

  std::shared_ptr<Cell> model_;
  std::shared_ptr<optim::Optimizer> optimizer_;
  DataParallelOptions options_;
  int rank_ = 0, world_ = 1;
  std::unique_ptr<Buckets> buckets_;
  StepTiming timing_;
  std::shared_ptr<amp::LossScaler> scaler_;
  bool overflowed_ = false;
};

}  // namespace bprop::dist
