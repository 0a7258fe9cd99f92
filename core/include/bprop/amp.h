// Automatic mixed precision, MindSpore's amp first (auto_mixed_precision with levels O0-O3, loss scalers) and
// PyTorch's autocast as a scope. Parameters stay in their dtype (float32 master weights): the casts to and from the
// half dtype are ops like any other, recorded on the tape and traced by jit, so gradients arrive in the parameters'
// dtype and the optimizers are unchanged. docs/mixed-precision.md gives the lists and the reasons.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bprop/cell.h"

namespace bprop::amp {

/// MindSpore's amp levels. O0: nothing changes. O1: the white list (matmul, conv2d) runs in the half dtype and the
/// black list (batch/layer norm, softmax, log_softmax, logsumexp, losses) in float32; other ops follow their inputs
/// (PyTorch's autocast). O2: every float op in the half dtype except the black list. O3: every float op in half.
enum class Level { O0, O1, O2, O3 };
/// "O0".."O3" (ValueError naming the known levels otherwise).
Level parse_level(const std::string& name);
const char* level_name(Level level);

/// Ops this thread calls while the scope lives cast their float32 / half inputs as `level` says, to `dtype`
/// (float16 or bfloat16) or float32; float64, integer and bool inputs are never cast. Scopes nest: the innermost
/// one applies; level O0 turns casting off inside an outer scope. Backward passes run without casting: a cast on
/// the tape already gives each gradient its input's dtype. (torch.autocast('cpu', dtype) as a scope.)
class AutocastScope {
 public:
  AutocastScope(Level level, DType dtype);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  Level saved_level_;
  DType saved_dtype_;
};

/// The innermost scope's level (O0 when none is open on this thread) and dtype.
Level current_level();
DType current_dtype();

/// MindSpore's amp.auto_mixed_precision: every call of `cell` (eager or in graph mode) runs under an AutocastScope of
/// `level` and `dtype`, and its half outputs are cast to float32 (MindSpore's output cast). Parameters are left in
/// their dtype. O0 clears a previous setting. Returns `cell` itself: names, checkpoints and optimizers see the same
/// parameters. DTypeError unless dtype is float16 or bfloat16.
std::shared_ptr<Cell> auto_mixed_precision(std::shared_ptr<Cell> cell, Level level = Level::O2,
                                           DType dtype = DType::Float16);

/// A 0-d bool tensor: true when every element of every tensor is finite (MindSpore's amp.all_finite). One op
/// (all_finite), so a jitted step reads nothing back to the host. An empty list is finite.
Tensor all_finite(const std::vector<Tensor>& tensors);

/// Scales the loss before the backward so that small half gradients do not flush to zero, and unscales the
/// gradients before the update. The scale is a 0-d float32 Parameter (state: checkpoints can save it, a jitted step
/// reads and advances it without a host read).
class LossScaler {
 public:
  virtual ~LossScaler() = default;
  /// loss * scale.
  Tensor scale(const Tensor& loss) const;
  /// Each gradient times 1 / scale (exact for the powers of two the dynamic scaler uses).
  std::vector<Tensor> unscale(const std::vector<Tensor>& grads) const;
  /// Updates the scale after a step whose unscaled gradients were `grads_finite` (a 0-d bool tensor).
  virtual void adjust(const Tensor& grads_finite) = 0;
  const Parameter& scale_value() const { return scale_value_; }
  /// The scale now, read on the host.
  double current_scale() const;
  /// The scaler's state, read on the host, to save with a checkpoint: "loss_scale", and for a dynamic scaler
  /// "loss_scale_finite_steps" (finite steps since the scale last changed). PyTorch's GradScaler.state_dict.
  virtual std::map<std::string, double> state() const;
  /// Restores a state() (GradScaler.load_state_dict): the keys must be this scaler's, the scale a finite float32
  /// number >= 1, the finite steps a whole number below the window; ValueError naming the key otherwise, with the
  /// scaler unchanged.
  virtual void load_state(const std::map<std::string, double>& state);
  /// The Parameters holding the state (what data parallel copies from rank 0 to every rank).
  virtual std::vector<Tensor> state_tensors() const { return {scale_value_}; }

 protected:
  explicit LossScaler(double scale_value, const std::string& name);
  Parameter scale_value_;
};

/// A fixed scale; adjust does nothing (MindSpore's StaticLossScaler, FixedLossScaleManager).
class StaticLossScaler : public LossScaler {
 public:
  explicit StaticLossScaler(double scale_value);
  void adjust(const Tensor& grads_finite) override;
};

/// MindSpore's DynamicLossScaler (PyTorch's GradScaler with growth_factor = 1 / backoff_factor = scale_factor and
/// growth_interval = scale_window): an overflowing step divides the scale by scale_factor (not below 1) and restarts
/// the count; scale_window finite steps in a row multiply it by scale_factor (unless that overflows float32).
class DynamicLossScaler : public LossScaler {
 public:
  explicit DynamicLossScaler(double scale_value = 65536.0, double scale_factor = 2.0, int64_t scale_window = 1000);
  void adjust(const Tensor& grads_finite) override;
  double scale_factor() const { return factor_; }
  int64_t scale_window() const { return window_; }
  /// Finite steps since the last change of the scale (a 0-d float32 Parameter).
  const Parameter& counter() const { return counter_; }
  std::map<std::string, double> state() const override;
  void load_state(const std::map<std::string, double>& state) override;
  std::vector<Tensor> state_tensors() const override { return {scale_value_, counter_}; }

 private:
  double factor_;
  int64_t window_;
  Parameter counter_;
};

}  // namespace bprop::amp
