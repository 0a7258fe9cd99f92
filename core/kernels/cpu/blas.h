// GEMM dispatch: C = op(A) op(B) + beta C on row-major matrices, where op transposes when asked.
//
// Natively, products of at least kBlasMinMacs multiply-adds in float32/float64 run on the system OpenBLAS,
// loaded with dlopen() at the first GEMM (no build-time dependency: without it, or with BPROP_BLAS=off in the
// environment, everything runs on Eigen). Smaller products and int32 ones use Eigen. The WebAssembly build runs
// every GEMM on simd_gemm.h's packed SIMD128 kernel (faster than Eigen's there, and a fraction of its code).
// OpenBLAS always runs one thread per call; bprop's own pool (parallel.h) supplies the threads, so a GEMM
// may be called from inside parallel_for bodies (see blas.cpp for why).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include <Eigen/Core>

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd_gemm.h"

namespace bprop::cpu {

/// Whether a GEMM operand is used as stored or transposed.
enum class Trans : bool { No = false, Yes = true };

/// The backend large float GEMMs run on: "openblas (<kernel>)", e.g. "openblas (SkylakeX)", or "eigen".
std::string blas_name();

/// True when large float GEMMs go to BLAS (a library was loaded and routing is enabled).
bool blas_active();

/// Turns the routing to BLAS on or off for the whole process. (BPROP_BLAS=off or 0 in the environment, read
/// once at the first GEMM, keeps the library from being loaded at all; then turning it on changes nothing.)
/// For tests and benchmarks that compare both paths.
void set_blas_enabled(bool on);

/// Multiply-adds (m n k) from which a float GEMM goes to BLAS; smaller ones stay on Eigen. Measured on one
/// thread against this build's Eigen (no -march, so SSE2): OpenBLAS (SkylakeX) took 1/3 of Eigen's time at
/// 8x8x8, 1/5 at 16x16x16 and 1/6 from 64x64x64 up; at 4x4x4 the two are equal (call overhead).
constexpr int64_t kBlasMinMacs = int64_t{1} << 12;

namespace detail {

#if !defined(__EMSCRIPTEN__)
/// True when an m x n x k float GEMM should run on BLAS.
bool blas_wanted(int64_t m, int64_t n, int64_t k);
void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
               int64_t ldb, float beta, float* c, int64_t ldc);
void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
               int64_t ldb, double beta, double* c, int64_t ldc);
#endif

template <typename T>
constexpr bool kBlasType = std::is_same_v<T, float> || std::is_same_v<T, double>;

/// Whether this m x n x k GEMM of T runs on BLAS (decided once per GEMM, before any splitting, so the backend
/// does not depend on the number of threads).
template <typename T>
bool use_blas(int64_t m, int64_t n, int64_t k) {
#if defined(__EMSCRIPTEN__)
  (void)m, (void)n, (void)k;
  return false;
#else
  if constexpr (kBlasType<T>) return blas_wanted(m, n, k);
  return false;
#endif
}

template <typename T>
using GemmMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// The Eigen path. A and B are the stored matrices: A is (m, k), or (k, m) when TA; B is (k, n), or (n, k) when TB.
/// Kept out of line: one copy of Eigen's GEMM per type and transposes, however many callers (code size, WASM).
template <Trans TA, Trans TB, typename T>
[[gnu::noinline]] void eigen_gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
                                  T beta, T* c, int64_t ldc) {
  using Stride = Eigen::OuterStride<>;
  using ConstMap = Eigen::Map<const GemmMatrix<T>, 0, Stride>;
  Eigen::Map<GemmMatrix<T>, 0, Stride> C(c, m, n, Stride(ldc));
  if (k == 0) {
    if (beta == T(0)) C.setZero();
    else C *= beta;
    return;
  }
  const ConstMap A(a, TA == Trans::Yes ? k : m, TA == Trans::Yes ? m : k, Stride(lda));
  const ConstMap B(b, TB == Trans::Yes ? n : k, TB == Trans::Yes ? k : n, Stride(ldb));
  auto product = [&] {
    if constexpr (TA == Trans::Yes && TB == Trans::Yes) return A.transpose() * B.transpose();
    else if constexpr (TA == Trans::Yes) return A.transpose() * B;
    else if constexpr (TB == Trans::Yes) return A * B.transpose();
    else return A * B;
  };
  if (beta == T(0)) {
    C.noalias() = product();
  } else {
    if (beta != T(1)) C *= beta;
    C.noalias() += product();
  }
}

/// One GEMM on the calling thread, on the backend chosen by the caller.
template <Trans TA, Trans TB, typename T>
void gemm_on(bool blas, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T beta,
             T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
#if defined(__EMSCRIPTEN__)
  (void)blas;
  simd_gemm<T>(TA == Trans::Yes, TB == Trans::Yes, m, n, k, a, lda, b, ldb, beta, c, ldc);
#else
  if constexpr (kBlasType<T>) {
    if (blas) {
      blas_gemm(TA == Trans::Yes, TB == Trans::Yes, m, n, k, a, lda, b, ldb, beta, c, ldc);
      return;
    }
  }
  eigen_gemm<TA, TB>(m, n, k, a, lda, b, ldb, beta, c, ldc);
#endif
}

}  // namespace detail

/// C (m, n) = op(A) op(B) + beta C on the calling thread (safe inside parallel_for bodies). A is stored (m, k),
/// or (k, m) when TA; B (k, n), or (n, k) when TB; lda, ldb, ldc are the row strides of the stored matrices.
template <Trans TA, Trans TB, typename T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c,
          int64_t ldc) {
  detail::gemm_on<TA, TB>(detail::use_blas<T>(m, n, k), m, n, k, a, lda, b, ldb, beta, c, ldc);
}

/// Multiply-adds below which a GEMM (or a block of one) runs on one thread.
constexpr int64_t kGemmGrain = int64_t{1} << 17;

/// The same GEMM with the rows (or, when there are more columns than rows, the columns) of C split over the
/// threads when it is large; the backend is chosen once for the whole product.
template <Trans TA, Trans TB, typename T>
void gemm_threaded(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c,
                   int64_t ldc) {
  const bool blas = detail::use_blas<T>(m, n, k);
  if (m >= n) {
    const int64_t row_cost = std::max<int64_t>(1, n * k);
    parallel_for(m, std::max<int64_t>(1, kGemmGrain / row_cost), [&](int64_t r0, int64_t r1) {
      const T* ar = a + (TA == Trans::Yes ? r0 : r0 * lda);
      detail::gemm_on<TA, TB>(blas, r1 - r0, n, k, ar, lda, b, ldb, beta, c + r0 * ldc, ldc);
    });
  } else {
    const int64_t col_cost = std::max<int64_t>(1, m * k);
    parallel_for(n, std::max<int64_t>(1, kGemmGrain / col_cost), [&](int64_t c0, int64_t c1) {
      const T* bc = b + (TB == Trans::Yes ? c0 * ldb : c0);
      detail::gemm_on<TA, TB>(blas, m, c1 - c0, k, a, lda, bc, ldb, beta, c + c0, ldc);
    });
  }
}

}  // namespace bprop::cpu
