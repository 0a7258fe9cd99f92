#include "registry/half_kernels.h"

namespace bprop {
namespace {

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

}  // namespace

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
