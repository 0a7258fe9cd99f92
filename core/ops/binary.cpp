// Elementwise binary ops with NumPy broadcasting: add sub mul div pow maximum minimum atan2 squared_difference.
#include <cmath>

#include "kernels/cpu/vmath.h"
#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;

// Computes f (captureless) in the output dtype after converting both inputs to it, with broadcasting: the array
// function of f for that dtype (the float ones are the op's own) on the stretches cpu::broadcast_binary finds.
template <bool kVectorizes, typename F>
KernelFn general_binary_kernel(F) {
  return [](KernelCtx& c) {
    ElementFn fn = nullptr;
    visit_dtype(c.out_dtype, [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) fn = &cpu::binary_array<F, T, kVectorizes>;
    });
    if (!fn) throw DTypeError("For '" + c.op.name + "', the output dtype bool is not supported");
    const Tensor a = cpu::as_dtype(c.inputs[0], c.out_dtype);
    const Tensor b = cpu::as_dtype(c.inputs[1], c.out_dtype);
    const size_t esize = dtype_size(c.out_dtype);
    cpu::broadcast_binary(fn, a.raw_data(), a.shape(), b.raw_data(), b.shape(), esize, c.out.raw_data(), c.out_shape,
                          esize);
  };
}

// f (captureless) as the op's array functions, and the kernel for other dtypes and broadcasts (kVectorizes: false
// when f calls libm, cpu::elementwise_loop).
template <bool kVectorizes = true, typename F>
OpImpl binary_kernel(F f) {
  return with_elementwise({&cpu::binary_array<F, float, kVectorizes>, &cpu::binary_array<F, double, kVectorizes>},
                          general_binary_kernel<kVectorizes>(f));
}

// The float32 array function of add sub mul div: the loops of kernels/cpu/vmath.h.
template <cpu::vm::Arith Op>
void arith_array(const ElementOperand* in, void* out, int64_t n) {
  const float* a = static_cast<const float*>(in[0].data);
  const float* b = static_cast<const float*>(in[1].data);
  float* y = static_cast<float*>(out);
  if (n == 1) {  // one element (a chain of scalar ops): the IEEE operation itself, without the loops' dispatch
    const float x = a[0], z = b[0];
    if constexpr (Op == cpu::vm::Arith::Add) y[0] = x + z;
    else if constexpr (Op == cpu::vm::Arith::Sub) y[0] = x - z;
    else if constexpr (Op == cpu::vm::Arith::Mul) y[0] = x * z;
    else y[0] = x / z;
    return;
  }
  if (in[0].scalar) cpu::vm::arith(Op, a[0], b, y, n);
  else if (in[1].scalar) cpu::vm::arith(Op, a, b[0], y, n);
  else cpu::vm::arith(Op, a, b, y, n);
}

// add sub mul div: float32 operands that are contiguous and of the output's shape, or a one-element operand,
// run the loops of kernels/cpu/vmath.h (vectorised for the running CPU); everything else runs binary_kernel.
template <typename F>
KernelFn general_arith_kernel(cpu::vm::Arith op, F f) {
  return [op, fallback = general_binary_kernel<true>(f)](KernelCtx& c) {
    const Tensor &a = c.inputs[0], &b = c.inputs[1];
    if (c.out_dtype == DType::Float32 && a.dtype() == DType::Float32 && b.dtype() == DType::Float32) {
      const int64_t n = c.out.numel();
      const bool a_full = a.shape() == c.out_shape, b_full = b.shape() == c.out_shape;
      const float *pa = a.data<float>(), *pb = b.data<float>();
      float* po = c.out.data<float>();
      if (a_full && (b_full || b.numel() == 1)) {
        cpu::parallel_for(n, cpu::kParallelGrain, [&](int64_t s, int64_t e) {
          if (b_full) cpu::vm::arith(op, pa + s, pb + s, po + s, e - s);
          else cpu::vm::arith(op, pa + s, pb[0], po + s, e - s);
        });
        return;
      }
      if (b_full && a.numel() == 1) {
        cpu::parallel_for(n, cpu::kParallelGrain,
                          [&](int64_t s, int64_t e) { cpu::vm::arith(op, pa[0], pb + s, po + s, e - s); });
        return;
      }
    }
    fallback(c);
  };
}

template <cpu::vm::Arith Op, typename F>
OpImpl arith_kernel(F f) {
  return with_elementwise({&arith_array<Op>, &cpu::binary_array<F, double>}, general_arith_kernel(Op, f));
}

DType float_promote(const InferCtx& c) { return to_float(promote_dtype(c)); }

struct BinaryOp {
  const char* name;
  InferDTypeFn dtype;
  OpImpl impl;
  BpropFn bprop;
  bool reads_out = true;  // OpDef::bprop_reads_out: kOutUnused where the bprop never reads `out`
};
constexpr bool kOutUnused = false;

}  // namespace

