#include "bprop/nn/optim.h"

#include <cmath>

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
  updates_.assign(params_.size(), 0);
}

void Optimizer::set_learning_rate(double lr) {
  check_rate(name_, "the learning rate", lr);
  lr_ = lr;
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
  if (fresh) it = st.emplace(key, zeros(params_[i].shape(), params_[i].dtype())).first;
  if (created) *created = fresh;
  return it->second;
}

void Optimizer::step(const std::vector<Tensor>& grads) {
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
    gs[i] = aliases ? convert(g, p.dtype()).clone() : convert(g, p.dtype());
  }
  ++steps_;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].requires_grad()) continue;
    ++updates_[i];
    update(i, params_[i], gs[i]);
  }
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

void SGD::update(size_t i, Parameter& p, const Tensor& grad) {
  bool first = false;
  Tensor* buf = momentum_ != 0.0 ? &state_tensor(i, "momentum_buffer", &first) : nullptr;
  const double lr = lr_, wd = weight_decay_, mom = momentum_, damp = dampening_;
  const bool nesterov = nesterov_;
  visit_float(p.dtype(), [&]<typename T>() {
    T* w = p.data<T>();
    const T* g = grad.data<T>();
    T* b = buf ? buf->data<T>() : nullptr;
    const int64_t n = p.numel();
    if (!b && wd == 0.0) {  // plain SGD: a branch-free loop the compiler vectorises
      for (int64_t k = 0; k < n; ++k) w[k] = static_cast<T>(static_cast<double>(w[k]) - lr * static_cast<double>(g[k]));
      return;
    }
    for (int64_t k = 0; k < n; ++k) {
      double d = static_cast<double>(g[k]);
      if (wd != 0.0) d += wd * static_cast<double>(w[k]);  // g += weight_decay * p
      if (b) {
        // buf = g on the first step, then momentum * buf + (1 - dampening) * g
        const double nb = first ? d : mom * static_cast<double>(b[k]) + (1.0 - damp) * d;
        b[k] = static_cast<T>(nb);
        d = nesterov ? d + mom * static_cast<double>(b[k]) : static_cast<double>(b[k]);
      }
      w[k] = static_cast<T>(static_cast<double>(w[k]) - lr * d);
    }
  });
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

void Adam::update(size_t i, Parameter& p, const Tensor& grad) {
  Tensor& m_t = state_tensor(i, "exp_avg");
  Tensor& v_t = state_tensor(i, "exp_avg_sq");
  Tensor* vmax_t = amsgrad_ ? &state_tensor(i, "max_exp_avg_sq") : nullptr;
  const double t = static_cast<double>(updates_[i]);  // per parameter, as PyTorch's state["step"]
  const double lr = lr_, wd = weight_decay_, b1 = beta1_, b2 = beta2_, eps = eps_;
  const double step_size = lr / (1.0 - std::pow(b1, t));  // lr / bias_correction1
  const double bc2_sqrt = std::sqrt(1.0 - std::pow(b2, t));
  const bool decoupled = decoupled_;
  visit_float(p.dtype(), [&]<typename T>() {
    T* w = p.data<T>();
    const T* g = grad.data<T>();
    T* m = m_t.data<T>();
    T* v = v_t.data<T>();
    T* vmax = vmax_t ? vmax_t->data<T>() : nullptr;
    for (int64_t k = 0; k < p.numel(); ++k) {
      double wk = static_cast<double>(w[k]);
      double d = static_cast<double>(g[k]);
      if (decoupled) {
        wk *= 1.0 - lr * wd;  // AdamW: p *= 1 - lr * weight_decay
      } else if (wd != 0.0) {
        d += wd * wk;  // Adam: g += weight_decay * p
      }
      // m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2
      m[k] = static_cast<T>(static_cast<double>(m[k]) * b1 + (1.0 - b1) * d);
      v[k] = static_cast<T>(static_cast<double>(v[k]) * b2 + (1.0 - b2) * d * d);
      double vk = static_cast<double>(v[k]);
      if (vmax) {
        if (vk > static_cast<double>(vmax[k])) vmax[k] = v[k];
        vk = static_cast<double>(vmax[k]);
      }
      const double denom = std::sqrt(vk) / bc2_sqrt + eps;  // sqrt(v / bias_correction2) + eps
      w[k] = static_cast<T>(wk - step_size * static_cast<double>(m[k]) / denom);
    }
  });
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

}  // namespace bprop::optim
