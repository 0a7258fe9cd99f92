#include "models/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "bprop/errors.h"
#include "bprop/grad.h"
#include "bprop/nn/losses.h"
#include "bprop/random.h"

namespace bprop::models {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Correct predictions among (n, classes) float32 logits.
int64_t count_correct(const Tensor& logits, const Tensor& labels) {
  const Tensor lg = logits.dtype() == DType::Float32 ? logits : convert(logits, DType::Float32);
  const int64_t n = lg.shape()[0];
  const int64_t c = lg.shape()[1];
  const float* p = lg.data<float>();
  const int32_t* y = labels.data<int32_t>();
  int64_t correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = p + i * c;
    const int64_t best = std::max_element(row, row + c) - row;
    if (best == y[i]) ++correct;
  }
  return correct;
}

// A 64-bit mix (SplitMix64's finaliser) so neighbouring seeds and epochs give unrelated shuffles.
uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::string format_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
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

EvalResult evaluate(Cell& model, const data::Dataset& ds, const Normalization& norm, int64_t batch_size) {
  check_dataset(ds, "evaluation");
  if (batch_size <= 0) throw ValueError("the batch size must be positive, got " + std::to_string(batch_size));
  const auto t0 = Clock::now();
  const bool was_training = model.training();
  model.set_train(false);
  nn::CrossEntropyLoss loss_fn(Tensor(), -100, "sum");
  double loss_sum = 0.0;
  int64_t correct = 0;
  std::vector<int64_t> idx;
  try {
    for (int64_t start = 0; start < ds.count; start += batch_size) {
      const int64_t n = std::min(batch_size, ds.count - start);
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
    throw ValueError("unknown optimizer '" + opts_.optimizer + "' (known optimizers: 'sgd', 'adam')");
  }
  if (opts_.schedule == "cosine") {
    schedule_ = std::make_unique<optim::CosineAnnealingLR>(*optimizer_, std::max<int64_t>(1, opts_.epochs));
  } else if (opts_.schedule != "constant") {
    throw ValueError("unknown learning-rate schedule '" + opts_.schedule + "' (known: 'cosine', 'constant')");
  }
}

EpochResult Trainer::train_epoch(const data::Dataset& train, int64_t epoch,
                                 const std::function<void(const BatchProgress&)>& on_batch) {
  check_dataset(train, "training");
  if (epoch < 1) throw ValueError("epochs count from 1, got " + std::to_string(epoch));
  model_->set_train(true);
  if (schedule_) optimizer_->set_learning_rate(schedule_->lr_at(epoch - 1));
  // A seeded Fisher-Yates shuffle, different for every epoch.
  std::vector<int64_t> order(static_cast<size_t>(train.count));
  std::iota(order.begin(), order.end(), 0);
  Random rng(mix(opts_.seed ^ mix(static_cast<uint64_t>(epoch))));
  for (size_t i = order.size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(rng.next_u64() % i);
    std::swap(order[i - 1], order[j]);
  }

  Cell& net = *model_;
  Cell& loss_fn = *loss_fn_;
  const Fn step_fn = [&net, &loss_fn](const std::vector<Tensor>& in) -> Value {
    const Tensor logits = net(in[0]);
    return Value{loss_fn(logits, in[1]), logits};
  };
  const GradFn step = value_and_grad(step_fn, nullptr, optimizer_->parameters(), /*has_aux=*/true);

  const int64_t batches = (train.count + opts_.batch_size - 1) / opts_.batch_size;
  const auto t0 = Clock::now();
  double loss_sum = 0.0;
  int64_t correct = 0, seen = 0;
  std::vector<int64_t> idx;
  BatchProgress progress;
  progress.epoch = epoch;
  progress.epochs = opts_.epochs;
  progress.batches = batches;
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t start = b * opts_.batch_size;
    const int64_t n = std::min(opts_.batch_size, train.count - start);
    idx.assign(order.begin() + start, order.begin() + start + n);
    const Tensor x = make_image_batch(train, idx, norm_);
    const Tensor y = make_label_batch(train, idx);
    const Value r = step({x, y});
    optimizer_->apply_gradients(r[1]);
    const double loss = r[0][0].tensor().item();
    if (!std::isfinite(loss)) {
      throw ValueError("training diverged: the loss became " + format_double(loss) + " at epoch " +
                       std::to_string(epoch) + ", batch " + std::to_string(b + 1) + " (try a smaller --lr)");
    }
    loss_sum += loss;
    correct += count_correct(r[0][1].tensor(), y);
    seen += n;
    if (on_batch) {
      progress.batch = b + 1;
      progress.loss = loss_sum / static_cast<double>(b + 1);
      progress.accuracy = static_cast<double>(correct) / static_cast<double>(seen);
      progress.seconds = seconds_since(t0);
      progress.images_per_second = progress.seconds > 0 ? static_cast<double>(seen) / progress.seconds : 0.0;
      on_batch(progress);
    }
  }
  EpochResult r;
  r.epoch = epoch;
  r.lr = optimizer_->learning_rate();
  r.seconds = seconds_since(t0);
  r.train_loss = loss_sum / static_cast<double>(batches);
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
  for (int64_t e = 1; e <= opts_.epochs; ++e) {
    EpochResult r = train_epoch(train, e, on_batch);
    r.test = evaluate(*model_, test, norm_);
    history.push_back(r);
    if (on_epoch) on_epoch(r);
  }
  return history;
}

CheckpointMetadata training_metadata(const TrainOptions& opts, const Normalization& norm, int64_t train_images,
                                     const std::vector<EpochResult>& history) {
  CheckpointMetadata m;
  m["format"] = "bprop-classifier/1";
  m["model"] = opts.model;
  m["epochs"] = std::to_string(history.size());
  m["optimizer"] = opts.optimizer;
  m["lr"] = format_double(opts.lr);
  m["schedule"] = opts.schedule;
  m["batch_size"] = std::to_string(opts.batch_size);
  m["seed"] = std::to_string(opts.seed);
  m["train_images"] = std::to_string(train_images);
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
