// The embind layer of the WebAssembly module: tensor creation, the generic call_op, grad and friends with
// JavaScript callbacks, custom backward operators, and error mapping. It only converts and calls the core;
// web/index.js turns these low-level functions into the package's API. Tensors cross as integer handles
// (handles.h); the per-op hot path does not use embind at all (direct_ops.cpp).
//
// Errors never unwind through WebAssembly frames as JavaScript exceptions (that would skip C++ destructors and
// leave grad levels open). Every exported function catches, records the error kind and message, and returns
// `undefined`; the JavaScript wrapper then throws the matching Error subclass. A JavaScript callback that throws
// has its error kept on the JavaScript side and returns `undefined`; C++ turns that into JsCallbackError, which
// unwinds the core normally, and the wrapper rethrows the original JavaScript error.
#include <emscripten/bind.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bprop/bprop.h"
#include "bprop/limits.h"
#include "bprop/vectors.h"
#include "convert.h"
#include "guard.h"
#include "handles.h"
#include "tensor/format.h"

using emscripten::val;

namespace bprop::js {
namespace {

// ---- conversions --------------------------------------------------------------------------------------

// A whole number within int64's range (checked before converting: a double outside it has no int64 value).
bool whole_int64(double d) { return d >= -0x1p63 && d < 0x1p63 && d == std::trunc(d); }

// A JavaScript number given for an integer argument, or a ValueError naming the function and the argument.
int64_t whole_number(double d, const char* fn, const char* arg) {
  if (!whole_int64(d)) {
    throw ValueError(std::string(fn) + ": '" + arg + "' must be an integer, got " + format_number(d));
  }
  return static_cast<int64_t>(d);
}

// A random seed: a whole number in [0, 2^64).
uint64_t seed_of(double d, const char* fn) {
  if (!(d >= 0 && d < 0x1p64 && d == std::trunc(d))) {
    throw ValueError(std::string(fn) + ": 'seed' must be a non-negative integer, got " + format_number(d));
  }
  return static_cast<uint64_t>(d);
}

Shape to_shape(const val& v) {
  Shape s;
  const int n = v["length"].as<int>();
  if (n > kMaxRank) {
    throw ShapeError("a shape has " + std::to_string(n) + " dimensions, more than the limit of " +
                     std::to_string(kMaxRank));
  }
  for (int i = 0; i < n; ++i) {
    const double d = v[i].as<double>();
    if (!whole_int64(d)) {
      throw ValueError("a shape must be a list of integers, got " + format_number(d) + " at position " +
                       std::to_string(i));
    }
    s.push_back(static_cast<int64_t>(d));
  }
  return s;
}

val from_shape(const Shape& s) {
  val out = val::array();
  for (size_t i = 0; i < s.size(); ++i) out.set(i, static_cast<double>(s[i]));
  return out;
}

/// New handles for ts (null for an undefined tensor).
val from_tensors(const std::vector<Tensor>& ts) {
  val out = val::array();
  for (size_t i = 0; i < ts.size(); ++i) out.set(i, ts[i].defined() ? handle_val(ts[i]) : val::null());
  return out;
}

/// What a JavaScript callback returned: a tensor handle or a nested array of them. The handles were made for
/// C++ (the wrapper hands over new ones), so they are released here. Nesting is bounded: the recursion must not
/// exhaust the WebAssembly stack.
Value to_value(const val& r, int depth = 0) {
  constexpr int kMaxNesting = 64;
  if (r.isUndefined()) throw JsCallbackError();
  if (is_array(r)) {
    if (depth == kMaxNesting) {
      throw ValueError("a function returned arrays nested more than " + std::to_string(kMaxNesting) + " deep");
    }
    std::vector<Value> items;
    const int n = r["length"].as<int>();
    for (int i = 0; i < n; ++i) items.push_back(to_value(r[i], depth + 1));
    return Value(std::move(items));
  }
  return Value(handles().take(r.as<uint32_t>()));
}

/// A list of callback results where null stands for "no gradient".
std::vector<Tensor> to_grads(const val& r) {
  if (r.isUndefined()) throw JsCallbackError();
  std::vector<Tensor> out;
  const int n = r["length"].as<int>();
  for (int i = 0; i < n; ++i) {
    const val item = r[i];
    if (item.isNull() || item.isUndefined()) {
      out.emplace_back();
    } else {
      out.push_back(handles().take(item.as<uint32_t>()));
    }
  }
  return out;
}


// One entry of a list attribute: an int, or a ValueError naming the op, the attribute and the entry. Entries are
// never lists themselves beyond the one level of an int matrix, so nesting is not followed (no recursion).
int64_t list_entry(const std::string& op, const std::string& name, const val& e, const std::string& at) {
  const std::string what = "For '" + op + "', attribute '" + name + "' must hold integers, got ";
  if (e.typeOf().as<std::string>() != "number") throw ValueError(what + "a " + e.typeOf().as<std::string>() + " " + at);
  const double d = e.as<double>();
  if (!whole_int64(d)) {
    throw ValueError(what + format_number(d) + " " + at +
                     (std::isfinite(d) && d == std::trunc(d) ? " (outside the int64 range)" : " (not a whole number)"));
  }
  return static_cast<int64_t>(d);
}

AttrValue to_attr(const std::string& op, const std::string& name, const val& v) {
  if (v.isNull() || v.isUndefined()) return std::monostate{};
  const std::string type = v.typeOf().as<std::string>();
  if (type == "boolean") return v.as<bool>();
  if (type == "string") return v.as<std::string>();
  if (type == "number") {
    const double d = v.as<double>();
    if (whole_int64(d)) return static_cast<int64_t>(d);
    return d;  // an int attribute refuses it with the reason (normalize_attrs)
  }
  if (is_array(v)) {
    const int n = v["length"].as<int>();
    if (n > 0 && is_array(v[0])) {
      IntMatrix m;
      for (int i = 0; i < n; ++i) {
        const val row = v[i];
        if (!is_array(row)) {
          throw ValueError("For '" + op + "', attribute '" + name + "' must be a list of int lists, item " +
                           std::to_string(i) + " is not a list");
        }
        IntList r;
        const int k = row["length"].as<int>();
        for (int j = 0; j < k; ++j) {
          r.push_back(list_entry(op, name, row[j], "at [" + std::to_string(i) + "][" + std::to_string(j) + "]"));
        }
        m.push_back(std::move(r));
      }
      return m;
    }
    IntList l;
    for (int i = 0; i < n; ++i) l.push_back(list_entry(op, name, v[i], "at [" + std::to_string(i) + "]"));
    return l;
  }
  throw ValueError("For '" + op + "', attribute '" + name + "' has an unsupported type (" + type + ")");
}

/// A plain object of snake_case attribute names (the wrapper converts camelCase) to the attributes of `op`.
Attrs to_attrs(const std::string& op, const val& obj) {
  Attrs attrs;
  if (obj.isNull() || obj.isUndefined()) return attrs;
  const val keys = val::global("Object").call<val>("keys", obj);
  const int n = keys["length"].as<int>();
  for (int i = 0; i < n; ++i) {
    const std::string k = keys[i].as<std::string>();
    const val v = obj[k];
    if (v.isUndefined()) continue;
    attrs.set(k, to_attr(op, k, v));
  }
  return attrs;
}

val attr_to_val(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> val {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return val::null();
        } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, double> || std::is_same_v<T, std::string>) {
          return val(x);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return val(static_cast<double>(x));
        } else if constexpr (std::is_same_v<T, IntList>) {
          return from_shape(x);
        } else {
          val out = val::array();
          for (size_t i = 0; i < x.size(); ++i) out.set(i, from_shape(x[i]));
          return out;
        }
      },
      v);
}

