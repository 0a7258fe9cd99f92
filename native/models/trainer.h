// Training and evaluating the image classifiers of models.h on an MNIST-style data set: batching with
// normalisation, a seeded shuffle per epoch, minibatch steps (value_and_grad + optimizer), per-epoch test
// evaluation, and the checkpoint metadata that lets `bprop eval` reproduce the input normalisation.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bprop/amp.h"
#include "bprop/cell.h"
#include "bprop/dist/data_parallel.h"
#include "bprop/nn/checkpoint.h"
#include "bprop/nn/optim.h"
#include "data/idx.h"

namespace bprop::models {

/// x = (pixel / 255 - mean) / std.
struct Normalization {
  double mean = 0.0;
  double std = 1.0;
};

/// Mean and standard deviation of the data set's pixels scaled to [0, 1] (std 1 when they are all equal).
Normalization compute_normalization(const data::Dataset& ds);

/// The images at `indices` as a float32 (n, 1, rows, cols) tensor, normalised.
Tensor make_image_batch(const data::Dataset& ds, const std::vector<int64_t>& indices, const Normalization& norm);
/// Their labels as an int32 (n,) tensor.
Tensor make_label_batch(const data::Dataset& ds, const std::vector<int64_t>& indices);

/// The names TrainOptions::optimizer and TrainOptions::schedule take, and the mixed-precision levels and dtypes
/// of both trainers: the choices the command line offers and checks.
const std::vector<std::string>& optimizer_names();  // "adam", "sgd"
const std::vector<std::string>& schedule_names();   // "cosine", "constant"
const std::vector<std::string>& amp_level_names();  // "O0" .. "O3"
const std::vector<std::string>& amp_dtype_names();  // "bfloat16", "float16"

struct TrainOptions {
  std::string model = "mlp";
  int64_t epochs = 5;
  int64_t batch_size = 64;
  double lr = 1e-3;
  /// "sgd" (with `momentum`) or "adam".
  std::string optimizer = "adam";
  double momentum = 0.9;
  /// "cosine": the learning rate of epoch e (from 1) is lr * (1 + cos(pi * (e - 1) / epochs)) / 2 (PyTorch's
  /// CosineAnnealingLR stepped once per epoch); "constant": lr throughout.
  std::string schedule = "cosine";
  uint64_t seed = 0;
  /// Data parallel over the ranks of bprop::dist (dist::init() first): each rank trains on its slice of every
  /// global batch of batch_size images (dist::DistributedSampler), gradients are summed in buckets of
  /// bucket_mb MiB during the backward (dist::DataParallel), metrics and evaluation are reduced over the ranks.
  bool data_parallel = false;
  /// Graph mode: each step (loss, gradients, the optimizer's update) runs as one jitted graph, with the results of
  /// the eager step (bit-identical). Not with data_parallel (its bucket hooks run in the eager backward).
  bool jit = false;
  double bucket_mb = 25.0;
  /// Mixed precision (bprop/amp.h): "O0" (off), "O1", "O2" or "O3", applied to the model with
  /// amp::auto_mixed_precision in amp_dtype ("bfloat16" or "float16"); the weights stay float32.
  std::string amp = "O0";
  std::string amp_dtype = "bfloat16";
  /// Loss scaling: "auto" (dynamic for float16, none otherwise: bfloat16 has float32's range), "dynamic"
  /// (amp::DynamicLossScaler's defaults), "none", or a number (a static scale).
  std::string loss_scale = "auto";
};

struct EvalResult {
  double loss = 0.0;      // mean cross-entropy
  double accuracy = 0.0;  // fraction in [0, 1]
  int64_t count = 0;
  double seconds = 0.0;
};

/// Reported during an epoch, after each batch.
struct BatchProgress {
  int64_t epoch = 0, epochs = 0;  // epoch counts from 1
  int64_t batch = 0, batches = 0;  // batch counts from 1
  double loss = 0.0;               // mean over the epoch's batches so far
  double accuracy = 0.0;           // over the epoch's images so far
  double images_per_second = 0.0;
  double seconds = 0.0;
};

struct EpochResult {
  int64_t epoch = 0;
  double lr = 0.0;  // the learning rate of this epoch
  double train_loss = 0.0;
  double train_accuracy = 0.0;
  double seconds = 0.0;  // training time of the epoch, evaluation excluded
  double images_per_second = 0.0;
  /// With loss scaling: the steps skipped for non-finite gradients, and the scale at the end of the epoch.
  int64_t skipped_steps = 0;
  double loss_scale = 0.0;
  EvalResult test;
};

/// Accuracy and mean loss of `model` (in eval mode, no gradients) on every image of `ds`. With `distributed`,
/// each rank of bprop::dist evaluates a contiguous part and the sums are reduced: every rank gets the result.
EvalResult evaluate(Cell& model, const data::Dataset& ds, const Normalization& norm, int64_t batch_size = 256,
                    bool distributed = false);

/// Trains a model built by make_model with seeded shuffling: opts.epochs passes over `train`, evaluating on
/// `test` after each. on_batch (when set) is called after every batch, on_epoch after every evaluation.
/// ValueError for options out of range (epochs, batch size, learning rate, optimizer or schedule name) or an
/// empty set.
class Trainer {
 public:
  Trainer(std::shared_ptr<Cell> model, TrainOptions opts, Normalization norm);

