// The packed SIMD GEMM (core/kernels/cpu/simd_gemm.h), the GEMM of the WebAssembly build, run natively on its
// portable vector code: against plain loops for float32, float64 and int32, every transpose, sizes around the
// register tile (6 x 8) and the cache blocks (96 rows, 512 deep, 512 columns), padded row strides, beta 0
// (C never read, even when it holds NaN), 1 and -2, k = 0, and writes confined to the m x n window of C; and a
// float32 tile kernel supplied at run time (set_f32_tile: the WebAssembly relaxed-SIMD hook) is checked before
// use, refused when wrong, and then computes every GEMM, edges included.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/simd_gemm.h"
#include "kernels/gemm_reference.h"

using bprop::cpu::set_f32_tile;
using bprop::cpu::simd_gemm;

namespace {

using Case = bprop::testing::GemmCase;
using bprop::testing::gemm_values;
using bprop::testing::reference_gemm;

template <typename T>
void check(const Case& g) {
  SCOPED_TRACE(g.str());
  const int64_t a_rows = g.ta ? g.k : g.m, a_cols = g.ta ? g.m : g.k;
  const int64_t b_rows = g.tb ? g.n : g.k, b_cols = g.tb ? g.k : g.n;
  const int64_t lda = a_cols + g.pad, ldb = b_cols + g.pad, ldc = g.n + g.pad;
  const auto a = gemm_values<T>(static_cast<size_t>(a_rows * lda), 1);
  const auto b = gemm_values<T>(static_cast<size_t>(b_rows * ldb), 2);
  std::vector<T> c = gemm_values<T>(static_cast<size_t>(g.m * ldc), 3);
  const T sentinel = std::is_integral_v<T> ? T(12345) : T(7.25);
  // Padding of C is a sentinel that must survive; with beta 0 the window holds NaN (or garbage for int32).
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      T& x = c[static_cast<size_t>(i * ldc + j)];
      if (j >= g.n) x = sentinel;
      else if (g.beta == 0.0) x = std::is_integral_v<T> ? T(-777) : std::numeric_limits<T>::quiet_NaN();
    }
  }
  const std::vector<double> expect = reference_gemm(g, a, lda, b, ldb, c, ldc);
  simd_gemm<T>(g.ta, g.tb, g.m, g.n, g.k, a.data(), lda, b.data(), ldb, static_cast<T>(g.beta), c.data(), ldc);
  const double tol = std::is_same_v<T, float> ? 1e-5 * (g.k + 1) : std::is_same_v<T, double> ? 1e-12 * (g.k + 1) : 0;
  int bad = 0;
  for (int64_t i = 0; i < g.m && bad < 5; ++i) {
    for (int64_t j = 0; j < ldc && bad < 5; ++j) {
      const double got = c[static_cast<size_t>(i * ldc + j)];
      if (j >= g.n) {
        if (got != static_cast<double>(sentinel)) {
          ADD_FAILURE() << "wrote past column n at (" << i << ", " << j << ")";
          ++bad;
        }
        continue;
      }
      const double want = expect[static_cast<size_t>(i * ldc + j)];
      if (!(std::fabs(got - want) <= tol)) {
        ADD_FAILURE() << "C(" << i << ", " << j << ") = " << got << ", expected " << want;
        ++bad;
      }
    }
  }
}

std::vector<Case> cases() {
  std::vector<Case> out;
  const int64_t shapes[][3] = {{1, 1, 1},     {1, 10, 7},    {6, 8, 5},     {7, 9, 3},    {5, 7, 1},
                               {13, 17, 19},  {96, 8, 256},  {97, 33, 257}, {12, 513, 9}, {100, 520, 300},
                               {193, 40, 70}, {2, 3, 600},   {64, 64, 64}, {97, 9, 1100}};
  for (const auto& s : shapes) {
    for (int t = 0; t < 4; ++t) {
      out.push_back({s[0], s[1], s[2], (t & 1) != 0, (t & 2) != 0, 0, 0.0});
    }
    out.push_back({s[0], s[1], s[2], false, true, 3, 1.0});
    out.push_back({s[0], s[1], s[2], true, false, 1, -2.0});
  }
  return out;
}

