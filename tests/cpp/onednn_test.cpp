// bfloat16 matmul on oneDNN (kernels/cpu/onednn.h, the half fast path of matmul and matmul_t) against the widened
// float32 path on the same bfloat16 inputs: plain, batched, broadcast, stacked and 1-D shapes, every transpose of
// matmul_t, products split over the threads, and gradients; the fallback with oneDNN off (counted, and bit for bit
// the widened path); bfloat16 convolutions and their gradients the same way; and the vectorised float32 -> bfloat16
// rounding against float_to_bfloat16_bits.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "bprop/bprop.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/parallel.h"
#include "tensor/half_simd.h"

namespace bprop {
namespace {

// oneDNN routing on or off until the end of the scope.
class OneDnnRouting {
 public:
  explicit OneDnnRouting(bool on) { cpu::set_onednn_enabled(on); }
  ~OneDnnRouting() { cpu::set_onednn_enabled(true); }
};

// The CPU thread count until the end of the scope.
class Threads {
 public:
  explicit Threads(int n) : saved_(cpu::num_threads()) { cpu::set_num_threads(n); }
  ~Threads() { cpu::set_num_threads(saved_); }

 private:
  int saved_;
};

Tensor random_bf16(const Shape& shape, uint64_t seed) { return ops::cast(randn(shape, seed), DType::BFloat16); }

Tensor matmul_t(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  return call_op("matmul_t", {a, b}, {{"transpose_a", ta}, {"transpose_b", tb}});
}

// The distance of x to the next bfloat16 away from zero (x itself a bfloat16 value).
double bf16_ulp(double x) {
  const double a = std::fabs(x);
  if (a < std::ldexp(1.0, -126)) return std::ldexp(1.0, -133);  // subnormal spacing
  return std::ldexp(1.0, std::ilogb(a) - 7);
}

// fast and wide (bfloat16) agree within what the order of a float32 sum of k products can change. Both paths sum
// the same exact products (a bfloat16 times a bfloat16 is exact in float32) in float32, in different orders, and
// each float32 sum is within (k + 1) u S of the exact one, where u = 2^-24 and S the sum of the products' magnitudes
// (`abs_sum`, computed in float64): the two sums differ by at most 2 (k + 1) u S. Rounding each to bfloat16 adds
// at most one bfloat16 ulp to the difference (half an ulp each, when they straddle a rounding boundary).
void expect_close(const Tensor& fast, const Tensor& wide, const Tensor& abs_sum, int64_t k, const std::string& what) {
  ASSERT_EQ(fast.dtype(), DType::BFloat16) << what;
  ASSERT_EQ(fast.shape(), wide.shape()) << what;
  ASSERT_EQ(fast.shape(), abs_sum.shape()) << what;
  const std::vector<double> f = fast.to_vector<double>(), w = wide.to_vector<double>(), s = abs_sum.to_vector<double>();
  int64_t differing = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    const double tol = bf16_ulp(std::max(std::fabs(f[i]), std::fabs(w[i]))) +
                       2.0 * static_cast<double>(k + 1) * std::ldexp(1.0, -24) * s[i];
    ASSERT_LE(std::fabs(f[i] - w[i]), tol) << what << ": element " << i << " fast " << f[i] << " widened " << w[i];
    differing += f[i] != w[i];
  }
  // (most elements agree exactly; a few differ by an ulp where the float32 sums straddle a rounding boundary)
  EXPECT_LE(differing, static_cast<int64_t>(f.size()) / 4 + 1) << what;
}

Tensor f64_abs(const Tensor& t) { return ops::abs(ops::cast(t, DType::Float64)); }

uint64_t onednn_products() { return cpu::half_gemm_stats().onednn; }
uint64_t fallback_products() { return cpu::half_gemm_stats().fallback; }

// matmul(a, b) through oneDNN and widened, compared; `products` is the number of matrix products (batch elements).
void check_matmul(const Shape& as, const Shape& bs, uint64_t seed, uint64_t products) {
  const std::string what = shape_str(as) + " @ " + shape_str(bs);
  const Tensor a = random_bf16(as, seed), b = random_bf16(bs, seed + 1);
  const uint64_t before = onednn_products();
  const Tensor fast = ops::matmul(a, b);
  EXPECT_EQ(onednn_products() - before, products) << what;
  Tensor wide;
  {
    OneDnnRouting off(false);
    wide = ops::matmul(a, b);
  }
  EXPECT_EQ(onednn_products() - before, products) << what << " (the widened call ran on oneDNN)";
  expect_close(fast, wide, ops::matmul(f64_abs(a), f64_abs(b)), as.back(), what);
}

void check_matmul_t(const Shape& as, const Shape& bs, bool ta, bool tb, uint64_t seed) {
  const std::string what = shape_str(as) + (ta ? "^T" : "") + " @ " + shape_str(bs) + (tb ? "^T" : "");
  const Tensor a = random_bf16(as, seed), b = random_bf16(bs, seed + 1);
  const uint64_t before = onednn_products();
  const Tensor fast = matmul_t(a, b, ta, tb);
  EXPECT_GT(onednn_products(), before) << what;
  Tensor wide;
  {
    OneDnnRouting off(false);
    wide = matmul_t(a, b, ta, tb);
  }
  const int64_t k = ta ? as[as.size() - 2] : as.back();
  expect_close(fast, wide, matmul_t(f64_abs(a), f64_abs(b), ta, tb), k, what);
}

TEST(OneDnn, NamesItsBackend) {
  const std::string name = cpu::onednn_name();
  if (cpu::bf16_gemm_available()) {
    EXPECT_EQ(name.rfind("onednn 2.", 0), 0u) << name;
  } else {
    EXPECT_EQ(name.rfind("none (", 0), 0u) << name;
  }
}

TEST(OneDnn, Bf16MatmulMatchesTheWidenedPath) {
  if (!cpu::bf16_gemm_available()) GTEST_SKIP() << "oneDNN not available: " << cpu::onednn_name();
  check_matmul({64, 300}, {300, 80}, 1, 1);
  check_matmul({32, 2048}, {2048, 48}, 3, 1);           // a long sum: its order shows
  check_matmul({3, 40, 513}, {3, 513, 24}, 5, 3);       // batches
  check_matmul({2, 1, 30, 257}, {4, 257, 20}, 7, 8);    // broadcast batch dims
  check_matmul({5, 16, 128}, {128, 64}, 9, 5);          // one b: the batches stack into one GEMM
  check_matmul({300}, {300, 50}, 11, 1);                // 1-D a
  check_matmul({7, 64, 300}, {300}, 13, 7);             // 1-D b
  check_matmul({1, 17, 1000}, {1000, 33}, 15, 1);       // odd sizes
}

TEST(OneDnn, Bf16MatmulTEveryTransposeMatchesTheWidenedPath) {
  if (!cpu::bf16_gemm_available()) GTEST_SKIP() << "oneDNN not available: " << cpu::onednn_name();
  // a (..., n, k) or (..., k, n); b (..., k, m) or (..., m, k); n = 48, k = 700, m = 40
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      const Shape as = ta ? Shape{2, 700, 48} : Shape{2, 48, 700};
      const Shape bs = tb ? Shape{2, 40, 700} : Shape{2, 700, 40};
      check_matmul_t(as, bs, ta, tb, 20 + 2 * ta + tb);
      check_matmul_t(ta ? Shape{700, 48} : Shape{48, 700}, tb ? Shape{40, 700} : Shape{700, 40}, ta, tb, 30);
    }
  }
  // a transposed A with a long sum (oneDNN's GEMM rather than its matmul primitive), and small products (the same)
  check_matmul_t({1100, 130}, {1100, 40}, true, false, 35);
  check_matmul_t({1100, 130}, {40, 1100}, true, true, 36);
  check_matmul_t({30, 20}, {30, 24}, true, false, 37);
}

