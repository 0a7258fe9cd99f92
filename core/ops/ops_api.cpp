// The typed C++ face of the registry: each function calls its op through the dispatcher (the OpDef is
// looked up once per function, the argument lists recycled: registry/arg_lists.h).
#include <array>
#include <cmath>
#include <cstring>

#include "bprop/ops.h"
#include "bprop/registry.h"
#include "registry/arg_lists.h"

namespace bprop {
namespace {

#define BPROP_OP(name)                                          \
  static const OpDef& op_def = registry().get(name);            \
  (void)op_def

// The OpDef called `name`, looked up in the registry once per call site (not a string lookup per call).
#define BPROP_OP_REF(name) ([]() -> const OpDef& { static const OpDef& op = registry().get(name); return op; }())

Tensor opt(const Tensor& t) { return t; }

}  // namespace

namespace ops {

#define UNARY(fn, name)                         \
  Tensor fn(const Tensor& x) {                  \
    BPROP_OP(name);                             \
    return detail::call_with_args(op_def, x);   \
  }
UNARY(neg, "neg")
UNARY(abs, "abs")
UNARY(sign, "sign")
UNARY(exp, "exp")
UNARY(log, "log")
UNARY(log1p, "log1p")
UNARY(expm1, "expm1")
UNARY(sqrt, "sqrt")
UNARY(rsqrt, "rsqrt")
UNARY(square, "square")
UNARY(reciprocal, "reciprocal")
UNARY(sin, "sin")
UNARY(cos, "cos")
UNARY(tan, "tan")
UNARY(tanh, "tanh")
UNARY(sigmoid, "sigmoid")
UNARY(relu, "relu")
UNARY(silu, "silu")
UNARY(softplus, "softplus")
UNARY(erf, "erf")
UNARY(floor, "floor")
UNARY(ceil, "ceil")
UNARY(round, "round")
UNARY(stop_gradient, "stop_gradient")
UNARY(identity, "identity")
#undef UNARY

Tensor leaky_relu(const Tensor& x, double alpha) { return call_op(BPROP_OP_REF("leaky_relu"), {x}, {{"alpha", alpha}}); }
Tensor elu(const Tensor& x, double alpha) { return call_op(BPROP_OP_REF("elu"), {x}, {{"alpha", alpha}}); }
Tensor gelu(const Tensor& x, const std::string& approximate) {
  return call_op(BPROP_OP_REF("gelu"), {x}, {{"approximate", approximate}});
}

#define BINARY(fn, name)                           \
  Tensor fn(const Tensor& x, const Tensor& y) {    \
    BPROP_OP(name);                                \
    return detail::call_with_args(op_def, x, y);   \
  }
BINARY(add, "add")
BINARY(sub, "sub")
BINARY(mul, "mul")
BINARY(div, "div")
BINARY(pow, "pow")
BINARY(maximum, "maximum")
BINARY(minimum, "minimum")
BINARY(atan2, "atan2")
BINARY(squared_difference, "squared_difference")
BINARY(equal, "equal")
BINARY(not_equal, "not_equal")
BINARY(greater, "greater")
BINARY(greater_equal, "greater_equal")
BINARY(less, "less")
BINARY(less_equal, "less_equal")
BINARY(matmul, "matmul")
#undef BINARY

Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y) {
  BPROP_OP("where");
  return call_op(op_def, {cond, x, y});
}

Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max) {
  Attrs a;
  a.set("min", min ? AttrValue(*min) : AttrValue());
  a.set("max", max ? AttrValue(*max) : AttrValue());
  return call_op(BPROP_OP_REF("clamp"), {x}, a);
}

#define REDUCE(fn, name)                                                         \
  Tensor fn(const Tensor& x, Axis axis, bool keepdims) {                         \
    return call_op(name, {x}, {{"axis", axis.value()}, {"keepdims", keepdims}}); \
  }
