// grad and value_and_grad with MindSpore's semantics.
#include <cstring>

#include "autodiff/tape.h"
#include "bprop/pool.h"
#include "bprop/grad.h"
#include "bprop/context.h"
#include "bprop/device.h"
#include "graph/graph_mode.h"
#include "graph/trace.h"

namespace bprop {

// ---- Parameter ----------------------------------------------------------------------------------------

// A parameter made from host data lives on the context's device (MindSpore's device_target).
Parameter::Parameter(const Tensor& data, const std::string& name, bool requires_grad)
    : Tensor(data.on_host() && !default_device().is_cpu() ? data.to(default_device()) : data.detach()) {
  impl()->name = std::make_unique<const std::string>(name);
  impl()->requires_grad = requires_grad;
  impl()->is_parameter = true;
}

Parameter Parameter::from(const Tensor& t) {
  if (!t.defined() || !t.impl()->is_parameter) throw ValueError("Parameter::from: the tensor is not a Parameter");
  Parameter p;
  static_cast<Tensor&>(p) = t;
  return p;
}

void Parameter::assign(const Tensor& value) {
  if (value.shape() != shape()) {
    throw ShapeError("For Parameter '" + name() + "', cannot assign a value of shape " + shape_str(value.shape()) +
                     " to shape " + shape_str(shape()));
  }
  if (graph::tracing()) {  // an effect of the graph: done at every replay, not now
    graph::current_tracer()->assign(*this, value.dtype() == dtype() ? value : ops::cast(value, dtype()));
    return;
  }
  if (value.is_abstract()) graph::current_tracer_or_throw("Parameter.assign");
  copy_into(*this, value);
}

// ---- grad ---------------------------------------------------------------------------------------------

namespace {

// Pops the entries a grad call pushed on its weights, and closes its level, however the call ends.
struct LevelScope {
  int level;
  std::vector<Parameter> pushed;
  bool closed = false;
  explicit LevelScope(int l) : level(l) {}
  void close() {
    if (!closed) autodiff::close_level(level);
    closed = true;
  }
  ~LevelScope() {
    close();
    for (auto& w : pushed) {
      auto& trace = w.impl()->trace;
      if (!trace.empty() && trace.back().level == level) trace.pop_back();
    }
  }
};

// The hook OnGradReady installs; a grad call takes it (so grad calls inside its function do not see it).
thread_local GradReadyHook t_grad_ready;

void check_differentiable(const Tensor& t, const std::string& what) {
  if (!is_float(t.dtype())) {
    throw DTypeError("For 'grad', cannot differentiate with respect to " + what + " of dtype " +
                     dtype_name(t.dtype()) + " (shape " + shape_str(t.shape()) + "): only float32 and float64 are differentiable");
  }
}

}  // namespace

GradFn::GradFn(Fn fn, GradPosition pos, std::vector<Parameter> weights, bool has_aux, bool with_value)
    : fn_(std::move(fn)), pos_(std::move(pos)), weights_(std::move(weights)), has_aux_(has_aux), with_value_(with_value) {
  if (pos_.none() && weights_.empty()) {
    throw ValueError("For 'grad', grad_position is None and no weights are given: nothing to differentiate");
  }
  if (pos_.is_list() && pos_.positions().empty()) throw ValueError("For 'grad', grad_position is an empty list");
  graph_ = std::make_shared<detail::GraphModeCache>();
}

OnGradReady::OnGradReady(GradReadyHook hook) : saved_(std::move(t_grad_ready)) { t_grad_ready = std::move(hook); }
OnGradReady::~OnGradReady() { t_grad_ready = std::move(saved_); }

Value GradFn::operator()(const std::vector<Tensor>& args) const { return (*this)(args, Tensor()); }

Value GradFn::operator()(const std::vector<Tensor>& args, const Tensor& sens) const {
  // (a grad-ready hook, as data parallel installs, is called from the eager backward walk: no graph then)
  if (!detail::graph_mode_call() || t_grad_ready) return eager(args, sens);
  // Graph mode: through a jit of the eager computation (a copy without the cache, so that the cache does not
  // own itself).
  std::unique_ptr<JitFn>* slot = nullptr;
  {
    std::lock_guard<std::mutex> lock(graph_->mu);
    slot = sens.defined() ? &graph_->with_sens : &graph_->plain;
    if (!*slot) {
      GradFn inner = *this;
      inner.graph_.reset();
      if (sens.defined()) {
        *slot = std::make_unique<JitFn>([inner](const std::vector<Tensor>& a) {
          return inner.eager(std::vector<Tensor>(a.begin(), a.end() - 1), a.back());
        });
      } else {
        *slot = std::make_unique<JitFn>([inner](const std::vector<Tensor>& a) { return inner.eager(a, Tensor()); });
      }
    }
  }
  if (!sens.defined()) return (**slot)(args);
  std::vector<Tensor> with_sens = args;
  with_sens.push_back(sens);
  return (**slot)(with_sens);
}

Value GradFn::eager(const std::vector<Tensor>& args, const Tensor& sens) const {
  std::vector<int> positions;
  if (!pos_.none()) {
    for (int p : pos_.positions()) {
      const int n = static_cast<int>(args.size());
      if (p < -n || p >= n) {
        throw ValueError("For 'grad', grad_position " + std::to_string(p) + " is out of range for a function called with " +
                         std::to_string(n) + " argument(s)");
      }
      positions.push_back(p < 0 ? p + n : p);
    }
  }
  for (int p : positions) check_differentiable(args[static_cast<size_t>(p)], "argument " + std::to_string(p));
  for (const auto& w : weights_) check_differentiable(w, "Parameter '" + w.name() + "'");

  // Taken for this call only, and put back however it ends.
  GradReadyHook ready;
  if (!weights_.empty()) std::swap(ready, t_grad_ready);
  struct PutBack {
    GradReadyHook& hook;
    bool active;
    ~PutBack() {
      if (active) t_grad_ready = std::move(hook);
    }
  } put_back{ready, !weights_.empty()};

  LevelScope scope(autodiff::open_level());
  std::vector<Tensor> call_args = args;
  std::vector<std::shared_ptr<autodiff::Node>> leaves;
  for (int p : positions) {
    leaves.emplace_back();
    call_args[static_cast<size_t>(p)] = autodiff::make_leaf(args[static_cast<size_t>(p)], scope.level, leaves.back());
  }
  std::vector<bool> weight_tracked;
  for (const auto& w : weights_) {
    weight_tracked.push_back(w.requires_grad());
    leaves.emplace_back(pool::make_shared<autodiff::Node>());
    leaves.back()->level = scope.level;
    leaves.back()->is_leaf = true;
    if (w.requires_grad()) {
      w.impl()->trace.push_back({scope.level, leaves.back()});
      scope.pushed.push_back(w);
    }
  }

  const Value result = fn_(call_args);
  Tensor out;
  if (has_aux_) {
    if (result.is_tensor() || result.size() < 2) {
      throw ValueError("For 'grad', has_aux is set but the function returned a single output; it must return "
                       "(output, aux...)");
    }
    if (!result[0].is_tensor()) throw ValueError("For 'grad', the first output of a has_aux function must be a tensor");
    out = result[0].tensor();
  } else {
    if (!result.is_tensor()) {
      throw ValueError("For 'grad', the function returned a tuple of " + std::to_string(result.size()) +
                       " values; return one tensor, or set has_aux to differentiate the first");
    }
    out = result.tensor();
  }
  if (!is_float(out.dtype())) {
    throw DTypeError(std::string("For 'grad', the function's output has dtype ") + dtype_name(out.dtype()) +
                     "; only float outputs can be differentiated");
  }
  Tensor cot = sens;
  if (cot.defined()) {
    if (cot.shape() != out.shape()) {
      throw ShapeError("For 'grad', sens has shape " + shape_str(cot.shape()) + " but the output has shape " +
                       shape_str(out.shape()));
    }
    if (cot.dtype() != out.dtype()) cot = convert(cot, out.dtype());
  } else {
    cot = ones(out.shape(), out.dtype());
  }
  scope.close();
  autodiff::LeafFinalHook on_final;
  if (ready) {
    on_final = [&](size_t leaf, const Tensor& grad) {
      if (leaf >= positions.size()) ready(leaf - positions.size(), grad);
    };
  }
  // The level is closed and walked once: each node's saved tensors go as soon as its bprop has run.
  std::vector<Tensor> g =
      autodiff::backward(scope.level, out, cot, leaves, on_final, autodiff::SavedTensors::ReleaseAsWalked);

  // Zeros for what does not influence the output; positions first, then weights.
  std::vector<Tensor> pos_grads, weight_grads;
  for (size_t k = 0; k < positions.size(); ++k) {
    const Tensor& x = args[static_cast<size_t>(positions[k])];
    pos_grads.push_back(g[k].defined() ? g[k] : zeros(x.shape(), x.dtype()));
  }
  for (size_t k = 0; k < weights_.size(); ++k) {
    const Tensor& gw = g[positions.size() + k];
    weight_grads.push_back(gw.defined() ? gw : zeros(weights_[k].shape(), weights_[k].dtype()));
    if (ready && !gw.defined()) ready(k, weight_grads.back());
  }

  Value grads;
  const Value pos_value = pos_.is_list() ? Value::tuple(pos_grads) : (pos_grads.empty() ? Value() : Value(pos_grads[0]));
  if (pos_.none()) grads = Value::tuple(weight_grads);
  else if (weights_.empty()) grads = pos_value;
  else grads = Value{pos_value, Value::tuple(weight_grads)};

  auto escape = [&](const Value& v) -> Value {  // values leaving the call lose this level's history
    if (v.is_tensor()) return autodiff::strip_levels(v.tensor(), scope.level);
    std::vector<Value> items;
    for (const auto& item : v.items()) {
      items.push_back(item.is_tensor() ? Value(autodiff::strip_levels(item.tensor(), scope.level)) : item);
    }
    return Value(items);
  };
  if (!has_aux_) {
    return with_value_ ? Value{escape(result), grads} : grads;
  }
  std::vector<Value> aux(result.items().begin() + 1, result.items().end());
  const Value aux_value = aux.size() == 1 ? escape(aux[0]) : escape(Value(aux));
  if (with_value_) return Value{escape(result), grads};
  return Value{grads, aux_value};
}

GradFn grad(Fn fn, GradPosition grad_position, std::vector<Parameter> weights, bool has_aux) {
  return GradFn(std::move(fn), std::move(grad_position), std::move(weights), has_aux, false);
}

GradFn value_and_grad(Fn fn, GradPosition grad_position, std::vector<Parameter> weights, bool has_aux) {
  return GradFn(std::move(fn), std::move(grad_position), std::move(weights), has_aux, true);
}

// ---- Value --------------------------------------------------------------------------------------------

Value Value::tuple(std::vector<Tensor> ts) {
  std::vector<Value> items;
  items.reserve(ts.size());
  for (auto& t : ts) items.emplace_back(std::move(t));
  return Value(std::move(items));
}

const Tensor& Value::tensor() const {
  if (!is_tensor_) throw ValueError("Value: expected a tensor, got a tuple of " + std::to_string(items_.size()));
  return tensor_;
}

const std::vector<Value>& Value::items() const {
  if (is_tensor_) throw ValueError("Value: expected a tuple, got a tensor");
  return items_;
}

const Value& Value::operator[](size_t i) const {
  if (is_tensor_) {
    if (i == 0) return *this;
    throw ValueError("Value: index " + std::to_string(i) + " into a tensor");
  }
  if (i >= items_.size()) {
    throw ValueError("Value: index " + std::to_string(i) + " out of range for a tuple of " + std::to_string(items_.size()));
  }
  return items_[i];
}

std::vector<Tensor> Value::flatten() const {
  if (is_tensor_) return {tensor_};
  std::vector<Tensor> out;
  for (const auto& item : items_) {
    auto sub = item.flatten();
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

}  // namespace bprop