TEST(OneDnn, Bf16ProductsSplitOverTheThreadsMatchTheWidenedPath) {
  if (!cpu::bf16_gemm_available()) GTEST_SKIP() << "oneDNN not available: " << cpu::onednn_name();
  // (products of 2^28 multiply-adds: split from 2^27)
  Threads threads(4);
  check_matmul({1024, 512}, {512, 512}, 40, 1);    // rows of C split
  check_matmul({128, 1024}, {1024, 2048}, 42, 1);  // columns of C split (each block's rows strided in the output)
  check_matmul_t({512, 1024}, {512, 512}, true, true, 44);
}

TEST(OneDnn, Bf16MatmulGradientsMatchTheWidenedPath) {
  if (!cpu::bf16_gemm_available()) GTEST_SKIP() << "oneDNN not available: " << cpu::onednn_name();
  struct Case {
    Shape a, b;
  };
  for (const Case& c : {Case{{48, 600}, {600, 40}}, Case{{3, 24, 500}, {3, 500, 36}}}) {
    const std::string what = shape_str(c.a) + " @ " + shape_str(c.b);
    const Tensor a = random_bf16(c.a, 50), b = random_bf16(c.b, 51);
    const Tensor w = random_bf16(ops::matmul(a, b).shape(), 52);
    // sum(a @ b * w): the cotangent of the product is w itself, so each gradient is one GEMM, dA = w B^T and
    // dB = A^T w, on both paths from the same bfloat16 operands.
    const Fn loss = [&w](const std::vector<Tensor>& in) { return Value(ops::sum(ops::matmul(in[0], in[1]) * w)); };
    const uint64_t before = onednn_products();
    const Value fast = grad(loss, GradPosition({0, 1}))({a, b});
    EXPECT_GT(onednn_products(), before) << what;
    Value wide;
    {
      OneDnnRouting off(false);
      wide = grad(loss, GradPosition({0, 1}))({a, b});
    }
    // the same sums of magnitudes: the gradients of sum(|a| @ |b| * |w|) in float64
    const Tensor aw = f64_abs(w);
    const Fn abs_loss = [&aw](const std::vector<Tensor>& in) {
      return Value(ops::sum(ops::matmul(in[0], in[1]) * aw));
    };
    const Value s = grad(abs_loss, GradPosition({0, 1}))({f64_abs(a), f64_abs(b)});
    expect_close(fast[0].tensor(), wide[0].tensor(), s[0].tensor(), c.b.back(), what + ": da");
    expect_close(fast[1].tensor(), wide[1].tensor(), s[1].tensor(), c.a[c.a.size() - 2], what + ": db");
  }
}

