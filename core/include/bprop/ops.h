// Typed C++ functions for every catalogue op, and Tensor operators. Each one calls the registered op, so
// everything here is differentiable to any order.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "bprop/attrs.h"
#include "bprop/tensor.h"

namespace bprop {

/// An "axis" attribute: an int, a list of ints, or none (all axes).
class Axis {
 public:
  Axis() = default;  // none
  Axis(std::nullptr_t) {}
  Axis(int a) : value_(static_cast<int64_t>(a)) {}
  Axis(int64_t a) : value_(a) {}
  Axis(std::initializer_list<int64_t> list) : value_(IntList(list)) {}
  Axis(IntList list) : value_(std::move(list)) {}
  const AttrValue& value() const { return value_; }

 private:
  AttrValue value_;
};

/// A 2-D size attribute of the conv and pooling ops (kernel_size, stride, padding, dilation): one int for
/// both axes ({v} too), or {h, w}; other lengths are passed on for the op to reject.
class Size2 {
 public:
  Size2(int v) : Size2(static_cast<int64_t>(v)) {}
  Size2(int64_t v) : value_{v, v} {}
  Size2(int64_t h, int64_t w) : value_{h, w} {}
  Size2(std::initializer_list<int64_t> hw)
      : value_(hw.size() == 1 ? IntList{*hw.begin(), *hw.begin()} : IntList(hw)) {}
  const IntList& value() const { return value_; }

 private:
  IntList value_;
};

namespace ops {

// Elementwise unary
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor square(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor silu(const Tensor& x);
Tensor softplus(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);
Tensor leaky_relu(const Tensor& x, double alpha = 0.01);
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor gelu(const Tensor& x, const std::string& approximate = "none");

// Elementwise binary (NumPy broadcasting)
Tensor add(const Tensor& x, const Tensor& y);
Tensor sub(const Tensor& x, const Tensor& y);
Tensor mul(const Tensor& x, const Tensor& y);
Tensor div(const Tensor& x, const Tensor& y);
Tensor pow(const Tensor& x, const Tensor& y);
Tensor maximum(const Tensor& x, const Tensor& y);
Tensor minimum(const Tensor& x, const Tensor& y);
Tensor atan2(const Tensor& x, const Tensor& y);
Tensor squared_difference(const Tensor& x, const Tensor& y);

// Comparison -> bool (no gradient)
Tensor equal(const Tensor& x, const Tensor& y);
Tensor not_equal(const Tensor& x, const Tensor& y);
Tensor greater(const Tensor& x, const Tensor& y);
Tensor greater_equal(const Tensor& x, const Tensor& y);
Tensor less(const Tensor& x, const Tensor& y);
Tensor less_equal(const Tensor& x, const Tensor& y);

// Selection
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y);
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max);

// Reductions
Tensor sum(const Tensor& x, Axis axis = {}, bool keepdims = false);
Tensor mean(const Tensor& x, Axis axis = {}, bool keepdims = false);
Tensor prod(const Tensor& x, Axis axis = {}, bool keepdims = false);
Tensor amax(const Tensor& x, Axis axis = {}, bool keepdims = false);
Tensor amin(const Tensor& x, Axis axis = {}, bool keepdims = false);
Tensor logsumexp(const Tensor& x, Axis axis = {}, bool keepdims = false);
Tensor var(const Tensor& x, Axis axis = {}, bool keepdims = false, int64_t correction = 1);
/// The catalogue's "std" (named stddev here: `std` is C++'s namespace).
Tensor stddev(const Tensor& x, Axis axis = {}, bool keepdims = false, int64_t correction = 1);
Tensor argmax(const Tensor& x, Axis axis = {}, bool keepdims = false);
Tensor argmin(const Tensor& x, Axis axis = {}, bool keepdims = false);

// Shape
Tensor reshape(const Tensor& x, const Shape& shape);
Tensor transpose(const Tensor& x, const IntList& perm);
Tensor broadcast_to(const Tensor& x, const Shape& shape);
Tensor squeeze(const Tensor& x, Axis axis = {});
Tensor expand_dims(const Tensor& x, Axis axis);
Tensor concat(const std::vector<Tensor>& xs, int64_t axis = 0);
Tensor stack(const std::vector<Tensor>& xs, int64_t axis = 0);
Tensor slice(const Tensor& x, const IntList& begin, const IntList& size);
Tensor strided_slice(const Tensor& x, const IntList& begin, const IntList& end, const IntList& strides);
Tensor gather(const Tensor& x, const Tensor& indices, int64_t axis = 0);
Tensor pad(const Tensor& x, const IntMatrix& paddings, double value = 0.0);
Tensor tile(const Tensor& x, const IntList& multiples);
Tensor flip(const Tensor& x, Axis axis = {});

// Linear algebra
Tensor matmul(const Tensor& a, const Tensor& b);

// Neural network
Tensor softmax(const Tensor& x, int64_t axis = -1);
Tensor log_softmax(const Tensor& x, int64_t axis = -1);
Tensor cross_entropy(const Tensor& logits, const Tensor& labels, const Tensor& weight = {},
                     const std::string& reduction = "mean", int64_t ignore_index = -100,
                     double label_smoothing = 0.0);
Tensor nll_loss(const Tensor& log_probs, const Tensor& labels, const Tensor& weight = {},
                const std::string& reduction = "mean", int64_t ignore_index = -100);
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target, const Tensor& weight = {},
                                        const Tensor& pos_weight = {}, const std::string& reduction = "mean");
