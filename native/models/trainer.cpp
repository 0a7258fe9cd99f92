#include "models/trainer.h"

#include <map>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <numeric>

#include "bprop/dist.h"
#include "bprop/dist/sampler.h"
#include "bprop/errors.h"
#include "bprop/grad.h"
#include "bprop/jit.h"
#include "bprop/nn/losses.h"
#include "bprop/nn/train.h"
#include "bprop/ops.h"
#include "util/whole_number.h"

namespace bprop::models {

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names{"adam", "sgd"};
  return names;
}

const std::vector<std::string>& schedule_names() {
  static const std::vector<std::string> names{"cosine", "constant"};
  return names;
}

const std::vector<std::string>& amp_level_names() {
  static const std::vector<std::string> names{"O0", "O1", "O2", "O3"};
  return names;
}

const std::vector<std::string>& amp_dtype_names() {
  static const std::vector<std::string> names{"bfloat16", "float16"};
  return names;
}
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Correct predictions among (n, classes) float32 logits (read on the host: a copy when they live on a device).
int64_t count_correct(const Tensor& logits, const Tensor& labels) {
  const Tensor lg = convert(logits.cpu(), DType::Float32);
  const Tensor host_labels = labels.cpu();
  const int64_t n = lg.shape()[0];
  const int64_t c = lg.shape()[1];
  const float* p = lg.data<float>();
  const int32_t* y = host_labels.data<int32_t>();
  int64_t correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = p + i * c;
    const int64_t best = std::max_element(row, row + c) - row;
    if (best == y[i]) ++correct;
  }
  return correct;
}

std::string format_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// The network a training step differentiates: (images, labels) -> (cross-entropy loss, logits); the logits are
// the step's auxiliary output (for the accuracy).
class LossAndLogits : public Cell {
 public:
  LossAndLogits(std::shared_ptr<Cell> model, std::shared_ptr<Cell> loss_fn)
      : model_(register_cell("model", std::move(model))), loss_fn_(register_cell("loss_fn", std::move(loss_fn))) {}
  Value construct(const std::vector<Tensor>& in) override {
    const Tensor logits = (*model_)(in[0]);
    return Value{(*loss_fn_)(logits, in[1]), logits};
  }

 private:
  std::shared_ptr<Cell> model_, loss_fn_;
};

// The loss scaler `spec` names (TrainOptions::loss_scale); "auto" scales dynamically when `float16` (its range ends
// at 65504 and small gradients flush to zero), not at all otherwise.
std::shared_ptr<amp::LossScaler> make_loss_scaler(const std::string& spec, bool float16) {
  if (spec == "none" || (spec == "auto" && !float16)) return nullptr;
  if (spec == "dynamic" || spec == "auto") return std::make_shared<amp::DynamicLossScaler>();
  size_t used = 0;
  double scale = 0.0;
  try {
    scale = std::stod(spec, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != spec.size() || !(scale >= 1.0) || !std::isfinite(scale)) {
    throw ValueError("the loss scale must be auto, dynamic, none or a number >= 1, got '" + spec + "'");
  }
  return std::make_shared<amp::StaticLossScaler>(scale);
}

void check_dataset(const data::Dataset& ds, const char* what) {
  if (ds.count <= 0) throw ValueError(std::string("the ") + what + " set holds no images");
}

}  // namespace

Normalization compute_normalization(const data::Dataset& ds) {
  if (ds.images.empty()) return {};
  double sum = 0.0, sq = 0.0;
  for (uint8_t v : ds.images) {
    const double x = v / 255.0;
    sum += x;
    sq += x * x;
  }
  const double n = static_cast<double>(ds.images.size());
  const double mean = sum / n;
  const double var = std::max(0.0, sq / n - mean * mean);
  const double std = std::sqrt(var);
  return {mean, std > 1e-12 ? std : 1.0};
}

Tensor make_image_batch(const data::Dataset& ds, const std::vector<int64_t>& indices, const Normalization& norm) {
  const int64_t n = static_cast<int64_t>(indices.size());
  const int64_t size = ds.image_size();
  Tensor x = Tensor::empty({n, 1, ds.rows, ds.cols}, DType::Float32);
  float* dst = x.data<float>();
  // A lookup table: one multiply-add per pixel value, computed once per batch.
  float table[256];
  for (int v = 0; v < 256; ++v) table[v] = static_cast<float>((v / 255.0 - norm.mean) / norm.std);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = indices[static_cast<size_t>(i)];
    if (k < 0 || k >= ds.count) throw ValueError("image index " + std::to_string(k) + " out of range");
    const uint8_t* src = ds.images.data() + k * size;
    for (int64_t j = 0; j < size; ++j) dst[i * size + j] = table[src[j]];
  }
  return x;
}

