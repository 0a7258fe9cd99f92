#include "models/gpt_trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

#include "bprop/dist.h"
#include "bprop/errors.h"
#include "bprop/grad.h"
#include "bprop/jit.h"
#include "bprop/nn/train.h"
#include "bprop/ops.h"
#include "bprop/random.h"
#include "util/whole_number.h"

namespace bprop::models {

namespace {

using Clock = std::chrono::steady_clock;

std::string exact(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

const char* kFormat = "bprop-gpt/1";

int64_t meta_int(const CheckpointMetadata& meta, const std::string& key, const std::string& source) {
  const auto it = meta.find(key);
  if (it == meta.end()) throw ValueError("'" + source + "' is not a GPT checkpoint: its metadata has no '" + key + "'");
  const std::optional<int64_t> v = whole_number(it->second);
  if (!v) throw ValueError("'" + source + "': metadata '" + key + "' must be an integer, got '" + it->second + "'");
  return *v;
}

}  // namespace

uint64_t batch_seed(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::pair<Tensor, Tensor> text_batch(const std::vector<int32_t>& tokens, int64_t context, uint64_t seed_of_batch,
                                     int64_t first, int64_t n, int64_t batch_size) {
  const auto count = static_cast<int64_t>(tokens.size());
  if (count <= context) {
    throw ValueError("the text holds " + std::to_string(count) + " tokens: too few for windows of context " +
                     std::to_string(context) + " + 1");
  }
  std::vector<int32_t> x(static_cast<size_t>(n * context)), y(x.size());
  Random rng(seed_of_batch);
  const auto starts = static_cast<uint64_t>(count - context);
  for (int64_t b = 0; b < first + n && b < batch_size; ++b) {
    const auto start = static_cast<int64_t>(rng.next_u64() % starts);
    if (b < first) continue;
    const size_t row = static_cast<size_t>((b - first) * context);
    for (int64_t t = 0; t < context; ++t) {
      x[row + static_cast<size_t>(t)] = tokens[static_cast<size_t>(start + t)];
      y[row + static_cast<size_t>(t)] = tokens[static_cast<size_t>(start + t + 1)];
    }
  }
  return {tensor_i32(x, {n, context}), tensor_i32(y, {n, context})};
}

GptTrainer::GptTrainer(std::shared_ptr<nn::GPT> model, GptTrainOptions options)
    : model_(std::move(model)), opts_(std::move(options)) {
  auto positive = [](const char* what, int64_t v) {
    if (v < 1) throw ValueError(std::string("GPT training: ") + what + " must be >= 1, got " + std::to_string(v));
  };
  positive("steps", opts_.steps);
  positive("batch_size", opts_.batch_size);
  positive("grad_accum", opts_.grad_accum);
  positive("eval_interval", opts_.eval_interval);
  positive("eval_batches", opts_.eval_batches);
  if (opts_.batch_size % opts_.grad_accum != 0) {
    throw ValueError("GPT training: batch_size " + std::to_string(opts_.batch_size) + " must be a multiple of grad_accum " +
                     std::to_string(opts_.grad_accum));
  }
  if (opts_.data_parallel) {
    rank_ = dist::rank();
    world_ = dist::size();
    if (opts_.jit && world_ > 1) throw ValueError("GPT training: jit and data parallel cannot be combined yet");
  }
  const int64_t micro = opts_.batch_size / opts_.grad_accum;
  if (micro % world_ != 0) {
    throw ValueError("GPT training: the micro-batch (batch_size / grad_accum = " + std::to_string(micro) +
                     ") must split evenly over the " + std::to_string(world_) + " ranks");
  }
  if (!(opts_.lr > 0.0) || !std::isfinite(opts_.lr)) throw ValueError("GPT training: lr must be positive");
  if (!(opts_.clip >= 0.0)) throw ValueError("GPT training: clip must be >= 0");
  if (opts_.min_lr < 0.0) opts_.min_lr = opts_.lr / 10.0;
  optimizer_ = std::make_shared<optim::AdamW>(model_->trainable_params(), opts_.lr,
                                              std::pair{opts_.beta1, opts_.beta2}, 1e-8, opts_.weight_decay);
  optimizer_->exclude_from_weight_decay(optim::Optimizer::is_bias_or_norm);
  schedule_ = std::make_unique<optim::WarmupCosineLR>(*optimizer_, opts_.warmup, opts_.steps, opts_.min_lr);

  const amp::Level level = amp::parse_level(opts_.amp);
  const DType half = parse_dtype(opts_.amp_dtype);
  if (!is_half(half)) {
    throw ValueError("GPT training: amp_dtype must be bfloat16 or float16, got '" + opts_.amp_dtype + "'");
  }
  if (level != amp::Level::O0 && half == DType::Float16) scaler_ = std::make_shared<amp::DynamicLossScaler>();

  nn::GPT* net = model_.get();
  optim::Optimizer* opt = optimizer_.get();
  amp::LossScaler* scaler = scaler_.get();
  // (differentiated output, the float32 loss): the loss times the scale when there is a scaler.
  const GradFn loss_and_grads = value_and_grad(
      [net, level, half, scaler](const std::vector<Tensor>& in) -> Value {
        Tensor loss;
        {
          const amp::AutocastScope autocast(level, half);
          loss = net->loss(in[0], in[1]);
        }
        if (loss.dtype() != DType::Float32) loss = ops::cast(loss, DType::Float32);
        return Value{scaler ? scaler->scale(loss) : loss, loss};
      },
      nullptr, optimizer_->parameters(), /*has_aux=*/true);
  const int64_t accum = opts_.grad_accum;
  const double clip = opts_.clip;
  const int world = world_;
  // inputs: (x, y) per micro-batch -> (mean loss, global gradient norm before clipping, whether the update was
  // skipped); with a loss scaler the gradients are unscaled after the sum over ranks (so every rank decides alike)
  // and the update is a gated step.
  Fn step = [=](const std::vector<Tensor>& in) -> Value {
    Tensor loss;
    std::vector<Tensor> grads;
    for (int64_t m = 0; m < accum; ++m) {
      const Value r = loss_and_grads({in[static_cast<size_t>(2 * m)], in[static_cast<size_t>(2 * m + 1)]});
      const std::vector<Tensor> g = r[1].flatten();
      loss = m == 0 ? r[0][1].tensor() : loss + r[0][1].tensor();
      if (m == 0) {
        grads = g;
      } else {
        for (size_t i = 0; i < grads.size(); ++i) grads[i] = grads[i] + g[i];
      }
    }
    const double scale = 1.0 / static_cast<double>(accum * world);
    for (Tensor& g : grads) g = g * scale;
    if (world > 1) dist::allreduce(grads);
    Tensor finite;
    if (scaler) {
      nn::UnscaledGradients u = nn::unscale_and_check(*scaler, grads);
      grads = std::move(u.grads);
      finite = u.finite;
    }
    Tensor norm = scalar(0.0);
    if (clip > 0.0) grads = optim::clip_by_global_norm(grads, clip, &norm);
    if (!scaler) {
      opt->step(grads);
      return Value{loss * (1.0 / static_cast<double>(accum)), norm, full({}, 0.0, DType::Bool)};
    }
    opt->step(grads, finite);
    scaler->adjust(finite);
    return Value{loss * (1.0 / static_cast<double>(accum)), norm, ops::equal(finite, full({}, 0.0, DType::Bool))};
  };
  step_fn_ = opts_.jit ? Fn(jit(step)) : step;
}

GptStepReport GptTrainer::train_step(const std::vector<int32_t>& tokens) {
  const auto t0 = Clock::now();
  const int64_t micro = opts_.batch_size / opts_.grad_accum, local = micro / world_;
  const int64_t T = model_->config().context;
  const Device device = model_->wte->embedding_table.device();
  std::vector<Tensor> in;
  for (int64_t m = 0; m < opts_.grad_accum; ++m) {
    const uint64_t s = batch_seed(opts_.seed, static_cast<uint64_t>(step_ * opts_.grad_accum + m));
    auto [x, y] = text_batch(tokens, T, s, rank_ * local, local, micro);
    in.push_back(x.to(device));
    in.push_back(y.to(device));
  }
  GptStepReport r;
  r.lr = optimizer_->learning_rate();
  const Value out = step_fn_(in);
  Tensor loss = convert(out[0].tensor().cpu(), DType::Float64);
  if (world_ > 1) {
    dist::allreduce({loss});
    loss = loss * (1.0 / world_);
  }
  r.loss = loss.item();
  r.grad_norm = out[1].tensor().cpu().item();
  r.skipped = out[2].tensor().cpu().item() != 0.0;
  if (scaler_) r.loss_scale = scaler_->current_scale();
  // With loss scaling an overflow skips the step (the scaler lowers the scale and training goes on).
  if (!std::isfinite(r.loss) && !scaler_) {
    throw ValueError("training diverged: the loss became " + exact(r.loss) + " at step " + std::to_string(step_ + 1) +
                     " (try a smaller --lr)");
  }
  ++step_;
  schedule_->step();
  r.step = step_;
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.tokens_per_second = static_cast<double>(opts_.batch_size * T) / std::max(r.seconds, 1e-9);
  return r;
}

GptEval GptTrainer::evaluate(const std::vector<int32_t>& tokens) {
  const int64_t T = model_->config().context;
  const int64_t local = opts_.batch_size / world_;
  const Device device = model_->wte->embedding_table.device();
  const bool was_training = model_->training();
  model_->set_train(false);
  double sum = 0.0;
  try {
    no_grad([&] {
      for (int64_t k = 0; k < opts_.eval_batches; ++k) {
        // The batches of the first `local * world` samples of a fixed stream, distinct from the training one.
        auto [x, y] = text_batch(tokens, T, batch_seed(~opts_.seed, static_cast<uint64_t>(k)), rank_ * local, local,
                                 local * world_);
        sum += convert(model_->loss(x.to(device), y.to(device)).cpu(), DType::Float64).item();
      }
    });
  } catch (...) {
    model_->set_train(was_training);
    throw;
  }
  model_->set_train(was_training);
  if (world_ > 1) {
    Tensor t = scalar(sum, DType::Float64);
    dist::allreduce({t});
    sum = t.item() / world_;
  }
  GptEval e;
  e.loss = sum / static_cast<double>(opts_.eval_batches);
  e.perplexity = std::exp(e.loss);
  return e;
}

void GptTrainer::fit(const data::TextCorpus& corpus, int64_t stop_at,
                     const std::function<void(const GptStepReport&)>& on_step,
                     const std::function<void(int64_t, const GptEval&)>& on_eval) {
  const auto t0 = Clock::now();
  const int64_t last = stop_at > 0 ? std::min(stop_at, opts_.steps) : opts_.steps;
  while (step_ < last) {
    GptStepReport r = train_step(corpus.train);
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (on_step) on_step(r);
    if (step_ % opts_.eval_interval == 0 || step_ == last) {
      const GptEval e = evaluate(corpus.val);
      if (on_eval) on_eval(step_, e);
    }
  }
}

CheckpointMetadata gpt_metadata(const nn::GPTConfig& c, const data::CharVocabulary& vocab) {
  return {{"format", kFormat},
          {"model", "gpt"},
          {"gpt_vocab_size", std::to_string(c.vocab_size)},
          {"gpt_context", std::to_string(c.context)},
          {"gpt_layers", std::to_string(c.layers)},
          {"gpt_heads", std::to_string(c.heads)},
          {"gpt_width", std::to_string(c.width)},
          {"gpt_dropout", exact(c.dropout)},
          {"gpt_tie_weights", c.tie_weights ? "true" : "false"},
          {"vocab", vocab.chars}};
}

nn::GPTConfig gpt_config_from_metadata(const CheckpointMetadata& meta, const std::string& source) {
  const auto f = meta.find("format");
  if (f == meta.end() || f->second != kFormat) {
    throw ValueError("'" + source + "' is not a GPT checkpoint of bprop train --model gpt (format '" +
                     (f == meta.end() ? std::string("(none)") : f->second) + "', expected '" + kFormat + "')");
  }
  nn::GPTConfig c;
  c.vocab_size = meta_int(meta, "gpt_vocab_size", source);
  c.context = meta_int(meta, "gpt_context", source);
  c.layers = meta_int(meta, "gpt_layers", source);
  c.heads = meta_int(meta, "gpt_heads", source);
  c.width = meta_int(meta, "gpt_width", source);
  const auto d = meta.find("gpt_dropout");
  c.dropout = d == meta.end() ? 0.0 : std::stod(d->second);
  const auto t = meta.find("gpt_tie_weights");
  c.tie_weights = t == meta.end() || t->second == "true";
  return c;
}

data::CharVocabulary gpt_vocabulary_from_metadata(const CheckpointMetadata& meta, const std::string& source) {
  const auto v = meta.find("vocab");
  if (v == meta.end()) throw ValueError("'" + source + "' is not a GPT checkpoint: its metadata has no 'vocab'");
  return data::CharVocabulary(v->second);
}

void GptTrainer::save(const std::string& path, const data::CharVocabulary& vocab, const CheckpointMetadata& extra) const {
  NamedTensors tensors;
  for (const auto& [name, p] : model_->parameters_and_names()) tensors.emplace_back(name, p.detach());
  for (auto& entry : optimizer_->state_dict(kOptimizerStatePrefix)) tensors.push_back(std::move(entry));
  CheckpointMetadata meta = gpt_metadata(model_->config(), vocab);
  const GptTrainOptions& o = opts_;
  for (const auto& [k, v] : CheckpointMetadata{{"step", std::to_string(step_)},
                                               {"steps", std::to_string(o.steps)},
                                               {"batch_size", std::to_string(o.batch_size)},
                                               {"grad_accum", std::to_string(o.grad_accum)},
                                               {"lr", exact(o.lr)},
                                               {"min_lr", exact(o.min_lr)},
                                               {"warmup", std::to_string(o.warmup)},
                                               {"weight_decay", exact(o.weight_decay)},
                                               {"beta1", exact(o.beta1)},
                                               {"beta2", exact(o.beta2)},
                                               {"clip", exact(o.clip)},
                                               {"eval_interval", std::to_string(o.eval_interval)},
                                               {"eval_batches", std::to_string(o.eval_batches)},
                                               {"seed", std::to_string(o.seed)},
                                               {"amp", o.amp},
                                               {"amp_dtype", o.amp_dtype}}) {
    meta[k] = v;
  }
  if (scaler_) {
    for (const auto& [k, v] : scaler_->state()) meta[k] = exact(v);
  }
  for (const auto& [k, v] : extra) meta[k] = v;
  save_checkpoint(tensors, path, meta);
}

void GptTrainer::resume(const Checkpoint& checkpoint, const std::string& source) {
  const int64_t step = meta_int(checkpoint.metadata, "step", source);
  if (step < 0 || step > opts_.steps) {
    throw ValueError("'" + source + "' was saved at step " + std::to_string(step) + ", outside this run's " +
                     std::to_string(opts_.steps) + " steps");
  }
  load_param_into_net(*model_, checkpoint, /*strict=*/true, source);
  optimizer_->load_state_dict(checkpoint.tensors, kOptimizerStatePrefix, source);
  if (scaler_) {
    std::map<std::string, double> state;
    for (const auto& [key, unused] : scaler_->state()) {
      const auto it = checkpoint.metadata.find(key);
      if (it == checkpoint.metadata.end()) {
        throw ValueError("'" + source + "' has no loss scaler state '" + key + "' (saved without float16 mixed precision?)");
      }
      try {
        state[key] = std::stod(it->second);
      } catch (const std::exception&) {
        throw ValueError("'" + source + "': metadata " + key + " = '" + it->second + "' is not a number");
      }
    }
    scaler_->load_state(state);
  }
  step_ = step;
  schedule_->set_last_epoch(step);
}

}  // namespace bprop::models
