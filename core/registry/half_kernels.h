// How CPU kernels meet float16 and bfloat16: they compute in float32 (PyTorch's CPU semantics for the half types:
// widen exactly, compute in float32, round the result once). Kernels are written for float32/float64/int32/bool;
// this runs one on float32 copies of its half operands and rounds its float32 output into the half output. An
// elementwise op (OpDef::elementwise) whose operands are each whole, one element or a repeated row or column runs
// its float32 array function on tiles instead, converting each tile on the way in and out: no whole float32 copy, the same bits.
#pragma once
#include "bprop/registry.h"

namespace bprop {

/// True when the call has a half operand or a half output (and the op reads elements: views need nothing).
bool half_call(const KernelCtx& ctx);

/// n elements of the half dtype dt (their storage at `in`) widened to float32 (exact), and n float32 values rounded
/// into dt's storage at `out` (to nearest even, once).
void widen_half(DType dt, const void* in, float* out, int64_t n);
void round_half(DType dt, const float* in, void* out, int64_t n);
/// Rounds n float32 values to dt's precision where they are (what an op's half result reads back as).
void round_half_in_place(DType dt, float* values, int64_t n);

/// Runs `kernel` (a CPU kernel) for `ctx`: as it is, or for a half call on float32 copies (see above).
void run_cpu_kernel(const KernelFn& kernel, KernelCtx& ctx);

}  // namespace bprop