TEST(SimdGemm, Float32MatchesPlainLoops) {
  for (const Case& g : cases()) check<float>(g);
}

TEST(SimdGemm, Float64MatchesPlainLoops) {
  for (const Case& g : cases()) check<double>(g);
}

TEST(SimdGemm, Int32MatchesPlainLoopsExactly) {
  for (const Case& g : cases()) check<int32_t>(g);
}

TEST(SimdGemm, EmptyDepthScalesOrClearsC) {
  check<float>({3, 5, 0, false, false, 2, 0.0});
  check<float>({3, 5, 0, true, true, 0, -2.0});
  check<double>({4, 1, 0, false, false, 1, 1.0});
}

TEST(SimdGemm, EmptyOutputTouchesNothing) {
  std::vector<float> c(4, 1.5f);
  const std::vector<float> a(4, 1.0f), b(4, 1.0f);
  simd_gemm<float>(false, false, 0, 2, 2, a.data(), 2, b.data(), 2, 0.0f, c.data(), 2);
  simd_gemm<float>(false, false, 2, 0, 2, a.data(), 2, b.data(), 2, 0.0f, c.data(), 2);
  for (float x : c) EXPECT_EQ(x, 1.5f);
}

// A correct supplied tile (plain loops, float64 sums: it differs from the built-in tile only in rounding).
int g_supplied_calls = 0;
void plain_tile(int32_t kc, const float* pa, const float* pb, float* out) {
  ++g_supplied_calls;
  for (int r = 0; r < 6; ++r) {
    for (int j = 0; j < 8; ++j) {
      double s = 0;
      for (int32_t p = 0; p < kc; ++p) s += static_cast<double>(pa[6 * p + r]) * pb[8 * p + j];
      out[8 * r + j] = static_cast<float>(s);
    }
  }
}
// A wrong one: drops the last depth step.
void short_tile(int32_t kc, const float* pa, const float* pb, float* out) { plain_tile(kc - 1, pa, pb, out); }

// Restores the built-in tile whatever a test did.
class SuppliedTile : public ::testing::Test {
 protected:
  void TearDown() override { set_f32_tile(nullptr); }
};

TEST_F(SuppliedTile, CorrectKernelIsUsedForEveryGemm) {
  ASSERT_TRUE(set_f32_tile(&plain_tile));
  g_supplied_calls = 0;
  for (const Case& g : cases()) check<float>(g);
  EXPECT_GT(g_supplied_calls, 1000);
  // float64 and int32 GEMMs keep the built-in tiles.
  const int before = g_supplied_calls;
  check<double>({13, 17, 19, false, false, 0, 0.0});
  check<int32_t>({13, 17, 19, true, true, 0, 0.0});
  EXPECT_EQ(g_supplied_calls, before);
}

TEST_F(SuppliedTile, WrongKernelIsRefused) {
  g_supplied_calls = 0;
  EXPECT_FALSE(set_f32_tile(&short_tile));
  const int after_check = g_supplied_calls;
  EXPECT_EQ(after_check, 1);  // the check ran it once
  check<float>({13, 17, 19, false, false, 0, 0.0});
  EXPECT_EQ(g_supplied_calls, after_check);  // and the GEMM did not use it
}

TEST_F(SuppliedTile, NullRestoresTheBuiltInKernel) {
  ASSERT_TRUE(set_f32_tile(&plain_tile));
  ASSERT_TRUE(set_f32_tile(nullptr));
  g_supplied_calls = 0;
  check<float>({13, 17, 19, false, false, 0, 0.0});
  EXPECT_EQ(g_supplied_calls, 0);
}

}  // namespace