/// A core Fn that calls a JavaScript function with an array of tensor handles.
Fn js_fn(const val& f) {
  return [f](const std::vector<Tensor>& args) -> Value { return to_value(f(from_tensors(args))); };
}

val typed_view(const Tensor& t) {
  const size_t n = static_cast<size_t>(t.numel());
  switch (t.dtype()) {
    case DType::Float32: return val(emscripten::typed_memory_view(n, t.data<float>()));
    case DType::Float64: return val(emscripten::typed_memory_view(n, t.data<double>()));
    case DType::Int32: return val(emscripten::typed_memory_view(n, t.data<int32_t>()));
    case DType::Float16:
    case DType::BFloat16:  // the bits
      return val(emscripten::typed_memory_view(n, reinterpret_cast<const uint16_t*>(t.raw_data())));
    case DType::Bool: break;
  }
  return val(emscripten::typed_memory_view(n, reinterpret_cast<const uint8_t*>(t.raw_data())));
}

// ---- tensors ------------------------------------------------------------------------------------------

val from_bytes(val bytes, val shape, std::string dtype) {
  return guarded([&] {
    const DType dt = parse_dtype(dtype);
    const Shape s = to_shape(shape);
    const size_t n = static_cast<size_t>(bytes["length"].as<double>());
    // The data must fill the shape before anything is allocated for it (shape_numel saturates, never wraps).
    if (n % dtype_size(dt) != 0 || shape_numel(s) != static_cast<int64_t>(n / dtype_size(dt))) {
      throw ValueError("bprop.tensor: got " + std::to_string(n / dtype_size(dt)) + " values for shape " +
                       shape_str(s));
    }
    Tensor t = Tensor::empty(s, dt);
    val(emscripten::typed_memory_view(n, static_cast<uint8_t*>(t.raw_data()))).call<void>("set", bytes);
    return handle_val(std::move(t));
  });
}

