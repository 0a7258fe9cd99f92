// libopapi.so (fake), part 1: elementwise arithmetic, unary functions (Tan, LeakyRelu, Elu, Clamp among them),
// LogSumExp, Var, Std, Prod, maximum/minimum, comparisons, where, activation
// gradients, reductions (sum, mean, amax, amin, argmax), casts and copies, matmul.
#include <algorithm>

#include "opapi_common.h"

namespace fake_ascend {
namespace {

#define FA_ARITH_TYPES \
  { ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_INT32, ACL_INT64, ACL_BOOL }
#define FA_FLOAT_TYPES \
  { ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE }
#define FA_SINGLE_TYPES \
  { ACL_FLOAT, ACL_FLOAT16, ACL_BF16 }
#define FA_ALL_TYPES                                                                                                 \
  {                                                                                                                  \
    ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_INT8, ACL_UINT8, ACL_INT16, ACL_UINT16, ACL_INT32, ACL_UINT32, ACL_INT64, ACL_UINT64, \
        ACL_BOOL                                                                                                     \
  }

int category(aclDataType d) { return d == ACL_BOOL ? 0 : is_floating(d) ? 2 : 1; }

// A tensor and a scalar: the tensor's dtype, unless the scalar is of a higher category (int tensor + 2.5 -> FLOAT).
aclDataType promote_scalar(aclDataType t, const ScalarValue& s) {
  const int sc = s.floating ? 2 : s.dtype == ACL_BOOL ? 0 : 1;
  if (category(t) >= sc) return t;
  return sc == 2 ? ACL_FLOAT : ACL_INT64;
}

uint64_t reduce_workspace(int64_t out_elements) { return 512 + static_cast<uint64_t>(out_elements) * 8; }

// ---- binary ----

enum class Bin { Add, Sub, Mul, Div, Pow };

template <class T>
T bin_apply(Bin k, T x, T y, T alpha) {
  if constexpr (std::is_integral_v<T>) {
    using U = uint64_t;  // wrap around on overflow, as the NPU and PyTorch do
    switch (k) {
      case Bin::Add: return static_cast<T>(U(x) + U(alpha) * U(y));
      case Bin::Sub: return static_cast<T>(U(x) - U(alpha) * U(y));
      case Bin::Mul: return static_cast<T>(U(x) * U(y));
      default: return 0;
    }
  } else {
    switch (k) {
      case Bin::Add: return x + alpha * y;
      case Bin::Sub: return x - alpha * y;
      case Bin::Mul: return x * y;
      case Bin::Div: return x / y;
      case Bin::Pow: return std::pow(x, y);
    }
    return 0;
  }
}

template <class T>
void binary_kernel(Bin k, const TDesc& a, const TDesc& b, bool scalar_other, const ScalarValue& other,
                   const ScalarValue& alpha, bool has_alpha, const TDesc& out) {
  const std::vector<T> x = load<T>(a);
  const std::vector<T> y = scalar_other ? std::vector<T>() : load<T>(b);
  const T s = other.as<T>();
  const T al = has_alpha ? alpha.as<T>() : T(1);
  std::vector<T> r(x.size());
  for (size_t i = 0; i < r.size(); ++i) r[i] = bin_apply<T>(k, x[i], scalar_other ? s : y[i], al);
  store(out, r);
}

aclnnStatus binary(const char* name, Bin kind, const aclTensor* self, const aclTensor* other_t,
                   const aclScalar* other_s, bool scalar_other, const aclScalar* alpha_s, bool has_alpha,
                   aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  Op op(name, ws, ex);
  TDesc a, b, o;
  ScalarValue other, alpha;
  op.tensor(self, "self", &a, false);
  const char* other_name = kind == Bin::Pow ? "exponent" : "other";
  if (scalar_other)
    op.scalar(other_s, other_name, &other);
  else
    op.tensor(other_t, other_name, &b, false);
  if (has_alpha) op.scalar(alpha_s, "alpha", &alpha);
  op.tensor(out, "out", &o, true);
  const bool pow = kind == Bin::Pow;
  if (pow) {
    op.dtype("self", a.dtype, FA_FLOAT_TYPES);
    if (!scalar_other) op.dtype("exponent", b.dtype, FA_FLOAT_TYPES);
  } else {
    op.dtype("self", a.dtype, FA_ARITH_TYPES);
    if (!scalar_other) op.dtype("other", b.dtype, FA_ARITH_TYPES);
  }
  if (op.status()) return op.status();
  aclDataType r = scalar_other ? promote_scalar(a.dtype, other) : promote(a.dtype, b.dtype);
  if (pow && scalar_other) r = a.dtype;
  op.check(!(kind == Bin::Sub && r == ACL_BOOL), "subtracting BOOL tensors is not supported (as in PyTorch)");
  if (kind == Bin::Div && !is_floating(r)) r = ACL_FLOAT;  // true division
  op.check(!(has_alpha && !is_floating(r) && alpha.floating && alpha.f != std::trunc(alpha.f)),
           "alpha " + std::to_string(alpha.f) + " must be an integer for " + dtype_name(r) + " inputs");
  Shape shape = a.shape;
  if (!scalar_other && !op.status()) {
    op.check(broadcast_shapes(a.shape, b.shape, &shape),
             "self shape " + shape_str(a.shape) + " and other shape " + shape_str(b.shape) + " do not broadcast");
  }
  op.shape_is("out", o, shape);
  op.dtype_is("out", o, r);
  if (op.status()) return op.status();
  const TDesc A = broadcast_view(a, shape);
  const TDesc B = scalar_other ? TDesc{} : broadcast_view(b, shape);
  return op.finish(0, [=](uint8_t*, uint64_t) {
    if (is_floating(r))
      binary_kernel<double>(kind, A, B, scalar_other, other, alpha, has_alpha, o);
    else
      binary_kernel<int64_t>(kind, A, B, scalar_other, other, alpha, has_alpha, o);
  });
}

// ---- unary ----

enum class Un {
  Neg,
  Exp,
  Log,
  Sqrt,
  Tanh,
  Sigmoid,
  Relu,
  Abs,
  Sin,
  Cos,
  Rsqrt,
  Reciprocal,
  Sign,
  Erf,
  Log1p,
  Expm1,
  Floor,
  Ceil,
  Round,
  GeluTanh,  // aclnnGelu, aclnnGeluV2 approximate 1: CANN's formula
  GeluErf,   // aclnnGeluV2 approximate 0 (torch's default "none")
  Silu,
  Tan
};

template <class T>
T un_apply(Un k, T x) {
  if constexpr (std::is_integral_v<T>) {
    switch (k) {
      case Un::Neg: return static_cast<T>(uint64_t(0) - uint64_t(x));
      case Un::Relu: return x > 0 ? x : 0;
      case Un::Abs: return x < 0 ? static_cast<T>(uint64_t(0) - uint64_t(x)) : x;  // wraps at the minimum
      case Un::Sign: return static_cast<T>((x > 0) - (x < 0));
      default: return x;  // Round
    }
  } else {
    switch (k) {
      case Un::Neg: return -x;
      case Un::Exp: return std::exp(x);
      case Un::Log: return std::log(x);
      case Un::Sqrt: return std::sqrt(x);
      case Un::Tanh: return std::tanh(x);
      case Un::Sigmoid: return 1 / (1 + std::exp(-x));
      case Un::Relu: return x > 0 ? x : (std::isnan(x) ? x : 0);
      case Un::Abs: return std::fabs(x);
      case Un::Sin: return std::sin(x);
      case Un::Cos: return std::cos(x);
      case Un::Rsqrt: return 1 / std::sqrt(x);
      case Un::Reciprocal: return 1 / x;
      case Un::Sign: return std::isnan(x) ? x : static_cast<T>((x > 0) - (x < 0));
      case Un::Erf: return std::erf(x);
      case Un::Log1p: return std::log1p(x);
      case Un::Expm1: return std::expm1(x);
      case Un::Floor: return std::floor(x);
      case Un::Ceil: return std::ceil(x);
      case Un::Round: return std::nearbyint(x);  // the default rounding mode: half to even, as torch.round
      case Un::GeluTanh: return T(0.5) * x * (1 + std::tanh(std::sqrt(T(2) / T(M_PI)) * (x + T(0.044715) * x * x * x)));
      case Un::GeluErf: return T(0.5) * x * (1 + std::erf(x / std::sqrt(T(2))));
      case Un::Silu: return x / (1 + std::exp(-x));
      case Un::Tan: return std::tan(x);
    }
    return 0;
  }
}

template <class T>
void unary_kernel(Un k, const TDesc& a, const TDesc& out) {
  std::vector<T> x = load<T>(a);
  for (T& v : x) v = un_apply<T>(k, v);
  store(out, x);
}

aclnnStatus unary(const char* name, Un kind, const aclTensor* self, aclTensor* out,
                  std::initializer_list<aclDataType> fake, uint64_t* ws, aclOpExecutor** ex) {
  Op op(name, ws, ex);
  TDesc a, o;
  op.tensor(self, "self", &a, false);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, fake);
  op.shape_is("out", o, a.shape);
  op.dtype_is("out", o, a.dtype);
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) {
    if (is_floating(a.dtype))
      unary_kernel<double>(kind, a, o);
    else
      unary_kernel<int64_t>(kind, a, o);
  });
}