Tensor make_label_batch(const data::Dataset& ds, const std::vector<int64_t>& indices) {
  Tensor y = Tensor::empty({static_cast<int64_t>(indices.size())}, DType::Int32);
  int32_t* dst = y.data<int32_t>();
  for (size_t i = 0; i < indices.size(); ++i) {
    const int64_t k = indices[i];
    if (k < 0 || k >= ds.count) throw ValueError("label index " + std::to_string(k) + " out of range");
    dst[i] = ds.labels[static_cast<size_t>(k)];
  }
  return y;
}

EvalResult evaluate(Cell& model, const data::Dataset& ds, const Normalization& norm, int64_t batch_size,
                    bool distributed) {
  check_dataset(ds, "evaluation");
  if (batch_size <= 0) throw ValueError("the batch size must be positive, got " + std::to_string(batch_size));
  const auto t0 = Clock::now();
  int64_t begin = 0, end = ds.count;
  if (distributed) {
    begin = ds.count * dist::rank() / dist::size();
    end = ds.count * (dist::rank() + 1) / dist::size();
  }
  const bool was_training = model.training();
  model.set_train(false);
  nn::CrossEntropyLoss loss_fn(Tensor(), -100, "sum");
  double loss_sum = 0.0;
  int64_t correct = 0;
  std::vector<int64_t> idx;
  try {
    for (int64_t start = begin; start < end; start += batch_size) {
      const int64_t n = std::min(batch_size, end - start);
      idx.resize(static_cast<size_t>(n));
      std::iota(idx.begin(), idx.end(), start);
      const Tensor x = make_image_batch(ds, idx, norm);
      const Tensor y = make_label_batch(ds, idx);
      const Tensor logits = model(x);
      loss_sum += loss_fn(logits, y).item();
      correct += count_correct(logits, y);
    }
  } catch (...) {
    model.set_train(was_training);
    throw;
  }
  model.set_train(was_training);
  if (distributed) {
    const Tensor sums = tensor({loss_sum, static_cast<double>(correct)}, {2}, DType::Float64);
    dist::allreduce({sums}, dist::ReduceOp::Sum);
    loss_sum = sums.data<double>()[0];
    correct = static_cast<int64_t>(sums.data<double>()[1]);
  }
  EvalResult r;
  r.count = ds.count;
  r.loss = loss_sum / static_cast<double>(ds.count);
  r.accuracy = static_cast<double>(correct) / static_cast<double>(ds.count);
  r.seconds = seconds_since(t0);
  return r;
}

Trainer::Trainer(std::shared_ptr<Cell> model, TrainOptions opts, Normalization norm)
    : model_(std::move(model)), opts_(std::move(opts)), norm_(norm) {
  if (!model_) throw ValueError("For 'Trainer', no model was given");
  if (opts_.epochs < 0) throw ValueError("the epoch count must be >= 0, got " + std::to_string(opts_.epochs));
  if (opts_.batch_size <= 0) throw ValueError("the batch size must be positive, got " + std::to_string(opts_.batch_size));
  if (!(opts_.lr > 0.0) || !std::isfinite(opts_.lr)) {
    throw ValueError("the learning rate must be a positive number, got " + format_double(opts_.lr));
  }
  if (!(norm_.std > 0.0) || !std::isfinite(norm_.std) || !std::isfinite(norm_.mean)) {
    throw ValueError("the input normalisation needs a finite mean and a positive std");
  }
  loss_fn_ = std::make_shared<nn::CrossEntropyLoss>();
  const std::vector<Parameter> params = model_->trainable_params();
  if (opts_.optimizer == "adam") {
    optimizer_ = std::make_shared<optim::Adam>(params, opts_.lr);
  } else if (opts_.optimizer == "sgd") {
    if (opts_.momentum < 0.0 || opts_.momentum >= 1.0) {
      throw ValueError("the SGD momentum must be in [0, 1), got " + format_double(opts_.momentum));
    }
    optimizer_ = std::make_shared<optim::SGD>(params, opts_.lr, opts_.momentum);
  } else {
    throw ValueError("unknown optimizer '" + opts_.optimizer + "' (known optimizers: 'adam', 'sgd')");
  }
  if (opts_.schedule == "cosine") {
    schedule_ = std::make_unique<optim::CosineAnnealingLR>(*optimizer_, std::max<int64_t>(1, opts_.epochs));
  } else if (opts_.schedule != "constant") {
    throw ValueError("unknown learning-rate schedule '" + opts_.schedule + "' (known: 'cosine', 'constant')");
  }
  const amp::Level level = amp::parse_level(opts_.amp);
  const DType half = parse_dtype(opts_.amp_dtype);
  if (level != amp::Level::O0) amp::auto_mixed_precision(model_, level, half);
  scaler_ = make_loss_scaler(opts_.loss_scale, level != amp::Level::O0 && half == DType::Float16);
  network_ = std::make_shared<LossAndLogits>(model_, loss_fn_);
  if (scaler_) {
    train_step_ = std::make_shared<nn::TrainOneStepWithLossScaleCell>(network_, optimizer_, scaler_, /*has_aux=*/true);
  } else {
    train_step_ = std::make_shared<nn::TrainOneStepCell>(network_, optimizer_, /*has_aux=*/true);
  }
  if (opts_.data_parallel) {
    dp_ = std::make_unique<dist::DataParallel>(model_, optimizer_, dist::DataParallelOptions{opts_.bucket_mb});
    dp_->set_loss_scaler(scaler_);
  }
}

