// Array conversions between float32 and the half formats with the CPU's conversion instructions where it has them
// (AVX512-BF16, F16C): the same bits as the scalar conversions of bprop/half.h, several times faster, for the
// kernels that widen half operands and round large float32 results.
#pragma once
#include <cstdint>

#include "bprop/half.h"

namespace bprop {

/// out[i] = bfloat16_bits_to_float(in[i].bits) for i < n, bit for bit (exact: NaN payloads kept).
void bfloat16_to_float_simd(const BFloat16* in, float* out, int64_t n);

/// out[i] = float_to_bfloat16_bits(in[i]) for i < n, bit for bit (round to nearest even, NaN -> quiet NaN with
/// its sign, subnormals rounded, not flushed).
void float_to_bfloat16_simd(const float* in, BFloat16* out, int64_t n);

/// out[i] = half_bits_to_float(in[i].bits) for i < n, bit for bit (a signalling NaN stays signalling).
void half_to_float_simd(const Half* in, float* out, int64_t n);

/// out[i] = float_to_half_bits(in[i]) for i < n, bit for bit (round to nearest even, NaN -> 0x7e00 with its sign).
void float_to_half_simd(const float* in, Half* out, int64_t n);

}  // namespace bprop
