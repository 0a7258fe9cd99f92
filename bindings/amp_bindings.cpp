// The embind layer of mixed precision (bprop/amp.h): autocast scopes, loss scalers, the loss-scaled training step
// and the gated optimizer step. web/amp.js builds bp.amp on top. Errors follow guard.h's convention (read with
// nnTakeError, which reads the same record).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bprop/bprop.h"
#include "bprop/nn/train.h"
#include "convert.h"
#include "guard.h"
#include "handles.h"

using emscripten::val;

namespace bprop::js_amp {
namespace {

using js::guarded;
using js::handle_val;
using js::handles;
using js::tensor_arg;
using js::to_tensors;

// The scopes JavaScript opened, innermost last. bp.amp.autocast closes what it opens in a finally block, so they
// close in order; ampExit with none open is a ValueError rather than a crash.
std::vector<std::unique_ptr<amp::AutocastScope>>& open_scopes() {
  static std::vector<std::unique_ptr<amp::AutocastScope>> scopes;
  return scopes;
}

// A scaler as JavaScript holds it: the dynamic one's own interface too (the module has no RTTI, so no
// dynamic_cast).
struct Scaler {
  std::shared_ptr<amp::LossScaler> base;
  std::shared_ptr<amp::DynamicLossScaler> dynamic;  // null for a static scaler
};
using ScalerPtr = std::shared_ptr<Scaler>;

DType half_dtype(const std::string& who, const std::string& name) {
  const DType d = parse_dtype(name, who + " dtype");
  if (d != DType::Float16 && d != DType::BFloat16) {
    throw DTypeError("For '" + who + "', dtype must be float16 or bfloat16, got " + name);
  }
  return d;
}

val amp_enter(std::string level, std::string dtype) {
  return guarded([&] {
    const amp::Level l = amp::parse_level(level);
    const DType d = half_dtype("bp.amp.autocast", dtype);
    open_scopes().push_back(std::make_unique<amp::AutocastScope>(l, d));
    return val(static_cast<double>(open_scopes().size()));
  });
}

val amp_exit() {
  return guarded([&] {
    if (open_scopes().empty()) throw ValueError("For 'bp.amp.autocast', no scope is open");
    open_scopes().pop_back();
    return val(static_cast<double>(open_scopes().size()));
  });
}

/// {level, dtype} of the innermost scope.
val amp_state() {
  return guarded([&] {
    val out = val::object();
    out.set("level", std::string(amp::level_name(amp::current_level())));
    out.set("dtype", std::string(dtype_name(amp::current_dtype())));
    return out;
  });
}

/// kind "dynamic" (args scaleValue, scaleFactor, scaleWindow) or "static" (scaleValue).
val make_loss_scaler(std::string kind, double scale_value, double scale_factor, double scale_window) {
  return guarded([&] {
    auto s = std::make_shared<Scaler>();
    if (kind == "dynamic") {
      if (scale_window < 1 || scale_window != static_cast<double>(static_cast<int64_t>(scale_window))) {
        throw ValueError("For 'DynamicLossScaler', scaleWindow must be a positive integer, got " +
                         std::to_string(scale_window));
      }
      s->dynamic = std::make_shared<amp::DynamicLossScaler>(scale_value, scale_factor,
                                                            static_cast<int64_t>(scale_window));
      s->base = s->dynamic;
    } else if (kind == "static") {
      s->base = std::make_shared<amp::StaticLossScaler>(scale_value);
    } else {
      throw ValueError("unknown loss scaler '" + kind + "' (known: 'dynamic', 'static')");
    }
    return val(s);
  });
}

val scaler_scale(ScalerPtr s, val loss) {
  return guarded([&] { return handle_val(s->base->scale(tensor_arg(loss))); });
}

val scaler_unscale(ScalerPtr s, val grads) {
  return guarded([&] {
    val out = val::array();
    const std::vector<Tensor> gs = s->base->unscale(to_tensors(grads));
    for (size_t i = 0; i < gs.size(); ++i) out.set(i, handle_val(gs[i]));
    return out;
  });
}

val scaler_adjust(ScalerPtr s, val finite) {
  return guarded([&] {
    s->base->adjust(tensor_arg(finite));
    return val(true);
  });
}

/// {scale (the Parameter's handle), counter (dynamic only), scaleFactor, scaleWindow}.
val scaler_info(ScalerPtr s) {
  return guarded([&] {
    val out = val::object();
    out.set("scale", handle_val(s->base->scale_value()));
    if (const amp::DynamicLossScaler* d = s->dynamic.get()) {
      out.set("counter", handle_val(d->counter()));
      out.set("scaleFactor", d->scale_factor());
      out.set("scaleWindow", static_cast<double>(d->scale_window()));
    }
    return out;
  });
}

/// LossScaler::state(): {loss_scale, loss_scale_finite_steps (dynamic only)}.
val scaler_state(ScalerPtr s) {
  return guarded([&] {
    val out = val::object();
    for (const auto& [key, value] : s->base->state()) out.set(key, value);
    return out;
  });
}

/// LossScaler::load_state from an object of numbers.
val scaler_load_state(ScalerPtr s, val state) {
  return guarded([&] {
    std::map<std::string, double> m;
    const val keys = val::global("Object").call<val>("keys", state);
    const int n = keys["length"].as<int>();
    for (int i = 0; i < n; ++i) {
      const std::string key = keys[i].as<std::string>();
      const val v = state[key];
      if (v.typeOf().as<std::string>() != "number") {
        throw ValueError("For 'LossScaler.loadState', '" + key + "' must be a number");
      }
      m[key] = v.as<double>();
    }
    s->base->load_state(m);
    return val(true);
  });
}

/// unscale + all_finite: [unscaled gradient handles, finite flag handle].
val scaler_unscale_and_check(ScalerPtr s, val grads) {
  return guarded([&] {
    const nn::UnscaledGradients g = nn::unscale_and_check(*s->base, to_tensors(grads));
    val list = val::array();
    for (size_t i = 0; i < g.grads.size(); ++i) list.set(i, handle_val(g.grads[i]));
    val out = val::array();
    out.set(0, list);
    out.set(1, handle_val(g.finite));
    return out;
  });
}

/// The core's TrainOneStepWithLossScaleCell on `network` (a core cell: a layer, or a JsCell).
val make_train_one_step_with_loss_scale_cell(std::shared_ptr<Cell> network, std::shared_ptr<optim::Optimizer> opt,
                                             ScalerPtr scaler, bool has_aux) {
  return guarded([&] {
    return val(std::shared_ptr<Cell>(
        std::make_shared<nn::TrainOneStepWithLossScaleCell>(network, opt, scaler->base, has_aux)));
  });
}

val optimizer_step_if(std::shared_ptr<optim::Optimizer> opt, val grads, val apply_if) {
  return guarded([&] {
    opt->step(to_tensors(grads), tensor_arg(apply_if));
    return val(true);
  });
}

}  // namespace
}  // namespace bprop::js_amp

EMSCRIPTEN_BINDINGS(bprop_amp) {
  using namespace emscripten;
  namespace js = bprop::js_amp;
  class_<js::Scaler>("AmpLossScaler").smart_ptr<js::ScalerPtr>("AmpLossScalerPtr");
  function("ampEnter", &js::amp_enter);
  function("ampExit", &js::amp_exit);
  function("ampState", &js::amp_state);
  function("ampMakeLossScaler", &js::make_loss_scaler);
  function("ampScalerScale", &js::scaler_scale);
  function("ampScalerUnscale", &js::scaler_unscale);
  function("ampScalerAdjust", &js::scaler_adjust);
  function("ampScalerInfo", &js::scaler_info);
  function("ampScalerState", &js::scaler_state);
  function("ampScalerLoadState", &js::scaler_load_state);
  function("ampScalerUnscaleAndCheck", &js::scaler_unscale_and_check);
  function("nnOptimizerStepIf", &js::optimizer_step_if);
  function("ampMakeTrainOneStepWithLossScaleCell", &js::make_train_one_step_with_loss_scale_cell);
}
