// Elementwise unary ops: neg abs sign exp log log1p expm1 sqrt rsqrt square reciprocal sin cos tan tanh
// sigmoid relu silu softplus erf floor ceil round leaky_relu elu gelu; and the gradient ops of tanh, sigmoid and relu
// (tanh_grad, sigmoid_grad, relu_grad: MindSpore's TanhGrad, SigmoidGrad and ReluGrad, one pass over memory each
// instead of two or three).
//
// float32 exp expm1 log log1p tanh sigmoid silu softplus run the vectorised functions of kernels/cpu/vmath.h;
// float64 and the other ops use the std:: functions.
#include <cmath>

#include "kernels/cpu/vmath.h"
#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;
using ops::cast;

constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kGeluK = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kGeluC = 0.044715;

// f (captureless) as the op's array functions (float32, float64), and for the other dtypes a kernel computing f
// in the output's dtype (inputs converted first: int32 -> float32 for float ops). kVectorizes: false when f calls
// libm (cpu::elementwise_loop).
template <bool kVectorizes = true, typename F>
OpImpl map_kernel(F f) {
  return with_elementwise({&cpu::unary_array<F, float, kVectorizes>, &cpu::unary_array<F, double, kVectorizes>},
                          [f](KernelCtx& c) {
                            const Tensor x = cpu::as_dtype(c.inputs[0], c.out_dtype);
                            visit_dtype(c.out_dtype, [&]<typename T>() {
                              if constexpr (!std::is_same_v<T, bool>) {
                                cpu::map_unary(x.data<T>(), c.out.data<T>(), x.numel(),
                                               [&](T v) { return convert_element<T>(f(v)); });
                              }
                            });
                          });
}

using VecFn = void (*)(const float*, float*, int64_t);

template <typename F>
KernelFn general_vec_kernel(VecFn vec, F f) {
  return [vec, f](KernelCtx& c) {
    const Tensor x = cpu::as_dtype(c.inputs[0], c.out_dtype);
    if (c.out_dtype == DType::Float32) {
      const float* px = x.data<float>();
      float* py = c.out.data<float>();
      cpu::parallel_for(x.numel(), cpu::kParallelGrain, [&](int64_t b, int64_t e) { vec(px + b, py + b, e - b); });
      return;
    }
    visit_float(c.out_dtype, [&]<typename T>() {
      cpu::map_unary(x.data<T>(), c.out.data<T>(), x.numel(), [&](T v) { return static_cast<T>(f(v)); });
    });
  };
}

// float32 through the vectorised array function V (chunks split over threads), float64 through f.
template <VecFn V, typename F>
OpImpl vec_kernel(F f) {
  return with_elementwise({&cpu::unary_vec_array<V>, &cpu::unary_array<F, double, false>}, general_vec_kernel(V, f));
}

void alpha_param(const Attrs& a, double* p) { p[0] = a.get_float("alpha"); }

// gelu's one parameter: 1 for the tanh form, 0 for the exact one.
void gelu_param(const Attrs& a, double* p) { p[0] = a.get_string("approximate") == "tanh" ? 1.0 : 0.0; }

template <typename T>
T gelu_of(T v, const double* p) {
  if (p[0] != 0) return static_cast<T>(0.5 * v * (1.0 + std::tanh(kGeluK * (v + kGeluC * v * v * v))));
  return static_cast<T>(0.5 * v * std::erfc(-v / kSqrt2));
}

// float32 through the vectorised gelu of either form (kernels/cpu/vmath.h).
void gelu_f32(const ElementOperand* in, void* out, int64_t n) {
  const VecFn vec = *static_cast<const double*>(in[1].data) != 0 ? VecFn(&cpu::vm::gelu_tanh) : VecFn(&cpu::vm::gelu);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out);
  if (!in[0].scalar) return vec(x, y, n);
  float v;
  vec(x, &v, 1);
  for (int64_t i = 0; i < n; ++i) y[i] = v;
}

// gelu: float32 vectorised, float64 in double through libm; the same functions eagerly and in fused loops.
OpImpl gelu_impl() {
  auto f = [](auto v, const double* p) { return gelu_of(v, p); };
  OpImpl impl = param_kernel<1, false>(f, gelu_param);
  const ElementwiseDef def{&gelu_f32, impl.elementwise.f64, 1, gelu_param};
  return with_elementwise(def, std::move(impl.kernel));
}

