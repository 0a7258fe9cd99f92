#include "tensor/half_simd.h"

#if defined(__x86_64__) && !defined(__EMSCRIPTEN__) && (defined(__GNUC__) || defined(__clang__))
#define BPROP_HALF_AVX512BF16 1
#define BPROP_HALF_F16C 1
#include <immintrin.h>
#endif
#if defined(__EMSCRIPTEN__) && defined(__wasm_simd128__)
#include <wasm_simd128.h>
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

// Widening a bfloat16 is exact: its bits are the float32's top half (NaN payloads and signs kept, as the scalar
// bfloat16_bits_to_float does), so the vector paths shift 16-bit lanes into 32-bit ones with no special cases.
void widen_scalar(const BFloat16* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = bfloat16_bits_to_float(in[i].bits);
}

#if defined(BPROP_HALF_F16C)
__attribute__((target("avx2"))) void avx2_widen(const BFloat16* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16));
  }
  widen_scalar(in + i, out + i, n - i);
}

bool has_avx2() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
  }();
  return yes;
}
#endif

#if defined(__EMSCRIPTEN__) && defined(__wasm_simd128__)
void simd128_widen(const BFloat16* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v128_t b = wasm_v128_load(in + i);
    wasm_v128_store(out + i, wasm_i32x4_shl(wasm_u32x4_extend_low_u16x8(b), 16));
    wasm_v128_store(out + i + 4, wasm_i32x4_shl(wasm_u32x4_extend_high_u16x8(b), 16));
  }
  widen_scalar(in + i, out + i, n - i);
}
#endif

void half_scalar(const Half* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = half_bits_to_float(in[i].bits);
}
void half_scalar(const float* in, Half* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i].bits = float_to_half_bits(in[i]);
}

#if defined(BPROP_HALF_F16C)

// VCVTPH2PS widens exactly, like half_bits_to_float, except that it quietens a signalling NaN; VCVTPS2PH rounds to
// nearest even (subnormal results included), like float_to_half_bits, except that it keeps a NaN's payload where
// bprop gives the canonical 0x7e00. So 8 values at a time go through the instructions unless one of them is a NaN;
// such a block (rare) takes the scalar path.
__attribute__((target("avx2,f16c"))) void f16c_widen(const Half* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m128i magnitude = _mm_and_si128(h, _mm_set1_epi16(0x7fff));
    if (__builtin_expect(_mm_movemask_epi8(_mm_cmpgt_epi16(magnitude, _mm_set1_epi16(0x7c00))) != 0, 0)) {
      half_scalar(in + i, out + i, 8);
      continue;
    }
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  half_scalar(in + i, out + i, n - i);
}

__attribute__((target("avx2,f16c"))) void f16c_round(const float* in, Half* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(in + i);
    if (__builtin_expect(_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0, 0)) {
      half_scalar(in + i, out + i, 8);
      continue;
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
  half_scalar(in + i, out + i, n - i);
}

bool has_f16c() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  }();
  return yes;
}

#endif

}  // namespace

void half_to_float_simd(const Half* in, float* out, int64_t n) {
#if defined(BPROP_HALF_F16C)
  if (n >= 8 && has_f16c()) {
    f16c_widen(in, out, n);
    return;
  }
#endif
  half_scalar(in, out, n);
}

void float_to_half_simd(const float* in, Half* out, int64_t n) {
#if defined(BPROP_HALF_F16C)
  if (n >= 8 && has_f16c()) {
    f16c_round(in, out, n);
    return;
  }
#endif
  half_scalar(in, out, n);
}

void bfloat16_to_float_simd(const BFloat16* in, float* out, int64_t n) {
#if defined(BPROP_HALF_F16C)
  if (n >= 8 && has_avx2()) {
    avx2_widen(in, out, n);
    return;
  }
#elif defined(__EMSCRIPTEN__) && defined(__wasm_simd128__)
  simd128_widen(in, out, n);
  return;
#endif
  widen_scalar(in, out, n);
}

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