REDUCE(sum, "sum")
REDUCE(mean, "mean")
REDUCE(prod, "prod")
REDUCE(amax, "amax")
REDUCE(amin, "amin")
REDUCE(logsumexp, "logsumexp")
REDUCE(argmax, "argmax")
REDUCE(argmin, "argmin")
#undef REDUCE

Tensor var(const Tensor& x, Axis axis, bool keepdims, int64_t correction) {
  return call_op(BPROP_OP_REF("var"), {x}, {{"axis", axis.value()}, {"keepdims", keepdims}, {"correction", correction}});
}
Tensor stddev(const Tensor& x, Axis axis, bool keepdims, int64_t correction) {
  return call_op(BPROP_OP_REF("std"), {x}, {{"axis", axis.value()}, {"keepdims", keepdims}, {"correction", correction}});
}

Tensor reshape(const Tensor& x, const Shape& shape) { return call_op(BPROP_OP_REF("reshape"), {x}, {{"shape", IntList(shape)}}); }
Tensor transpose(const Tensor& x, const IntList& perm) { return call_op(BPROP_OP_REF("transpose"), {x}, {{"perm", perm}}); }
Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  return call_op(BPROP_OP_REF("broadcast_to"), {x}, {{"shape", IntList(shape)}});
}
Tensor squeeze(const Tensor& x, Axis axis) { return call_op(BPROP_OP_REF("squeeze"), {x}, {{"axis", axis.value()}}); }
Tensor expand_dims(const Tensor& x, Axis axis) { return call_op(BPROP_OP_REF("expand_dims"), {x}, {{"axis", axis.value()}}); }
Tensor concat(const std::vector<Tensor>& xs, int64_t axis) { return call_op(BPROP_OP_REF("concat"), xs, {{"axis", axis}}); }
Tensor stack(const std::vector<Tensor>& xs, int64_t axis) { return call_op(BPROP_OP_REF("stack"), xs, {{"axis", axis}}); }
Tensor slice(const Tensor& x, const IntList& begin, const IntList& size) {
  return call_op(BPROP_OP_REF("slice"), {x}, {{"begin", begin}, {"size", size}});
}
Tensor strided_slice(const Tensor& x, const IntList& begin, const IntList& end, const IntList& strides) {
  return call_op(BPROP_OP_REF("strided_slice"), {x}, {{"begin", begin}, {"end", end}, {"strides", strides}});
}
Tensor gather(const Tensor& x, const Tensor& indices, int64_t axis) {
  return call_op(BPROP_OP_REF("gather"), {x, indices}, {{"axis", axis}});
}
Tensor pad(const Tensor& x, const IntMatrix& paddings, double value) {
  return call_op(BPROP_OP_REF("pad"), {x}, {{"paddings", paddings}, {"value", value}});
}
Tensor tile(const Tensor& x, const IntList& multiples) { return call_op(BPROP_OP_REF("tile"), {x}, {{"multiples", multiples}}); }
Tensor flip(const Tensor& x, Axis axis) { return call_op(BPROP_OP_REF("flip"), {x}, {{"axis", axis.value()}}); }