Tensor binary_cross_entropy(const Tensor& probs, const Tensor& target, const Tensor& weight = {},
                            const std::string& reduction = "mean");
Tensor mse_loss(const Tensor& x, const Tensor& y, const std::string& reduction = "mean");
Tensor l1_loss(const Tensor& x, const Tensor& y, const std::string& reduction = "mean");
Tensor smooth_l1_loss(const Tensor& x, const Tensor& y, const std::string& reduction = "mean", double beta = 1.0);
/// 2-D cross-correlation of x (N, C, H, W) with w (O, C / groups, kH, kW), plus bias (O) when given.
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias = {}, Size2 stride = 1, Size2 padding = 0,
              Size2 dilation = 1, int64_t groups = 1);
/// Pooling over the last two axes of x (N, C, H, W) or (C, H, W); stride defaults to kernel_size.
/// max_pool2d pads with -inf; avg_pool2d counts the zero padding in each window's average.
Tensor max_pool2d(const Tensor& x, Size2 kernel_size, std::optional<Size2> stride = std::nullopt, Size2 padding = 0);
Tensor avg_pool2d(const Tensor& x, Size2 kernel_size, std::optional<Size2> stride = std::nullopt, Size2 padding = 0);
/// Batch statistics per channel (axis 1) of x (N, C, ...); weight and bias shaped (C).
Tensor batch_norm(const Tensor& x, const Tensor& weight = {}, const Tensor& bias = {}, double eps = 1e-5);
/// Statistics over the last normalized_ndim axes; weight and bias shaped like those axes.
Tensor layer_norm(const Tensor& x, const Tensor& weight = {}, const Tensor& bias = {}, int64_t normalized_ndim = 1,
                  double eps = 1e-5);
/// softmax(q k^T scale + attn_mask) v over the last two axes (leading axes broadcast), PyTorch's
/// F.scaled_dot_product_attention without dropout; attn_mask bool (true = attend) or additive; scale null =
/// 1/sqrt(E); is_causal hides key j from query i when j > i. Fully masked rows give zeros.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = {}, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);
/// The rows of table (V, D) at int32 indices: shape indices.shape + (D).
Tensor embedding(const Tensor& indices, const Tensor& table);

// Graph control
Tensor stop_gradient(const Tensor& x);
Tensor identity(const Tensor& x);
Tensor cast(const Tensor& x, DType dtype);
/// Uniform numbers in [low, high) from the seed held by `key` (a 0-d tensor holding a whole number): the
/// numbers of rand(shape, seed, low, high). As an op, a jitted function draws them anew at every call.
Tensor random_uniform(const Tensor& key, const Shape& shape, double low = 0.0, double high = 1.0,
                      DType dtype = DType::Float32);
/// Standard normal numbers from the seed held by `key`: the numbers of randn(shape, seed).
Tensor random_normal(const Tensor& key, const Shape& shape, DType dtype = DType::Float32);

/// Sums `x` down to `shape` (undoes NumPy broadcasting); written with sum and reshape, so differentiable.
Tensor sum_to(const Tensor& x, const Shape& shape);

}  // namespace ops

/// A 0-d tensor for a C++ number combined with `like`: it takes like's dtype when that is float (a "weak"
/// scalar, as in PyTorch), else int32 for integral values and float32 otherwise.
Tensor scalar_like(double v, const Tensor& like);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);

}  // namespace bprop
