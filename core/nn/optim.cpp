#include "bprop/nn/optim.h"

#include <algorithm>
#include <cmath>

#include "graph/trace.h"
#include "tensor/format.h"

namespace bprop::optim {

namespace {

void check_rate(const std::string& opt, const char* what, double v) {
  if (!(v >= 0.0) || !std::isfinite(v)) {
    throw ValueError("For '" + opt + "', " + what + " must be a finite number >= 0, got " + std::to_string(v));
  }
}

}  // namespace

// ---- Optimizer ----------------------------------------------------------------------------------------

Optimizer::Optimizer(std::string name, std::vector<Parameter> params, double lr, double weight_decay)
    : name_(std::move(name)), params_(std::move(params)), lr_(lr), weight_decay_(weight_decay) {
  if (params_.empty()) throw ValueError("For '" + name_ + "', the parameter list is empty");
  for (size_t i = 0; i < params_.size(); ++i) {
    const Parameter& p = params_[i];
    if (!p.defined()) throw ValueError("For '" + name_ + "', parameter " + std::to_string(i) + " is undefined");
    if (!is_float(p.dtype())) {
      throw DTypeError("For '" + name_ + "', parameter '" + p.name() + "' has dtype " + dtype_name(p.dtype()) +
                       "; only float32 and float64 parameters can be optimized");
    }
  }
  check_rate(name_, "the learning rate", lr);
  check_rate(name_, "weight_decay", weight_decay);
  state_.resize(params_.size());
  no_decay_.assign(params_.size(), false);
  lr_t_ = Parameter(scalar(lr, DType::Float64), name_ + ".lr", false);
  steps_t_ = Parameter(zeros({}, DType::Float64), name_ + ".steps", false);
  for (const Parameter& p : params_) updates_t_.emplace_back(zeros({}, DType::Float64), p.name() + ".step", false);
}

void Optimizer::exclude_from_weight_decay(const std::function<bool(const Parameter&)>& excluded) {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (excluded(params_[i])) no_decay_[i] = true;
  }
}

double Optimizer::weight_decay(size_t i) const { return no_decay_.at(i) ? 0.0 : weight_decay_; }

void Optimizer::set_learning_rate(double lr) {
  check_rate(name_, "the learning rate", lr);
  lr_ = lr;
  lr_t_.assign(scalar(lr, DType::Float64));
}

int64_t Optimizer::step_count() const { return static_cast<int64_t>(steps_t_.item()); }

int64_t Optimizer::update_count(size_t i) const {
  return i < updates_t_.size() ? static_cast<int64_t>(updates_t_[i].item()) : 0;
}

const std::map<std::string, Tensor>& Optimizer::state(size_t i) const {
  if (i >= state_.size()) {
    throw ValueError("For '" + name_ + "', state(" + std::to_string(i) + ") is out of range for " +
                     std::to_string(state_.size()) + " parameters");
  }
  return state_[i];
}

