// The embind layer of automatic differentiation: grad and value_and_grad, vjp, jvp, jacobians, gradcheck and the
// exported backward graph with JavaScript functions as callbacks; no_grad; Cells' custom bprops (apply_custom),
// Parameters, and primitives registered from JavaScript. Errors follow guard.h's convention.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>
#include <utility>
#include <vector>

#include "bprop/bprop.h"
#include "convert.h"
#include "guard.h"
#include "handles.h"

using emscripten::val;

namespace bprop::js {
namespace {

// ---- autodiff -----------------------------------------------------------------------------------------

GradPosition to_position(const val& p) {
  if (p.isNull() || p.isUndefined()) return GradPosition(nullptr);
  if (is_array(p)) {
    std::vector<int> ps;
    const int n = p["length"].as<int>();
    for (int i = 0; i < n; ++i) ps.push_back(p[i].as<int>());
    return GradPosition(std::move(ps));
  }
  return GradPosition(p.as<int>());
}

/// grad / value_and_grad applied at once: the wrapper keeps fn and options in a closure.
val grad_call(val fn, val position, val weights, bool has_aux, bool with_value, val args, val sens) {
  return guarded([&] {
    const GradFn g = with_value ? value_and_grad(js_fn(fn), to_position(position), to_parameters("grad", weights), has_aux)
                                : grad(js_fn(fn), to_position(position), to_parameters("grad", weights), has_aux);
    const std::vector<Tensor> a = to_tensors(args);
    const Tensor s = tensor_arg(sens);
    const Value r = s.defined() ? g(a, s) : g(a);
    return from_value(r);
  });
}

val vjp_call(val fn, val inputs, uint32_t v) {
  return guarded([&] {
    auto [out, grads] = bprop::vjp(js_fn(fn), to_tensors(inputs), handles().get(v));
    val r = val::array();
    r.set(0, handle_val(out));
    r.set(1, from_tensors(grads));
    return r;
  });
}

val export_graph_call(val fn, val inputs, val names, int max_values) {
  return guarded([&] {
    bprop::GraphExportOptions opts;
    opts.input_names = emscripten::vecFromJSArray<std::string>(names);
    opts.max_values = max_values;
    return val(bprop::export_grad_graph(js_fn(fn), to_tensors(inputs), opts));
  });
}

val jvp_call(val fn, val inputs, val tangents) {
  return guarded([&] {
    auto [out, t] = bprop::jvp(js_fn(fn), to_tensors(inputs), to_tensors(tangents));
    val r = val::array();
    r.set(0, handle_val(out));
    r.set(1, handle_val(t));
    return r;
  });
}

val jacobian_call(std::string kind, val fn, int argnum, val inputs) {
  return guarded([&] {
    std::function<Tensor(const std::vector<Tensor>&)> j;
    if (kind == "jacrev") {
      j = bprop::jacrev(js_fn(fn), argnum);
    } else if (kind == "jacfwd") {
      j = bprop::jacfwd(js_fn(fn), argnum);
    } else {
      j = bprop::hessian(js_fn(fn), argnum);
    }
    return handle_val(j(to_tensors(inputs)));
  });
}

val gradcheck_call(val fn, val inputs, double eps, double atol, double rtol, bool second) {
  return guarded([&] {
    const CheckOptions opts{eps, atol, rtol};
    const CheckResult r = second ? bprop::gradgradcheck(js_fn(fn), to_tensors(inputs), opts)
                                 : bprop::gradcheck(js_fn(fn), to_tensors(inputs), opts);
    val out = val::object();
    out.set("ok", r.ok);
    out.set("maxAbsError", r.max_abs_error);
    out.set("message", r.message);
    return out;
  });
}

/// Runs a JavaScript body with every grad level suspended.
val no_grad_call(val body) {
  return guarded([&] {
    bprop::no_grad([&] {
      if (body().isUndefined()) throw JsCallbackError();
    });
    return val(true);
  });
}

/// A custom backward operator (a JavaScript Cell with bprop): forward(handles) -> handle, bprop(handles, out,
/// dout) -> array of handles or nulls.
val apply_custom(std::string name, val inputs, val forward, val bprop_fn) {
  return guarded([&] {
    const Tensor out = autodiff::apply_custom(
        name, to_tensors(inputs),
        [forward, name](const std::vector<Tensor>& in) {
          const Value v = to_value(forward(from_tensors(in)));
          if (!v.is_tensor()) throw ValueError("For '" + name + "', construct must return one tensor");
          return v.tensor();
        },
        [bprop_fn](const std::vector<Tensor>& in, const Tensor& o, const Tensor& d) {
          return to_grads(bprop_fn(from_tensors(in), handle_val(o), handle_val(d)));
        });
    return handle_val(out);
  });
}

val make_parameter(uint32_t t, std::string name, bool requires_grad) {
  return guarded([&] { return handle_val(static_cast<Tensor>(Parameter(handles().get(t), name, requires_grad))); });
}
val parameter_assign(uint32_t p, uint32_t value) {
  return guarded([&] {
    Parameter::from(handles().get(p)).assign(handles().get(value));
    return val(true);
  });
}
val parameter_info(uint32_t h) {
  return guarded([&] {
    const Tensor& p = handles().get(h);
    val out = val::object();
    out.set("isParameter", p.impl()->is_parameter);
    out.set("name", p.impl()->param_name());
    out.set("requiresGrad", p.impl()->requires_grad);
    return out;
  });
}
val set_requires_grad(uint32_t p, bool v) {
  return guarded([&] {
    Parameter::from(handles().get(p)).set_requires_grad(v);
    return val(true);
  });
}

/// A primitive whose shape rule, dtype rule, forward kernel and bprop are JavaScript functions:
/// infer_shape(shapes) -> shape, infer_dtype(dtypes) -> name, forward(arrays, shapes, dtypes, outShape,
/// outDtype) -> values, bprop(handles, out, dout) -> array of handles or nulls (out is null when reads_out is false).
val register_primitive_call(std::string name, val input_names, val infer_shape, val infer_dtype, val forward,
                            val bprop_fn, bool reads_out) {
  return guarded([&] {
    PrimitiveDef def;
    def.name = name;
    def.bprop_reads_out = reads_out;
    const int n = input_names["length"].as<int>();
    for (int i = 0; i < n; ++i) def.inputs.push_back(input_names[i].as<std::string>());
    const auto shapes = [](const std::vector<Tensor>& ts) {
      val out = val::array();
      for (size_t i = 0; i < ts.size(); ++i) out.set(i, ts[i].defined() ? from_shape(ts[i].shape()) : val::null());
      return out;
    };
    const auto dtypes = [](const std::vector<Tensor>& ts) {
      val out = val::array();
      for (size_t i = 0; i < ts.size(); ++i) {
        out.set(i, ts[i].defined() ? val(std::string(dtype_name(ts[i].dtype()))) : val::null());
      }
      return out;
    };
    def.infer_shape = [infer_shape, shapes](const InferCtx& c) {
      const val r = infer_shape(shapes(c.inputs));
      if (r.isUndefined()) throw JsCallbackError();
      return to_shape(r);
    };
    def.infer_dtype = [infer_dtype, dtypes](const InferCtx& c) {
      const val r = infer_dtype(dtypes(c.inputs));
      if (r.isUndefined()) throw JsCallbackError();
      return parse_dtype(r.as<std::string>(), "For '" + c.op.name + "', inferDtype's result");
    };
    def.forward = [forward, shapes, dtypes](KernelCtx& c) {
      val arrays = val::array();
      for (size_t i = 0; i < c.inputs.size(); ++i) {
        arrays.set(i, c.inputs[i].defined() ? typed_view(c.inputs[i]).call<val>("slice") : val::null());
      }
      const val r = forward(arrays, shapes(c.inputs), dtypes(c.inputs), from_shape(c.out_shape),
                            val(std::string(dtype_name(c.out_dtype))));
      if (r.isUndefined()) throw JsCallbackError();
      const int64_t got = static_cast<int64_t>(r["length"].as<double>());
      if (got != c.out.numel()) {
        throw ValueError("For '" + c.op.name + "', forward returned " + std::to_string(got) + " values for shape " +
                         shape_str(c.out_shape));
      }
      typed_view(c.out).call<void>("set", r);
    };
    def.bprop = [bprop_fn](const std::vector<Tensor>& in, const Tensor& o, const Tensor& d) {
      return to_grads(bprop_fn(from_tensors(in), o.defined() ? handle_val(o) : val::null(), handle_val(d)));
    };
    register_primitive(def);
    return val(true);
  });
}

}  // namespace
}  // namespace bprop::js

EMSCRIPTEN_BINDINGS(bprop_autodiff) {
  using namespace emscripten;
  namespace js = bprop::js;
  function("gradCall", &js::grad_call);
  function("vjp", &js::vjp_call);
  function("jvp", &js::jvp_call);
  function("exportGraph", &js::export_graph_call);
  function("jacobian", &js::jacobian_call);
  function("gradcheck", &js::gradcheck_call);
  function("noGrad", &js::no_grad_call);
  function("applyCustom", &js::apply_custom);
  function("makeParameter", &js::make_parameter);
  function("parameterAssign", &js::parameter_assign);
  function("parameterInfo", &js::parameter_info);
  function("setRequiresGrad", &js::set_requires_grad);
  function("registerPrimitive", &js::register_primitive_call);
}