TEST(OneDnn, FallbackWithoutOneDnnIsTheWidenedPathAndIsCounted) {
  OneDnnRouting off(false);
  EXPECT_FALSE(cpu::bf16_gemm_available());
  const Tensor a = random_bf16({3, 20, 70}, 60), b = random_bf16({3, 70, 30}, 61);
  const uint64_t onednn_before = onednn_products(), fallback_before = fallback_products();
  const Tensor got = ops::matmul(a, b);
  EXPECT_EQ(fallback_products() - fallback_before, 3u);  // one per batch element
  EXPECT_EQ(onednn_products(), onednn_before);
  // bit for bit the float32 product of the widened operands, rounded once
  const Tensor want =
      ops::cast(ops::matmul(ops::cast(a, DType::Float32), ops::cast(b, DType::Float32)), DType::BFloat16);
  ASSERT_EQ(got.dtype(), DType::BFloat16);
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), got.nbytes()), 0);
  // not counted: calls that never were bfloat16 GEMMs for oneDNN (float16, mixed dtypes, tiny products)
  const uint64_t counted = fallback_products();
  (void)ops::matmul(ops::cast(a, DType::Float16), ops::cast(b, DType::Float16));
  (void)ops::matmul(a, ops::cast(b, DType::Float32));
  (void)ops::matmul(random_bf16({4, 4}, 62), random_bf16({4, 4}, 63));
  EXPECT_EQ(fallback_products(), counted);
}

TEST(OneDnn, EmptyAndZeroLengthProducts) {
  // k = 0: zeros; no rows: an empty output (on either path)
  for (const bool on : {true, false}) {
    OneDnnRouting routing(on);
    const Tensor z = ops::matmul(random_bf16({64, 0}, 70), random_bf16({0, 96}, 71));
    ASSERT_EQ(z.shape(), (Shape{64, 96}));
    for (const double v : z.to_vector<double>()) ASSERT_EQ(v, 0.0);
    EXPECT_EQ(ops::matmul(random_bf16({0, 128}, 72), random_bf16({128, 64}, 73)).shape(), (Shape{0, 64}));
  }
}

// ---- bfloat16 convolutions (conv2d and its two gradient ops, each GEMM on oneDNN) ----

