// How CPU kernels meet float16 and bfloat16: they compute in float32 (PyTorch's CPU semantics for the half types:
// widen exactly, compute in float32, round the result once). Kernels are written for float32/float64/int32/bool;
// this runs one on float32 copies of its half operands and rounds its float32 output into the half output.
#pragma once
#include "bprop/registry.h"

namespace bprop {

/// True when the call has a half operand or a half output (and the op reads elements: views need nothing).
bool half_call(const KernelCtx& ctx);

/// Runs `kernel` (a CPU kernel) for `ctx`: as it is, or for a half call on float32 copies (see above).
void run_cpu_kernel(const KernelFn& kernel, KernelCtx& ctx);

}  // namespace bprop
