#include "tensor/half_simd.h"

#if defined(__x86_64__) && !defined(__EMSCRIPTEN__) && (defined(__GNUC__) || defined(__clang__))
#define BPROP_HALF_AVX512BF16 1
#include <immintrin.h>
#endif

namespace bprop {
namespace {

void scalar(const float* in, BFloat16* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i].bits = float_to_bfloat16_bits(in[i]);
}

#if defined(BPROP_HALF_AVX512BF16)

// VCVTNE2PS2BF16 rounds to nearest even like float_to_bfloat16_bits, but it flushes float32 subnormals to zero
// and keeps a NaN's payload (quietened) where bprop's rounding gives the canonical 0x7fc0. So 32 values at a time
// go through the instruction unless one of them is a subnormal or a NaN; such a block (rare in GEMM results)
// takes the scalar path.
// Lanes needing the scalar path: subnormal (|x| - 1 < 0x7fffff, unsigned, so zero wraps around) or NaN (|x| > inf).
__attribute__((target("avx512f"), always_inline)) inline __mmask16 special_lanes(__m512 v) {
  const __m512i a = _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff));
  return static_cast<__mmask16>(
      _mm512_cmplt_epu32_mask(_mm512_sub_epi32(a, _mm512_set1_epi32(1)), _mm512_set1_epi32(0x007fffff)) |
      _mm512_cmpgt_epu32_mask(a, _mm512_set1_epi32(0x7f800000)));
}

__attribute__((target("avx512f,avx512bf16"))) void avx512bf16(const float* in, BFloat16* out, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 lo = _mm512_loadu_ps(in + i), hi = _mm512_loadu_ps(in + i + 16);
    if (__builtin_expect((special_lanes(lo) | special_lanes(hi)) != 0, 0)) {
      scalar(in + i, out + i, 32);
      continue;
    }
    _mm512_storeu_si512(out + i, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
  }
  scalar(in + i, out + i, n - i);
}

bool has_avx512bf16() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
  }();
  return yes;
}

#endif

}  // namespace

void float_to_bfloat16_simd(const float* in, BFloat16* out, int64_t n) {
#if defined(BPROP_HALF_AVX512BF16)
  if (n >= 32 && has_avx512bf16()) {
    avx512bf16(in, out, n);
    return;
  }
#endif
  scalar(in, out, n);
}

}  // namespace bprop