aclnnStatus gelu_v2(const aclTensor* x, int64_t approximate, aclTensor* y, uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnGeluV2", ws, ex);
  TDesc a, o;
  op.tensor(x, "x", &a, false);
  op.tensor(y, "y", &o, true);
  op.dtype("x", a.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  op.check(approximate == 0 || approximate == 1,
           "approximate " + std::to_string(approximate) + " is not 0 (none: the erf form) or 1 (tanh)");
  op.shape_is("y", o, a.shape);
  op.dtype_is("y", o, a.dtype);
  if (op.status()) return op.status();
  const Un kind = approximate == 0 ? Un::GeluErf : Un::GeluTanh;
  return op.finish(0, [=](uint8_t*, uint64_t) { unary_kernel<double>(kind, a, o); });
}

// GeluBackwardV2: gradOutput times gelu's derivative at self, of the erf form ("none": Phi(x) + x phi(x)) or of
// the tanh form ("tanh"). CANN deduces one dtype from the two inputs and broadcasts their shapes; the fake computes
// equal dtypes and shapes only (all bprop sends), and says so for the rest.
aclnnStatus gelu_backward_v2(const aclTensor* grad_output, const aclTensor* self, const char* approximate,
                             aclTensor* grad_input, uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnGeluBackwardV2", ws, ex);
  TDesc g, x, gi;
  op.tensor(grad_output, "gradOutput", &g, false);
  op.tensor(self, "self", &x, false);
  op.tensor(grad_input, "gradInput", &gi, true);
  if (!approximate) op.fail(ACLNN_ERR_PARAM_NULLPTR, "approximate is nullptr");
  if (op.status()) return op.status();
  const std::string mode = approximate;
  op.check(mode == "none" || mode == "tanh", "approximate '" + mode + "' is not none (the erf form) or tanh");
  op.dtype("gradOutput", g.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  op.dtype("self", x.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  op.check(g.dtype == x.dtype, "the fake computes gradOutput and self of one dtype only");
  op.check(g.shape == x.shape, "the fake computes gradOutput and self of one shape only (no broadcast)");
  op.shape_is("gradInput", gi, g.shape);
  op.dtype_is("gradInput", gi, g.dtype);
  if (op.status()) return op.status();
  const bool tanh_form = mode == "tanh";
  return op.finish(0, [=](uint8_t*, uint64_t) {
    const std::vector<double> gv = load<double>(g), xv = load<double>(x);
    std::vector<double> r(gv.size());
    const double k = std::sqrt(2 / M_PI), c = 0.044715;
    for (size_t i = 0; i < r.size(); ++i) {
      const double v = xv[i];
      double d;
      if (tanh_form) {
        const double t = std::tanh(k * (v + c * v * v * v));
        d = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * k * (1 + 3 * c * v * v);
      } else {
        d = 0.5 * (1 + std::erf(v / std::sqrt(2.0))) + v * std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI);
      }
      r[i] = gv[i] * d;
    }
    store(gi, r);
  });
}

aclnnStatus softplus(const aclTensor* self, const aclScalar* beta_s, const aclScalar* threshold_s, aclTensor* out,
                     uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnSoftplus", ws, ex);
  TDesc a, o;
  ScalarValue beta, threshold;
  op.tensor(self, "self", &a, false);
  op.scalar(beta_s, "beta", &beta);
  op.scalar(threshold_s, "threshold", &threshold);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  op.shape_is("out", o, a.shape);
  op.dtype_is("out", o, a.dtype);
  if (op.status()) return op.status();
  const double b = beta.as<double>(), t = threshold.as<double>();
  return op.finish(0, [=](uint8_t*, uint64_t) {
    std::vector<double> x = load<double>(a);
    for (double& v : x) v = v * b > t ? v : std::log1p(std::exp(b * v)) / b;  // linear above the threshold, as torch
    store(o, x);
  });
}

// out = self > 0 ? self : negativeSlope self (CANN: max(0, self) + negativeSlope min(0, self); NaN stays NaN).
aclnnStatus leaky_relu(const aclTensor* self, const aclScalar* slope_s, aclTensor* out, uint64_t* ws,
                       aclOpExecutor** ex) {
  Op op("aclnnLeakyRelu", ws, ex);
  TDesc a, o;
  ScalarValue slope;
  op.tensor(self, "self", &a, false);
  op.scalar(slope_s, "negativeSlope", &slope);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, FA_FLOAT_TYPES);
  op.shape_is("out", o, a.shape);
  op.dtype_is("out", o, a.dtype);
  if (op.status()) return op.status();
  const double k = slope.as<double>();
  return op.finish(0, [=](uint8_t*, uint64_t) {
    std::vector<double> x = load<double>(a);
    for (double& v : x) v = v > 0 ? v : k * v;
    store(o, x);
  });
}

// out = self > 0 ? scale self : alpha scale (exp(inputScale self) - 1), the formula CANN documents for aclnnElu.
aclnnStatus elu(const aclTensor* self, const aclScalar* alpha_s, const aclScalar* scale_s,
                const aclScalar* input_scale_s, aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnElu", ws, ex);
  TDesc a, o;
  ScalarValue alpha, scale, input_scale;
  op.tensor(self, "self", &a, false);
  op.scalar(alpha_s, "alpha", &alpha);
  op.scalar(scale_s, "scale", &scale);
  op.scalar(input_scale_s, "inputScale", &input_scale);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, FA_FLOAT_TYPES);
  op.shape_is("out", o, a.shape);
  op.dtype_is("out", o, a.dtype);
  if (op.status()) return op.status();
  const double al = alpha.as<double>(), sc = scale.as<double>(), is = input_scale.as<double>();
  return op.finish(0, [=](uint8_t*, uint64_t) {
    std::vector<double> x = load<double>(a);
    for (double& v : x) v = v > 0 ? sc * v : al * sc * std::expm1(is * v);
    store(o, x);
  });
}