Tensor& Optimizer::state_tensor(size_t i, const std::string& key, bool* created) {
  auto& st = state_[i];
  auto it = st.find(key);
  const bool fresh = it == st.end();
  if (fresh) {
    const Parameter p = params_[i];
    it = st.emplace(key, Parameter(zeros(p.shape(), p.dtype()), p.name() + "." + key, false)).first;
  }
  if (created) *created = fresh;
  return it->second;
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state_dict(const std::string& prefix) const {
  std::vector<std::pair<std::string, Tensor>> out;
  out.emplace_back(prefix + "steps", steps_t_.detach().clone());
  out.emplace_back(prefix + "lr", lr_t_.detach().clone());
  for (size_t i = 0; i < params_.size(); ++i) {
    const std::string at = prefix + std::to_string(i) + ".";
    out.emplace_back(at + "step", updates_t_[i].detach().clone());
    for (const auto& [key, t] : state_[i]) out.emplace_back(at + key, t.detach().clone());
  }
  return out;
}

void Optimizer::load_state_dict(const std::vector<std::pair<std::string, Tensor>>& state, const std::string& prefix,
                                const std::string& source) {
  const std::string who = "For '" + name_ + ".load_state_dict' (" + source + "), ";
  const std::vector<std::string> keys = state_keys();
  // Validate everything into (target, value) pairs first: an error leaves the optimizer as it was.
  struct Write {
    Tensor* existing;  // the live state tensor, or null for state still to be created
    size_t param;
    std::string key;
    Tensor value;
  };
  std::vector<Write> writes;
  Tensor steps, lr;
  std::vector<bool> have_step(params_.size(), false);
  for (const auto& entry : state) {
    const std::string& name = entry.first;  // (not a structured binding: the lambda below captures it)
    const Tensor& t = entry.second;
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    auto scalar_entry = [&](Tensor& into) {
      if (t.dim() != 0) throw ValueError(who + "'" + name + "' must be 0-d, got shape " + shape_str(t.shape()));
      into = t;
    };
    if (rest == "steps") { scalar_entry(steps); continue; }
    if (rest == "lr") { scalar_entry(lr); continue; }
    const size_t dot = rest.find('.');
    size_t i = 0;
    bool index_ok = dot != std::string::npos && dot > 0;
    for (size_t c = 0; index_ok && c < dot; ++c) index_ok = rest[c] >= '0' && rest[c] <= '9';
    if (index_ok) i = std::stoul(rest.substr(0, dot));
    if (!index_ok || i >= params_.size()) {
      throw ValueError(who + "'" + name + "' names no state of this optimizer over " + std::to_string(params_.size()) +
                       " parameters");
    }
    const std::string key = rest.substr(dot + 1);
    if (key == "step") {
      if (t.dim() != 0) throw ValueError(who + "'" + name + "' must be 0-d, got shape " + shape_str(t.shape()));
      writes.push_back({&updates_t_[i], i, key, t});
      have_step[i] = true;
      continue;
    }
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      throw ValueError(who + "'" + name + "' is not state of " + name_ + " (a checkpoint of another optimizer?)");
    }
    const Parameter& p = params_[i];
    if (t.shape() != p.shape() || t.dtype() != p.dtype()) {
      throw ValueError(who + "'" + name + "' is " + dtype_name(t.dtype()) + " " + shape_str(t.shape()) +
                       " but parameter " + std::to_string(i) + " ('" + p.name() + "') is " + dtype_name(p.dtype()) +
                       " " + shape_str(p.shape()));
    }
    auto it = state_[i].find(key);
    writes.push_back({it == state_[i].end() ? nullptr : &it->second, i, key, t});
  }
  if (!steps.defined() || !lr.defined()) {
    throw ValueError(who + "the state has no '" + prefix + (steps.defined() ? "lr" : "steps") + "' tensor");
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!have_step[i]) throw ValueError(who + "the state has no '" + prefix + std::to_string(i) + ".step' tensor");
  }
  Parameter::from(steps_t_).assign(steps);
  set_learning_rate(convert(lr.cpu(), DType::Float64).item());
  for (Write& w : writes) {
    Tensor& target = w.existing ? *w.existing : state_tensor(w.param, w.key);
    Parameter::from(target).assign(w.value);
  }
}

void Optimizer::step(const std::vector<Tensor>& grads) { apply(checked_gradients(grads)); }

