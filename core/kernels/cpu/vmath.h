// Vectorisable float32 math: exp, expm1, log, log1p, tanh, sigmoid, softplus, silu, gelu (both forms).
//
// Each function is branch-free scalar code (selects instead of branches, bit casts instead of frexp/ldexp, no
// libm calls), so a loop that applies it to an array is auto-vectorised by GCC and clang, natively and under
// WebAssembly SIMD. The array versions in vmath.cpp are those loops; on x86-64 they are compiled for several
// instruction sets and picked at run time (the native build itself has no -march flags).
//
// Accuracy against the float64 std:: functions, in float32 ulps of the exact result, the largest error seen
// over 155 million inputs (every 251st bit pattern, plus +-inf, NaN, zeros, denormals and each function's
// edges), the same with and without FMA: exp 1.0, expm1 1.7, log 0.8, log1p 1.4, tanh 2.5, sigmoid 2.4,
// softplus 2.0, silu 3.3. tests/cpp/kernels/vmath_test.cpp asserts 1.5, 2, 1.5, 2, 3, 3, 2.5 and 4 on a
// sparser sweep, and gelu and gelu_tanh 8.5 (8.2 and 6.9 seen, in the denormal range; below x = -1 gelu_tanh
// may instead be within 2^-16 relative: its exponent is rounded to float32 first, as in any float32 evaluation of
// the formula). float64 keeps the std:: functions.
#pragma once
#include <cstdint>
#include <limits>

#if defined(__GNUC__)
#define BPROP_VM_INLINE inline __attribute__((always_inline))
#else
#define BPROP_VM_INLINE inline
#endif