struct ConvCase {
  Shape x, w;
  int64_t stride = 1, padding = 0, dilation = 1, groups = 1;
  bool bias = true;
};

std::string conv_what(const ConvCase& c) {
  return "conv2d " + shape_str(c.x) + " by " + shape_str(c.w) + " stride " + std::to_string(c.stride) + " padding " +
         std::to_string(c.padding) + " dilation " + std::to_string(c.dilation) + " groups " + std::to_string(c.groups);
}

Tensor conv(const ConvCase& c, const Tensor& x, const Tensor& w, const Tensor& b) {
  return ops::conv2d(x, w, c.bias ? b : Tensor(), c.stride, c.padding, c.dilation, c.groups);
}

// conv2d and, through grad of sum(conv2d(x, w, b) * g), conv2d_input_grad (dx) and conv2d_weight_grad (dw) on
// oneDNN against the widened path, within the float32 summation bound of expect_close; the sums of magnitudes from
// the same (linear) ops on |x|, |w|, |b|, |g| in float64.
void check_conv(const ConvCase& c, uint64_t seed) {
  const std::string what = conv_what(c);
  const Tensor x = random_bf16(c.x, seed), w = random_bf16(c.w, seed + 1), b = random_bf16({c.w[0]}, seed + 2);
  const Tensor g = random_bf16(conv(c, x, w, b).shape(), seed + 3);
  const Fn loss = [&](const std::vector<Tensor>& in) { return Value(ops::sum(conv(c, in[0], in[1], in[2]) * g)); };
  const uint64_t before = onednn_products();
  const Tensor fast = conv(c, x, w, b);
  const Value fast_grads = grad(loss, GradPosition({0, 1}))({x, w, b});
  const uint64_t on_onednn = onednn_products() - before;
  // one product per image and group in each of: the convolution, grad's forward, dx and dw
  EXPECT_EQ(on_onednn, static_cast<uint64_t>(4 * c.x[0] * c.groups)) << what;
  Tensor wide;
  Value wide_grads;
  {
    OneDnnRouting off(false);
    wide = conv(c, x, w, b);
    wide_grads = grad(loss, GradPosition({0, 1}))({x, w, b});
  }
  const Tensor ag = f64_abs(g);
  const Fn abs_loss = [&](const std::vector<Tensor>& in) {
    return Value(ops::sum(conv(c, in[0], in[1], in[2]) * ag));
  };
  const Tensor ax = f64_abs(x), aw = f64_abs(w), ab = f64_abs(b);
  const Value s = grad(abs_loss, GradPosition({0, 1}))({ax, aw, ab});
  const int64_t taps = c.w[2] * c.w[3];
  expect_close(fast, wide, conv(c, ax, aw, ab), c.w[1] * taps + 1, what);
  expect_close(fast_grads[0].tensor(), wide_grads[0].tensor(), s[0].tensor(), c.w[0] / c.groups * taps,
               what + ": dx");
  expect_close(fast_grads[1].tensor(), wide_grads[1].tensor(), s[1].tensor(), g.numel() / c.w[0], what + ": dw");
}

TEST(OneDnn, Bf16ConvolutionsMatchTheWidenedPath) {
  if (!cpu::bf16_gemm_available()) GTEST_SKIP() << "oneDNN not available: " << cpu::onednn_name();
  check_conv({.x = {4, 1, 28, 28}, .w = {16, 1, 3, 3}, .padding = 1}, 80);   // the first layer of a small CNN
  check_conv({.x = {3, 16, 14, 14}, .w = {32, 16, 3, 3}, .padding = 1}, 84);  // the second
  check_conv({.x = {2, 8, 17, 19}, .w = {12, 4, 3, 2}, .stride = 2, .padding = 1, .dilation = 2, .groups = 2}, 88);
  check_conv({.x = {2, 64, 9, 9}, .w = {48, 64, 1, 1}, .bias = false}, 92);  // pointwise: the image is the columns
  check_conv({.x = {17, 8, 12, 12}, .w = {16, 8, 5, 5}, .padding = 2}, 96);  // more images than batch-sum blocks
}