std::vector<Tensor> Optimizer::checked_gradients(const std::vector<Tensor>& grads) const {
  if (grads.size() != params_.size()) {
    throw ValueError("For '" + name_ + "', got " + std::to_string(grads.size()) + " gradients for " +
                     std::to_string(params_.size()) + " parameters");
  }
  // Validate everything first, and copy gradients that share memory with a parameter (an update must not
  // change a gradient still to be used).
  std::vector<Tensor> gs(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    const Tensor& g = grads[i];
    const Parameter& p = params_[i];
    if (!g.defined())
      throw ValueError("For '" + name_ + "', the gradient of parameter '" + p.name() + "' is undefined");
    if (g.shape() != p.shape()) {
      throw ShapeError("For '" + name_ + "', the gradient of parameter '" + p.name() + "' has shape " +
                       shape_str(g.shape()) + " but the parameter has shape " + shape_str(p.shape()));
    }
    if (!is_float(g.dtype())) {
      throw DTypeError("For '" + name_ + "', the gradient of parameter '" + p.name() + "' has dtype " +
                       dtype_name(g.dtype()) + "; expected a float gradient");
    }
    bool aliases = false;
    for (const Parameter& q : params_) aliases = aliases || g.impl()->storage == q.impl()->storage;
    const Tensor converted = g.dtype() == p.dtype() ? g : ops::cast(g, p.dtype());
    // (while tracing, values are never overwritten in place: no copy needed)
    gs[i] = aliases && !graph::tracing() ? converted.clone() : converted;
  }
  return gs;
}

void Optimizer::apply(const std::vector<Tensor>& gs) {
  commit(steps_t_, steps_t_ + 1.0);
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].requires_grad()) continue;
    commit(updates_t_[i], updates_t_[i] + 1.0);
    update(i, params_[i], gs[i]);
  }
}

void Optimizer::step(const std::vector<Tensor>& grads, const Tensor& apply_if) {
  if (!apply_if.defined()) return step(grads);
  if (apply_if.dim() != 0 || apply_if.dtype() != DType::Bool) {
    throw ValueError("For '" + name_ + "', apply_if must be a 0-d bool tensor, got " + shape_str(apply_if.shape()) +
                     " " + dtype_name(apply_if.dtype()));
  }
  const std::vector<Tensor> gs = checked_gradients(grads);
  if (!graph::tracing() && !apply_if.is_abstract()) {
    if (apply_if.item() != 0.0) apply(gs);
    return;
  }
  struct Gate {  // cleared however the step ends
    Tensor& slot;
    ~Gate() { slot = Tensor(); }
  } gate{gate_};
  gate_ = apply_if;
  apply(gs);
}

void Optimizer::commit(const Tensor& target, const Tensor& value) {
  Parameter p = Parameter::from(target);
  if (!gate_.defined()) {
    p.assign(value);
    return;
  }
  p.assign(ops::where(gate_, value.dtype() == p.dtype() ? value : ops::cast(value, p.dtype()), p));
}

// ---- SGD / Momentum -----------------------------------------------------------------------------------

SGD::SGD(std::vector<Parameter> params, double lr, double momentum, double dampening, bool nesterov,
         double weight_decay)
    : SGD("SGD", std::move(params), lr, momentum, dampening, nesterov, weight_decay) {}

SGD::SGD(std::string name, std::vector<Parameter> params, double lr, double momentum, double dampening, bool nesterov,
         double weight_decay)
    : Optimizer(std::move(name), std::move(params), lr, weight_decay),
      momentum_(momentum),
      dampening_(dampening),
      nesterov_(nesterov) {
  check_rate(name_, "momentum", momentum);
  if (!std::isfinite(dampening)) throw ValueError("For '" + name_ + "', dampening must be finite");
  if (nesterov && (momentum <= 0.0 || dampening != 0.0)) {
    throw ValueError("For '" + name_ + "', nesterov momentum needs momentum > 0 and dampening = 0");
  }
}

std::vector<std::string> SGD::state_keys() const {
  if (momentum_ == 0.0) return {};
  return {"momentum_buffer"};
}

