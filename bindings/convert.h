// Conversions between JavaScript values and core types shared by the embind files: tensors cross as integer
// handles (handles.h), lists as JavaScript arrays, functions as JavaScript callbacks taking an array of handles.
#pragma once
#include <emscripten/val.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "bprop/bprop.h"
#include "bprop/limits.h"
#include "graph/trace.h"
#include "guard.h"
#include "handles.h"
#include "tensor/format.h"

namespace bprop::js {

using emscripten::val;

/// A ValueError when bp.jit is tracing: `what` reads or writes tensor values (an optimizer's update, a
/// checkpoint), which a traced function has only as shapes and dtypes, and would run once, not at every call.
inline void refuse_while_tracing(const std::string& what, const std::string& instead) {
  if (graph::tracing()) {
    throw ValueError("For 'jit', " + what + " inside a traced function is not supported: " + instead);
  }
}

inline bool is_array(const val& v) {
  static const val array = val::global("Array");
  return array.call<bool>("isArray", v);
}

/// A new handle for t, as a JavaScript number.
inline val handle_val(Tensor t) { return val(handles().add(std::move(t))); }

/// The tensor behind a handle; undefined, null or 0 is an omitted optional tensor.
inline Tensor tensor_arg(const val& v) {
  if (v.isNull() || v.isUndefined()) return Tensor{};
  return handles().get_or_none(v.as<uint32_t>());
}

/// A list of tensor handles (null or 0 for an omitted optional tensor) to tensors.
inline std::vector<Tensor> to_tensors(const val& list) {
  std::vector<Tensor> out;
  const int n = list["length"].as<int>();
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(tensor_arg(list[i]));
  return out;
}

/// A list of parameter handles; `who` names the caller in the error for an item that is not a Parameter.
inline std::vector<Parameter> to_parameters(const std::string& who, const val& list) {
  std::vector<Parameter> out;
  size_t i = 0;
  for (const Tensor& t : to_tensors(list)) {
    if (!t.defined() || !t.impl()->is_parameter) {
      throw ValueError("For '" + who + "', item " + std::to_string(i) + " of the parameter list is not a Parameter");
    }
    out.push_back(Parameter::from(t));
    ++i;
  }
  return out;
}

inline std::vector<std::string> to_strings(const val& list) {
  std::vector<std::string> out;
  const int n = list["length"].as<int>();
  for (int i = 0; i < n; ++i) out.push_back(list[i].as<std::string>());
  return out;
}

/// New handles for a tensor or a nested list of them, as nested arrays.
inline val from_value(const Value& v) {
  if (v.is_tensor()) return handle_val(v.tensor());
  val out = val::array();
  for (size_t i = 0; i < v.size(); ++i) out.set(i, from_value(v[i]));
  return out;
}

// A whole number within int64's range (checked before converting: a double outside it has no int64 value).
inline bool whole_int64(double d) { return d >= -0x1p63 && d < 0x1p63 && d == std::trunc(d); }

// A JavaScript number given for an integer argument, or a ValueError naming the function and the argument.
inline int64_t whole_number(double d, const char* fn, const char* arg) {
  if (!whole_int64(d)) {
    throw ValueError(std::string(fn) + ": '" + arg + "' must be an integer, got " + format_number(d));
  }
  return static_cast<int64_t>(d);
}

inline val from_shape(const Shape& s) {
  val out = val::array();
  for (size_t i = 0; i < s.size(); ++i) out.set(i, static_cast<double>(s[i]));
  return out;
}

/// A JavaScript array of whole numbers as a shape (ShapeError past the rank limit).
inline Shape to_shape(const val& v) {
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

/// New handles for ts (null for an undefined tensor).
inline val from_tensors(const std::vector<Tensor>& ts) {
  val out = val::array();
  for (size_t i = 0; i < ts.size(); ++i) out.set(i, ts[i].defined() ? handle_val(ts[i]) : val::null());
  return out;
}

/// What a JavaScript callback returned: a tensor handle or a nested array of them. The handles were made for
/// C++ (the wrapper hands over new ones), so they are released here. Nesting is bounded: the recursion must not
/// exhaust the WebAssembly stack.
inline Value to_value(const val& r, int depth = 0) {
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
inline std::vector<Tensor> to_grads(const val& r) {
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

/// A core Fn that calls a JavaScript function with an array of tensor handles.
inline Fn js_fn(const val& f) {
  return [f](const std::vector<Tensor>& args) -> Value { return to_value(f(from_tensors(args))); };
}

/// The elements of host tensor t as a typed array viewing the heap (half dtypes as their bits, bool as bytes).
inline val typed_view(const Tensor& t) {
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

}  // namespace bprop::js
