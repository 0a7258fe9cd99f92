// The two 16-bit float formats, as storage: IEEE binary16 (float16: 1 sign, 5 exponent, 10 mantissa bits) and
// bfloat16 (1 sign, 8 exponent, 7 mantissa bits: float32's upper half). Arithmetic happens in float32: a value is
// widened exactly, computed on, and rounded once to nearest, ties to even, with NaN, the infinities and -0 kept and
// float16's subnormals handled. The code is plain integer and float32 arithmetic (no F16C, no AVX512-BF16), so
// native and WebAssembly builds produce the same bits.
#pragma once
#include <cstdint>

namespace bprop {

// (std::bit_cast is missing from the older libc++ Emscripten ships; the builtin is in GCC and clang.)
constexpr float float_from_bits(uint32_t b) { return __builtin_bit_cast(float, b); }
constexpr uint32_t bits_of_float(float f) { return __builtin_bit_cast(uint32_t, f); }

/// float16 bits -> float32 (exact).
constexpr float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return float_from_bits(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  if (exponent != 0) return float_from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // zero or subnormal: mantissa * 2^-24, exact in float32 (at most 10 significant bits, a power-of-two scale)
  const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
  return sign ? -magnitude : magnitude;
}

/// float32 -> float16 bits, rounded to nearest, ties to even. Values from 65520 up become infinity; NaN becomes
/// the quiet NaN 0x7e00 with the input's sign (its payload is not kept).
constexpr uint16_t float_to_half_bits(float f) {
  const uint32_t x = bits_of_float(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00u;               // NaN
  if (magnitude >= 0x47800000u) return sign | 0x7c00u;              // >= 65536 (and inf): infinity
  if (magnitude >= 0x38800000u) {                                   // >= 2^-14: a normal float16 (or 65520.. -> inf)
    // Rebias the exponent (127 -> 15: subtract 112 << 23) and round the 13 dropped mantissa bits to nearest even:
    // adding 0xfff plus the lowest kept bit carries into the kept bits exactly when the dropped part is above
    // half, or is half and the kept part is odd. A carry out of the mantissa steps the exponent, as rounding up
    // to the next binade must (and past 65504 reaches the infinity pattern).
    const uint32_t odd = (magnitude >> 13) & 1u;
    return sign | static_cast<uint16_t>((magnitude - (112u << 23) + 0xfffu + odd) >> 13);
  }
  // Below 2^-14: a float16 subnormal (or zero), k * 2^-24. Adding 0.5 (2^-1) moves the value into the binade
  // [0.5, 1) where float32's ulp is 2^-24, so the float32 addition itself rounds it to a multiple of 2^-24 (to
  // nearest even, the FPU's mode in C++ and WebAssembly); the mantissa bits then hold k.
  const float shifted = float_from_bits(magnitude) + 0.5f;
  return sign | static_cast<uint16_t>(bits_of_float(shifted) - 0x3f000000u);
}

/// bfloat16 bits -> float32 (exact: the upper half of a float32).
constexpr float bfloat16_bits_to_float(uint16_t b) { return float_from_bits(static_cast<uint32_t>(b) << 16); }

/// float32 -> bfloat16 bits, rounded to nearest, ties to even (past the largest finite bfloat16: infinity); NaN
/// becomes the quiet NaN 0x7fc0 with the input's sign.
constexpr uint16_t float_to_bfloat16_bits(float f) {
  const uint32_t x = bits_of_float(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>(((x >> 16) & 0x8000u) | 0x7fc0u);
  const uint32_t odd = (x >> 16) & 1u;
  return static_cast<uint16_t>((x + 0x7fffu + odd) >> 16);
}

/// A storage type of one of the two formats: a tensor's element, read and written through float32.
template <uint16_t (*Encode)(float), float (*Decode)(uint16_t)>
struct Float16Storage {
  uint16_t bits = 0;
  Float16Storage() = default;
  explicit Float16Storage(float f) : bits(Encode(f)) {}
  operator float() const { return Decode(bits); }  // NOLINT(google-explicit-constructor): widening is exact
};
using Half = Float16Storage<float_to_half_bits, half_bits_to_float>;
using BFloat16 = Float16Storage<float_to_bfloat16_bits, bfloat16_bits_to_float>;

/// n values converted in one pass (the kernels' tiles and the copies in and out of float32).
void half_to_float(const Half* in, float* out, int64_t n);
void float_to_half(const float* in, Half* out, int64_t n);
void bfloat16_to_float(const BFloat16* in, float* out, int64_t n);
void float_to_bfloat16(const float* in, BFloat16* out, int64_t n);

}  // namespace bprop