void Trainer::restore_loss_scaler(const CheckpointMetadata& meta, const std::string& source) {
  if (!scaler_ || !meta.count("loss_scale")) return;
  std::map<std::string, double> state;
  for (const auto& [key, unused] : scaler_->state()) {
    const auto it = meta.find(key);
    if (it == meta.end()) {
      throw ValueError("checkpoint '" + source + "': metadata has loss_scale but no " + key +
                       " (saved with another loss scaler?)");
    }
    try {
      size_t used = 0;
      state[key] = std::stod(it->second, &used);
      if (used != it->second.size()) throw std::invalid_argument(key);
    } catch (const std::exception&) {
      throw ValueError("checkpoint '" + source + "': metadata " + key + " = '" + it->second + "' is not a number");
    }
  }
  try {
    scaler_->load_state(state);
  } catch (const ValueError& e) {
    throw ValueError("checkpoint '" + source + "': " + e.what());
  }
}

void Trainer::resume(const Checkpoint& checkpoint, const std::string& source) {
  const CheckpointMetadata& meta = checkpoint.metadata;
  const auto optimizer = meta.find("optimizer");
  if (optimizer != meta.end() && optimizer->second != opts_.optimizer) {
    throw ValueError("checkpoint '" + source + "' was trained with --optimizer " + optimizer->second +
                     ", not " + opts_.optimizer + " (its optimizer state cannot go on in another optimizer)");
  }
  if (!checkpoint.find(std::string(kOptimizerStatePrefix) + "steps")) {
    throw ValueError("checkpoint '" + source + "' holds no optimizer state (" + kOptimizerStatePrefix +
                     "*), so training cannot go on from it exactly; it was not written by bprop train");
  }
  const auto epochs = meta.find("epochs");
  const std::optional<int64_t> read = epochs == meta.end() ? std::nullopt : whole_number(epochs->second);
  if (!read || *read < 0) {
    throw ValueError("checkpoint '" + source + "': metadata 'epochs' = '" +
                     (epochs == meta.end() ? std::string("(none)") : epochs->second) + "' is not an epoch count");
  }
  const int64_t done = *read;
  if (done >= opts_.epochs) {
    throw ValueError("checkpoint '" + source + "' has trained " + std::to_string(done) + " epochs already, and this run has " +
                     std::to_string(opts_.epochs) + " in all (--epochs counts from the first epoch; ask for more)");
  }
  optimizer_->load_state_dict(checkpoint.tensors, kOptimizerStatePrefix, source);
  restore_loss_scaler(meta, source);
  first_epoch_ = done + 1;
}

NamedTensors Trainer::checkpoint_tensors() const {
  NamedTensors tensors;
  for (const auto& [name, p] : model_->parameters_and_names()) tensors.emplace_back(name, p.detach());
  for (auto& entry : optimizer_->state_dict(kOptimizerStatePrefix)) tensors.push_back(std::move(entry));
  return tensors;
}

void Trainer::save(const std::string& path, int64_t train_images, const std::vector<EpochResult>& history) const {
  save_checkpoint(checkpoint_tensors(), path, training_metadata(opts_, norm_, train_images, history, scaler_.get()));
}