// out = max(min(self, max), min) with either bound absent (nullptr), the formula CANN documents: with min > max
// every element is min (torch.clamp gives max). NaN stays NaN. An integer self takes integral bounds only.
aclnnStatus clamp(const aclTensor* self, const aclScalar* min_s, const aclScalar* max_s, aclTensor* out,
                  uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnClamp", ws, ex);
  TDesc a, o;
  ScalarValue lo, hi;
  op.tensor(self, "self", &a, false);
  if (min_s) op.scalar(min_s, "clipValueMin", &lo);
  if (max_s) op.scalar(max_s, "clipValueMax", &hi);
  if (!op.status() && !min_s && !max_s) {
    op.fail(ACLNN_ERR_PARAM_NULLPTR, "clipValueMin and clipValueMax are both nullptr");
  }
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_INT32, ACL_INT64});
  const auto integral = [&](bool given, const ScalarValue& v, const char* name) {
    if (!given || is_floating(a.dtype) || !v.floating) return;
    op.check(v.f == std::trunc(v.f), std::string(name) + " " + std::to_string(v.f) + " must be an integer for " +
                                         dtype_name(a.dtype) + " self");
  };
  integral(min_s != nullptr, lo, "clipValueMin");
  integral(max_s != nullptr, hi, "clipValueMax");
  op.shape_is("out", o, a.shape);
  op.dtype_is("out", o, a.dtype);
  if (op.status()) return op.status();
  const bool has_lo = min_s != nullptr, has_hi = max_s != nullptr;
  return op.finish(0, [=](uint8_t*, uint64_t) {
    if (is_floating(a.dtype)) {
      std::vector<double> x = load<double>(a);
      for (double& v : x) {
        if (std::isnan(v)) continue;
        if (has_hi) v = std::min(v, hi.as<double>());
        if (has_lo) v = std::max(v, lo.as<double>());
      }
      store(o, x);
    } else {
      std::vector<int64_t> x = load<int64_t>(a);
      for (int64_t& v : x) {
        if (has_hi) v = std::min(v, hi.as<int64_t>());
        if (has_lo) v = std::max(v, lo.as<int64_t>());
      }
      store(o, x);
    }
  });
}

// ---- two tensors, broadcast: maximum/minimum, comparisons, where ----

#define FA_MINMAX_TYPES \
  { ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_INT32, ACL_INT64 }

enum class Pair { Max, Min, Eq, Ne, Gt, Ge, Lt, Le };

const char* pair_name(Pair k) {
  switch (k) {
    case Pair::Max: return "aclnnMaximum";
    case Pair::Min: return "aclnnMinimum";
    case Pair::Eq: return "aclnnEqTensor";
    case Pair::Ne: return "aclnnNeTensor";
    case Pair::Gt: return "aclnnGtTensor";
    case Pair::Ge: return "aclnnGeTensor";
    case Pair::Lt: return "aclnnLtTensor";
    case Pair::Le: return "aclnnLeTensor";
  }
  return "?";
}

template <class T>
T pair_apply(Pair k, T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if ((k == Pair::Max || k == Pair::Min) && (std::isnan(x) || std::isnan(y))) return x + y;  // NaN propagates
  }
  switch (k) {
    case Pair::Max: return x > y ? x : y;
    case Pair::Min: return x < y ? x : y;
    case Pair::Eq: return x == y;  // IEEE: NaN compares unequal to everything
    case Pair::Ne: return x != y;
    case Pair::Gt: return x > y;
    case Pair::Ge: return x >= y;
    case Pair::Lt: return x < y;
    case Pair::Le: return x <= y;
  }
  return 0;
}

template <class T>
void pair_kernel(Pair k, const TDesc& a, const TDesc& b, const TDesc& out) {
  const std::vector<T> x = load<T>(a), y = load<T>(b);
  std::vector<T> r(x.size());
  for (size_t i = 0; i < r.size(); ++i) r[i] = pair_apply<T>(k, x[i], y[i]);
  store(out, r);
}

// Maximum, Minimum (out: the promoted dtype) and the comparisons (out: BOOL), NumPy broadcasting.
aclnnStatus pairwise(Pair kind, const aclTensor* self, const aclTensor* other, aclTensor* out, uint64_t* ws,
                     aclOpExecutor** ex) {
  Op op(pair_name(kind), ws, ex);
  TDesc a, b, o;
  op.tensor(self, "self", &a, false);
  op.tensor(other, "other", &b, false);
  op.tensor(out, "out", &o, true);
  const bool compare = kind != Pair::Max && kind != Pair::Min;
  if (compare) {
    op.dtype("self", a.dtype, FA_ARITH_TYPES);
    op.dtype("other", b.dtype, FA_ARITH_TYPES);
  } else {
    op.dtype("self", a.dtype, FA_MINMAX_TYPES);
    op.dtype("other", b.dtype, FA_MINMAX_TYPES);
  }
  Shape shape;
  op.check(!op.status() && broadcast_shapes(a.shape, b.shape, &shape),
           "self shape " + shape_str(a.shape) + " and other shape " + shape_str(b.shape) + " do not broadcast");
  const aclDataType r = promote(a.dtype, b.dtype);
  op.shape_is("out", o, shape);
  op.dtype_is("out", o, compare ? ACL_BOOL : r);
  if (op.status()) return op.status();
  const TDesc A = broadcast_view(a, shape), B = broadcast_view(b, shape);
  return op.finish(0, [=](uint8_t*, uint64_t) {
    if (is_floating(r))
      pair_kernel<double>(kind, A, B, o);
    else
      pair_kernel<int64_t>(kind, A, B, o);
  });
}

template <class T>
void where_kernel(const TDesc& c, const TDesc& a, const TDesc& b, const TDesc& out) {
  const std::vector<int64_t> cv = load<int64_t>(c);
  const std::vector<T> x = load<T>(a), y = load<T>(b);
  std::vector<T> r(x.size());
  for (size_t i = 0; i < r.size(); ++i) r[i] = cv[i] ? x[i] : y[i];
  store(out, r);
}

// ---- activation gradients ----

// TanhBackward: gradOutput * (1 - output^2); SigmoidBackward: gradOutput * output * (1 - output).
aclnnStatus activation_backward(const char* name, bool tanh, const aclTensor* grad_output, const aclTensor* output,
                                aclTensor* grad_input, std::initializer_list<aclDataType> fake,
                                uint64_t* ws, aclOpExecutor** ex) {
  Op op(name, ws, ex);
  TDesc g, y, gi;
  op.tensor(grad_output, "gradOutput", &g, false);
  op.tensor(output, "output", &y, false);
  op.tensor(grad_input, "gradInput", &gi, true);
  op.dtype("gradOutput", g.dtype, fake);
  op.dtype_is("output", y, g.dtype);
  op.shape_is("output", y, g.shape);
  op.shape_is("gradInput", gi, g.shape);
  op.dtype_is("gradInput", gi, g.dtype);
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) {
    const std::vector<double> gv = load<double>(g), yv = load<double>(y);
    std::vector<double> r(gv.size());
    for (size_t i = 0; i < r.size(); ++i) r[i] = tanh ? gv[i] * (1 - yv[i] * yv[i]) : gv[i] * yv[i] * (1 - yv[i]);
    store(gi, r);
  });
}

// ---- reductions ----

// Which axes `dims` reduces (empty: all) and the result's shape; false (the error set) for a bad dim.
bool reduced_axes(Op& op, const std::vector<int64_t>& dims, const Shape& in, bool keep, std::vector<bool>* reduced,
                  Shape* shape) {
  const size_t rank = in.size();
  reduced->assign(rank, dims.empty());
  for (int64_t d : dims) {
    int64_t ax = 0;
    if (!op.axis("dim", d, rank, &ax)) return false;
    if (rank == 0) continue;
    if (!op.check(!(*reduced)[ax], "dim " + std::to_string(d) + " appears twice in dim " + shape_str(dims))) {
      return false;
    }
    (*reduced)[ax] = true;
  }
  shape->clear();
  for (size_t i = 0; i < rank; ++i) {
    if (!(*reduced)[i])
      shape->push_back(in[i]);
    else if (keep)
      shape->push_back(1);
  }
  return true;
}