void SGD::update(size_t i, Parameter& p, const Tensor& grad) {
  Tensor buf;
  if (momentum_ != 0.0) {
    buf = state_tensor(i, "momentum_buffer");
    commit(buf, call_op("sgd_buffer", {buf, grad, p, updates_t_[i]},
                        {{"weight_decay", weight_decay(i)}, {"momentum", momentum_}, {"dampening", dampening_}}));
  }
  commit(p, call_op("sgd_step", {p, grad, lr_t_, buf},
                   {{"weight_decay", weight_decay(i)}, {"momentum", momentum_}, {"nesterov", nesterov_}}));
}

Momentum::Momentum(std::vector<Parameter> params, double learning_rate, double momentum, double weight_decay,
                   bool use_nesterov)
    : SGD("Momentum", std::move(params), learning_rate, momentum, 0.0, use_nesterov && momentum > 0.0, weight_decay) {}

// ---- Adam / AdamW -------------------------------------------------------------------------------------

Adam::Adam(std::vector<Parameter> params, double lr, std::pair<double, double> betas, double eps, double weight_decay,
           bool amsgrad)
    : Adam("Adam", std::move(params), lr, betas, eps, weight_decay, amsgrad, false) {}

Adam::Adam(std::string name, std::vector<Parameter> params, double lr, std::pair<double, double> betas, double eps,
           double weight_decay, bool amsgrad, bool decoupled)
    : Optimizer(std::move(name), std::move(params), lr, weight_decay),
      beta1_(betas.first),
      beta2_(betas.second),
      eps_(eps),
      amsgrad_(amsgrad),
      decoupled_(decoupled) {
  if (!(beta1_ >= 0.0 && beta1_ < 1.0) || !(beta2_ >= 0.0 && beta2_ < 1.0)) {
    throw ValueError("For '" + name_ + "', betas must be in [0, 1), got (" + format_number(beta1_) + ", " +
                     format_number(beta2_) + ")");
  }
  check_rate(name_, "eps", eps);
}

std::vector<std::string> Adam::state_keys() const {
  if (amsgrad_) return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  return {"exp_avg", "exp_avg_sq"};
}

void Adam::update(size_t i, Parameter& p, const Tensor& grad) {
  const Tensor m = state_tensor(i, "exp_avg");
  const Tensor v = state_tensor(i, "exp_avg_sq");
  commit(m,
      call_op("adam_m", {m, grad, p}, {{"beta1", beta1_}, {"weight_decay", weight_decay(i)}, {"decoupled", decoupled_}}));
  commit(v,
      call_op("adam_v", {v, grad, p}, {{"beta2", beta2_}, {"weight_decay", weight_decay(i)}, {"decoupled", decoupled_}}));
  Tensor v_used = v;
  if (amsgrad_) {  // the largest v so far
    v_used = state_tensor(i, "max_exp_avg_sq");
    commit(v_used, ops::maximum(v, v_used));
  }
  // (per parameter t, as PyTorch's state["step"])
  commit(p, call_op("adam_step", {p, m, v_used, lr_t_, updates_t_[i]},
                   {{"beta1", beta1_},
                    {"beta2", beta2_},
                    {"eps", eps_},
                    {"weight_decay", weight_decay(i)},
                    {"decoupled", decoupled_}}));
}

AdamW::AdamW(std::vector<Parameter> params, double lr, std::pair<double, double> betas, double eps, double weight_decay,
             bool amsgrad)
    : Adam("AdamW", std::move(params), lr, betas, eps, weight_decay, amsgrad, true) {}

// ---- schedules ----------------------------------------------------------------------------------------

LRScheduler::LRScheduler(Optimizer& optimizer)
    : opt_(optimizer), base_lr_(optimizer.learning_rate()), last_lr_(optimizer.learning_rate()) {}

void LRScheduler::apply() {
  last_lr_ = lr_at(epoch_);
  opt_.set_learning_rate(last_lr_);
}

void LRScheduler::set_last_epoch(int64_t epoch) {
  if (epoch < 0) throw ValueError("For 'LRScheduler.set_last_epoch', the epoch must be >= 0, got " + std::to_string(epoch));
  epoch_ = epoch;
  apply();
}