/// A tensor of a float dtype from JavaScript numbers: `bytes` holds them as float64, each converted to `dtype` (to a
/// half dtype through float32, as every float64 value is).
val from_numbers(val bytes, val shape, std::string dtype) {
  return guarded([&] {
    const DType dt = parse_dtype(dtype);
    if (!is_float(dt)) throw DTypeError("bprop.tensor: numbers convert to a float dtype, not " + dtype);
    const Shape s = to_shape(shape);
    const size_t n = static_cast<size_t>(bytes["length"].as<double>()) / sizeof(double);
    if (shape_numel(s) != static_cast<int64_t>(n)) {
      throw ValueError("bprop.tensor: got " + std::to_string(n) + " values for shape " + shape_str(s));
    }
    Tensor wide = Tensor::empty(s, DType::Float64);
    val(emscripten::typed_memory_view(n * sizeof(double), static_cast<uint8_t*>(wide.raw_data())))
        .call<void>("set", bytes);
    return handle_val(convert(wide, dt));
  });
}

/// The dtype names in bprop::DType order (bp_dtype returns an index into them).
val dtype_names() {
  val out = val::array();
  for (int i = 0; i < 6; ++i) out.set(i, std::string(dtype_name(static_cast<DType>(i))));
  return out;
}
val to_string(uint32_t h, int max_elements) {
  return guarded([&] {
    const Tensor& t = handles().get(h);
    // An abstract tensor (jit tracing) has a shape and a dtype and no values to show.
    if (t.is_abstract()) {
      return val("Tensor(shape=" + shape_str(t.shape()) + ", dtype=" + dtype_name(t.dtype()) + ", traced)");
    }
    return val(t.to_string(max_elements));
  });
}
val clone(uint32_t h) {
  return guarded([&] { return handle_val(handles().get(h).clone()); });
}

val full(val shape, double value, std::string dtype) {
  return guarded([&] { return handle_val(bprop::full(to_shape(shape), value, parse_dtype(dtype))); });
}
val arange(double start, double stop, double step, std::string dtype) {
  return guarded([&] { return handle_val(bprop::arange(start, stop, step, parse_dtype(dtype))); });
}
val linspace(double start, double stop, double num, std::string dtype) {
  return guarded([&] {
    return handle_val(bprop::linspace(start, stop, whole_number(num, "linspace", "num"), parse_dtype(dtype)));
  });
}
val eye(double n, std::string dtype) {
  return guarded([&] { return handle_val(bprop::eye(whole_number(n, "eye", "n"), parse_dtype(dtype))); });
}
val randn(val shape, double seed, std::string dtype) {
  return guarded([&] { return handle_val(bprop::randn(to_shape(shape), seed_of(seed, "randn"), parse_dtype(dtype))); });
}
val rand(val shape, double seed, double low, double high, std::string dtype) {
  return guarded([&] {
    return handle_val(bprop::rand(to_shape(shape), seed_of(seed, "rand"), low, high, parse_dtype(dtype)));
  });
}
val scalar_like(double v, uint32_t like) {
  return guarded([&] { return handle_val(bprop::scalar_like(v, handles().get(like))); });
}
val scalar(double v, std::string dtype) {
  return guarded([&] { return handle_val(bprop::scalar(v, parse_dtype(dtype))); });
}

