// Conversions between JavaScript values and core types shared by the embind files (bindings.cpp,
// nn_bindings.cpp): tensors cross as integer handles (handles.h), lists as JavaScript arrays.
#pragma once
#include <emscripten/val.h>

#include <string>
#include <utility>
#include <vector>

#include "bprop/bprop.h"
#include "graph/trace.h"
#include "handles.h"

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

}  // namespace bprop::js
