// What the convolution (ops/conv.cpp) and pooling (ops/pool.cpp) ops share: their attributes' readings and
// messages, and the OpDef both families start from.
#pragma once
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/copy.h"
#include "kernels/cpu/im2col.h"
#include "ops/op_helpers.h"

namespace bprop::conv_pool {

using namespace opdef;

inline std::string ints_str(const IntList& v) { return attr_value_str(AttrValue(v)); }
inline std::string pair_str(int64_t a, int64_t b) { return shape_str({a, b}); }
inline std::string arg_desc(const InferCtx& c, size_t i) {
  return "argument '" + c.op.inputs[i].name + "' of shape " + shape_str(c.input(i).shape());
}

// An IntPair attribute (normalised to [h, w]).
inline std::pair<int64_t, int64_t> pair_attr(const Attrs& a, const char* name) {
  const IntList v = a.get_ints(name);
  return {v[0], v[1]};
}

// A shape given as an attribute (x_shape, w_shape): non-negative entries of the expected count.
inline Shape shape_attr(const InferCtx& c, const char* name, size_t min_rank, size_t max_rank) {
  const IntList v = c.attrs.get_ints(name);
  const bool bad_rank = v.size() < min_rank || v.size() > max_rank;
  if (bad_rank || std::any_of(v.begin(), v.end(), [](int64_t d) { return d < 0; })) {
    const std::string ranks = min_rank == max_rank ? std::to_string(min_rank)
                                                   : std::to_string(min_rank) + " or " + std::to_string(max_rank);
    c.value_error("attribute '" + std::string(name) + "' must be a shape of " + ranks +
                  " non-negative sizes, got " + ints_str(v));
  }
  return Shape(v.begin(), v.end());
}

inline void require_at_least(const InferCtx& c, const char* name, std::pair<int64_t, int64_t> v, int64_t lo,
                      const char* what) {
  if (v.first < lo || v.second < lo) {
    c.value_error("attribute '" + std::string(name) + "' must be " + what + ", got " + ints_str({v.first, v.second}));
  }
}

inline OpDef conv_pool_def(const char* name, std::vector<InputSpec> inputs, std::vector<AttrSpec> attrs) {
  OpDef op;
  op.name = name;
  op.family = "conv_pool";
  op.inputs = std::move(inputs);
  op.attrs = std::move(attrs);
  op.infer_dtype = float_inputs_dtype;
  return op;
}

inline std::optional<int64_t> padded_extent(int64_t size, int64_t padding) {
  const auto both = mul_checked(padding, 2);
  return both ? add_checked(size, *both) : std::nullopt;
}

// The value, or a MemoryError saying that `what` passes every size.
inline int64_t checked(const InferCtx& c, std::optional<int64_t> v, const std::string& what) {
  if (!v) throw MemoryError(c.prefix() + what + " is more than 2^63");
  return *v;
}

// A ShapeError unless input i has the shape `expected` (that of `what`).
inline void require_dout(const InferCtx& c, size_t i, const Shape& expected, const std::string& what) {
  if (c.input(i).shape() != expected) {
    c.shape_error(arg_desc(c, i) + " does not match the shape " + shape_str(expected) + " of " + what);
  }
}

// Multiply-adds of a unit of work, for the thread grain: saturates (an empty tensor's other sizes may be huge).
inline int64_t work_of(std::initializer_list<int64_t> sizes) {
  int64_t w = 1;
  for (int64_t s : sizes) w = mul_checked(w, s).value_or(INT64_MAX);
  return w;
}

}  // namespace bprop::conv_pool