// Live tensor storages and their bytes; the WebAssembly heap's size (memory only grows: this is also its
// high-water mark) and the bytes malloc has handed out now (tensors, graphs, cells, the bindings' own objects).
val memory() {
  const MemoryStats s = memory_stats();
  val out = val::object();
  out.set("tensors", static_cast<double>(s.storages));
  out.set("bytes", static_cast<double>(s.bytes));
  out.set("heapBytes", static_cast<double>(emscripten_get_heap_size()));
  out.set("heapUsed", static_cast<double>(mallinfo().uordblks));
  return out;
}

// ---- ops ----------------------------------------------------------------------------------------------

val call_op(std::string name, val inputs, val attrs) {
  return guarded([&] { return handle_val(bprop::call_op(name, to_tensors(inputs), to_attrs(name, attrs))); });
}

val op_names() {
  return guarded([&] {
    const std::vector<std::string> names = registry().names();
    val out = val::array();
    for (size_t i = 0; i < names.size(); ++i) out.set(i, names[i]);
    return out;
  });
}

/// {inputs: [{name, optional}], variadic, attrs: [{name, default}], noGrad, family} of a registered op.
val op_spec(std::string name) {
  return guarded([&] {
    const OpDef& op = registry().get(name);
    val out = val::object();
    val inputs = val::array();
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      val in = val::object();
      in.set("name", op.inputs[i].name);
      in.set("optional", op.inputs[i].optional);
      inputs.set(i, in);
    }
    val attrs = val::array();
    for (size_t i = 0; i < op.attrs.size(); ++i) {
      val a = val::object();
      a.set("name", op.attrs[i].name);
      a.set("required", op.attrs[i].required);
      a.set("default", attr_to_val(op.attrs[i].default_value));
      attrs.set(i, a);
    }
    out.set("name", op.name);
    out.set("inputs", inputs);
    out.set("variadic", op.variadic);
    out.set("attrs", attrs);
    out.set("noGrad", op.no_grad);
    out.set("family", op.family);
    return out;
  });
}

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

// ---- graph mode (jit) ---------------------------------------------------------------------------------

/// Jitted functions cross to JavaScript as integer ids into this table, as tensors do (handles.h). Id 0 is
/// never given out. Each id is owned by one JavaScript function and released once (dispose, or the
/// FinalizationRegistry); releasing it frees the cached graphs and the JavaScript callback they were traced from.
class JitTable {
 public:
  uint32_t add(JitFn f) {
    if (free_.empty()) {
      slots_.emplace_back(std::move(f));
      return static_cast<uint32_t>(slots_.size());
    }
    const uint32_t id = free_.back();
    free_.pop_back();
    slots_[id - 1].emplace(std::move(f));
    return id;
  }
  /// A copy of the function of `id` (a call may add to the table, so no reference into it is kept).
  JitFn get(uint32_t id) const {
    if (id == 0 || id > slots_.size() || !slots_[id - 1].has_value()) {
      throw ValueError("For 'jit', the jitted function has been disposed");
    }
    return *slots_[id - 1];
  }
  void release(uint32_t id) {
    if (id == 0 || id > slots_.size() || !slots_[id - 1].has_value()) return;
    // Moved out first: destroying it may run JavaScript (the callback's handle), which may use the table.
    std::optional<JitFn> gone = std::move(slots_[id - 1]);
    slots_[id - 1].reset();
    free_.push_back(id);
  }
  size_t live() const { return slots_.size() - free_.size(); }

 private:
  std::vector<std::optional<JitFn>> slots_;
  std::vector<uint32_t> free_;
};

JitTable& jits() {
  static JitTable table;
  return table;
}

/// JitOptions from {optimize, fuse, staticArgnums, warnAfterTraces, maxTraces} (checked by the wrapper; an
/// absent field keeps the default).
JitOptions to_jit_options(const val& o) {
  JitOptions opts;
  if (o.isNull() || o.isUndefined()) return opts;
  if (!o["optimize"].isUndefined()) opts.optimize = o["optimize"].as<bool>();
  if (!o["fuse"].isUndefined()) opts.fuse = o["fuse"].as<bool>();
  if (!o["staticArgnums"].isUndefined()) {
    const val list = o["staticArgnums"];
    const int n = list["length"].as<int>();
    for (int i = 0; i < n; ++i) {
      opts.static_argnums.push_back(static_cast<int>(whole_number(list[i].as<double>(), "jit", "staticArgnums")));
    }
  }
  if (!o["warnAfterTraces"].isUndefined()) {
    opts.warn_after_traces = whole_number(o["warnAfterTraces"].as<double>(), "jit", "warnAfterTraces");
  }
  if (!o["maxTraces"].isUndefined()) opts.max_traces = whole_number(o["maxTraces"].as<double>(), "jit", "maxTraces");
  return opts;
}