template <typename T>
T sigmoid_of(T v) {
  return v >= 0 ? T(1) / (T(1) + std::exp(-v)) : std::exp(v) / (T(1) + std::exp(v));
}

// ---- the gradient ops of tanh and sigmoid ----

Tensor tanh_grad(const Tensor& y, const Tensor& dy) {
  static const OpDef& op = registry().get("tanh_grad");
  return call_op(op, {y, dy});
}

Tensor sigmoid_grad(const Tensor& y, const Tensor& dy) {
  static const OpDef& op = registry().get("sigmoid_grad");
  return call_op(op, {y, dy});
}

Tensor gelu_grad(const Tensor& x, const Tensor& dy) {
  static const OpDef& op = registry().get("gelu_grad");
  return call_op(op, {x, dy});
}

Tensor relu_grad(const Tensor& y, const Tensor& dy) {
  static const OpDef& op = registry().get("relu_grad");
  return call_op(op, {y, dy});
}

using VecGradFn = void (*)(const float*, const float*, float*, int64_t);

// dy where y > 0, else 0 (a select, not a product: an infinite dy where y <= 0 gives 0, as in PyTorch).
void relu_grad_f32(const float* y, const float* dy, float* out, int64_t n) {
  BPROP_ELEMENTWISE_LOOP
  for (int64_t i = 0; i < n; ++i) {
    const float d = dy[i];  // loaded unconditionally, so the select vectorises (no branch per element)
    out[i] = y[i] > 0.0f ? d : 0.0f;
  }
}

// out = f(y, dy): float32 operands of the output's shape in one pass of `vec`, anything else broadcast.
// (kVectorizes: false when f calls libm, cpu::elementwise_loop)
template <bool kVectorizes, typename F>
KernelFn general_grad_kernel(VecGradFn vec, F) {
  return [vec](KernelCtx& c) {
    const Tensor y = cpu::as_dtype(c.inputs[0], c.out_dtype);
    const Tensor dy = cpu::as_dtype(c.inputs[1], c.out_dtype);
    if (c.out_dtype == DType::Float32 && y.shape() == c.out_shape && dy.shape() == c.out_shape) {
      const float *py = y.data<float>(), *pd = dy.data<float>();
      float* po = c.out.data<float>();
      cpu::parallel_for(c.out.numel(), cpu::kParallelGrain,
                        [&](int64_t b, int64_t e) { vec(py + b, pd + b, po + b, e - b); });
      return;
    }
    const ElementFn fn = c.out_dtype == DType::Float64 ? &cpu::binary_array<F, double, kVectorizes>
                                                       : &cpu::binary_array<F, float, kVectorizes>;
    const size_t esize = dtype_size(c.out_dtype);
    cpu::broadcast_binary(fn, y.raw_data(), y.shape(), dy.raw_data(), dy.shape(), esize, c.out.raw_data(), c.out_shape,
                          esize);
  };
}

// float32 operands of the output's shape through V, a repeated operand through f (as the general kernel).
template <VecGradFn V, bool kVectorizes, typename F>
void grad_vec_array(const ElementOperand* in, void* out, int64_t n) {
  if (in[0].scalar || in[1].scalar) return cpu::binary_array<F, float, kVectorizes>(in, out, n);
  V(static_cast<const float*>(in[0].data), static_cast<const float*>(in[1].data), static_cast<float*>(out), n);
}

template <VecGradFn V, bool kVectorizes = true, typename F>
OpImpl grad_kernel(F f) {
  return with_elementwise({&grad_vec_array<V, kVectorizes, F>, &cpu::binary_array<F, double, kVectorizes>},
                          general_grad_kernel<kVectorizes>(V, f));
}

OpDef grad_def(const char* name, OpImpl impl, BpropFn bprop) {
  OpDef op;
  op.name = name;
  op.family = "unary";
  op.inputs = {{"y"}, {"dy"}};
  op.infer_shape = broadcast_shape;
  op.infer_dtype = [](const InferCtx& c) { return to_float(promote_dtype(c)); };
  op.cpu(std::move(impl.kernel));
  op.elementwise = impl.elementwise;
  op.bprop = std::move(bprop);
  return op;
}

