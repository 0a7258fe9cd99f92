#include "bprop/amp.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "registry/autocast.h"
#include "tensor/format.h"

namespace bprop::amp {

Level parse_level(const std::string& name) {
  if (name == "O0") return Level::O0;
  if (name == "O1") return Level::O1;
  if (name == "O2") return Level::O2;
  if (name == "O3") return Level::O3;
  throw ValueError("For 'auto_mixed_precision', unknown level '" + name + "' (known levels: O0, O1, O2, O3)");
}

const char* level_name(Level level) {
  switch (level) {
    case Level::O1: return "O1";
    case Level::O2: return "O2";
    case Level::O3: return "O3";
    default: return "O0";
  }
}

namespace {

void check_half(DType dtype, const char* who) {
  if (!is_half(dtype)) {
    throw DTypeError(std::string("For '") + who + "', the dtype must be float16 or bfloat16, got " +
                     dtype_name(dtype));
  }
}

}  // namespace

AutocastScope::AutocastScope(Level level, DType dtype) {
  check_half(dtype, "autocast");
  detail::AutocastState& st = detail::autocast_state();
  saved_level_ = static_cast<Level>(st.level);
  saved_dtype_ = st.dtype;
  st.level = static_cast<int>(level);
  st.dtype = dtype;
}

AutocastScope::~AutocastScope() {
  detail::AutocastState& st = detail::autocast_state();
  st.level = static_cast<int>(saved_level_);
  st.dtype = saved_dtype_;
}

Level current_level() { return static_cast<Level>(detail::autocast_state().level); }
DType current_dtype() { return detail::autocast_state().dtype; }

std::shared_ptr<Cell> auto_mixed_precision(std::shared_ptr<Cell> cell, Level level, DType dtype) {
  if (!cell) throw ValueError("For 'auto_mixed_precision', no cell was given");
  check_half(dtype, "auto_mixed_precision");
  cell->set_mixed_precision(level, dtype);
  return cell;
}

Tensor all_finite(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> defined;
  for (const Tensor& t : tensors) {
    if (t.defined()) defined.push_back(t);
  }
  if (defined.empty()) return full({}, 1.0, DType::Bool);
  return call_op("all_finite", std::move(defined));
}

// ---- loss scalers -------------------------------------------------------------------------------------

LossScaler::LossScaler(double scale_value, const std::string& name) {
  if (!(scale_value >= 1.0) || !std::isfinite(scale_value) ||
      scale_value > static_cast<double>(std::numeric_limits<float>::max())) {
    throw ValueError("For '" + name + "', the loss scale must be a finite float32 number >= 1, got " +
                     format_number(scale_value));
  }
  scale_value_ = Parameter(scalar(scale_value, DType::Float32), name + ".scale_value", false);
}

Tensor LossScaler::scale(const Tensor& loss) const { return loss * scale_value_; }

std::vector<Tensor> LossScaler::unscale(const std::vector<Tensor>& grads) const {
  const Tensor inv = ops::reciprocal(scale_value_);
  std::vector<Tensor> out;
  out.reserve(grads.size());
  for (const Tensor& g : grads) out.push_back(g.defined() ? g * ops::cast(inv, g.dtype()) : g);
  return out;
}

double LossScaler::current_scale() const { return scale_value_.item(); }

namespace {

// The keys of `state` are exactly `keys` (ValueError naming the first one missing or unknown).
void expect_keys(const std::map<std::string, double>& state, const std::vector<std::string>& keys,
                 const std::string& scaler) {
  for (const std::string& k : keys) {
    if (!state.count(k)) throw ValueError("For '" + scaler + ".load_state', the state has no '" + k + "'");
  }
  for (const auto& [k, v] : state) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
      throw ValueError("For '" + scaler + ".load_state', '" + k + "' is not part of its state");
    }
  }
}

double checked_scale(double v, const std::string& scaler) {
  if (!(v >= 1.0) || !std::isfinite(v) || v > static_cast<double>(std::numeric_limits<float>::max())) {
    throw ValueError("For '" + scaler + ".load_state', loss_scale must be a finite float32 number >= 1, got " +
                     format_number(v));
  }
  return v;
}

}  // namespace

std::map<std::string, double> LossScaler::state() const { return {{"loss_scale", current_scale()}}; }

void LossScaler::load_state(const std::map<std::string, double>& state) {
  expect_keys(state, {"loss_scale"}, "StaticLossScaler");
  scale_value_.assign(scalar(checked_scale(state.at("loss_scale"), "StaticLossScaler"), DType::Float32));
}

std::map<std::string, double> DynamicLossScaler::state() const {
  return {{"loss_scale", current_scale()}, {"loss_scale_finite_steps", counter_.item()}};
}

void DynamicLossScaler::load_state(const std::map<std::string, double>& state) {
  expect_keys(state, {"loss_scale", "loss_scale_finite_steps"}, "DynamicLossScaler");
  const double scale = checked_scale(state.at("loss_scale"), "DynamicLossScaler");
  const double steps = state.at("loss_scale_finite_steps");
  if (!(steps >= 0) || steps != std::floor(steps) || steps >= static_cast<double>(window_)) {
    throw ValueError("For 'DynamicLossScaler.load_state', loss_scale_finite_steps must be a whole number in [0, " +
                     std::to_string(window_) + "), got " + format_number(steps));
  }
  scale_value_.assign(scalar(scale, DType::Float32));
  counter_.assign(scalar(steps, DType::Float32));
}

StaticLossScaler::StaticLossScaler(double scale_value) : LossScaler(scale_value, "StaticLossScaler") {}

void StaticLossScaler::adjust(const Tensor&) {}

DynamicLossScaler::DynamicLossScaler(double scale_value, double scale_factor, int64_t scale_window)
    : LossScaler(scale_value, "DynamicLossScaler"), factor_(scale_factor), window_(scale_window) {
  if (!(scale_factor > 1.0) || !std::isfinite(scale_factor)) {
    throw ValueError("For 'DynamicLossScaler', scale_factor must be a finite number > 1, got " +
                     format_number(scale_factor));
  }
  if (scale_window < 1) {
    throw ValueError("For 'DynamicLossScaler', scale_window must be at least 1, got " + std::to_string(scale_window));
  }
  counter_ = Parameter(zeros({}, DType::Float32), "DynamicLossScaler.counter", false);
}

// MindSpore's DynamicLossScaler.adjust, as ops (a jitted step reads nothing back):
//   scale = finite ? (counter == window - 1 && isfinite(scale * factor) ? scale * factor : scale)
//                  : max(scale / factor, 1)
//   counter = finite ? (counter + 1) mod window : 0
void DynamicLossScaler::adjust(const Tensor& grads_finite) {
  const Tensor no = full({}, 0.0, DType::Bool);
  const Tensor zero = zeros({}, DType::Float32);
  const Tensor scale = scale_value_;
  const Tensor grown = scale * factor_;
  const Tensor window_full = ops::equal(counter_, scalar(static_cast<double>(window_ - 1), DType::Float32));
  const Tensor on_finite = ops::where(ops::where(window_full, all_finite({grown}), no), grown, scale);
  const Tensor on_overflow = ops::maximum(scale / factor_, scalar(1.0, DType::Float32));
  scale_value_.assign(ops::where(grads_finite, on_finite, on_overflow));
  counter_.assign(ops::where(grads_finite, ops::where(window_full, zero, counter_ + 1.0), zero));
}

}  // namespace bprop::amp