// For each element of a tensor of shape `in` (row-major), the index of the result element it reduces into.
std::vector<int64_t> reduce_targets(const Shape& in, const std::vector<bool>& reduced) {
  const size_t rank = in.size();
  Shape kept(rank);
  for (size_t i = 0; i < rank; ++i) kept[i] = reduced[i] ? 1 : in[i];
  const Shape kst = contiguous_strides(kept);
  std::vector<int64_t> to(static_cast<size_t>(numel_of(in))), idx(rank, 0);
  for (size_t i = 0; i < to.size(); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < rank; ++d) o += reduced[d] ? 0 : idx[d] * kst[d];
    to[i] = o;
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < in[d]) break;
      idx[d] = 0;
    }
  }
  return to;
}

// Amax / Amin: NaN propagates (the first NaN of a slice is its result).
template <class T>
void extremum_kernel(const TDesc& a, const std::vector<bool>& reduced, bool max, int64_t out_elements, const TDesc& out,
                     uint8_t* ws, uint64_t ws_size) {
  const std::vector<T> x = load<T>(a);
  const std::vector<int64_t> to = reduce_targets(a.shape, reduced);
  std::vector<T> acc(static_cast<size_t>(out_elements), T(0));
  std::vector<bool> seen(acc.size(), false);
  for (size_t i = 0; i < x.size(); ++i) {
    T& r = acc[to[i]];
    const T v = x[i];
    if (!seen[to[i]]) {
      r = v;
      seen[to[i]] = true;
      continue;
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(r)) continue;
      if (std::isnan(v)) {
        r = v;
        continue;
      }
    }
    if (max ? v > r : v < r) r = v;
  }
  write_scratch(ws, ws_size, acc.data(), acc.size() * sizeof(T));
  store(out, acc);
}

// ArgMax over the middle axis of self viewed as [outer, len, inner]: the first maximum; NaN counts as the maximum.
template <class T>
void argmax_kernel(const TDesc& a, int64_t outer, int64_t len, int64_t inner, const TDesc& out, uint8_t* ws,
                   uint64_t ws_size) {
  const std::vector<T> x = load<T>(a);
  std::vector<int64_t> r(static_cast<size_t>(outer * inner));
  for (int64_t p = 0; p < outer; ++p) {
    for (int64_t q = 0; q < inner; ++q) {
      const T* base = x.data() + p * len * inner + q;
      int64_t best = 0;
      for (int64_t i = 1; i < len; ++i) {
        const T v = base[i * inner], b = base[best * inner];
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(b)) break;
          if (std::isnan(v)) {
            best = i;
            break;
          }
        }
        if (v > b) best = i;
      }
      r[p * inner + q] = best;
    }
  }
  write_scratch(ws, ws_size, r.data(), r.size() * sizeof(int64_t));
  store(out, r);
}

aclnnStatus extremum(const char* name, bool max, const aclTensor* self, const aclIntArray* dim, bool keep,
                     aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  Op op(name, ws, ex);
  TDesc a, o;
  std::vector<int64_t> dims;
  op.tensor(self, "self", &a, false);
  op.int_array(dim, "dim", &dims);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, FA_ARITH_TYPES);
  if (op.status()) return op.status();
  std::vector<bool> reduced;
  Shape shape;
  if (!reduced_axes(op, dims, a.shape, keep, &reduced, &shape)) return op.status();
  for (size_t i = 0; i < a.ndim(); ++i) {
    op.check(!(reduced[i] && a.shape[i] == 0), "self " + shape_str(a.shape) + " has size 0 in dim " +
                                                   std::to_string(i) + ", which it reduces (no identity)");
  }
  op.shape_is("out", o, shape);
  op.dtype_is("out", o, a.dtype);
  if (op.status()) return op.status();
  const int64_t n = numel_of(shape);
  return op.finish(reduce_workspace(n), [=](uint8_t* w, uint64_t wn) {
    if (is_floating(a.dtype))
      extremum_kernel<double>(a, reduced, max, n, o, w, wn);
    else
      extremum_kernel<int64_t>(a, reduced, max, n, o, w, wn);
  });
}

template <class T>
void reduce_kernel(const TDesc& a, const std::vector<bool>& reduced, bool mean, const TDesc& out, uint8_t* ws,
                   uint64_t ws_size) {
  const std::vector<T> x = load<T>(a);
  const size_t rank = a.ndim();
  Shape kept(rank);
  int64_t count = 1;
  for (size_t i = 0; i < rank; ++i) {
    kept[i] = reduced[i] ? 1 : a.shape[i];
    if (reduced[i]) count *= a.shape[i];
  }
  const Shape kst = contiguous_strides(kept);
  std::vector<T> acc(static_cast<size_t>(numel_of(kept)), T(0));
  std::vector<int64_t> idx(rank, 0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < rank; ++d) o += reduced[d] ? 0 : idx[d] * kst[d];
    if constexpr (std::is_integral_v<T>)
      acc[o] = static_cast<T>(uint64_t(acc[o]) + uint64_t(x[i]));
    else
      acc[o] += x[i];
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < a.shape[d]) break;
      idx[d] = 0;
    }
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (mean) {
      for (T& v : acc) v /= static_cast<T>(count);
    }
  }
  write_scratch(ws, ws_size, acc.data(), acc.size() * sizeof(T));
  store(out, acc);
}

aclnnStatus reduce(const char* name, bool mean, const aclTensor* self, const aclIntArray* dim, bool keep,
                   aclDataType dtype, aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  Op op(name, ws, ex);
  TDesc a, o;
  std::vector<int64_t> dims;
  op.tensor(self, "self", &a, false);
  op.int_array(dim, "dim", &dims);
  op.tensor(out, "out", &o, true);
  if (mean) {
    op.dtype("self", a.dtype, FA_FLOAT_TYPES);
    op.dtype("dtype", dtype, FA_FLOAT_TYPES);
  } else {
    op.dtype("self", a.dtype, FA_ARITH_TYPES);
    op.dtype("dtype", dtype, FA_ARITH_TYPES);
  }
  if (op.status()) return op.status();
  std::vector<bool> reduced;
  Shape shape;
  if (!reduced_axes(op, dims, a.shape, keep, &reduced, &shape)) return op.status();
  op.shape_is("out", o, shape);
  op.dtype_is("out", o, dtype);
  if (op.status()) return op.status();
  return op.finish(reduce_workspace(numel_of(shape)), [=](uint8_t* w, uint64_t n) {
    if (is_floating(dtype))
      reduce_kernel<double>(a, reduced, mean, o, w, n);
    else
      reduce_kernel<int64_t>(a, reduced, mean, o, w, n);
  });
}