struct UnaryOp {
  const char* name;
  InferDTypeFn dtype;  // float_dtype or numeric_dtype
  OpImpl impl;
  BpropFn bprop;  // empty = no grad
  bool reads_out = true;  // OpDef::bprop_reads_out: kOutUnused where the bprop never reads `out`
  std::vector<AttrSpec> attrs = {};
};
constexpr bool kOutUnused = false;

// Bprop of y = f(x) from a pointwise derivative: dx = dout * f'(x, out).
template <typename D>
BpropFn chain(D deriv) {
  return [deriv](const BpropCtx& c) -> std::vector<Tensor> { return {c.dout * deriv(c.input(0), c.out, c)}; };
}

}  // namespace

void register_unary_ops(Registry& r) {
  const std::vector<UnaryOp> table = {
      // neg: d(-x) = -dout
      {"neg", numeric_dtype, map_kernel([](auto v) { return -v; }),
       [](const BpropCtx& c) -> std::vector<Tensor> { return {-c.dout}; }, kOutUnused},
      // abs: d|x| = sign(x) dout
      {"abs", numeric_dtype, map_kernel([](auto v) { return v < 0 ? -v : v; }),
       chain([](const Tensor& x, const Tensor&, const BpropCtx&) { return ops::sign(x); }), kOutUnused},
      // sign: zero gradient everywhere (it is piecewise constant)
      {"sign", numeric_dtype, map_kernel([](auto v) { return (v > 0) - (v < 0); }),
       [](const BpropCtx& c) -> std::vector<Tensor> { return {ops::mul(c.dout, like(0.0, c.dout))}; }, kOutUnused},
      // exp: d e^x = e^x dout = out dout
      {"exp", float_dtype, vec_kernel<cpu::vm::exp>([](auto v) { return std::exp(v); }),
       chain([](const Tensor&, const Tensor& out, const BpropCtx&) { return out; })},
      // log: d log x = dout / x
      {"log", float_dtype, vec_kernel<cpu::vm::log>([](auto v) { return std::log(v); }),
       [](const BpropCtx& c) -> std::vector<Tensor> { return {c.dout / c.input(0)}; }, kOutUnused},
      // log1p: dout / (1 + x)
      {"log1p", float_dtype, vec_kernel<cpu::vm::log1p>([](auto v) { return std::log1p(v); }),
       [](const BpropCtx& c) -> std::vector<Tensor> { return {c.dout / (c.input(0) + 1.0)}; }, kOutUnused},
      // expm1: d(e^x - 1) = e^x = out + 1
      {"expm1", float_dtype, vec_kernel<cpu::vm::expm1>([](auto v) { return std::expm1(v); }),
       chain([](const Tensor&, const Tensor& out, const BpropCtx&) { return out + 1.0; })},
      // sqrt: dout / (2 sqrt x)
      {"sqrt", float_dtype, map_kernel([](auto v) { return std::sqrt(v); }),
       [](const BpropCtx& c) -> std::vector<Tensor> { return {c.dout / (c.out * 2.0)}; }},
      // rsqrt: d x^-1/2 = -1/2 x^-3/2 = -0.5 out / x
      {"rsqrt", float_dtype, map_kernel([](auto v) { return decltype(v)(1) / std::sqrt(v); }),
       chain([](const Tensor& x, const Tensor& out, const BpropCtx&) { return out * -0.5 / x; })},
      // square: 2 x dout
      {"square", numeric_dtype, map_kernel([](auto v) { return v * v; }),
       chain([](const Tensor& x, const Tensor&, const BpropCtx&) { return x * 2.0; }), kOutUnused},
      // reciprocal: d(1/x) = -1/x^2 = -out^2
      {"reciprocal", float_dtype, map_kernel([](auto v) { return decltype(v)(1) / v; }),
       chain([](const Tensor&, const Tensor& out, const BpropCtx&) { return -(out * out); })},
      // sin: cos x dout
      {"sin", float_dtype, map_kernel<false>([](auto v) { return std::sin(v); }),
       chain([](const Tensor& x, const Tensor&, const BpropCtx&) { return ops::cos(x); }), kOutUnused},
      // cos: -sin x dout
      {"cos", float_dtype, map_kernel<false>([](auto v) { return std::cos(v); }),
       chain([](const Tensor& x, const Tensor&, const BpropCtx&) { return -ops::sin(x); }), kOutUnused},
      // tan: (1 + tan^2 x) dout
      {"tan", float_dtype, map_kernel<false>([](auto v) { return std::tan(v); }),
       chain([](const Tensor&, const Tensor& out, const BpropCtx&) { return out * out + 1.0; })},
      // tanh: (1 - out^2) dout, fused into tanh_grad
      {"tanh", float_dtype, vec_kernel<cpu::vm::tanh>([](auto v) { return std::tanh(v); }),
       [](const BpropCtx& c) -> std::vector<Tensor> { return {tanh_grad(c.out, c.dout)}; }},
      // sigmoid: out (1 - out) dout, fused into sigmoid_grad
      {"sigmoid", float_dtype, vec_kernel<cpu::vm::sigmoid>([](auto v) { return sigmoid_of(v); }),
       [](const BpropCtx& c) -> std::vector<Tensor> { return {sigmoid_grad(c.out, c.dout)}; }},
      // relu: dout where x > 0
      {"relu", numeric_dtype, map_kernel([](auto v) { return v > 0 ? v : decltype(v)(0); }),
       // relu: dout where out > 0 (out > 0 exactly where x > 0), fused into relu_grad
       [](const BpropCtx& c) -> std::vector<Tensor> { return {relu_grad(c.out, c.dout)}; }},
      // silu: x s(x) -> s (1 + x (1 - s))
      {"silu", float_dtype, vec_kernel<cpu::vm::silu>([](auto v) { return v * sigmoid_of(v); }),
       chain([](const Tensor& x, const Tensor&, const BpropCtx&) {
         const Tensor s = ops::sigmoid(x);
         return s * (x * (1.0 - s) + 1.0);
       }), kOutUnused},
      // softplus: log(1 + e^x) -> sigmoid(x)
      {"softplus", float_dtype,
       vec_kernel<cpu::vm::softplus>([](auto v) { return std::log1p(std::exp(-std::abs(v))) + (v > 0 ? v : decltype(v)(0)); }),
       chain([](const Tensor& x, const Tensor&, const BpropCtx&) { return ops::sigmoid(x); }), kOutUnused},
      // erf: 2/sqrt(pi) e^{-x^2}
      {"erf", float_dtype, map_kernel<false>([](auto v) { return std::erf(v); }),
       chain([](const Tensor& x, const Tensor&, const BpropCtx&) { return ops::exp(-(x * x)) * kTwoOverSqrtPi; }), kOutUnused},
      {"floor", numeric_dtype, map_kernel([](auto v) { return std::floor(v); }), nullptr},
      {"ceil", numeric_dtype, map_kernel([](auto v) { return std::ceil(v); }), nullptr},
      // round: half to even, as NumPy and PyTorch
      {"round", numeric_dtype, map_kernel([](auto v) { return std::nearbyint(v); }), nullptr},
      // leaky_relu: dout where x > 0, alpha dout elsewhere
      {"leaky_relu", float_dtype,
       param_kernel<1>([](auto v, const double* p) { return v > 0 ? v : static_cast<decltype(v)>(p[0] * v); },
                       alpha_param),
       [](const BpropCtx& c) -> std::vector<Tensor> {
         const Tensor& x = c.input(0);
         return {ops::where(x > like(0.0, x), c.dout, c.dout * c.attrs.get_float("alpha"))};
       },
       kOutUnused,
       {{"alpha", AttrKind::Float, 0.01}}},
      // elu: x > 0 ? x : alpha (e^x - 1) -> dout where x > 0, alpha e^x dout elsewhere
      {"elu", float_dtype,
       param_kernel<1, false>(
           [](auto v, const double* p) { return v > 0 ? v : static_cast<decltype(v)>(p[0] * std::expm1(v)); },
           alpha_param),
       [](const BpropCtx& c) -> std::vector<Tensor> {
         const Tensor& x = c.input(0);
         return {ops::where(x > like(0.0, x), c.dout, c.dout * ops::exp(x) * c.attrs.get_float("alpha"))};
       },
       kOutUnused,
       {{"alpha", AttrKind::Float, 1.0}}},
      // gelu "none": x Phi(x) -> gelu_grad(x, dout) = dout (Phi(x) + x phi(x)); "tanh": 0.5 x (1 + tanh u),
      // u = k (x + c x^3), composed
      {"gelu", float_dtype, gelu_impl(),
       [](const BpropCtx& c) -> std::vector<Tensor> {
         const Tensor& x = c.input(0);
         if (c.attrs.get_string("approximate") == "tanh") {
           const Tensor t = ops::tanh((x + x * x * x * kGeluC) * kGeluK);
           const Tensor du = (x * x * (3.0 * kGeluC) + 1.0) * kGeluK;
           return {c.dout * ((t + 1.0) * 0.5 + x * 0.5 * (1.0 - t * t) * du)};
         }
         return {gelu_grad(x, c.dout)};
       },
       kOutUnused,
       {{"approximate", AttrKind::String, std::string("none"), false, {"none", "tanh"}}}},
  };
  for (const auto& u : table) {
    OpDef op;
    op.name = u.name;
    op.family = "unary";
    op.inputs = {{"x"}};
    op.attrs = u.attrs;
    op.infer_shape = same_shape;
    op.infer_dtype = u.dtype;
    op.cpu(u.impl.kernel);
    op.elementwise = u.impl.elementwise;
    op.bprop_reads_out = u.reads_out;
    if (u.bprop) op.bprop = u.bprop;
    else op.no_grad = true;
    r.add(std::move(op));
  }
  // tanh_grad(y, dy) = dy (1 - y^2): d/dy = -2 y dy dout, d/ddy = tanh_grad(y, dout)
  r.add(grad_def(
      "tanh_grad",
      grad_kernel<cpu::vm::tanh_grad>([](auto t, auto d) { return d * (decltype(t)(1) - t * t); }),
      [](const BpropCtx& c) {
        const Tensor &y = c.input(0), &dy = c.input(1);
        return sum_to_inputs(c, {c.needs(0) ? c.dout * dy * y * -2.0 : Tensor(),
                                 c.needs(1) ? tanh_grad(y, c.dout) : Tensor()});
      }));
  // gelu_grad(x, dy) = dy (Phi(x) + x phi(x)), from gelu's input: d/dx = dy phi(x) (2 - x^2) dout,
  // d/ddy = gelu_grad(x, dout)
  {
    OpDef op = grad_def(
        "gelu_grad", grad_kernel<cpu::vm::gelu_grad, false>([](auto x, auto d) {
          using T = decltype(x);
          const double v = x;
          return static_cast<T>(d * (0.5 * std::erfc(-v / kSqrt2) + v * kInvSqrt2Pi * std::exp(-0.5 * v * v)));
        }),
        [](const BpropCtx& c) {
          const Tensor &x = c.input(0), &dy = c.input(1);
          const Tensor pdf = ops::exp(x * x * -0.5) * kInvSqrt2Pi;
          return sum_to_inputs(c, {c.needs(0) ? c.dout * dy * pdf * (2.0 - x * x) : Tensor(),
                                   c.needs(1) ? gelu_grad(x, c.dout) : Tensor()});
        });
    op.inputs = {{"x"}, {"dy"}};
    r.add(std::move(op));
  }
  // relu_grad(y, dy) = dy [y > 0]: piecewise constant in y (no gradient there), d/ddy = relu_grad(y, dout)
  r.add(grad_def(
      "relu_grad", grad_kernel<relu_grad_f32>([](auto y, auto d) { return y > decltype(y)(0) ? d : decltype(d)(0); }),
      [](const BpropCtx& c) {
        return sum_to_inputs(c, {Tensor(), c.needs(1) ? relu_grad(c.input(0), c.dout) : Tensor()});
      }));
  // sigmoid_grad(y, dy) = dy y (1 - y): d/dy = dy (1 - 2 y) dout, d/ddy = sigmoid_grad(y, dout)
  r.add(grad_def(
      "sigmoid_grad",
      grad_kernel<cpu::vm::sigmoid_grad>( [](auto s, auto d) { return d * (s * (decltype(s)(1) - s)); }),
      [](const BpropCtx& c) {
        const Tensor &y = c.input(0), &dy = c.input(1);
        return sum_to_inputs(c, {c.needs(0) ? c.dout * dy * (1.0 - y * 2.0) : Tensor(),
                                 c.needs(1) ? sigmoid_grad(y, c.dout) : Tensor()});
      }));
}

}  // namespace bprop