  std::vector<EpochResult> fit(const data::Dataset& train, const data::Dataset& test,
                               const std::function<void(const BatchProgress&)>& on_batch = {},
                               const std::function<void(const EpochResult&)>& on_epoch = {});
  /// One pass over `train` (epoch counts from 1; it seeds the shuffle and sets the scheduled learning rate),
  /// without evaluation.
  EpochResult train_epoch(const data::Dataset& train, int64_t epoch,
                          const std::function<void(const BatchProgress&)>& on_batch = {});

  const TrainOptions& options() const { return opts_; }
  const Normalization& normalization() const { return norm_; }
  Cell& model() { return *model_; }
  /// The data-parallel wrapper (null unless opts.data_parallel).
  dist::DataParallel* data_parallel() { return dp_.get(); }
  /// The loss scaler (null without loss scaling).
  const std::shared_ptr<amp::LossScaler>& loss_scaler() const { return scaler_; }
  /// Restores the loss scaler's state saved in a checkpoint's metadata (training_metadata: "loss_scale" and, for
  /// a dynamic scaler, "loss_scale_finite_steps"), so that a resumed float16 run goes on from the scale it
  /// reached. Nothing without a loss scaler or when the checkpoint has no scale (a run without one); ValueError
  /// naming `source` for a value that is not a valid state.
  void restore_loss_scaler(const CheckpointMetadata& meta, const std::string& source);
  /// Goes on from a checkpoint this trainer's save() wrote (weights already loaded into the model, before the
  /// trainer wraps it): restores the optimizer state and the loss scaler, and makes fit() start at the epoch after
  /// the checkpoint's "epochs", so that k epochs, a resume and opts.epochs - k more train exactly as opts.epochs in
  /// one run with the same options (the shuffle and the learning rate are functions of the epoch). ValueError
  /// naming `source` when the checkpoint has no optimizer state, was trained with another optimizer, or already
  /// holds opts.epochs epochs.
  void resume(const Checkpoint& checkpoint, const std::string& source);
  /// The epoch fit() starts at: 1, or the one after a resumed checkpoint's.
  int64_t first_epoch() const { return first_epoch_; }
  /// Everything save() writes: the model's parameters, then the optimizer state (kOptimizerStatePrefix).
  NamedTensors checkpoint_tensors() const;
  /// Writes the checkpoint of the run so far: checkpoint_tensors() with training_metadata(history).
  void save(const std::string& path, int64_t train_images, const std::vector<EpochResult>& history) const;
  /// Rank 0's weights (and loss scale) to every rank (after loading a checkpoint); nothing in one process.
  void sync_parameters() {
    if (dp_) dp_->broadcast_parameters();
  }

 private:
  std::shared_ptr<Cell> model_;
  TrainOptions opts_;
  Normalization norm_;
  std::shared_ptr<Cell> loss_fn_;
  std::shared_ptr<Cell> network_;  // (images, labels) -> (loss, logits)
  std::shared_ptr<optim::Optimizer> optimizer_;
  std::unique_ptr<optim::LRScheduler> schedule_;  // null for "constant"
  std::unique_ptr<dist::DataParallel> dp_;
  std::shared_ptr<amp::LossScaler> scaler_;
  /// One step on network_: nn::TrainOneStepCell ((loss, logits) after the update), or with a loss scaler
  /// nn::TrainOneStepWithLossScaleCell ((loss, overflow, scale, logits)).
  std::shared_ptr<Cell> train_step_;
  int64_t first_epoch_ = 1;
};

/// Checkpoint metadata for a trained model: "model", "epochs" (the last epoch of `history`), "test_accuracy", "test_loss",
/// "input_mean", "input_std", "optimizer", "lr", "schedule", "batch_size", "seed", "train_images", "format"; with
/// mixed precision also "amp" and "amp_dtype", and with a loss scaler its state (amp::LossScaler::state()).
CheckpointMetadata training_metadata(const TrainOptions& opts, const Normalization& norm, int64_t train_images,
                                     const std::vector<EpochResult>& history,
                                     const amp::LossScaler* scaler = nullptr);

/// The normalisation a checkpoint was trained with ("input_mean" / "input_std"; [0, 1] scaling when absent).
/// ValueError naming `source` when the values do not parse.
Normalization normalization_from_metadata(const CheckpointMetadata& meta, const std::string& source);

}  // namespace bprop::models