/// A jitted function of a JavaScript function (called with an array of tensor handles, as grad's are).
/// Marks the nodes traced from now on with a JavaScript source location (web/index.js calls it, while a jitted
/// function is being traced, with the stack frame of the code calling an op). Nothing outside a trace.
void set_trace_location(std::string where) {
  if (graph::tracing()) graph::current_tracer()->set_location(std::move(where));
}

val jit_create(val fn, val options) {
  // (no C++ site: bp.jit marks every op with its JavaScript caller)
  return guarded([&] { return val(jits().add(bprop::jit(js_fn(fn), to_jit_options(options), {nullptr, 0}))); });
}

/// One whole call: traced on a new signature, replayed otherwise (eagerly under an open grad level); the result
/// as new handles, nested as the function's result.
val jit_call(uint32_t id, val args) {
  return guarded([&] {
    const JitFn f = jits().get(id);
    return from_value(f(to_tensors(args)));
  });
}

val jit_lower(uint32_t id, val args) {
  return guarded([&] {
    const JitFn f = jits().get(id);
    return val(f.lower(to_tensors(args)));
  });
}

val jit_export_graph(uint32_t id, val args) {
  return guarded([&] {
    const JitFn f = jits().get(id);
    return val(f.export_graph(to_tensors(args)));
  });
}

val jit_stats(uint32_t id) {
  return guarded([&] {
    const JitStats s = jits().get(id).stats();
    val out = val::object();
    out.set("traces", static_cast<double>(s.traces));
    out.set("replays", static_cast<double>(s.replays));
    out.set("eagerCalls", static_cast<double>(s.eager_calls));
    out.set("gradCalls", static_cast<double>(s.grad_calls));
    out.set("nodesTraced", static_cast<double>(s.nodes_traced));
    out.set("nodes", static_cast<double>(s.nodes));
    out.set("fusedGroups", static_cast<double>(s.fused_groups));
    out.set("kernels", static_cast<double>(s.kernels));
    out.set("compileSeconds", s.compile_seconds);
    out.set("plannedBytes", static_cast<double>(s.planned_bytes));
    out.set("eagerBytes", static_cast<double>(s.eager_bytes));
    out.set("donatedUpdates", static_cast<double>(s.donated_updates));
    out.set("inPlace", static_cast<double>(s.in_place));
    val passes = val::array();
    for (size_t i = 0; i < s.passes.size(); ++i) {
      val p = val::object();
      p.set("pass", s.passes[i].pass);
      p.set("before", static_cast<double>(s.passes[i].before));
      p.set("after", static_cast<double>(s.passes[i].after));
      passes.set(i, p);
    }
    out.set("passes", passes);
    return out;
  });
}

val jit_release(uint32_t id) {
  return guarded([&] {
    jits().release(id);
    return val(true);
  });
}

/// Jitted functions not yet released (for the memory tests).
val jit_live() { return val(static_cast<double>(jits().live())); }

// ---- gradient test vectors ----------------------------------------------------------------------------

/// Runs a vector file given as text through the core's runner (the same one `bprop check` uses; with `jit`,
/// as `bprop check --jit`: programs and gradient computations traced with bprop::jit and replayed):
/// {errors: [reading problems], passed, failed, results: [{name, passed, line, raised}]} where `line` is
/// the runner's description of a failed case.
val run_vectors(std::string text, std::string path, bool jit) {
  return guarded([&] {
    const vectors::VectorFile file = vectors::parse(text, path);
    const vectors::FileSummary s = vectors::run_file(file, jit);
    val errors = val::array();
    for (size_t i = 0; i < file.errors.size(); ++i) errors.set(i, file.errors[i]);
    val results = val::array();
    for (size_t i = 0; i < s.results.size(); ++i) {
      const vectors::CaseResult& r = s.results[i];
      val o = val::object();
      o.set("name", r.name);
      o.set("passed", r.passed);
      o.set("line", r.passed ? std::string() : vectors::describe(r));
      o.set("raised", r.raised);
      results.set(i, o);
    }
    val out = val::object();
    out.set("errors", errors);
    out.set("passed", s.passed);
    out.set("failed", s.failed);
    out.set("results", results);
    return out;
  });
}

