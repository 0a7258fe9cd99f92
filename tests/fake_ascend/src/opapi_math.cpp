// libopapi.so (fake), part 1: elementwise arithmetic, unary functions, reductions, casts and copies, matmul.
#include <algorithm>

#include "opapi_common.h"

namespace fake_ascend {
namespace {

#define FA_ARITH_TYPES \
  { ACL_FLOAT, ACL_DOUBLE, ACL_INT32, ACL_INT64, ACL_BOOL }
#define FA_FLOAT_TYPES \
  { ACL_FLOAT, ACL_DOUBLE }
#define FA_ALL_TYPES                                                                                                 \
  {                                                                                                                  \
    ACL_FLOAT, ACL_DOUBLE, ACL_INT8, ACL_UINT8, ACL_INT16, ACL_UINT16, ACL_INT32, ACL_UINT32, ACL_INT64, ACL_UINT64, \
        ACL_BOOL                                                                                                     \
  }

int category(aclDataType d) { return d == ACL_BOOL ? 0 : is_floating(d) ? 2 : 1; }

// PyTorch's promotion between two tensors (over the dtypes the fake computes).
aclDataType promote(aclDataType a, aclDataType b) {
  if (a == b) return a;
  if (category(a) != category(b)) return category(a) > category(b) ? a : b;
  if (category(a) == 2) return a == ACL_DOUBLE || b == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
  return dtype_size(a) >= dtype_size(b) ? a : b;
}

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
    op.dtype("self", a.dtype, FA_FLOAT_TYPES, kCannArith);
    if (!scalar_other) op.dtype("exponent", b.dtype, FA_FLOAT_TYPES, kCannArith);
  } else {
    op.dtype("self", a.dtype, FA_ARITH_TYPES, kCannArith);
    if (!scalar_other) op.dtype("other", b.dtype, FA_ARITH_TYPES, kCannArith);
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

enum class Un { Neg, Exp, Log, Sqrt, Tanh, Sigmoid, Relu };

template <class T>
T un_apply(Un k, T x) {
  if constexpr (std::is_integral_v<T>) {
    if (k == Un::Neg) return static_cast<T>(uint64_t(0) - uint64_t(x));
    return x > 0 ? x : 0;  // Relu
  } else {
    switch (k) {
      case Un::Neg: return -x;
      case Un::Exp: return std::exp(x);
      case Un::Log: return std::log(x);
      case Un::Sqrt: return std::sqrt(x);
      case Un::Tanh: return std::tanh(x);
      case Un::Sigmoid: return 1 / (1 + std::exp(-x));
      case Un::Relu: return x > 0 ? x : (std::isnan(x) ? x : 0);
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
                  std::initializer_list<aclDataType> fake, const char* cann, uint64_t* ws, aclOpExecutor** ex) {
  Op op(name, ws, ex);
  TDesc a, o;
  op.tensor(self, "self", &a, false);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, fake, cann);
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

// ---- reductions ----

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
    op.dtype("self", a.dtype, FA_FLOAT_TYPES, kCannFloat);
    op.dtype("dtype", dtype, FA_FLOAT_TYPES, kCannFloat);
  } else {
    op.dtype("self", a.dtype, FA_ARITH_TYPES, kCannArith);
    op.dtype("dtype", dtype, FA_ARITH_TYPES, kCannArith);
  }
  if (op.status()) return op.status();
  const size_t rank = a.ndim();
  std::vector<bool> reduced(rank, dims.empty());
  for (int64_t d : dims) {
    int64_t ax = 0;
    if (!op.axis("dim", d, rank, &ax)) return op.status();
    if (rank == 0) continue;
    if (!op.check(!reduced[ax], "dim " + std::to_string(d) + " appears twice in dim " + shape_str(dims))) {
      return op.status();
    }
    reduced[ax] = true;
  }
  Shape shape;
  for (size_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      shape.push_back(a.shape[i]);
    else if (keep)
      shape.push_back(1);
  }
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

// ---- copies ----

void copy_kernel(const TDesc& src, const TDesc& dst) {
  if (is_floating(src.dtype))
    store(dst, load<double>(src));
  else
    store(dst, load<int64_t>(src));
}

// ---- matmul ----

aclnnStatus check_cube_math(Op& op, int8_t cube) {
  op.check(cube >= 0 && cube <= 3, "cubeMathType " + std::to_string(cube) +
                                       " is not 0 (KEEP_DTYPE), 1 (ALLOW_FP32_DOWN_PRECISION), 2 (USE_FP16) or 3 "
                                       "(USE_HF32)");
  return op.status();
}

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
  return unary("aclnnNeg", Un::Neg, self, out, {ACL_FLOAT, ACL_DOUBLE, ACL_INT32, ACL_INT64},
               "FLOAT, FLOAT16, DOUBLE, BFLOAT16, INT8, INT32, INT64", ws, ex);
}
FA_EXPORT aclnnStatus aclnnExpGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                               aclOpExecutor** ex) {
  return unary("aclnnExp", Un::Exp, self, out, FA_FLOAT_TYPES, kCannFloat, ws, ex);
}
FA_EXPORT aclnnStatus aclnnLogGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                               aclOpExecutor** ex) {
  return unary("aclnnLog", Un::Log, self, out, FA_FLOAT_TYPES, kCannFloat, ws, ex);
}
FA_EXPORT aclnnStatus aclnnSqrtGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                                aclOpExecutor** ex) {
  return unary("aclnnSqrt", Un::Sqrt, self, out, FA_FLOAT_TYPES, kCannFloat, ws, ex);
}
FA_EXPORT aclnnStatus aclnnTanhGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                                aclOpExecutor** ex) {
  return unary("aclnnTanh", Un::Tanh, self, out, {ACL_FLOAT}, kCannCube, ws, ex);
}
FA_EXPORT aclnnStatus aclnnSigmoidGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                                   aclOpExecutor** ex) {
  return unary("aclnnSigmoid", Un::Sigmoid, self, out, FA_FLOAT_TYPES, kCannFloat, ws, ex);
}
FA_EXPORT aclnnStatus aclnnReluGetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* ws,
                                                aclOpExecutor** ex) {
  return unary("aclnnRelu", Un::Relu, self, out, {ACL_FLOAT, ACL_INT32, ACL_INT64},
               "FLOAT, FLOAT16, BFLOAT16, INT8, INT32, INT64, UINT8", ws, ex);
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
  op.dtype("self", a.dtype, FA_ALL_TYPES, kCannAll);
  op.dtype("dtype", dtype, FA_ALL_TYPES, kCannAll);
  op.dtype_is("out", o, dtype);
  op.shape_is("out", o, a.shape);
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) { copy_kernel(a, o); });
}