void LRScheduler::step() {
  ++epoch_;
  apply();
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  if (step_size <= 0) throw ValueError("For 'StepLR', step_size must be positive, got " + std::to_string(step_size));
  if (!(gamma >= 0.0)) throw ValueError("For 'StepLR', gamma must be >= 0, got " + format_number(gamma));
  apply();
}

double StepLR::lr_at(int64_t epoch) const {
  return base_lr_ * std::pow(gamma_, static_cast<double>(epoch / step_size_));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
  if (T_max <= 0) throw ValueError("For 'CosineAnnealingLR', T_max must be positive, got " + std::to_string(T_max));
  if (!(eta_min >= 0.0))
    throw ValueError("For 'CosineAnnealingLR', eta_min must be >= 0, got " + format_number(eta_min));
  apply();
}

double CosineAnnealingLR::lr_at(int64_t epoch) const {
  constexpr double kPi = 3.14159265358979323846;
  return eta_min_ +
         (base_lr_ - eta_min_) * (1.0 + std::cos(kPi * static_cast<double>(epoch) / static_cast<double>(t_max_))) / 2.0;
}

WarmupCosineLR::WarmupCosineLR(Optimizer& optimizer, int64_t warmup_steps, int64_t total_steps, double eta_min)
    : LRScheduler(optimizer), warmup_(warmup_steps), total_(total_steps), eta_min_(eta_min) {
  if (warmup_steps < 0 || total_steps <= warmup_steps) {
    throw ValueError("For 'WarmupCosineLR', expected 0 <= warmup_steps < total_steps, got warmup_steps " +
                     std::to_string(warmup_steps) + " and total_steps " + std::to_string(total_steps));
  }
  if (!(eta_min >= 0.0)) throw ValueError("For 'WarmupCosineLR', eta_min must be >= 0, got " + format_number(eta_min));
  apply();
}

double WarmupCosineLR::lr_at(int64_t step) const {
  constexpr double kPi = 3.14159265358979323846;
  if (step < warmup_) return base_lr_ * static_cast<double>(step + 1) / static_cast<double>(warmup_ + 1);
  if (step >= total_) return eta_min_;
  const double ratio = static_cast<double>(step - warmup_) / static_cast<double>(total_ - warmup_);
  return eta_min_ + (base_lr_ - eta_min_) * (1.0 + std::cos(kPi * ratio)) / 2.0;
}

std::vector<Tensor> clip_by_global_norm(const std::vector<Tensor>& grads, double clip_norm, Tensor* global_norm) {
  if (!(clip_norm > 0.0)) {
    throw ValueError("For 'clip_by_global_norm', clip_norm must be positive, got " + format_number(clip_norm));
  }
  Tensor squares;
  for (const Tensor& g : grads) {
    if (!g.defined()) continue;
    if (!is_float(g.dtype())) {
      throw DTypeError(std::string("For 'clip_by_global_norm', gradients must be float tensors, got ") +
                       dtype_name(g.dtype()));
    }
    // half gradients square and sum in float32 (their squares overflow float16 long before the norm does)
    const Tensor wide = is_half(g.dtype()) ? ops::cast(g, DType::Float32) : g;
    const Tensor s = ops::sum(ops::square(wide));
    squares = squares.defined() ? squares + s : s;
  }
  if (!squares.defined()) return grads;
  const Tensor norm = ops::sqrt(squares);
  if (global_norm) *global_norm = norm;
  const Tensor limit = scalar(clip_norm, norm.dtype());
  const Tensor factor = limit / ops::maximum(norm, limit);
  std::vector<Tensor> out;
  out.reserve(grads.size());
  for (const Tensor& g : grads) out.push_back(g.defined() ? g * ops::cast(factor, g.dtype()) : g);
  return out;
}

}  // namespace bprop::optim
