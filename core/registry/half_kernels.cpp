#include "registry/half_kernels.h"

#include <algorithm>

#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/parallel.h"

namespace bprop {
namespace {

// Elements per tile of the elementwise path: its float32 tiles (up to four) stay in L1.
constexpr int64_t kHalfTile = 1024;

// A float32 copy of a half tensor (exact); other tensors as they are.
Tensor widened(const Tensor& t) {
  if (!t.defined() || !is_half(t.dtype())) return t;
  Tensor f = Tensor::empty(t.shape(), DType::Float32);
  if (t.dtype() == DType::Float16) half_to_float(t.data<Half>(), f.data<float>(), t.numel());
  else bfloat16_to_float(t.data<BFloat16>(), f.data<float>(), t.numel());
  return f;
}

// Rounds the float32 values of `from` into the half tensor `to` (same shape), once each.
void round_into(const Tensor& from, Tensor& to) {
  if (to.dtype() == DType::Float16) float_to_half(from.data<float>(), to.data<Half>(), to.numel());
  else float_to_bfloat16(from.data<float>(), to.data<BFloat16>(), to.numel());
}

// An elementwise op's call whose operands are all of the half output's dtype, each of its shape, one element, or
// a row or column it repeats (a bias): the op's float32 array function on tiles, each operand tile widened on the
// way in (a repeated operand is widened once, whole, and its tile copied out) and the result rounded on the way
// out: the bits of the float32 kernel run on whole copies. False (nothing done) for any other call.
bool run_half_elementwise(KernelCtx& c) {
  const ElementwiseDef& def = c.op.elementwise;
  const DType dt = c.out_dtype;
  const size_t arity = c.inputs.size();
  if (!def.f32 || !is_half(dt) || arity == 0 || arity > 3) return false;
  float scalars[3];
  bool whole[3];
  int64_t inner[3] = {0, 0, 0};   // a repeated operand's (cpu::repeats_in), else 0
  std::vector<float> repeated[3];  // its float32 values
  for (size_t i = 0; i < arity; ++i) {
    const Tensor& t = c.inputs[i];
    if (!t.defined() || t.dtype() != dt) return false;
    whole[i] = t.shape() == c.out_shape;
    if (whole[i]) continue;
    if (t.numel() == 1) {
      widen_half(dt, t.raw_data(), &scalars[i], 1);
    } else if (cpu::repeats_in(t.shape(), c.out_shape, &inner[i])) {
      repeated[i].resize(static_cast<size_t>(t.numel()));
      widen_half(dt, t.raw_data(), repeated[i].data(), t.numel());
    } else {
      return false;
    }
  }
  if (!c.out.defined()) c.out = Tensor::empty(c.out_shape, dt, Device::cpu(), c.op.name);
  double params[kMaxElementParams];
  if (def.num_params > 0) def.params(c.attrs, params);
  const int64_t n = c.out.numel();
  char* out = static_cast<char*>(c.out.raw_data());
  cpu::parallel_for(n, 1 << 15, [&](int64_t b, int64_t e) {
    float tiles[4][kHalfTile];  // the operands', then the result's
    ElementOperand ops[3 + kMaxElementParams];
    for (int k = 0; k < def.num_params; ++k) ops[arity + static_cast<size_t>(k)] = {&params[k], true};
    for (int64_t t0 = b; t0 < e; t0 += kHalfTile) {
      const int64_t len = std::min(kHalfTile, e - t0);
      for (size_t i = 0; i < arity; ++i) {
        if (inner[i] > 0) {
          cpu::copy_repeated(reinterpret_cast<const char*>(repeated[i].data()),
                             static_cast<int64_t>(repeated[i].size()), inner[i], 4, t0, len,
                             reinterpret_cast<char*>(tiles[i]));
          ops[i] = {tiles[i], false};
          continue;
        }
        if (!whole[i]) {
          ops[i] = {&scalars[i], true};
          continue;
        }
        widen_half(dt, static_cast<const char*>(c.inputs[i].raw_data()) + t0 * 2, tiles[i], len);
        ops[i] = {tiles[i], false};
      }
      def.f32(ops, tiles[3], len);
      round_half(dt, tiles[3], out + t0 * 2, len);
    }
  });
  return true;
}

}  // namespace

void widen_half(DType dt, const void* in, float* out, int64_t n) {
  if (dt == DType::Float16) half_to_float(static_cast<const Half*>(in), out, n);
  else bfloat16_to_float(static_cast<const BFloat16*>(in), out, n);
}

void round_half(DType dt, const float* in, void* out, int64_t n) {
  if (dt == DType::Float16) float_to_half(in, static_cast<Half*>(out), n);
  else float_to_bfloat16(in, static_cast<BFloat16*>(out), n);
}

void round_half_in_place(DType dt, float* values, int64_t n) {
  uint16_t bits[kHalfTile];
  for (int64_t t0 = 0; t0 < n; t0 += kHalfTile) {
    const int64_t len = std::min(kHalfTile, n - t0);
    round_half(dt, values + t0, bits, len);
    widen_half(dt, bits, values + t0, len);
  }
}

bool half_call(const KernelCtx& ctx) {
  if (!ctx.op.allocates_output) return false;  // a view or a composite: no element is read here
  if (is_half(ctx.out_dtype)) return true;
  for (const Tensor& t : ctx.inputs) {
    if (t.defined() && is_half(t.dtype())) return true;
  }
  return false;
}

void run_cpu_kernel(const KernelFn& kernel, KernelCtx& ctx) {
  if (!half_call(ctx)) {
    kernel(ctx);
    return;
  }
  if (ctx.op.cpu_half && ctx.op.cpu_half(ctx)) return;  // the op's own half kernel took the call
  if (run_half_elementwise(ctx)) return;
  std::vector<Tensor> inputs(ctx.inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = widened(ctx.inputs[i]);
  const bool half_out = is_half(ctx.out_dtype);
  const DType dtype = half_out ? DType::Float32 : ctx.out_dtype;
  Tensor out = half_out ? Tensor::empty(ctx.out_shape, DType::Float32, Device::cpu(), ctx.op.name) : ctx.out;
  KernelCtx wide{ctx.op, inputs, ctx.attrs, ctx.out_shape, dtype, out, ctx.device};
  kernel(wide);
  if (!half_out) {
    ctx.out = out;
    return;
  }
  if (!ctx.out.defined()) ctx.out = Tensor::empty(ctx.out_shape, ctx.out_dtype, Device::cpu(), ctx.op.name);
  round_into(out, ctx.out);
}

}  // namespace bprop