/// What every value case of a vector file computes (vectors::compute), eagerly or through jit, before any
/// comparison: {errors: [reading problems], cases: [{name, value, grads: [...], second: [...]} with new tensor
/// handles, or {name, error: message} when the computation raised]}. Error cases are left out.
val compute_vectors(std::string text, std::string path, bool jit) {
  return guarded([&] {
    const vectors::VectorFile file = vectors::parse(text, path);
    val errors = val::array();
    for (size_t i = 0; i < file.errors.size(); ++i) errors.set(i, file.errors[i]);
    val cases = val::array();
    int n = 0;
    for (const vectors::Case& c : file.cases) {
      if (c.expects_error()) continue;
      val o = val::object();
      o.set("name", c.name);
      try {
        const vectors::Computed r = vectors::compute(c, jit);
        o.set("value", handle_val(r.value));
        o.set("grads", from_tensors(r.grads));
        o.set("second", from_tensors(r.second));
      } catch (const Error& e) {
        o.set("error", std::string(e.what()));
      }
      cases.set(n++, o);
    }
    val out = val::object();
    out.set("errors", errors);
    out.set("cases", cases);
    return out;
  });
}

/// Runs every case of a vector file without comparing to its expectations (vectors::case_outcome):
/// {errors: [reading problems], cases: [{name, outcome, shape, dtype} when ok, {name, outcome, message} when not]}.
val vector_outcomes(std::string text, std::string path) {
  return guarded([&] {
    const vectors::VectorFile file = vectors::parse(text, path);
    val errors = val::array();
    for (size_t i = 0; i < file.errors.size(); ++i) errors.set(i, file.errors[i]);
    val cases = val::array();
    for (size_t i = 0; i < file.cases.size(); ++i) {
      const vectors::CaseOutcome o = vectors::case_outcome(file.cases[i]);
      val c = val::object();
      c.set("name", o.name);
      c.set("outcome", o.outcome);
      if (o.ok()) {
        val shape = val::array();
        // Dimensions as doubles: a JavaScript number holds every size a tensor can have.
        for (size_t k = 0; k < o.shape.size(); ++k) shape.set(k, static_cast<double>(o.shape[k]));
        c.set("shape", shape);
        c.set("dtype", std::string(dtype_name(o.dtype)));
      } else {
        c.set("message", o.message);
      }
      cases.set(i, c);
    }
    val out = val::object();
    out.set("errors", errors);
    out.set("cases", cases);
    return out;
  });
}

}  // namespace
}  // namespace bprop::js

EMSCRIPTEN_BINDINGS(bprop) {
  using namespace emscripten;
  namespace js = bprop::js;
  function("takeError", &js::take_error);

  function("fromBytes", &js::from_bytes);
  function("dtypeNames", &js::dtype_names);
  function("fromNumbers", &js::from_numbers);
  function("toString", &js::to_string);
  function("clone", &js::clone);
  function("full", &js::full);
  function("arange", &js::arange);
  function("linspace", &js::linspace);
  function("eye", &js::eye);
  function("randn", &js::randn);
  function("rand", &js::rand);
  function("scalarLike", &js::scalar_like);
  function("scalar", &js::scalar);
  function("memory", &js::memory);

  function("callOp", &js::call_op);
  function("opNames", &js::op_names);
  function("opSpec", &js::op_spec);

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
  function("runVectors", &js::run_vectors);
  function("computeVectors", &js::compute_vectors);
  function("vectorOutcomes", &js::vector_outcomes);

  function("jitCreate", &js::jit_create);
  function("setTraceLocation", &js::set_trace_location);
  function("jitCall", &js::jit_call);
  function("jitLower", &js::jit_lower);
  function("jitExportGraph", &js::jit_export_graph);
  function("jitStats", &js::jit_stats);
  function("jitRelease", &js::jit_release);
  function("jitLive", &js::jit_live);
}