namespace bprop::cpu::vm {

namespace detail {

constexpr float kLog2e = 1.44269504088896341f;
// ln 2 split in two (Cody and Waite): k * kLn2Hi is exact for |k| < 2^15, so x - k ln2 loses nothing.
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
// Adding 1.5 * 2^23 rounds a float of magnitude below 2^22 to an integer held in the low mantissa bits.
constexpr float kRoundMagic = 12582912.0f;

// (std::bit_cast is missing from older libc++, as Emscripten 3.1 ships; the builtin is in GCC and clang.)
BPROP_VM_INLINE uint32_t bits(float x) { return __builtin_bit_cast(uint32_t, x); }
BPROP_VM_INLINE float from_bits(uint32_t b) { return __builtin_bit_cast(float, b); }

/// 2^k for k in [-126, 127] (a normal float built from its exponent field).
BPROP_VM_INLINE float pow2i(int32_t k) { return from_bits((static_cast<uint32_t>(k) + 127u) << 23); }

/// x rounded to the nearest integer, as a float and as an int (|x| < 2^22; NaN gives NaN and any int).
BPROP_VM_INLINE float round_magic(float x, int32_t& k) {
  const float t = x + kRoundMagic;
  k = static_cast<int32_t>(bits(t) - bits(kRoundMagic));
  return t - kRoundMagic;
}

/// x clamped to [lo, hi], and the result y of a function computed from it with a NaN x passed on.
/// WebAssembly SIMD has one instruction for `x < hi ? x : hi` (f32x4.pmin; NaN gives hi), while the clamp that
/// keeps NaN, `x > hi ? hi : x`, becomes f32x4.min, whose NaN rules V8 lowers to about seven x86 instructions
/// (exp's two clamps were a third of its time there). So in WebAssembly the clamp drops NaN and `pass_nan` puts it
/// back; natively the NaN-keeping clamp is one instruction (minps) and NaN flows through the arithmetic. Either
/// way the results are the same: every number gives the same bits, and NaN gives NaN.
#if defined(__wasm__)
BPROP_VM_INLINE float clamp_above(float x, float hi) { return x < hi ? x : hi; }
BPROP_VM_INLINE float clamp(float x, float lo, float hi) {
  x = clamp_above(x, hi);
  return lo < x ? x : lo;
}
BPROP_VM_INLINE float pass_nan(float x, float y) { return x != x ? x : y; }
#else
BPROP_VM_INLINE float clamp_above(float x, float hi) { return x > hi ? hi : x; }
BPROP_VM_INLINE float clamp(float x, float lo, float hi) {
  x = clamp_above(x, hi);
  return x < lo ? lo : x;
}
BPROP_VM_INLINE float pass_nan(float, float y) { return y; }
#endif

/// x with the sign bit of s.
BPROP_VM_INLINE float copysign(float x, float s) {
  return from_bits((bits(x) & 0x7fffffffu) | (bits(s) & 0x80000000u));
}

BPROP_VM_INLINE float abs(float x) { return from_bits(bits(x) & 0x7fffffffu); }

/// -min(|x|, lim), the argument of the functions of e^-|x|, clamped where they need it: two bit operations and
/// the one-instruction clamp (a clamp of -|x| from below is a NaN-keeping max in WebAssembly, eight x86
/// instructions in V8). NaN gives -lim in WebAssembly, where the caller passes NaN on, and NaN natively.
BPROP_VM_INLINE float neg_abs_clamped(float x, float lim) {
  return from_bits(bits(clamp_above(abs(x), lim)) | 0x80000000u);
}

/// e^r - 1 - r for |r| <= ln2 / 2, as r^2 times a polynomial (Taylor to degree 7: error < 2^-26 relative).
BPROP_VM_INLINE float expm1_tail(float r) {
  float p = 1.98412698e-4f;                // 1/5040
  p = p * r + 1.38888889e-3f;              // 1/720
  p = p * r + 8.33333333e-3f;              // 1/120
  p = p * r + 4.16666667e-2f;              // 1/24
  p = p * r + 1.66666667e-1f;              // 1/6
  p = p * r + 0.5f;
  return r * r * p;
}

/// e^x 2^s for s in [0, 24] and x in [-120, 89] (x <= 0 when s > 0), or NaN, rounded once, at the last multiply
/// (so also in the denormal range). Below -120, e^x 2^24 is still far below the smallest denormal.
BPROP_VM_INLINE float exp_scaled_clamped(float x, int32_t s) {
  int32_t k;
  const float kf = round_magic(x * kLog2e, k);  // k in [-173, 128]
  const float r = (x - kf * kLn2Hi) - kf * kLn2Lo;
  // Cephes expf polynomial for e^r on |r| <= ln2 / 2.
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^k in two normal halves: p 2^k1 is exact, the multiply by 2^(k - k1 + s) rounds.
  const int32_t k1 = k >> 1;
  return p * pow2i(k1) * pow2i(k - k1 + s);
}

/// e^-|x| 2^s, s in [0, 24]; NaN as neg_abs_clamped.
BPROP_VM_INLINE float exp_neg_abs(float x, int32_t s) { return exp_scaled_clamped(neg_abs_clamped(x, 120.0f), s); }

}  // namespace detail

/// e^x. Overflows to +inf above ln(FLT_MAX), underflows gradually through the denormals to +0 below about -103.97.
BPROP_VM_INLINE float exp(float x) {
  using namespace detail;
  return pass_nan(x, exp_scaled_clamped(clamp(x, -120.0f, 89.0f), 0));
}

namespace detail {

/// e^x - 1 for x in [-20, 88.8], or NaN; the sign of a zero result is lost.
BPROP_VM_INLINE float expm1_clamped(float x) {
  int32_t k;
  const float kf = round_magic(x * kLog2e, k);  // k in [-29, 128]
  const float r = (x - kf * kLn2Hi) - kf * kLn2Lo;
  const float p = r + expm1_tail(r);  // e^r - 1
  // e^x - 1 = 2^k (p + 1) - 1 = 2 (h p + (h - 1/2)) with h = 2^(k-1): exact scalings around two roundings, and
  // no overflow of 2^k before the final doubling.
  const float h = pow2i(k - 1);
  return (h * p + (h - 0.5f)) * 2.0f;
}

}  // namespace detail

/// e^x - 1, accurate near 0. -1 below -20 (e^-20 is below half an ulp of 1), +inf above ln(FLT_MAX).
BPROP_VM_INLINE float expm1(float x) {
  using namespace detail;
  const float y = expm1_clamped(clamp(x, -20.0f, 88.8f));
  return x == 0.0f ? x : pass_nan(x, y);  // expm1(-0) is -0 (r + tail(r) gives +0)
}

/// Natural logarithm: -inf at +-0, NaN below 0, +inf at +inf; denormal inputs are exact-scaled first.
BPROP_VM_INLINE float log(float x) {
  using namespace detail;
  const bool denormal = x < std::numeric_limits<float>::min();
  const float xs = denormal ? x * 8388608.0f : x;  // * 2^23
  const uint32_t b = bits(xs);
  // x = m 2^e with m in [0.5, 1)
  int32_t e = static_cast<int32_t>((b >> 23) & 0xffu) - 126 - (denormal ? 23 : 0);
  const float m = from_bits((b & 0x007fffffu) | 0x3f000000u);
  // Centre m on 1: f = m - 1 in [sqrt(1/2) - 1, sqrt(2) - 1), both subtractions exact.
  const bool low = m < 0.707106781186547524f;
  e -= low ? 1 : 0;
  const float f = low ? (m + m) - 1.0f : m - 1.0f;
  const float ef = static_cast<float>(e);
  // Cephes logf: log(1 + f) = f - f^2/2 + f^3 P(f)
  const float z = f * f;
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  float y = p * f * z;
  y += ef * kLn2Lo;
  y -= 0.5f * z;
  float r = f + y;
  r += ef * kLn2Hi;
  r = x == 0.0f ? -std::numeric_limits<float>::infinity() : r;
  r = x < 0.0f ? std::numeric_limits<float>::quiet_NaN() : r;
  r = x == std::numeric_limits<float>::infinity() ? x : r;
  return x != x ? x : r;
}

/// log(1 + x), accurate near 0.
BPROP_VM_INLINE float log1p(float x) {
  // u = 1 + x is rounded; log(u) + (x - (u - 1)) / u corrects for that to first order (u - 1 is exact).
  const float u = 1.0f + x;
  const float c = (x - (u - 1.0f)) / u;
  const float lu = vm::log(u);
  return lu + (c != c ? 0.0f : c);  // c is NaN at u = 0 and u = inf, where log(u) is the answer
}

/// tanh x = -expm1(-2|x|) / (expm1(-2|x|) + 2) with x's sign: no cancellation anywhere, 1 beyond |x| = 10.
/// expm1's argument is never positive and the copysign makes the sign, so neither expm1's upper clamp, its care
/// for -0, nor the minus is needed: a third fewer instructions.
BPROP_VM_INLINE float tanh(float x) {
  using namespace detail;
  const float e = expm1_clamped(2.0f * neg_abs_clamped(x, 10.0f));  // in [-1, 0]
  return pass_nan(x, copysign(e / (e + 2.0f), x));
}

/// 1 / (1 + e^-x), computed from e = e^-|x| <= 1 so nothing overflows: 1 / (1 + e) for x >= 0, e / (1 + e) below.
BPROP_VM_INLINE float sigmoid(float x) {
  const float e = detail::exp_neg_abs(x, 0);
  return detail::pass_nan(x, (x >= 0.0f ? 1.0f : e) / (1.0f + e));
}

/// log(1 + e^x) = max(x, 0) + log1p(e^-|x|).
BPROP_VM_INLINE float softplus(float x) {
  const float pos = x > 0.0f ? x : 0.0f;
  return detail::pass_nan(x, pos + vm::log1p(detail::exp_neg_abs(x, 0)));
}

/// x sigmoid(x): x / (1 + e) for x >= 0, x e / (1 + e) below with e = e^x; the latter is formed 2^24 times
/// larger and scaled back last, so tiny results (x < -87) are not rounded twice in the denormal range.
BPROP_VM_INLINE float silu(float x) {
  using namespace detail;
  const float t = neg_abs_clamped(x, 120.0f);  // below 0 it is x clamped at -120, where x e underflows to -0
  const float e24 = exp_scaled_clamped(t, 24);  // e^-|x| 2^24
  const float e = e24 * 5.9604644775390625e-8f;  // * 2^-24
  const float q = (x >= 0.0f ? x : t * e24) / (1.0f + e);
  // -inf gives NaN (-inf times 0), as x * sigmoid(x) does elsewhere.
  const float below = x == -std::numeric_limits<float>::infinity() ? x * 0.0f : q * 5.9604644775390625e-8f;
  return pass_nan(x, x >= 0.0f ? q : below);
}

namespace detail {

/// Phi(-a) = erfc(a / sqrt 2) / 2 for a >= 0 (or NaN), Phi the standard normal distribution function, with
/// e^(-a^2 / 2) (the density's factor) on the side. erfc is t e^(-z^2 + P(t)), z = a / sqrt 2, t = 1 / (1 + z / 2)
/// (Numerical Recipes' erfcc: relative error below 1.2e-7 for every z). The exponent comes from a, not from z:
/// a^2 / 2 is split as h^2 / 2 + r, h = a with its low 12 mantissa bits cleared, so h^2 is exact, and e^(-h^2 / 2)
/// and e^(P(t) - r) are computed apart. (Rounding z, or z^2, would cost up to 180 ulps of relative error at
/// a = 13.) a is clamped at 14.9, where both are 0 in float32 (e^-111 is below the denormals).
struct NormalTail {
  float q;      // Phi(-a)
  float e_sq;   // e^(-a^2 / 2)
};
BPROP_VM_INLINE NormalTail normal_tail(float a) {
  a = clamp_above(a, 14.9f);
  const float t = 1.0f / (1.0f + 0.353553390593273762f * a);  // 1 / (1 + a / (2 sqrt 2))
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const float h = from_bits(bits(a) & 0xfffff000u);
  const float r = 0.5f * ((a - h) * (a + h));
  const float e_h = exp_scaled_clamped(-0.5f * (h * h), 0);  // >= -111.005
  return {0.5f * t * e_h * exp_scaled_clamped(p - r, 0), e_h * exp_scaled_clamped(-r, 0)};
}

constexpr float kInvSqrt2Pi = 0.398942280401432678f;  // 1 / sqrt(2 pi)

}  // namespace detail

/// x Phi(x), Phi the standard normal distribution function (GELU's exact form): Phi(x) = erfc(-x / sqrt 2) / 2
/// without cancellation below 0, 1 - erfc(x / sqrt 2) / 2 above.
BPROP_VM_INLINE float gelu(float x) {
  const float q = detail::normal_tail(detail::abs(x)).q;
  return detail::pass_nan(x, x * (x >= 0.0f ? 1.0f - q : q));
}

/// dy (Phi(x) + x phi(x)), the gradient of gelu (phi the standard normal density).
BPROP_VM_INLINE float gelu_grad(float x, float dy) {
  const detail::NormalTail e = detail::normal_tail(detail::abs(x));
  const float phi = detail::kInvSqrt2Pi * e.e_sq;
  return detail::pass_nan(x, dy * ((x >= 0.0f ? 1.0f - e.q : e.q) + x * phi));
}

/// GELU's tanh form: x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2, as x sigmoid(2 u): 1 + tanh u cancels
/// below 0, sigmoid does not.
BPROP_VM_INLINE float gelu_tanh(float x) {
  const float u = 1.59576912160573071f * (x + 0.044715f * x * x * x);  // 2 sqrt(2 / pi) (...)
  return x * vm::sigmoid(u);
}

// ---- arrays (vmath.cpp): y[i] = f(x[i]) for i < n; y may equal x ----
void exp(const float* x, float* y, int64_t n);
void expm1(const float* x, float* y, int64_t n);
void log(const float* x, float* y, int64_t n);
void log1p(const float* x, float* y, int64_t n);
void tanh(const float* x, float* y, int64_t n);
void sigmoid(const float* x, float* y, int64_t n);
void softplus(const float* x, float* y, int64_t n);
void silu(const float* x, float* y, int64_t n);
void gelu(const float* x, float* y, int64_t n);
void gelu_tanh(const float* x, float* y, int64_t n);

// ---- fused gradients: out[i] from y = f(x) (the forward output) and the cotangent dy ----
/// dy (1 - y^2), the gradient of tanh.
void tanh_grad(const float* y, const float* dy, float* out, int64_t n);
/// dy y (1 - y), the gradient of sigmoid.
void sigmoid_grad(const float* y, const float* dy, float* out, int64_t n);
/// From the input instead: gelu_grad(x, dy) above.
void gelu_grad(const float* x, const float* dy, float* out, int64_t n);

/// The sum of x[0, n) accumulated in double (in an order of its own: several partial sums, added pairwise).
double sum(const float* x, int64_t n);

// ---- binary arithmetic over contiguous arrays; a scalar operand is passed by value ----
enum class Arith : uint8_t { Add, Sub, Mul, Div };
/// out[i] = a[i] op b[i]
void arith(Arith op, const float* a, const float* b, float* out, int64_t n);
/// out[i] = a[i] op b
void arith(Arith op, const float* a, float b, float* out, int64_t n);
/// out[i] = a op b[i]
void arith(Arith op, float a, const float* b, float* out, int64_t n);

// ---- instruction sets ----
/// The loops are compiled for the build's target (Generic) and, on x86-64 with GCC or clang, also for
/// AVX2+FMA and AVX-512; the best one the CPU supports is chosen on first use.
enum class Isa : uint8_t { Generic, Avx2, Avx512 };
const char* isa_name(Isa isa);
bool isa_supported(Isa isa);
Isa active_isa();
/// Switches every array function to `isa` (tests and benchmarks compare them); ValueError if unsupported.
/// Not to be called while another thread runs a kernel.
void set_isa(Isa isa);

}  // namespace bprop::cpu::vm