// LogSumExp: log(sum(exp(x))) over `dim` (empty: every axis), computed as m + log(sum(exp(x - m))) with m the
// slice's maximum (m = 0 when it is not finite: all -inf gives -inf, a +inf gives +inf, NaN stays NaN).
aclnnStatus log_sum_exp(const aclTensor* self, const aclIntArray* dim, bool keep, aclTensor* out, uint64_t* ws,
                        aclOpExecutor** ex) {
  Op op("aclnnLogSumExp", ws, ex);
  TDesc a, o;
  std::vector<int64_t> dims;
  op.tensor(self, "self", &a, false);
  op.int_array(dim, "dim", &dims);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  if (op.status()) return op.status();
  std::vector<bool> reduced;
  Shape shape;
  if (!reduced_axes(op, dims, a.shape, keep, &reduced, &shape)) return op.status();
  op.shape_is("out", o, shape);
  op.dtype_is("out", o, a.dtype);
  if (op.status()) return op.status();
  const int64_t n_out = numel_of(shape);
  return op.finish(0, [=](uint8_t*, uint64_t) {
    const std::vector<double> x = load<double>(a);
    const std::vector<int64_t> to = reduce_targets(a.shape, reduced);
    std::vector<double> m(static_cast<size_t>(n_out), -INFINITY), sum(m.size(), 0.0);
    for (size_t i = 0; i < x.size(); ++i) {
      double& mi = m[to[i]];
      mi = std::isnan(x[i]) || std::isnan(mi) ? NAN : std::max(mi, x[i]);
    }
    for (double& v : m) v = std::isfinite(v) ? v : 0.0;
    for (size_t i = 0; i < x.size(); ++i) sum[to[i]] += std::exp(x[i] - m[to[i]]);
    for (size_t k = 0; k < sum.size(); ++k) sum[k] = m[k] + std::log(sum[k]);
    store(o, sum);
  });
}

// Var / Std over `dim` (empty: every axis): sum((x - mean)^2) / max(0, N - correction), Std its square root
// (N - correction <= 0 gives inf, or NaN for 0 / 0, as the formula does).
aclnnStatus variance(const char* name, bool root, const aclTensor* self, const aclIntArray* dim, int64_t correction,
                     bool keep, aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  Op op(name, ws, ex);
  TDesc a, o;
  std::vector<int64_t> dims;
  op.tensor(self, "self", &a, false);
  op.int_array(dim, "dim", &dims);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  if (op.status()) return op.status();
  std::vector<bool> reduced;
  Shape shape;
  if (!reduced_axes(op, dims, a.shape, keep, &reduced, &shape)) return op.status();
  op.shape_is("out", o, shape);
  op.dtype_is("out", o, a.dtype);
  if (op.status()) return op.status();
  const int64_t n_out = numel_of(shape), count = n_out ? a.numel() / n_out : 0;
  return op.finish(0, [=](uint8_t*, uint64_t) {
    const std::vector<double> x = load<double>(a);
    const std::vector<int64_t> to = reduce_targets(a.shape, reduced);
    std::vector<double> mean(static_cast<size_t>(n_out), 0.0), q(mean.size(), 0.0);
    for (size_t i = 0; i < x.size(); ++i) mean[to[i]] += x[i];
    for (double& v : mean) v /= static_cast<double>(count);
    for (size_t i = 0; i < x.size(); ++i) q[to[i]] += (x[i] - mean[to[i]]) * (x[i] - mean[to[i]]);
    const double denom = static_cast<double>(std::max<int64_t>(0, count - correction));
    for (double& v : q) v = root ? std::sqrt(v / denom) : v / denom;
    store(o, q);
  });
}

// Prod over every element (all: ProdDim's dim ignored, a 0-d out) or over `dim`; `dtype` is out's, and here
// self's too (the fake casts nothing). Integers wrap.
aclnnStatus product(const char* name, bool all, const aclTensor* self, int64_t dim, bool keep, aclDataType dtype,
                    aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  Op op(name, ws, ex);
  TDesc a, o;
  op.tensor(self, "self", &a, false);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, FA_MINMAX_TYPES);
  op.check(dtype == a.dtype, std::string("dtype ") + dtype_name(dtype) + " differs from self's " + dtype_name(a.dtype) +
                                 " (the fake does not cast)");
  if (op.status()) return op.status();
  std::vector<bool> reduced(a.ndim(), all);
  Shape shape;
  if (!all) {
    int64_t ax = 0;
    if (!op.axis("dim", dim, a.ndim(), &ax)) return op.status();
    if (a.ndim()) reduced[ax] = true;
    for (size_t i = 0; i < a.ndim(); ++i) {
      if (!reduced[i])
        shape.push_back(a.shape[i]);
      else if (keep)
        shape.push_back(1);
    }
  }
  op.shape_is("out", o, shape);
  op.dtype_is("out", o, dtype);
  if (op.status()) return op.status();
  const int64_t n_out = numel_of(shape);
  return op.finish(0, [=](uint8_t*, uint64_t) {
    const std::vector<int64_t> to = reduce_targets(a.shape, reduced);
    if (is_floating(a.dtype)) {
      const std::vector<double> x = load<double>(a);
      std::vector<double> r(static_cast<size_t>(n_out), 1.0);
      for (size_t i = 0; i < x.size(); ++i) r[to[i]] *= x[i];
      store(o, r);
    } else {
      const std::vector<int64_t> x = load<int64_t>(a);
      std::vector<int64_t> r(static_cast<size_t>(n_out), 1);
      for (size_t i = 0; i < x.size(); ++i) r[to[i]] = static_cast<int64_t>(uint64_t(r[to[i]]) * uint64_t(x[i]));
      store(o, r);
    }
  });
}

// ---- matmul ----


}  // namespace
}  // namespace fake_ascend

using namespace fake_ascend;

