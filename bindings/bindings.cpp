// The embind layer of the WebAssembly module: tensor creation, the generic call_op and the op registry's specs,
// and error mapping (autodiff, jit, vectors, nn, amp and the context have their own *_bindings.cpp). It only
// converts and calls the core; web/index.js turns these low-level functions into the package's API. Tensors cross as integer handles
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

// A random seed: a whole number in [0, 2^64).
uint64_t seed_of(double d, const char* fn) {
  if (!(d >= 0 && d < 0x1p64 && d == std::trunc(d))) {
    throw ValueError(std::string(fn) + ": 'seed' must be a non-negative integer, got " + format_number(d));
  }
  return static_cast<uint64_t>(d);
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
}
