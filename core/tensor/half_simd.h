// float32 -> bfloat16 over arrays with AVX512-BF16 where the CPU has it: the same bits as float_to_bfloat16
// (bprop/half.h), several times faster, for the kernels that round a large float32 result into bfloat16.
#pragma once
#include <cstdint>

#include "bprop/half.h"

namespace bprop {

/// out[i] = float_to_bfloat16_bits(in[i]) for i < n, bit for bit (round to nearest even, NaN -> quiet NaN with
/// its sign, subnormals rounded, not flushed).
void float_to_bfloat16_simd(const float* in, BFloat16* out, int64_t n);

}  // namespace bprop