Tensor softmax(const Tensor& x, int64_t axis) { return call_op(BPROP_OP_REF("softmax"), {x}, {{"axis", axis}}); }
Tensor log_softmax(const Tensor& x, int64_t axis) { return call_op(BPROP_OP_REF("log_softmax"), {x}, {{"axis", axis}}); }
Tensor cross_entropy(const Tensor& logits, const Tensor& labels, const Tensor& weight, const std::string& reduction,
                     int64_t ignore_index, double label_smoothing) {
  return call_op(BPROP_OP_REF("cross_entropy"), {logits, labels, opt(weight)},
                 {{"reduction", reduction}, {"ignore_index", ignore_index}, {"label_smoothing", label_smoothing}});
}
Tensor nll_loss(const Tensor& log_probs, const Tensor& labels, const Tensor& weight, const std::string& reduction,
                int64_t ignore_index) {
  return call_op(BPROP_OP_REF("nll_loss"), {log_probs, labels, opt(weight)},
                 {{"reduction", reduction}, {"ignore_index", ignore_index}});
}
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, const std::string& reduction) {
  return call_op(BPROP_OP_REF("binary_cross_entropy_with_logits"), {logits, target, opt(weight), opt(pos_weight)},
                 {{"reduction", reduction}});
}
Tensor binary_cross_entropy(const Tensor& probs, const Tensor& target, const Tensor& weight,
                            const std::string& reduction) {
  return call_op(BPROP_OP_REF("binary_cross_entropy"), {probs, target, opt(weight)}, {{"reduction", reduction}});
}
Tensor mse_loss(const Tensor& x, const Tensor& y, const std::string& reduction) {
  return call_op(BPROP_OP_REF("mse_loss"), {x, y}, {{"reduction", reduction}});
}
Tensor l1_loss(const Tensor& x, const Tensor& y, const std::string& reduction) {
  return call_op(BPROP_OP_REF("l1_loss"), {x, y}, {{"reduction", reduction}});
}
Tensor smooth_l1_loss(const Tensor& x, const Tensor& y, const std::string& reduction, double beta) {
  return call_op(BPROP_OP_REF("smooth_l1_loss"), {x, y}, {{"reduction", reduction}, {"beta", beta}});
}
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, Size2 stride, Size2 padding, Size2 dilation,
              int64_t groups) {
  return call_op(BPROP_OP_REF("conv2d"), {x, w, opt(bias)},
                 {{"stride", stride.value()}, {"padding", padding.value()}, {"dilation", dilation.value()},
                  {"groups", groups}});
}
Tensor max_pool2d(const Tensor& x, Size2 kernel_size, std::optional<Size2> stride, Size2 padding) {
  return call_op(BPROP_OP_REF("max_pool2d"), {x},
                 {{"kernel_size", kernel_size.value()},
                  {"stride", stride ? AttrValue(stride->value()) : AttrValue()},
                  {"padding", padding.value()}});
}
Tensor avg_pool2d(const Tensor& x, Size2 kernel_size, std::optional<Size2> stride, Size2 padding) {
  return call_op(BPROP_OP_REF("avg_pool2d"), {x},
                 {{"kernel_size", kernel_size.value()},
                  {"stride", stride ? AttrValue(stride->value()) : AttrValue()},
                  {"padding", padding.value()}});
}
Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  return call_op(BPROP_OP_REF("batch_norm"), {x, opt(weight), opt(bias)}, {{"eps", eps}});
}
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t normalized_ndim, double eps) {
  return call_op(BPROP_OP_REF("layer_norm"), {x, opt(weight), opt(bias)}, {{"normalized_ndim", normalized_ndim}, {"eps", eps}});
}
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, bool is_causal, std::optional<double> scale) {
  return call_op(BPROP_OP_REF("scaled_dot_product_attention"), {query, key, value, opt(attn_mask)},
                 {{"is_causal", is_causal}, {"scale", scale ? AttrValue(*scale) : AttrValue(std::monostate{})}});
}
Tensor embedding(const Tensor& indices, const Tensor& table) {
  BPROP_OP("embedding");
  return call_op(op_def, {indices, table});
}

Tensor random_uniform(const Tensor& key, const Shape& shape, double low, double high, DType dtype) {
  return call_op(BPROP_OP_REF("random_uniform"), {key},
                 {{"shape", IntList(shape)}, {"low", low}, {"high", high}, {"dtype", std::string(dtype_name(dtype))}});
}

Tensor random_normal(const Tensor& key, const Shape& shape, DType dtype) {
  return call_op(BPROP_OP_REF("random_normal"), {key}, {{"shape", IntList(shape)}, {"dtype", std::string(dtype_name(dtype))}});
}