TEST(OneDnn, Bf16ConvolutionFallsBackWhenItCannotRunThere) {
  const Tensor x = random_bf16({2, 16, 10, 10}, 100), w = random_bf16({32, 16, 3, 3}, 101);
  {
    OneDnnRouting off(false);
    const uint64_t fallback_before = fallback_products(), onednn_before = onednn_products();
    const Tensor got = ops::conv2d(x, w, Tensor(), 1, 1);
    EXPECT_EQ(fallback_products() - fallback_before, 2u);  // one per image
    EXPECT_EQ(onednn_products(), onednn_before);
    // bit for bit the float32 convolution of the widened operands, rounded once
    const Tensor want = ops::cast(
        ops::conv2d(ops::cast(x, DType::Float32), ops::cast(w, DType::Float32), Tensor(), 1, 1), DType::BFloat16);
    EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), got.nbytes()), 0);
  }
  // declined, not counted: mixed dtypes (a float32 bias), float16, and convolutions too small for oneDNN's fixed cost
  const uint64_t onednn_before = onednn_products(), fallback_before = fallback_products();
  EXPECT_EQ(ops::conv2d(x, w, zeros({32}), 1, 1).dtype(), DType::Float32);
  (void)ops::conv2d(ops::cast(x, DType::Float16), ops::cast(w, DType::Float16), Tensor(), 1, 1);
  (void)ops::conv2d(random_bf16({1, 1, 4, 4}, 102), random_bf16({2, 1, 3, 3}, 103));
  EXPECT_EQ(onednn_products(), onednn_before);
  EXPECT_EQ(fallback_products(), fallback_before);
}

// ---- the vectorised rounding (tensor/half_simd.h) ----