FA_EXPORT aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor* selfRef, const aclTensor* src, uint64_t* ws,
                                                       aclOpExecutor** ex) {
  Op op("aclnnInplaceCopy", ws, ex);
  TDesc d, s;
  op.tensor(selfRef, "selfRef", &d, true);
  op.tensor(src, "src", &s, false);
  op.dtype("selfRef", d.dtype, FA_ALL_TYPES, kCannAll);
  op.dtype("src", s.dtype, FA_ALL_TYPES, kCannAll);
  Shape shape;
  op.check(!op.status() && broadcast_shapes(s.shape, d.shape, &shape) && shape == d.shape,
           "src shape " + shape_str(s.shape) + " cannot be broadcast to selfRef shape " + shape_str(d.shape));
  if (op.status()) return op.status();
  const TDesc S = broadcast_view(s, d.shape);
  return op.finish(0, [=](uint8_t*, uint64_t) { copy_kernel(S, d); });
}

FA_EXPORT aclnnStatus aclnnInplaceFillScalarGetWorkspaceSize(aclTensor* selfRef, const aclScalar* value, uint64_t* ws,
                                                             aclOpExecutor** ex) {
  Op op("aclnnInplaceFillScalar", ws, ex);
  TDesc d;
  ScalarValue v;
  op.tensor(selfRef, "selfRef", &d, true);
  op.scalar(value, "value", &v);
  op.dtype("selfRef", d.dtype, FA_ALL_TYPES, kCannAll);
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
  op.dtype("selfRef", d.dtype, FA_ALL_TYPES, kCannAll);
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
  op.dtype("self", a.dtype, {ACL_FLOAT}, kCannCube);
  op.dtype("mat2", b.dtype, {ACL_FLOAT}, kCannCube);
  if (check_cube_math(op, cubeMathType)) return op.status();
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
  op.dtype_is("out", o, ACL_FLOAT);
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

}  // extern "C"
