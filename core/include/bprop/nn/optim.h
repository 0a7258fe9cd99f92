// Optimizers over a list of Parameters (usually cell.trainable_params()) with PyTorch's update rules, and
// learning-rate schedules. Updates write the parameters' data in place, outside autodiff; the optimizer state
// has the parameters' dtype and the arithmetic runs in float64. An update is a composition of ops (the optimizer
// ops of core/ops/optim_ops.cpp) and Parameter::assign, so a jitted training step traces it too.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bprop/grad.h"

namespace bprop::optim {

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  /// One update from one gradient per parameter (same order and shapes). Parameters whose requires_grad is
  /// false are left alone. ShapeError / ValueError on a count or shape mismatch, before anything is written.
  void step(const std::vector<Tensor>& grads);
  /// step() when `apply_if` (a 0-d bool tensor) is true; otherwise nothing changes, the step counts included
  /// (mixed precision's skipped step after an overflow). Eagerly the flag is read on the host and a false one skips
  /// the work; under jit every write becomes a select on it, so the graph reads nothing back. Both give the same bits.
  void step(const std::vector<Tensor>& grads, const Tensor& apply_if);
  /// step() with the gradient tuple grad / value_and_grad return for weights=parameters().
  void apply_gradients(const Value& grads) { step(grads.flatten()); }
  /// MindSpore's optimizer(grads).
  void operator()(const std::vector<Tensor>& grads) { step(grads); }

  const std::vector<Parameter>& parameters() const { return params_; }
  double learning_rate() const { return lr_; }
  void set_learning_rate(double lr);
  /// step() calls so far.
  int64_t step_count() const;
  /// Updates parameter i received (steps where its requires_grad was false do not count).
  int64_t update_count(size_t i) const;
  /// "SGD", "Adam", ...
  const std::string& name() const { return name_; }
  /// Turns weight decay off for the parameters `excluded` picks (PyTorch's two parameter groups of the usual
  /// recipe: nanoGPT and Hugging Face decay matrices and embeddings, not biases and norm weights). Repeated calls
  /// add to the excluded set.
  void exclude_from_weight_decay(const std::function<bool(const Parameter&)>& excluded);
  /// The usual exclusion: parameters of fewer than 2 dimensions (biases, LayerNorm/BatchNorm weights).
  static bool is_bias_or_norm(const Parameter& p) { return p.dim() < 2; }
  /// The weight decay parameter i gets.
  double weight_decay(size_t i) const;
  /// The state tensors (momentum buffers, moments) of parameter i by name, for inspection and checkpoints.
  /// ValueError when i is out of range.
  const std::map<std::string, Tensor>& state(size_t i) const;
  /// The names of the state tensors an update keeps per parameter ("exp_avg", "exp_avg_sq", ...).
  virtual std::vector<std::string> state_keys() const = 0;
  /// Everything an exact resume needs, as tensors for a checkpoint: "<prefix>steps" and "<prefix>lr" (0-d float64),
  /// and per parameter i (by position in parameters()) "<prefix><i>.step" and "<prefix><i>.<state key>", for the
  /// state that exists (an optimizer that never stepped has none).
  std::vector<std::pair<std::string, Tensor>> state_dict(const std::string& prefix = "optimizer.") const;
  /// Restores what state_dict saved for an optimizer of the same kind over parameters of the same shapes and
  /// dtypes; tensors not starting with `prefix` are ignored (a checkpoint holds the model's too). ValueError naming
  /// `source` and the tensor for a missing, unknown or mismatched entry, before anything is written.
  void load_state_dict(const std::vector<std::pair<std::string, Tensor>>& state, const std::string& prefix = "optimizer.",
                       const std::string& source = "<state>");

 protected:
  Optimizer(std::string name, std::vector<Parameter> params, double lr, double weight_decay);
  /// Updates parameter i from its gradient (already in the parameter's dtype and shape).
  virtual void update(size_t i, Parameter& p, const Tensor& grad) = 0;
  /// State tensor `key` of parameter i, created as zeros of the parameter's shape and dtype on first use.
  Tensor& state_tensor(size_t i, const std::string& key, bool* created = nullptr);
  /// Writes `value` into `target` (a parameter or a state tensor). Every write of an update goes through here, so a
  /// gated step can turn it into a select.
  void commit(const Tensor& target, const Tensor& value);

 private:
  /// The gradients validated (ShapeError / ValueError before anything is written), in the parameters' dtypes.
  std::vector<Tensor> checked_gradients(const std::vector<Tensor>& grads) const;
  /// One update from checked gradients.
  void apply(const std::vector<Tensor>& gs);

 protected:

  std::string name_;
  std::vector<Parameter> params_;
  double lr_;
  double weight_decay_;
  std::vector<bool> no_decay_;  // per parameter: excluded from weight decay
  // Live state, as 0-d float64 tensors that the update ops read (so that a jitted step reads the current values and
  // advances them): the learning rate, the steps taken, and per parameter the updates it had (Adam's t).
  Parameter lr_t_;
  Parameter steps_t_;
  std::vector<Parameter> updates_t_;
  std::vector<std::map<std::string, Tensor>> state_;  // Parameters (requires_grad false), updated with assign
  Tensor gate_;  // during a traced gated step: the apply_if flag
};

