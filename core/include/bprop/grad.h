// Reverse-mode autodiff to any order, MindSpore's functional API: grad, value_and_grad, vjp, jvp, jacobians,
// stop_gradient, and finite-difference checks. Each grad call opens its own level; bprops run public ops, so
// the backward pass is itself recorded at the outer levels.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bprop/ops.h"
#include "bprop/registry.h"
#include "bprop/tensor.h"
#include "bprop/value.h"

namespace bprop {

/// A named tensor that grad can differentiate through `weights` (MindSpore's Parameter). Copies share the
/// same tensor, so an update through one is seen by all.
class Parameter : public Tensor {
 public:
  Parameter() = default;
  Parameter(const Tensor& data, const std::string& name, bool requires_grad = true);
  /// Adopts an existing parameter tensor (e.g. one found in a Cell).
  static Parameter from(const Tensor& t);

  const std::string& name() const { return impl()->param_name(); }
  bool requires_grad() const { return impl()->requires_grad; }
  void set_requires_grad(bool v) { impl()->requires_grad = v; }
  /// Replaces the values in place (same shape and dtype, cast as needed): how optimizers update.
  void assign(const Tensor& value);
};

using Fn = std::function<Value(const std::vector<Tensor>&)>;

/// MindSpore's grad_position: an int (one gradient), a list (a tuple of gradients), or none.
class GradPosition {
 public:
  GradPosition(int p) : positions_{p}, is_list_(false), none_(false) {}
  GradPosition(std::initializer_list<int> ps) : positions_(ps), is_list_(true), none_(false) {}
  GradPosition(std::vector<int> ps) : positions_(std::move(ps)), is_list_(true), none_(false) {}
  GradPosition(std::nullptr_t) : is_list_(false), none_(true) {}
  const std::vector<int>& positions() const { return positions_; }
  bool is_list() const { return is_list_; }
  bool none() const { return none_; }

 private:
  std::vector<int> positions_;
  bool is_list_;
  bool none_;
};

/// The function grad / value_and_grad return.
namespace detail {
struct GraphModeCache;
}

class GradFn {
 public:
  GradFn(Fn fn, GradPosition pos, std::vector<Parameter> weights, bool has_aux, bool with_value);
  Value operator()(const std::vector<Tensor>& args) const;
  /// With a cotangent for fn's output (default: ones).
  Value operator()(const std::vector<Tensor>& args, const Tensor& sens) const;

 private:
  Value eager(const std::vector<Tensor>& args, const Tensor& sens) const;
  // In graph mode (bprop/context.h), the function's jit caches.
  std::shared_ptr<detail::GraphModeCache> graph_;
  Fn fn_;
  GradPosition pos_;
  std::vector<Parameter> weights_;
  bool has_aux_;
  bool with_value_;
};

/// grad(fn, grad_position, weights, has_aux): gradients w.r.t. the chosen positions (a Tensor for an int
/// position, a tuple for a list), w.r.t. weights (a tuple), or (positions, weights) when both are asked.
/// With has_aux fn returns (output, aux...) and the result is (gradients, aux).
GradFn grad(Fn fn, GradPosition grad_position = 0, std::vector<Parameter> weights = {}, bool has_aux = false);
/// As grad, returning (value, gradients); with has_aux value is (output, aux...).
GradFn value_and_grad(Fn fn, GradPosition grad_position = 0, std::vector<Parameter> weights = {},
                      bool has_aux = false);

/// Called with (index into the grad call's weights, gradient) as soon as that weight's gradient is final.
using GradReadyHook = std::function<void(size_t weight_index, const Tensor& grad)>;

/// While alive, the next grad / value_and_grad call with weights made on this thread (not the grad calls its
/// function makes) reports each weight's gradient to `hook` the moment the backward walk has finished it, with
/// the rest of the walk still to run: how data-parallel training starts communicating gradients early.
/// Weights that do not influence the output (or do not require grad) are reported with zeros after the walk.
/// The gradient reported is the one the call returns.
class OnGradReady {
 public:
  explicit OnGradReady(GradReadyHook hook);
  ~OnGradReady();
  OnGradReady(const OnGradReady&) = delete;
  OnGradReady& operator=(const OnGradReady&) = delete;

 private:
  GradReadyHook saved_;
};

/// Output of fn and the vector-Jacobian product v . d fn / d inputs (one per input).
std::pair<Tensor, std::vector<Tensor>> vjp(const Fn& fn, const std::vector<Tensor>& inputs, const Tensor& v);
/// Output of fn and the Jacobian-vector product d fn / d inputs . tangents.
std::pair<Tensor, Tensor> jvp(const Fn& fn, const std::vector<Tensor>& inputs, const std::vector<Tensor>& tangents);
/// Jacobian of fn's output w.r.t. input `argnum`, shaped out.shape + input.shape (reverse / forward mode).
std::function<Tensor(const std::vector<Tensor>&)> jacrev(Fn fn, int argnum = 0);
std::function<Tensor(const std::vector<Tensor>&)> jacfwd(Fn fn, int argnum = 0);
/// Hessian of a scalar fn w.r.t. input `argnum`, shaped input.shape + input.shape.
std::function<Tensor(const std::vector<Tensor>&)> hessian(Fn fn, int argnum = 0);

/// Runs `body` with every open grad level suspended: nothing inside is recorded.
void no_grad(const std::function<void()>& body);

struct CheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};
struct CheckResult {
  bool ok = true;
  double max_abs_error = 0.0;
  std::string message;  // the worst element: input, output index, analytic, numeric
};
/// Compares the analytic Jacobian (reverse mode) of fn w.r.t. its float inputs with central finite
/// differences, in float64. fn may return a tensor or a tuple of tensors.
CheckResult gradcheck(const Fn& fn, const std::vector<Tensor>& inputs, const CheckOptions& opts = {});
/// gradcheck of the vector-Jacobian product (with a fixed random cotangent): checks second order.
CheckResult gradgradcheck(const Fn& fn, const std::vector<Tensor>& inputs, const CheckOptions& opts = {});

namespace autodiff {
/// Runs `forward` unrecorded and records one node whose bprop is `bprop(inputs, out, dout)` at every open
/// level that differentiates an input: how Cells and other custom backward operators take effect.
using CustomBprop =
    std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs, const Tensor& out, const Tensor& dout)>;
Tensor apply_custom(const std::string& name, const std::vector<Tensor>& inputs,
                    const std::function<Tensor(const std::vector<Tensor>&)>& forward, const CustomBprop& bprop);
}  // namespace autodiff

}  // namespace bprop