extern "C" {

FA_EXPORT aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor* self, const aclTensor* other, const aclScalar* alpha,
                                               aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return binary("aclnnAdd", Bin::Add, self, other, nullptr, false, alpha, true, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnSubGetWorkspaceSize(const aclTensor* self, const aclTensor* other, const aclScalar* alpha,
                                               aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return binary("aclnnSub", Bin::Sub, self, other, nullptr, false, alpha, true, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                               uint64_t* ws, aclOpExecutor** ex) {
  return binary("aclnnMul", Bin::Mul, self, other, nullptr, false, nullptr, false, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnDivGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                               uint64_t* ws, aclOpExecutor** ex) {
  return binary("aclnnDiv", Bin::Div, self, other, nullptr, false, nullptr, false, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor* self, const aclScalar* other, const aclScalar* alpha,
                                                aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return binary("aclnnAdds", Bin::Add, self, nullptr, other, true, alpha, true, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnSubsGetWorkspaceSize(const aclTensor* self, const aclScalar* other, const aclScalar* alpha,
                                                aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return binary("aclnnSubs", Bin::Sub, self, nullptr, other, true, alpha, true, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnMulsGetWorkspaceSize(const aclTensor* self, const aclScalar* other, aclTensor* out,
                                                uint64_t* ws, aclOpExecutor** ex) {
  return binary("aclnnMuls", Bin::Mul, self, nullptr, other, true, nullptr, false, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnDivsGetWorkspaceSize(const aclTensor* self, const aclScalar* other, aclTensor* out,
                                                uint64_t* ws, aclOpExecutor** ex) {
  return binary("aclnnDivs", Bin::Div, self, nullptr, other, true, nullptr, false, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnPowTensorTensorGetWorkspaceSize(const aclTensor* self, const aclTensor* exponent,
                                                           aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return binary("aclnnPowTensorTensor", Bin::Pow, self, exponent, nullptr, false, nullptr, false, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnPowTensorScalarGetWorkspaceSize(const aclTensor* self, const aclScalar* exponent,
                                                           aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return binary("aclnnPowTensorScalar", Bin::Pow, self, nullptr, exponent, true, nullptr, false, out, ws, ex);
}

FA_EXPORT aclnnStatus aclnnNegGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                               aclOpExecutor** ex) {
  return unary("aclnnNeg", Un::Neg, self, out, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_INT32, ACL_INT64}, ws, ex);
}
FA_EXPORT aclnnStatus aclnnExpGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                               aclOpExecutor** ex) {
  return unary("aclnnExp", Un::Exp, self, out, FA_FLOAT_TYPES, ws, ex);
}
FA_EXPORT aclnnStatus aclnnLogGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                               aclOpExecutor** ex) {
  return unary("aclnnLog", Un::Log, self, out, FA_FLOAT_TYPES, ws, ex);
}
FA_EXPORT aclnnStatus aclnnSqrtGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                                aclOpExecutor** ex) {
  return unary("aclnnSqrt", Un::Sqrt, self, out, FA_FLOAT_TYPES, ws, ex);
}
FA_EXPORT aclnnStatus aclnnTanhGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                                aclOpExecutor** ex) {
  return unary("aclnnTanh", Un::Tanh, self, out, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}, ws, ex);
}
FA_EXPORT aclnnStatus aclnnSigmoidGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                                   aclOpExecutor** ex) {
  return unary("aclnnSigmoid", Un::Sigmoid, self, out, FA_FLOAT_TYPES, ws, ex);
}
FA_EXPORT aclnnStatus aclnnReluGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                                aclOpExecutor** ex) {
  return unary("aclnnRelu", Un::Relu, self, out, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT32, ACL_INT64}, ws, ex);
}

FA_EXPORT aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim,
                                                     aclDataType dtype, aclTensor* out, uint64_t* ws,
                                                     aclOpExecutor** ex) {
  return reduce("aclnnReduceSum", false, self, dim, keepDim, dtype, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnMeanGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim,
                                                aclDataType dtype, aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return reduce("aclnnMean", true, self, dim, keepDim, dtype, out, ws, ex);
}

FA_EXPORT aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor* self, const aclDataType dtype, aclTensor* out,
                                                uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnCast", ws, ex);
  TDesc a, o;
  op.tensor(self, "self", &a, false);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, FA_ALL_TYPES);
  op.dtype("dtype", dtype, FA_ALL_TYPES);
  op.dtype_is("out", o, dtype);
  op.shape_is("out", o, a.shape);
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) { copy_view(a, o); });
}

FA_EXPORT aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor* selfRef, const aclTensor* src, uint64_t* ws,
                                                       aclOpExecutor** ex) {
  Op op("aclnnInplaceCopy", ws, ex);
  TDesc d, s;
  op.tensor(selfRef, "selfRef", &d, true);
  op.tensor(src, "src", &s, false);
  op.dtype("selfRef", d.dtype, FA_ALL_TYPES);
  op.dtype("src", s.dtype, FA_ALL_TYPES);
  Shape shape;
  op.check(!op.status() && broadcast_shapes(s.shape, d.shape, &shape) && shape == d.shape,
           "src shape " + shape_str(s.shape) + " cannot be broadcast to selfRef shape " + shape_str(d.shape));
  if (op.status()) return op.status();
  const TDesc S = broadcast_view(s, d.shape);
  return op.finish(0, [=](uint8_t*, uint64_t) { copy_view(S, d); });
}

FA_EXPORT aclnnStatus aclnnInplaceFillScalarGetWorkspaceSize(aclTensor* selfRef, const aclScalar* value, uint64_t* ws,
                                                             aclOpExecutor** ex) {
  Op op("aclnnInplaceFillScalar", ws, ex);
  TDesc d;
  ScalarValue v;
  op.tensor(selfRef, "selfRef", &d, true);
  op.scalar(value, "value", &v);
  op.dtype("selfRef", d.dtype, FA_ALL_TYPES);
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) {
    const size_t n = static_cast<size_t>(d.numel());
    if (is_floating(d.dtype))
      store(d, std::vector<double>(n, v.as<double>()));
    else
      store(d, std::vector<int64_t>(n, v.as<int64_t>()));
  });
}

FA_EXPORT aclnnStatus aclnnInplaceZeroGetWorkspaceSize(aclTensor* selfRef, uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnInplaceZero", ws, ex);
  TDesc d;
  op.tensor(selfRef, "selfRef", &d, true);
  op.dtype("selfRef", d.dtype, FA_ALL_TYPES);
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) { store(d, std::vector<int64_t>(static_cast<size_t>(d.numel()), 0)); });
}

FA_EXPORT aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor* self, const aclTensor* mat2, aclTensor* out,
                                                  int8_t cubeMathType, uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnMatmul", ws, ex);
  TDesc a, b, o;
  op.tensor(self, "self", &a, false);
  op.tensor(mat2, "mat2", &b, false);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  op.dtype("mat2", b.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  if (!op.cube_math_type(cubeMathType, a.dtype)) return op.status();
  if (!op.check(a.ndim() >= 1 && b.ndim() >= 1, "self " + shape_str(a.shape) + " and mat2 " + shape_str(b.shape) +
                                                    " must have at least one dimension each")) {
    return op.status();
  }
  const int64_t k = a.shape.back();
  const int64_t n = a.ndim() == 1 ? 1 : a.shape[a.ndim() - 2];
  const int64_t k2 = b.ndim() == 1 ? b.shape[0] : b.shape[b.ndim() - 2];
  const int64_t m = b.ndim() == 1 ? 1 : b.shape.back();
  op.check(k == k2, "self shape " + shape_str(a.shape) + " and mat2 shape " + shape_str(b.shape) +
                        " cannot be multiplied (" + std::to_string(k) + " columns against " + std::to_string(k2) +
                        " rows)");
  const Shape ba(a.shape.begin(), a.shape.end() - std::min<size_t>(a.ndim(), 2));
  const Shape bb(b.shape.begin(), b.shape.end() - std::min<size_t>(b.ndim(), 2));
  Shape batch;
  op.check(
      !op.status() && broadcast_shapes(ba, bb, &batch),
      "the batch dimensions of self " + shape_str(a.shape) + " and mat2 " + shape_str(b.shape) + " do not broadcast");
  if (op.status()) return op.status();
  Shape shape = batch;
  if (a.ndim() > 1) shape.push_back(n);
  if (b.ndim() > 1) shape.push_back(m);
  op.shape_is("out", o, shape);
  // self and mat2 promote (ops-nn matmul docs/aclnnMatmul.md: "数据类型需要与mat2满足数据类型推导规则"); out is the
  // promoted dtype
  op.dtype_is("out", o, promote(a.dtype, b.dtype));
  if (op.status()) return op.status();
  TDesc a2 = a, b2 = b;
  if (a.ndim() == 1) {
    a2.shape = {1, k};
    a2.strides = {0, a.strides[0]};
  }
  if (b.ndim() == 1) {
    b2.shape = {k, 1};
    b2.strides = {b.strides[0], 0};
  }
  Shape sa = batch, sb = batch;
  sa.insert(sa.end(), {n, k});
  sb.insert(sb.end(), {k, m});
  const TDesc A = broadcast_view(a2, sa), B = broadcast_view(b2, sb);
  const int64_t batches = numel_of(batch);
  const int8_t cube = cubeMathType;
  return op.finish(1024 + static_cast<uint64_t>(numel_of(shape)) * 4, [=](uint8_t* w, uint64_t wn) {
    std::vector<float> x = load<float>(A), y = load<float>(B);
    if (cube == 2) {
      for (float& v : x) v = round_to_half(v);
      for (float& v : y) v = round_to_half(v);
    }
    std::vector<float> r(static_cast<size_t>(batches * n * m));
    for (int64_t t = 0; t < batches; ++t) {
      const float* xa = x.data() + t * n * k;
      const float* yb = y.data() + t * k * m;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < m; ++j) {
          float acc = 0;
          for (int64_t p = 0; p < k; ++p) acc += xa[i * k + p] * yb[p * m + j];
          r[t * n * m + i * m + j] = acc;
        }
      }
    }
    write_scratch(w, wn, r.data(), r.size() * sizeof(float));
    store(o, r);
  });
}