void expect_simd_rounding(const std::vector<float>& in, const std::string& what) {
  std::vector<BFloat16> out(in.size());
  float_to_bfloat16_simd(in.data(), out.data(), static_cast<int64_t>(in.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(out[i].bits, float_to_bfloat16_bits(in[i]))
        << what << ": element " << i << ", float bits 0x" << std::hex << std::bit_cast<uint32_t>(in[i]);
  }
}

TEST(HalfSimd, Bf16RoundingMatchesTheScalarRoundingBitForBit) {
  // Every upper half with the lower halves where rounding decides (0, just below, at and above the tie, the largest):
  // every sign, exponent (zeros, subnormals, normals, infinities, NaNs) and kept mantissa, each rounding case.
  std::vector<float> in;
  for (uint32_t hi = 0; hi <= 0xffff; ++hi) {
    for (const uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      in.push_back(std::bit_cast<float>(hi << 16 | lo));
    }
  }
  expect_simd_rounding(in, "every upper half");
  // Random patterns, then special values (subnormals, NaNs) alone among normal ones at every position of a block of
  // 32, and lengths that leave every tail.
  std::mt19937 rng(20261205);
  std::vector<float> r(1 << 20);
  for (float& x : r) x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
  expect_simd_rounding(r, "random patterns");
  for (const uint32_t special : {0x00000001u, 0x807fffffu, 0x00018000u, 0x7fa12345u, 0xffc00001u, 0x7f800000u}) {
    for (int pos = 0; pos < 64; ++pos) {
      std::vector<float> v(64 + pos % 7);
      for (size_t i = 0; i < v.size(); ++i) v[i] = 1.0f + static_cast<float>(i) * 0.0078125f + 0.001f;
      v[static_cast<size_t>(pos)] = std::bit_cast<float>(special);
      expect_simd_rounding(v, "a special value at " + std::to_string(pos));
    }
  }
}

void expect_simd_half_rounding(const std::vector<float>& in, const std::string& what) {
  std::vector<Half> out(in.size());
  float_to_half_simd(in.data(), out.data(), static_cast<int64_t>(in.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(out[i].bits, float_to_half_bits(in[i]))
        << what << ": element " << i << ", float bits 0x" << std::hex << std::bit_cast<uint32_t>(in[i]);
  }
}

TEST(HalfSimd, Fp16RoundingMatchesTheScalarRoundingBitForBit) {
  // Every upper half with lower halves where float16 rounding decides (it drops 13 bits, more below 2^-14): 0, the
  // tie of the last dropped bits, just below/at/above the normal tie, the largest.
  std::vector<float> in;
  for (uint32_t hi = 0; hi <= 0xffff; ++hi) {
    for (const uint32_t lo : {0x0000u, 0x0001u, 0x0fffu, 0x1000u, 0x1001u, 0x2000u, 0x3000u, 0x8000u, 0xffffu}) {
      in.push_back(std::bit_cast<float>(hi << 16 | lo));
    }
  }
  expect_simd_half_rounding(in, "every upper half");
  std::mt19937 rng(20261206);
  std::vector<float> r(1 << 20);
  for (float& x : r) x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
  expect_simd_half_rounding(r, "random patterns");
  // values around float16's range: subnormal results, the largest finite, the overflow threshold
  for (float& x : r) x = std::ldexp(static_cast<float>(rng()) / 4294967296.0f, static_cast<int>(rng() % 48) - 30);
  expect_simd_half_rounding(r, "float16 magnitudes");
  for (const uint32_t special : {0x7fa12345u, 0xffc00001u, 0x7f800000u, 0x477fe000u, 0x477ff000u, 0x33000001u}) {
    for (int pos = 0; pos < 24; ++pos) {
      std::vector<float> v(24 + pos % 5);
      for (size_t i = 0; i < v.size(); ++i) v[i] = 1.0f + static_cast<float>(i) * 0.0078125f + 0.001f;
      v[static_cast<size_t>(pos)] = std::bit_cast<float>(special);
      expect_simd_half_rounding(v, "a special value at " + std::to_string(pos));
    }
  }
}

TEST(HalfSimd, Fp16WideningMatchesTheScalarWideningBitForBit) {
  // All 65,536 patterns in order, then each NaN kind (signalling, quiet, negative) alone among ordinary values at
  // every position of a block of 8, and lengths that leave every tail.
  std::vector<Half> in(65536);
  for (uint32_t b = 0; b <= 0xffff; ++b) in[b].bits = static_cast<uint16_t>(b);
  std::vector<float> out(in.size());
  half_to_float_simd(in.data(), out.data(), static_cast<int64_t>(in.size()));
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    ASSERT_EQ(std::bit_cast<uint32_t>(out[b]), std::bit_cast<uint32_t>(half_bits_to_float(static_cast<uint16_t>(b))))
        << "float16 bits 0x" << std::hex << b;
  }
  for (const uint16_t nan : {uint16_t{0x7c01}, uint16_t{0x7e00}, uint16_t{0xfd55}}) {
    for (int pos = 0; pos < 24; ++pos) {
      std::vector<Half> v(24 + pos % 5);
      for (size_t i = 0; i < v.size(); ++i) v[i].bits = static_cast<uint16_t>(0x3c00 + i);
      v[static_cast<size_t>(pos)].bits = nan;
      std::vector<float> w(v.size());
      half_to_float_simd(v.data(), w.data(), static_cast<int64_t>(v.size()));
      for (size_t i = 0; i < v.size(); ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(w[i]), std::bit_cast<uint32_t>(half_bits_to_float(v[i].bits)))
            << "NaN 0x" << std::hex << nan << " at " << std::dec << pos << ", element " << i;
      }
    }
  }
}

TEST(HalfSimd, Bf16WideningMatchesTheScalarWideningBitForBit) {
  // All 65,536 patterns (NaN payloads and -0 kept), then every length up to 40 from every start, so each vector
  // block and tail is covered.
  std::vector<BFloat16> in(65536);
  for (uint32_t b = 0; b <= 0xffff; ++b) in[b].bits = static_cast<uint16_t>(b);
  std::vector<float> out(in.size());
  bfloat16_to_float_simd(in.data(), out.data(), static_cast<int64_t>(in.size()));
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    ASSERT_EQ(std::bit_cast<uint32_t>(out[b]), b << 16) << "bfloat16 bits 0x" << std::hex << b;
  }
  for (int64_t start = 0; start < 9; ++start) {
    for (int64_t n = 0; n <= 40; ++n) {
      std::vector<float> w(static_cast<size_t>(n) + 1, -1.0f);
      bfloat16_to_float_simd(in.data() + 0x7f7a + start, w.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(w[static_cast<size_t>(i)]), static_cast<uint32_t>(0x7f7a + start + i) << 16);
      }
      ASSERT_EQ(w[static_cast<size_t>(n)], -1.0f) << "wrote past " << n << " elements";
    }
  }
}

}  // namespace
}  // namespace bprop
