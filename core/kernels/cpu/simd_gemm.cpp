#include "kernels/cpu/simd_gemm.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace bprop::cpu {
namespace {

// One SIMD register of T (4 floats or int32s, 2 doubles). GCC/clang vector extensions: SIMD128 instructions
// under -msimd128, SSE natively (where this file is built only for its tests).
// (Spelled per type: GCC drops vector_size on a dependent alias template.)
template <typename T>
struct VecOf;
template <>
struct VecOf<float> {
  typedef float type __attribute__((vector_size(16)));
};
template <>
struct VecOf<double> {
  typedef double type __attribute__((vector_size(16)));
};
template <>
struct VecOf<int32_t> {
  typedef int32_t type __attribute__((vector_size(16)));
};
template <typename T>
using Vec = typename VecOf<T>::type;
template <typename T>
constexpr int64_t kLanes = 16 / sizeof(T);

constexpr int64_t kMR = 6;    // rows of the register tile
constexpr int64_t kKC = 512;  // depth of a packed block: A's 6 x 512 and B's 512 x 8 panels (28 KiB) stay in L1
constexpr int64_t kMC = 96;   // rows of A packed at a time (96 x 512 floats: 192 KiB, in L2)
constexpr int64_t kNC = 512;  // columns of B packed at a time (512 x 512 floats: 1 MiB, in L2; 256 deep was 6%
                              // slower at n = 1024, more rows made no difference)
// Columns of the register tile: two registers. 6 x 2 accumulators, two B registers and an A splat fill the 16
// XMM registers V8 maps SIMD128 onto on x86-64 (more rows spill; measured).
template <typename T>
constexpr int64_t kNR = 2 * kLanes<T>;

template <typename T>
inline Vec<T> load(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
inline void store(T* p, Vec<T> v) {
  std::memcpy(p, &v, sizeof v);
}
template <typename T>
inline Vec<T> splat(T x) {
  if constexpr (kLanes<T> == 4) {
    return Vec<T>{x, x, x, x};
  } else {
    return Vec<T>{x, x};
  }
}

// Packs rows [i0, i0 + mc) x depth [p0, p0 + kc) of op(A) into panels of kMR rows: panel r holds, for each p,
// the kMR values A(i0 + r + 0..5, p) (zero past the last row).
template <typename T>
void pack_a(bool ta, const T* a, int64_t lda, int64_t i0, int64_t mc, int64_t p0, int64_t kc, T* dst) {
  for (int64_t r = 0; r < mc; r += kMR) {
    const int64_t rows = std::min(kMR, mc - r);
    for (int64_t p = 0; p < kc; ++p, dst += kMR) {
      const int64_t d = p0 + p;
      for (int64_t q = 0; q < kMR; ++q) {
        const int64_t i = i0 + r + q;
        dst[q] = q < rows ? (ta ? a[d * lda + i] : a[i * lda + d]) : T(0);
      }
    }
  }
}

// Packs depth [p0, p0 + kc) x columns [j0, j0 + nc) of op(B) into panels of kNR columns: panel s holds, for
// each p, the kNR values B(p, j0 + s + 0..kNR-1) (zero past the last column).
template <typename T>
void pack_b(bool tb, const T* b, int64_t ldb, int64_t p0, int64_t kc, int64_t j0, int64_t nc, T* dst) {
  constexpr int64_t nr = kNR<T>, lanes = kLanes<T>;
  for (int64_t s = 0; s < nc; s += nr) {
    const int64_t cols = std::min(nr, nc - s);
    if (!tb && cols == nr) {
      const T* src = b + p0 * ldb + j0 + s;
      for (int64_t p = 0; p < kc; ++p, src += ldb, dst += nr) {
        store(dst, load(src));
        store(dst + lanes, load(src + lanes));
      }
      continue;
    }
    for (int64_t p = 0; p < kc; ++p, dst += nr) {
      const int64_t d = p0 + p;
      for (int64_t q = 0; q < nr; ++q) {
        const int64_t j = j0 + s + q;
        dst[q] = q < cols ? (tb ? b[j * ldb + d] : b[d * ldb + j]) : T(0);
      }
    }
  }
}

// One kMR x kNR tile of C from a packed A panel and a packed B panel: C = acc + beta C, where only the top-left
// rows x cols of the tile are real.
template <typename T>
void tile(int64_t kc, const T* pa, const T* pb, T* c, int64_t ldc, T beta, int64_t rows, int64_t cols) {
  constexpr int64_t nr = kNR<T>, lanes = kLanes<T>;
  Vec<T> acc[kMR][2] = {};
  for (int64_t p = 0; p < kc; ++p, pa += kMR, pb += nr) {
    const Vec<T> b0 = load(pb), b1 = load(pb + lanes);
    for (int64_t r = 0; r < kMR; ++r) {
      const Vec<T> x = splat(pa[r]);
      acc[r][0] += x * b0;
      acc[r][1] += x * b1;
    }
  }
  if (rows == kMR && cols == nr) {
    for (int64_t r = 0; r < kMR; ++r, c += ldc) {
      if (beta == T(0)) {
        store(c, acc[r][0]);
        store(c + lanes, acc[r][1]);
      } else {
        store(c, acc[r][0] + splat(beta) * load(c));
        store(c + lanes, acc[r][1] + splat(beta) * load(c + lanes));
      }
    }
    return;
  }
  T t[kMR][nr];
  std::memcpy(t, acc, sizeof t);
  for (int64_t r = 0; r < rows; ++r, c += ldc) {
    for (int64_t q = 0; q < cols; ++q) c[q] = beta == T(0) ? t[r][q] : t[r][q] + beta * c[q];
  }
}

int64_t round_up(int64_t x, int64_t r) { return (x + r - 1) / r * r; }

std::atomic<F32Tile> g_f32_tile{nullptr};

// The float32 tile through a kernel supplied at run time: the kernel fills a 6 x 8 block, stored here like tile().
void tile_through(F32Tile kernel, int64_t kc, const float* pa, const float* pb, float* c, int64_t ldc, float beta,
                  int64_t rows, int64_t cols) {
  alignas(16) float t[kMR][kNR<float>];
  kernel(static_cast<int32_t>(kc), pa, pb, &t[0][0]);
  for (int64_t r = 0; r < rows; ++r, c += ldc) {
    for (int64_t q = 0; q < cols; ++q) c[q] = beta == 0.0f ? t[r][q] : t[r][q] + beta * c[q];
  }
}

}  // namespace

bool set_f32_tile(F32Tile kernel) {
  if (!kernel) {
    g_f32_tile.store(nullptr);
    return true;
  }
  // A fixed problem, 37 deep, with values whose products and sums are exact in float32 (multiples of 1/8 in
  // [-2, 2)): any correct kernel, fused or not, gives exactly the built-in kernel's result.
  constexpr int64_t kc = 37, nr = kNR<float>;
  std::vector<float> pa(static_cast<size_t>(kMR * kc)), pb(static_cast<size_t>(nr * kc));
  for (size_t i = 0; i < pa.size(); ++i) pa[i] = static_cast<float>(static_cast<int>((i * 7 + 3) % 32) - 16) / 8.0f;
  for (size_t i = 0; i < pb.size(); ++i) pb[i] = static_cast<float>(static_cast<int>((i * 5 + 1) % 32) - 16) / 8.0f;
  float want[kMR][nr];
  tile(kc, pa.data(), pb.data(), &want[0][0], nr, 0.0f, kMR, nr);
  alignas(16) float got[kMR][nr];
  kernel(static_cast<int32_t>(kc), pa.data(), pb.data(), &got[0][0]);
  if (std::memcmp(got, want, sizeof got) != 0) return false;
  g_f32_tile.store(kernel);
  return true;
}

template <typename T>
void simd_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
               T beta, T* c, int64_t ldc) {
  constexpr int64_t nr = kNR<T>;
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i) {
      T* row = c + i * ldc;
      for (int64_t j = 0; j < n; ++j) row[j] = beta == T(0) ? T(0) : beta * row[j];
    }
    return;
  }
  F32Tile supplied = nullptr;
  if constexpr (std::is_same_v<T, float>) supplied = g_f32_tile.load(std::memory_order_relaxed);
  // Per-thread packing buffers, kept between calls (a training step runs the same GEMMs again and again).
  thread_local std::vector<T> packed_a, packed_b;
  const int64_t kc_max = std::min(k, kKC);
  packed_a.resize(static_cast<size_t>(round_up(std::min(m, kMC), kMR) * kc_max));
  packed_b.resize(static_cast<size_t>(round_up(std::min(n, kNC), nr) * kc_max));
  for (int64_t j0 = 0; j0 < n; j0 += kNC) {
    const int64_t nc = std::min(kNC, n - j0);
    for (int64_t p0 = 0; p0 < k; p0 += kKC) {
      const int64_t kc = std::min(kKC, k - p0);
      const T beta_here = p0 == 0 ? beta : T(1);  // later depth blocks accumulate onto the first
      pack_b(tb, b, ldb, p0, kc, j0, nc, packed_b.data());
      for (int64_t i0 = 0; i0 < m; i0 += kMC) {
        const int64_t mc = std::min(kMC, m - i0);
        pack_a(ta, a, lda, i0, mc, p0, kc, packed_a.data());
        for (int64_t s = 0; s < nc; s += nr) {
          const T* pb = packed_b.data() + s * kc;
          for (int64_t r = 0; r < mc; r += kMR) {
            T* cr = c + (i0 + r) * ldc + j0 + s;
            const int64_t rows = std::min(kMR, mc - r), cols = std::min(nr, nc - s);
            if constexpr (std::is_same_v<T, float>) {
              if (supplied) {
                tile_through(supplied, kc, packed_a.data() + r * kc, pb, cr, ldc, beta_here, rows, cols);
                continue;
              }
            }
            tile(kc, packed_a.data() + r * kc, pb, cr, ldc, beta_here, rows, cols);
          }
        }
      }
    }
  }
}

template void simd_gemm<float>(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t,
                               float, float*, int64_t);
template void simd_gemm<double>(bool, bool, int64_t, int64_t, int64_t, const double*, int64_t, const double*,
                                int64_t, double, double*, int64_t);
template void simd_gemm<int32_t>(bool, bool, int64_t, int64_t, int64_t, const int32_t*, int64_t, const int32_t*,
                                 int64_t, int32_t, int32_t*, int64_t);

}  // namespace bprop::cpu