#define FA_UNARY_OP(Name, kind, fake)                                                                      \
  FA_EXPORT aclnnStatus aclnn##Name##GetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws, \
                                                      aclOpExecutor** ex) {                                \
    return unary("aclnn" #Name, kind, self, out, fake, ws, ex);                                                  \
  }
FA_UNARY_OP(Abs, Un::Abs, FA_MINMAX_TYPES)
FA_UNARY_OP(Sin, Un::Sin, FA_FLOAT_TYPES)
FA_UNARY_OP(Cos, Un::Cos, FA_FLOAT_TYPES)
FA_UNARY_OP(Rsqrt, Un::Rsqrt, FA_FLOAT_TYPES)
FA_UNARY_OP(Reciprocal, Un::Reciprocal, FA_FLOAT_TYPES)
FA_UNARY_OP(Sign, Un::Sign, FA_MINMAX_TYPES)
FA_UNARY_OP(Erf, Un::Erf, FA_FLOAT_TYPES)
FA_UNARY_OP(Log1p, Un::Log1p, FA_FLOAT_TYPES)
FA_UNARY_OP(Expm1, Un::Expm1, FA_FLOAT_TYPES)
FA_UNARY_OP(Floor, Un::Floor, FA_FLOAT_TYPES)
FA_UNARY_OP(Ceil, Un::Ceil, FA_FLOAT_TYPES)
FA_UNARY_OP(Round, Un::Round, FA_MINMAX_TYPES)
FA_UNARY_OP(Gelu, Un::GeluTanh, FA_SINGLE_TYPES)  // CANN documents the tanh form for aclnnGelu
FA_UNARY_OP(Silu, Un::Silu, FA_SINGLE_TYPES)
FA_UNARY_OP(Tan, Un::Tan, FA_FLOAT_TYPES)
#undef FA_UNARY_OP

FA_EXPORT aclnnStatus aclnnLogSumExpGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim,
                                                     aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return log_sum_exp(self, dim, keepDim, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnVarGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool unbiased,
                                               bool keepdim, aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return variance("aclnnVar", false, self, dim, unbiased ? 1 : 0, keepdim, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnStdGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, const int64_t correction,
                                               bool keepdim, aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return variance("aclnnStd", true, self, dim, correction, keepdim, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnProdGetWorkspaceSize(const aclTensor* self, const aclDataType dtype, aclTensor* out,
                                                uint64_t* ws, aclOpExecutor** ex) {
  return product("aclnnProd", true, self, 0, false, dtype, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnProdDimGetWorkspaceSize(const aclTensor* self, int64_t dim, bool keepDim,
                                                   const aclDataType dtype, aclTensor* out, uint64_t* ws,
                                                   aclOpExecutor** ex) {
  return product("aclnnProdDim", false, self, dim, keepDim, dtype, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnLeakyReluGetWorkspaceSize(const aclTensor* self, const aclScalar* negativeSlope,
                                                     aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return leaky_relu(self, negativeSlope, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnEluGetWorkspaceSize(const aclTensor* self, const aclScalar* alpha, const aclScalar* scale,
                                               const aclScalar* inputScale, aclTensor* out, uint64_t* ws,
                                               aclOpExecutor** ex) {
  return elu(self, alpha, scale, inputScale, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnClampGetWorkspaceSize(const aclTensor* self, const aclScalar* clipValueMin,
                                                 const aclScalar* clipValueMax, aclTensor* out, uint64_t* ws,
                                                 aclOpExecutor** ex) {
  return clamp(self, clipValueMin, clipValueMax, out, ws, ex);
}

FA_EXPORT aclnnStatus aclnnGeluV2GetWorkspaceSize(const aclTensor* x, int64_t approximate, aclTensor* y, uint64_t* ws,
                                                  aclOpExecutor** ex) {
  return gelu_v2(x, approximate, y, ws, ex);
}
FA_EXPORT aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                          char* approximate, aclTensor* gradInput, uint64_t* ws,
                                                          aclOpExecutor** ex) {
  return gelu_backward_v2(gradOutput, self, approximate, gradInput, ws, ex);
}
FA_EXPORT aclnnStatus aclnnSoftplusGetWorkspaceSize(const aclTensor* self, const aclScalar* beta,
                                                    const aclScalar* threshold, aclTensor* out, uint64_t* ws,
                                                    aclOpExecutor** ex) {
  return softplus(self, beta, threshold, out, ws, ex);
}

FA_EXPORT aclnnStatus aclnnMaximumGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                                   uint64_t* ws, aclOpExecutor** ex) {
  return pairwise(Pair::Max, self, other, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnMinimumGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                                   uint64_t* ws, aclOpExecutor** ex) {
  return pairwise(Pair::Min, self, other, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnEqTensorGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                                    uint64_t* ws, aclOpExecutor** ex) {
  return pairwise(Pair::Eq, self, other, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnNeTensorGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                                    uint64_t* ws, aclOpExecutor** ex) {
  return pairwise(Pair::Ne, self, other, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnGtTensorGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                                    uint64_t* ws, aclOpExecutor** ex) {
  return pairwise(Pair::Gt, self, other, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnGeTensorGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                                    uint64_t* ws, aclOpExecutor** ex) {
  return pairwise(Pair::Ge, self, other, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnLtTensorGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                                    uint64_t* ws, aclOpExecutor** ex) {
  return pairwise(Pair::Lt, self, other, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnLeTensorGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out,
                                                    uint64_t* ws, aclOpExecutor** ex) {
  return pairwise(Pair::Le, self, other, out, ws, ex);
}

FA_EXPORT aclnnStatus aclnnSWhereGetWorkspaceSize(const aclTensor* condition, const aclTensor* self,
                                                  const aclTensor* other, aclTensor* out, uint64_t* ws,
                                                  aclOpExecutor** ex) {
  Op op("aclnnSWhere", ws, ex);
  TDesc c, a, b, o;
  op.tensor(condition, "condition", &c, false);
  op.tensor(self, "self", &a, false);
  op.tensor(other, "other", &b, false);
  op.tensor(out, "out", &o, true);
  op.dtype("condition", c.dtype, {ACL_BOOL});
  op.dtype("self", a.dtype, FA_ARITH_TYPES);
  op.dtype("other", b.dtype, FA_ARITH_TYPES);
  Shape s1, shape;
  op.check(!op.status() && broadcast_shapes(c.shape, a.shape, &s1) && broadcast_shapes(s1, b.shape, &shape),
           "condition shape " + shape_str(c.shape) + ", self shape " + shape_str(a.shape) + " and other shape " +
               shape_str(b.shape) + " do not broadcast");
  const aclDataType r = promote(a.dtype, b.dtype);
  op.shape_is("out", o, shape);
  op.dtype_is("out", o, r);
  if (op.status()) return op.status();
  const TDesc C = broadcast_view(c, shape), A = broadcast_view(a, shape), B = broadcast_view(b, shape);
  return op.finish(0, [=](uint8_t*, uint64_t) {
    if (is_floating(r))
      where_kernel<double>(C, A, B, o);
    else
      where_kernel<int64_t>(C, A, B, o);
  });
}

FA_EXPORT aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                             const aclScalar* threshold, aclTensor* gradInput,
                                                             uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnThresholdBackward", ws, ex);
  TDesc g, x, gi;
  ScalarValue t;
  op.tensor(gradOutput, "gradOutput", &g, false);
  op.tensor(self, "self", &x, false);
  op.scalar(threshold, "threshold", &t);
  op.tensor(gradInput, "gradInput", &gi, true);
  op.dtype("gradOutput", g.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT32});
  op.dtype("self", x.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT32});
  op.shape_is("gradOutput", g, x.shape);
  const aclDataType r = promote(g.dtype, x.dtype);
  op.shape_is("gradInput", gi, x.shape);
  op.dtype_is("gradInput", gi, r);
  if (op.status()) return op.status();
  const double th = t.as<double>();
  return op.finish(0, [=](uint8_t*, uint64_t) {
    // a select, not a product: an inf or NaN gradient where self <= threshold still gives 0
    const std::vector<double> gv = load<double>(g), xv = load<double>(x);
    std::vector<double> res(gv.size());
    for (size_t i = 0; i < res.size(); ++i) res[i] = xv[i] > th ? gv[i] : 0.0;
    store(gi, res);
  });
}

FA_EXPORT aclnnStatus aclnnTanhBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* output,
                                                        aclTensor* gradInput, uint64_t* ws, aclOpExecutor** ex) {
  // DOUBLE, unlike aclnnTanh: CANN 8.0 documents FLOAT, FLOAT16, DOUBLE, BFLOAT16 for aclnnTanhBackward
  return activation_backward("aclnnTanhBackward", true, gradOutput, output, gradInput, FA_FLOAT_TYPES, ws,
                             ex);
}
FA_EXPORT aclnnStatus aclnnSigmoidBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* output,
                                                           aclTensor* gradInput, uint64_t* ws, aclOpExecutor** ex) {
  return activation_backward("aclnnSigmoidBackward", false, gradOutput, output, gradInput, FA_FLOAT_TYPES,
                             ws, ex);
}

FA_EXPORT aclnnStatus aclnnAmaxGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim,
                                                aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return extremum("aclnnAmax", true, self, dim, keepDim, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnAminGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim,
                                                aclTensor* out, uint64_t* ws, aclOpExecutor** ex) {
  return extremum("aclnnAmin", false, self, dim, keepDim, out, ws, ex);
}

FA_EXPORT aclnnStatus aclnnArgMaxGetWorkspaceSize(const aclTensor* self, int64_t dim, bool keepdim, aclTensor* out,
                                                  uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnArgMax", ws, ex);
  TDesc a, o;
  int64_t ax = 0;
  op.tensor(self, "self", &a, false);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, FA_MINMAX_TYPES);
  op.dtype("out", o.dtype, {ACL_INT64, ACL_INT32});
  if (!op.axis("dim", dim, a.ndim(), &ax)) return op.status();
  Shape shape;
  for (size_t i = 0; i < a.ndim(); ++i) {
    if (static_cast<int64_t>(i) != ax)
      shape.push_back(a.shape[i]);
    else if (keepdim)
      shape.push_back(1);
  }
  const int64_t len = a.ndim() ? a.shape[ax] : 1;
  op.check(len > 0, "self " + shape_str(a.shape) + " has size 0 in dim " + std::to_string(dim) +
                        ": the argmax of an empty dimension does not exist");
  op.shape_is("out", o, shape);
  if (op.status()) return op.status();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(a.ndim()); ++i) {
    if (i < ax) outer *= a.shape[i];
    if (i > ax) inner *= a.shape[i];
  }
  return op.finish(reduce_workspace(numel_of(shape)), [=](uint8_t* w, uint64_t wn) {
    if (is_floating(a.dtype))
      argmax_kernel<double>(a, outer, len, inner, o, w, wn);
    else
      argmax_kernel<int64_t>(a, outer, len, inner, o, w, wn);
  });
}

FAKE_ACLNN_LAUNCH_FN(Add)
FAKE_ACLNN_LAUNCH_FN(Sub)
FAKE_ACLNN_LAUNCH_FN(Mul)
FAKE_ACLNN_LAUNCH_FN(Div)
FAKE_ACLNN_LAUNCH_FN(Adds)
FAKE_ACLNN_LAUNCH_FN(Subs)
FAKE_ACLNN_LAUNCH_FN(Muls)
FAKE_ACLNN_LAUNCH_FN(Divs)
FAKE_ACLNN_LAUNCH_FN(PowTensorTensor)
FAKE_ACLNN_LAUNCH_FN(PowTensorScalar)
FAKE_ACLNN_LAUNCH_FN(Neg)
FAKE_ACLNN_LAUNCH_FN(Exp)
FAKE_ACLNN_LAUNCH_FN(Log)
FAKE_ACLNN_LAUNCH_FN(Sqrt)
FAKE_ACLNN_LAUNCH_FN(Tanh)
FAKE_ACLNN_LAUNCH_FN(Sigmoid)
FAKE_ACLNN_LAUNCH_FN(Relu)
FAKE_ACLNN_LAUNCH_FN(ReduceSum)
FAKE_ACLNN_LAUNCH_FN(Mean)
FAKE_ACLNN_LAUNCH_FN(Cast)
FAKE_ACLNN_LAUNCH_FN(InplaceCopy)
FAKE_ACLNN_LAUNCH_FN(InplaceFillScalar)
FAKE_ACLNN_LAUNCH_FN(InplaceZero)
FAKE_ACLNN_LAUNCH_FN(Matmul)
FAKE_ACLNN_LAUNCH_FN(Abs)
FAKE_ACLNN_LAUNCH_FN(Sin)
FAKE_ACLNN_LAUNCH_FN(Cos)
FAKE_ACLNN_LAUNCH_FN(Rsqrt)
FAKE_ACLNN_LAUNCH_FN(Reciprocal)
FAKE_ACLNN_LAUNCH_FN(Sign)
FAKE_ACLNN_LAUNCH_FN(Erf)
FAKE_ACLNN_LAUNCH_FN(Log1p)
FAKE_ACLNN_LAUNCH_FN(Expm1)
FAKE_ACLNN_LAUNCH_FN(Floor)
FAKE_ACLNN_LAUNCH_FN(Ceil)
FAKE_ACLNN_LAUNCH_FN(Round)
FAKE_ACLNN_LAUNCH_FN(Gelu)
FAKE_ACLNN_LAUNCH_FN(GeluV2)
FAKE_ACLNN_LAUNCH_FN(GeluBackwardV2)
FAKE_ACLNN_LAUNCH_FN(Silu)
FAKE_ACLNN_LAUNCH_FN(Tan)
FAKE_ACLNN_LAUNCH_FN(LeakyRelu)
FAKE_ACLNN_LAUNCH_FN(Elu)
FAKE_ACLNN_LAUNCH_FN(Clamp)
FAKE_ACLNN_LAUNCH_FN(LogSumExp)
FAKE_ACLNN_LAUNCH_FN(Var)
FAKE_ACLNN_LAUNCH_FN(Std)
FAKE_ACLNN_LAUNCH_FN(Prod)
FAKE_ACLNN_LAUNCH_FN(ProdDim)
FAKE_ACLNN_LAUNCH_FN(Softplus)
FAKE_ACLNN_LAUNCH_FN(Maximum)
FAKE_ACLNN_LAUNCH_FN(Minimum)
FAKE_ACLNN_LAUNCH_FN(EqTensor)
FAKE_ACLNN_LAUNCH_FN(NeTensor)
FAKE_ACLNN_LAUNCH_FN(GtTensor)
FAKE_ACLNN_LAUNCH_FN(GeTensor)
FAKE_ACLNN_LAUNCH_FN(LtTensor)
FAKE_ACLNN_LAUNCH_FN(LeTensor)
FAKE_ACLNN_LAUNCH_FN(SWhere)
FAKE_ACLNN_LAUNCH_FN(ThresholdBackward)
FAKE_ACLNN_LAUNCH_FN(TanhBackward)
FAKE_ACLNN_LAUNCH_FN(SigmoidBackward)
FAKE_ACLNN_LAUNCH_FN(Amax)
FAKE_ACLNN_LAUNCH_FN(Amin)
FAKE_ACLNN_LAUNCH_FN(ArgMax)

}  // extern "C"