/// PyTorch's SGD: g += weight_decay * p; with momentum, buf = g on the first step, then
/// buf = momentum * buf + (1 - dampening) * g, and g = g + momentum * buf (nesterov) or buf; p -= lr * g.
class SGD : public Optimizer {
 public:
  SGD(std::vector<Parameter> params, double lr = 1e-3, double momentum = 0.0, double dampening = 0.0,
      bool nesterov = false, double weight_decay = 0.0);

 protected:
  SGD(std::string name, std::vector<Parameter> params, double lr, double momentum, double dampening, bool nesterov,
      double weight_decay);
  void update(size_t i, Parameter& p, const Tensor& grad) override;
  std::vector<std::string> state_keys() const override;

 private:
  double momentum_, dampening_;
  bool nesterov_;
};

/// MindSpore's Momentum: accum = momentum * accum + g; p -= lr * accum (or lr * (g + momentum * accum) with
/// use_nesterov); weight_decay adds weight_decay * p to g. The same numbers as SGD without dampening.
class Momentum : public SGD {
 public:
  Momentum(std::vector<Parameter> params, double learning_rate, double momentum, double weight_decay = 0.0,
           bool use_nesterov = false);
};

/// PyTorch's Adam (weight_decay as an L2 term added to the gradient) and, with decoupled, AdamW.
class Adam : public Optimizer {
 public:
  Adam(std::vector<Parameter> params, double lr = 1e-3, std::pair<double, double> betas = {0.9, 0.999},
       double eps = 1e-8, double weight_decay = 0.0, bool amsgrad = false);

 protected:
  Adam(std::string name, std::vector<Parameter> params, double lr, std::pair<double, double> betas, double eps,
       double weight_decay, bool amsgrad, bool decoupled);
  void update(size_t i, Parameter& p, const Tensor& grad) override;
  std::vector<std::string> state_keys() const override;

 private:
  double beta1_, beta2_, eps_;
  bool amsgrad_, decoupled_;
};

/// PyTorch's AdamW: p *= 1 - lr * weight_decay, then the Adam step without the L2 term.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Parameter> params, double lr = 1e-3, std::pair<double, double> betas = {0.9, 0.999},
        double eps = 1e-8, double weight_decay = 1e-2, bool amsgrad = false);
};

// ---- learning-rate schedules ------------------------------------------------------------------------

/// Sets the optimizer's learning rate from the epoch count (PyTorch's LRScheduler, closed forms). The
/// optimizer must outlive the schedule. Construction sets the rate for epoch 0.
class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  /// Advances one epoch and sets the optimizer's learning rate.
  void step();
  /// The rate set last.
  double get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return epoch_; }
  double base_lr() const { return base_lr_; }
  /// The rate at `epoch`.
  virtual double lr_at(int64_t epoch) const = 0;
  /// Jumps to `epoch` (a resumed run: the epochs or steps already taken) and sets its rate. ValueError if negative.
  void set_last_epoch(int64_t epoch);

 protected:
  explicit LRScheduler(Optimizer& optimizer);
  void apply();
  Optimizer& opt_;
  double base_lr_;
  int64_t epoch_ = 0;
  double last_lr_;
};

/// lr = base_lr * gamma^(floor(epoch / step_size)).
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);
  double lr_at(int64_t epoch) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

/// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0.0);
  double lr_at(int64_t epoch) const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

/// Linear warmup then cosine decay, per optimizer step (nanoGPT's get_lr): lr = base_lr (t + 1) / (warmup + 1)
/// for t < warmup; then eta_min + (base_lr - eta_min) (1 + cos(pi (t - warmup) / (total - warmup))) / 2 up to
/// `total` steps; eta_min after.
class WarmupCosineLR : public LRScheduler {
 public:
  WarmupCosineLR(Optimizer& optimizer, int64_t warmup_steps, int64_t total_steps, double eta_min = 0.0);
  double lr_at(int64_t step) const override;

 private:
  int64_t warmup_, total_;
  double eta_min_;
};

// ---- gradient clipping ------------------------------------------------------------------------------

/// MindSpore's ops.clip_by_global_norm: every gradient times clip_norm / max(global_norm, clip_norm), where
/// global_norm = sqrt(sum of every element squared) over all of them (accumulated in float32 at least), so the
/// clipped set has a global norm of at most clip_norm. Written with ops: a jitted step traces it and reads nothing
/// back. PyTorch's clip_grad_norm_ scales by min(1, max_norm / (norm + 1e-6)) instead: the same but for that 1e-6.
/// `global_norm`, when given, receives the norm before clipping (what clip_grad_norm_ returns). Undefined
/// gradients stay undefined. ValueError unless clip_norm > 0.
std::vector<Tensor> clip_by_global_norm(const std::vector<Tensor>& grads, double clip_norm = 1.0,
                                        Tensor* global_norm = nullptr);

}  // namespace bprop::optim