EpochResult Trainer::train_epoch(const data::Dataset& train, int64_t epoch,
                                 const std::function<void(const BatchProgress&)>& on_batch) {
  check_dataset(train, "training");
  if (epoch < 1) throw ValueError("epochs count from 1, got " + std::to_string(epoch));
  model_->set_train(true);
  if (schedule_) optimizer_->set_learning_rate(schedule_->lr_at(epoch - 1));
  // A seeded shuffle, different for every epoch; the same on every rank in data-parallel training, where each
  // rank takes its slice of every global batch of it.
  const int rank = dp_ ? dp_->rank() : 0, world = dp_ ? dp_->world() : 1;
  dist::DistributedSampler sampler(train.count, opts_.batch_size, rank, world, opts_.seed);
  sampler.set_epoch(epoch);

  Cell& network = *network_;
  const Fn step_fn = [&network](const std::vector<Tensor>& in) { return network(in); };  // (data parallel's step)
  // One step: (loss, logits[, overflow]) after the update; with --jit one graph per batch shape (the last batch may
  // differ).
  Cell& train_step = *train_step_;
  const amp::LossScaler* scaler = scaler_.get();
  const Fn one_step = [&train_step, scaler](const std::vector<Tensor>& in) -> Value {
    const Value r = train_step(in);
    return scaler ? Value{r[0], r[3], r[1]} : r;
  };
  const Fn run_step = opts_.jit && !dp_ ? Fn(jit(one_step)) : one_step;

  const int64_t batches = sampler.batches();
  const auto t0 = Clock::now();
  double loss_sum = 0.0;
  int64_t correct = 0, seen = 0, counted = 0, processed = 0, skipped = 0;
  std::vector<int64_t> idx;
  BatchProgress progress;
  progress.epoch = epoch;
  progress.epochs = opts_.epochs;
  progress.batches = batches;
  auto count = [&](double loss, int64_t batch_correct, int64_t images, int64_t b) {
    // A step skipped by the loss scaler (a half forward overflowed, or the scaled backward did) counts no loss: the
    // scaler lowers the scale and training goes on. Only loss scaling skips steps; without it an overflow is fatal.
    if (scaler && !std::isfinite(loss)) {
      seen += images;
      return;
    }
    if (!std::isfinite(loss)) {
      throw ValueError("training diverged: the loss became " + format_double(loss) + " at epoch " +
                       std::to_string(epoch) + ", batch " + std::to_string(b + 1) + " (try a smaller --lr)");
    }
    loss_sum += loss;
    correct += batch_correct;
    seen += images;
    ++counted;
  };
  // Data parallel: each batch's loss (each rank's weighted by its share) and correct count are summed over the
  // ranks by an allreduce left to run in the background (waiting for it would add a meeting of the ranks to every
  // step); the running figures count the batches whose sums have arrived, all of them by the last batch.
  struct Pending {
    Tensor sums;
    int64_t batch, images;
    std::unique_ptr<dist::Work> work;
  };
  std::deque<Pending> pending;
  auto harvest = [&](bool wait) {
    while (!pending.empty()) {
      Pending& p = pending.front();
      if (wait) p.work->wait();
      else if (!p.work->test()) break;
      count(p.sums.data<double>()[0], static_cast<int64_t>(p.sums.data<double>()[1]), p.images, p.batch);
      pending.pop_front();
    }
  };
  for (int64_t b = 0; b < batches; ++b) {
    idx = sampler.local_indices(b);
    const int64_t global_n = sampler.global_count(b);
    const int64_t n = static_cast<int64_t>(idx.size());
    if (dp_) {
      double loss = 0.0;
      int64_t batch_correct = 0;
      if (n > 0) {
        const Tensor x = make_image_batch(train, idx, norm_);
        const Tensor y = make_label_batch(train, idx);
        const Value r = dp_->step(step_fn, {x, y}, n, global_n);
        if (dp_->last_step_overflowed()) ++skipped;
        loss = r[0].tensor().item() * static_cast<double>(n) / static_cast<double>(global_n);
        batch_correct = count_correct(r[1].tensor(), y);
      } else {
        dp_->step(step_fn, {}, 0, global_n);
        if (dp_->last_step_overflowed()) ++skipped;
      }
      Pending p{tensor({loss, static_cast<double>(batch_correct)}, {2}, DType::Float64), b, global_n, nullptr};
      p.work = dist::allreduce_async(p.sums.raw_data(), 2, DType::Float64, dist::ReduceOp::Sum);
      pending.push_back(std::move(p));
      harvest(/*wait=*/b == 0 || b + 1 == batches);  // the first and last progress lines are exact
    } else {
      const Tensor x = make_image_batch(train, idx, norm_);
      const Tensor y = make_label_batch(train, idx);
      const Value r = run_step({x, y});
      if (scaler && r[2].tensor().item() != 0.0) ++skipped;
      count(r[0].tensor().item(), count_correct(r[1].tensor(), y), n, b);
    }
    processed += global_n;
    if (on_batch) {
      progress.batch = b + 1;
      progress.loss = counted > 0 ? loss_sum / static_cast<double>(counted) : 0.0;
      progress.accuracy = seen > 0 ? static_cast<double>(correct) / static_cast<double>(seen) : 0.0;
      progress.seconds = seconds_since(t0);
      progress.images_per_second = progress.seconds > 0 ? static_cast<double>(processed) / progress.seconds : 0.0;
      on_batch(progress);
    }
  }
  harvest(/*wait=*/true);
  EpochResult r;
  r.epoch = epoch;
  r.lr = optimizer_->learning_rate();
  r.seconds = seconds_since(t0);
  r.train_loss = counted > 0 ? loss_sum / static_cast<double>(counted) : std::nan("");
  r.skipped_steps = skipped;
  r.loss_scale = scaler_ ? scaler_->current_scale() : 0.0;
  r.train_accuracy = static_cast<double>(correct) / static_cast<double>(seen);
  r.images_per_second = r.seconds > 0 ? static_cast<double>(seen) / r.seconds : 0.0;
  return r;
}