Tensor cast(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return call_op(BPROP_OP_REF("cast"), {x}, {{"dtype", std::string(dtype_name(dtype))}});
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  const int64_t lead = x.dim() - static_cast<int64_t>(shape.size());
  if (lead < 0) {
    throw ShapeError("sum_to: cannot sum " + shape_str(x.shape()) + " down to the larger rank of " + shape_str(shape));
  }
  IntList axes;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i < lead) axes.push_back(i);
    else if (shape[static_cast<size_t>(i - lead)] == 1 && x.shape()[static_cast<size_t>(i)] != 1) axes.push_back(i);
    else if (shape[static_cast<size_t>(i - lead)] != x.shape()[static_cast<size_t>(i)]) {
      throw ShapeError("sum_to: " + shape_str(x.shape()) + " does not broadcast to " + shape_str(shape));
    }
  }
  Tensor s = axes.empty() ? x : sum(x, axes, true);
  return s.shape() == shape ? s : reshape(s, shape);
}

}  // namespace ops

namespace {

/// The 0-d constant `v` of dtype `dt`, shared between calls: `y * 1.0001` in a loop would otherwise create a tensor
/// per iteration. Such constants are only ever op inputs; a slot is reused only while its tensor still holds `v`
/// and carries no autodiff history, so a caller that writes into one cannot change another's result.
Tensor cached_scalar(double v, DType dt) {
  struct Slot {
    double v = 0;
    DType dt = DType::Float32;
    Tensor t;
  };
  constexpr size_t kSlots = 16;
  thread_local std::array<Slot, kSlots> slots;
  thread_local size_t next = 0;
  auto intact = [](const Slot& s) {
    const TensorImpl& impl = *s.t.impl();
    if (!impl.trace.empty() || impl.is_parameter || impl.requires_grad || impl.numel != 1 || !impl.shape.empty()) {
      return false;
    }
    return visit_storage_dtype(s.dt, [&]<typename T>() {
      return convert_element<double>(s.t.data<T>()[0]) == convert_element<double>(convert_element<T>(s.v));
    });
  };
  for (Slot& s : slots) {
    if (s.t.defined() && s.dt == dt && std::memcmp(&s.v, &v, sizeof v) == 0 && intact(s)) return s.t;
  }
  Slot& s = slots[next];
  next = (next + 1) % kSlots;
  s = Slot{v, dt, scalar(v, dt)};
  return s.t;
}

DType scalar_dtype(double v, const Tensor& like) {
  if (is_float(like.dtype())) return like.dtype();
  return std::floor(v) == v ? DType::Int32 : DType::Float32;
}

/// scalar_like for the operators below, whose constant is only ever an op input.
Tensor operand(double v, const Tensor& like) { return cached_scalar(v, scalar_dtype(v, like)); }

}  // namespace

Tensor scalar_like(double v, const Tensor& like) { return scalar(v, scalar_dtype(v, like)); }

Tensor operator+(const Tensor& a, const Tensor& b) { return ops::add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return ops::sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return ops::mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return ops::div(a, b); }
Tensor operator-(const Tensor& a) { return ops::neg(a); }
Tensor operator+(const Tensor& a, double b) { return ops::add(a, operand(b, a)); }
Tensor operator-(const Tensor& a, double b) { return ops::sub(a, operand(b, a)); }
Tensor operator*(const Tensor& a, double b) { return ops::mul(a, operand(b, a)); }
Tensor operator/(const Tensor& a, double b) { return ops::div(a, operand(b, a)); }
Tensor operator+(double a, const Tensor& b) { return ops::add(operand(a, b), b); }
Tensor operator-(double a, const Tensor& b) { return ops::sub(operand(a, b), b); }
Tensor operator*(double a, const Tensor& b) { return ops::mul(operand(a, b), b); }
Tensor operator/(double a, const Tensor& b) { return ops::div(operand(a, b), b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return ops::greater(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return ops::less(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ops::greater_equal(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return ops::less_equal(a, b); }

}  // namespace bprop
