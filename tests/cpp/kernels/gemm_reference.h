// What the GEMM tests (blas_test.cpp, simd_gemm_test.cpp) share: one GEMM's description, deterministic inputs and
// the plain-loop reference result.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace bprop::testing {

/// C (m, n) = op(A) op(B) + beta C; `pad` extra elements follow every stored row of A, B and C.
struct GemmCase {
  int64_t m, n, k;
  bool ta, tb;
  int64_t pad;
  double beta;
  std::string str() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + (ta ? " ta" : "") +
           (tb ? " tb" : "") + " pad " + std::to_string(pad) + " beta " + std::to_string(beta);
  }
};

/// Deterministic values: in [-1, 1) for floats, small integers in [-8, 8) for integers (exact sums).
template <typename T>
std::vector<T> gemm_values(size_t n, uint32_t seed) {
  std::vector<T> v(n);
  uint32_t s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    if constexpr (std::is_integral_v<T>) {
      x = static_cast<T>(static_cast<int32_t>(s >> 28) - 8);
    } else {
      x = static_cast<T>(static_cast<double>(s >> 8) / 8388608.0 - 1.0);
    }
  }
  return v;
}

/// C = op(A) op(B) + beta C with plain loops in double, over the whole stored C (ldc per row); the padding
/// elements keep their values, and with beta 0 the old C is not read.
template <typename T>
std::vector<double> reference_gemm(const GemmCase& g, const std::vector<T>& a, int64_t lda, const std::vector<T>& b,
                                   int64_t ldb, const std::vector<T>& c, int64_t ldc) {
  std::vector<double> out(c.begin(), c.end());
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < g.k; ++p) {
        const double x = g.ta ? a[static_cast<size_t>(p * lda + i)] : a[static_cast<size_t>(i * lda + p)];
        const double y = g.tb ? b[static_cast<size_t>(j * ldb + p)] : b[static_cast<size_t>(p * ldb + j)];
        s += x * y;
      }
      double& o = out[static_cast<size_t>(i * ldc + j)];
      o = g.beta == 0 ? s : s + g.beta * o;
    }
  }
  return out;
}

}  // namespace bprop::testing