void register_binary_ops(Registry& r) {
  const std::vector<BinaryOp> table = {
      // add: dx = dout, dy = dout (summed to each input's shape)
      {"add", promote_dtype, arith_kernel<cpu::vm::Arith::Add>([](auto x, auto y) { return x + y; }),
       [](const BpropCtx& c) {
         // (an input that needs no gradient, like the constant of x + 1, costs no sum_to)
         return sum_to_inputs(c, {c.needs(0) ? c.dout : Tensor(), c.needs(1) ? c.dout : Tensor()});
       }, kOutUnused},
      // sub: dx = dout, dy = -dout
      {"sub", promote_dtype, arith_kernel<cpu::vm::Arith::Sub>([](auto x, auto y) { return x - y; }),
       [](const BpropCtx& c) {
         return sum_to_inputs(c, {c.needs(0) ? c.dout : Tensor(), c.needs(1) ? -c.dout : Tensor()});
       }, kOutUnused},
      // mul: dx = dout y, dy = dout x
      {"mul", promote_dtype, arith_kernel<cpu::vm::Arith::Mul>([](auto x, auto y) { return x * y; }),
       [](const BpropCtx& c) {
         // x * x (one tensor twice): both gradients are dout x, computed once
         if (c.input(0).same(c.input(1)) && c.needs(0) && c.needs(1)) {
           const Tensor g = c.dout * c.input(0);
           return sum_to_inputs(c, {g, g});
         }
         return sum_to_inputs(c, {c.needs(0) ? c.dout * c.input(1) : Tensor(),
                                  c.needs(1) ? c.dout * c.input(0) : Tensor()});
       }, kOutUnused},
      // div: dx = dout / y, dy = -dout x / y^2 = -dout out / y
      {"div", float_promote, arith_kernel<cpu::vm::Arith::Div>([](auto x, auto y) { return x / y; }),
       [](const BpropCtx& c) {
         return sum_to_inputs(c, {c.needs(0) ? c.dout / c.input(1) : Tensor(),
                                  c.needs(1) ? -(c.dout * c.out / c.input(1)) : Tensor()});
       }},
      // pow: dx = dout y x^(y-1), dy = dout out log x (0 where x == 0, as PyTorch)
      {"pow", promote_dtype, binary_kernel<false>([](auto x, auto y) { return std::pow(x, y); }),
       [](const BpropCtx& c) {
         const Tensor &x = c.input(0), &y = c.input(1);
         Tensor dx, dy;
         if (c.needs(0)) dx = c.dout * y * ops::pow(x, y - 1.0);
         if (c.needs(1)) {
           const Tensor zero = ops::equal(x, like(0.0, x));
           const Tensor safe_x = ops::where(zero, like(1.0, x), x);
           dy = ops::where(zero, like(0.0, x), c.dout * c.out * ops::log(safe_x));
         }
         return sum_to_inputs(c, {dx, dy});
       }},
      // maximum: the larger input takes dout; ties split it evenly (as PyTorch)
      {"maximum", promote_dtype, binary_kernel([](auto x, auto y) { return x > y ? x : y; }),
       [](const BpropCtx& c) {
         const Tensor &x = c.input(0), &y = c.input(1);
         const Tensor wx = mask_as(x > y, c.dout) + mask_as(ops::equal(x, y), c.dout) * 0.5;
         return sum_to_inputs(c, {c.dout * wx, c.needs(1) ? c.dout * (1.0 - wx) : Tensor()});
       }, kOutUnused},
      // minimum: the smaller input takes dout; ties split it evenly
      {"minimum", promote_dtype, binary_kernel([](auto x, auto y) { return x < y ? x : y; }),
       [](const BpropCtx& c) {
         const Tensor &x = c.input(0), &y = c.input(1);
         const Tensor wx = mask_as(x < y, c.dout) + mask_as(ops::equal(x, y), c.dout) * 0.5;
         return sum_to_inputs(c, {c.dout * wx, c.needs(1) ? c.dout * (1.0 - wx) : Tensor()});
       }, kOutUnused},
      // atan2(x, y) = angle of (y, x): dx = dout y / (x^2 + y^2), dy = -dout x / (x^2 + y^2)
      {"atan2", float_promote, binary_kernel<false>([](auto x, auto y) { return std::atan2(x, y); }),
       [](const BpropCtx& c) {
         const Tensor &x = c.input(0), &y = c.input(1);
         const Tensor scale = c.dout / (x * x + y * y);
         return sum_to_inputs(c, {c.needs(0) ? scale * y : Tensor(), c.needs(1) ? -(scale * x) : Tensor()});
       }, kOutUnused},
      // squared_difference: (x - y)^2 -> dx = 2 (x - y) dout, dy = -dx
      {"squared_difference", promote_dtype, binary_kernel([](auto x, auto y) { return (x - y) * (x - y); }),
       [](const BpropCtx& c) {
         const Tensor dx = c.dout * (c.input(0) - c.input(1)) * 2.0;
         return sum_to_inputs(c, {dx, c.needs(1) ? -dx : Tensor()});
       }, kOutUnused},
  };
  for (const auto& b : table) {
    OpDef op;
    op.name = b.name;
    op.family = "binary";
    op.inputs = {{"x"}, {"y"}};
    op.infer_shape = broadcast_shape;
    op.infer_dtype = b.dtype;
    op.cpu(b.impl.kernel);
    op.elementwise = b.impl.elementwise;
    op.bprop = b.bprop;
    op.bprop_reads_out = b.reads_out;
    r.add(std::move(op));
  }
}

}  // namespace bprop