std::vector<EpochResult> Trainer::fit(const data::Dataset& train, const data::Dataset& test,
                                      const std::function<void(const BatchProgress&)>& on_batch,
                                      const std::function<void(const EpochResult&)>& on_epoch) {
  check_dataset(train, "training");
  check_dataset(test, "test");
  if (train.rows != test.rows || train.cols != test.cols) {
    throw ValueError("the training images are " + std::to_string(train.rows) + " x " + std::to_string(train.cols) +
                     " but the test images are " + std::to_string(test.rows) + " x " + std::to_string(test.cols));
  }
  std::vector<EpochResult> history;
  for (int64_t e = first_epoch_; e <= opts_.epochs; ++e) {
    EpochResult r = train_epoch(train, e, on_batch);
    r.test = evaluate(*model_, test, norm_, 256, dp_ != nullptr);
    history.push_back(r);
    if (on_epoch) on_epoch(r);
  }
  return history;
}

CheckpointMetadata training_metadata(const TrainOptions& opts, const Normalization& norm, int64_t train_images,
                                     const std::vector<EpochResult>& history, const amp::LossScaler* scaler) {
  CheckpointMetadata m;
  m["format"] = "bprop-classifier/1";
  m["model"] = opts.model;
  m["epochs"] = std::to_string(history.empty() ? 0 : history.back().epoch);
  m["optimizer"] = opts.optimizer;
  m["lr"] = format_double(opts.lr);
  m["schedule"] = opts.schedule;
  m["batch_size"] = std::to_string(opts.batch_size);
  m["seed"] = std::to_string(opts.seed);
  m["train_images"] = std::to_string(train_images);
  if (opts.amp != "O0") {
    m["amp"] = opts.amp;
    m["amp_dtype"] = opts.amp_dtype;
  }
  if (scaler) {
    for (const auto& [key, value] : scaler->state()) m[key] = format_double(value);
  }
  m["input_mean"] = format_double(norm.mean);
  m["input_std"] = format_double(norm.std);
  if (!history.empty()) {
    m["test_accuracy"] = format_double(history.back().test.accuracy);
    m["test_loss"] = format_double(history.back().test.loss);
  }
  return m;
}

Normalization normalization_from_metadata(const CheckpointMetadata& meta, const std::string& source) {
  Normalization norm;
  auto parse = [&](const char* key, double& out) {
    const auto it = meta.find(key);
    if (it == meta.end()) return;
    try {
      size_t used = 0;
      out = std::stod(it->second, &used);
      if (used != it->second.size()) throw std::invalid_argument("trailing characters");
    } catch (const std::exception&) {
      throw ValueError("checkpoint '" + source + "': metadata " + key + " = '" + it->second + "' is not a number");
    }
  };
  parse("input_mean", norm.mean);
  parse("input_std", norm.std);
  if (!(norm.std > 0.0) || !std::isfinite(norm.std) || !std::isfinite(norm.mean)) {
    throw ValueError("checkpoint '" + source + "': metadata input_mean / input_std must be finite with a positive std");
  }
  return norm;
}

}  // namespace bprop::models
