#include "kernels/cpu/flash_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/cpu/blas.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/vmath.h"

namespace bprop::cpu {
namespace {

// Query rows and key columns per tile: a 64 x 64 score tile (16 KiB in float32) and its probabilities stay in L1/L2
// while the value and gradient products run on it.
constexpr int64_t kRows = 64;
constexpr int64_t kCols = 64;

template <typename T>
constexpr T kNegInf = -std::numeric_limits<T>::infinity();

// The scaled, masked scores of query rows [i0, i0 + rows) against keys [j0, j0 + cols) of problem b, in s (row
// stride kCols): q k^T scale, plus the additive mask, -inf where the bool mask or causality excludes a key.
template <typename T>
void score_tile(const AttentionLayout& a, int64_t b, const T* q, const T* k, const void* mask, int64_t i0,
                int64_t rows, int64_t j0, int64_t cols, T* s) {
  gemm<Trans::No, Trans::Yes>(rows, cols, a.E, q + a.q_off[b] + i0 * a.E, a.E, k + a.k_off[b] + j0 * a.E, a.E, T(0), s,
                              kCols);
  const T scale = static_cast<T>(a.scale);
  for (int64_t r = 0; r < rows; ++r) {
    T* row = s + r * kCols;
    for (int64_t c = 0; c < cols; ++c) row[c] *= scale;
    if (!a.mask_off.empty()) {
      const int64_t base = a.mask_off[b] + (i0 + r) * a.mask_row_stride + j0 * a.mask_col_stride;
      if (a.mask_is_bool) {
        const bool* m = static_cast<const bool*>(mask) + base;
        for (int64_t c = 0; c < cols; ++c) {
          if (!m[c * a.mask_col_stride]) row[c] = kNegInf<T>;
        }
      } else {
        const T* m = static_cast<const T*>(mask) + base;
        for (int64_t c = 0; c < cols; ++c) row[c] += m[c * a.mask_col_stride];
      }
    }
    if (a.causal) {
      for (int64_t c = std::max<int64_t>(0, i0 + r + 1 - j0); c < cols; ++c) row[c] = kNegInf<T>;
    }
  }
}

// The key tiles that can hold an unmasked score for query rows up to `last_row` (all of them unless causal).
int64_t key_end(const AttentionLayout& a, int64_t last_row) { return a.causal ? std::min(a.S, last_row + 1) : a.S; }

// One tile of query rows: the online softmax over every key tile, then out = acc / l and lse = m + log l.
// (values false: the row statistics alone. A run-time flag, not a template parameter: one copy of the loop per
// dtype keeps the WebAssembly module small.)
// row[c] = e^(row[c] - shift) for c < n (-inf gives 0): vectorised in float32 (vm::exp), std::exp otherwise.
template <typename T>
void exp_shifted(T* row, int64_t n, T shift) {
  for (int64_t c = 0; c < n; ++c) row[c] -= shift;
  if constexpr (std::is_same_v<T, float>) {
    vm::exp(row, row, n);
  } else {
    for (int64_t c = 0; c < n; ++c) row[c] = std::exp(row[c]);
  }
}

template <typename T>
void forward_rows(bool values, const AttentionLayout& a, int64_t b, int64_t i0, const T* q, const T* k, const T* v,
                  const void* mask, T* out, T* lse, std::vector<T>& scratch) {
  const int64_t rows = std::min(kRows, a.L - i0);
  scratch.assign(static_cast<size_t>(kRows * kCols + (values ? kRows * a.Ev : 0) + 2 * kRows), T(0));
  T* s = scratch.data();
  T* acc = s + kRows * kCols;
  T* m = acc + (values ? kRows * a.Ev : 0);
  T* l = m + kRows;
  std::fill(m, m + rows, kNegInf<T>);
  const int64_t end = key_end(a, i0 + rows - 1);
  for (int64_t j0 = 0; j0 < end; j0 += kCols) {
    const int64_t cols = std::min(kCols, end - j0);
    score_tile(a, b, q, k, mask, i0, rows, j0, cols, s);
    for (int64_t r = 0; r < rows; ++r) {
      T* row = s + r * kCols;
      T tile_max = kNegInf<T>;
      for (int64_t c = 0; c < cols; ++c) tile_max = std::max(tile_max, row[c]);
      const T m_new = std::max(m[r], tile_max);
      if (m_new == kNegInf<T>) {  // every key so far masked: nothing to add
        std::fill(row, row + cols, T(0));
        continue;
      }
      const T alpha = std::exp(m[r] - m_new);  // 0 on the first unmasked tile (m = -inf)
      exp_shifted(row, cols, m_new);
      T sum = 0;
      for (int64_t c = 0; c < cols; ++c) sum += row[c];
      l[r] = l[r] * alpha + sum;
      m[r] = m_new;
      if (values) {
        if (alpha != T(1)) {
          T* acc_row = acc + r * a.Ev;
          for (int64_t e = 0; e < a.Ev; ++e) acc_row[e] *= alpha;
        }
      }
    }
    if (values) {
      gemm<Trans::No, Trans::No>(rows, a.Ev, cols, s, kCols, v + a.v_off[b] + j0 * a.Ev, a.Ev, T(1), acc, a.Ev);
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    const bool empty = l[r] == T(0);  // a fully masked row: zeros, and lse -inf
    lse[b * a.L + i0 + r] = empty ? kNegInf<T> : m[r] + std::log(l[r]);
    if (values) {
      T* o = out + a.out_off[b] + (i0 + r) * a.Ev;
      const T inv = empty ? T(0) : T(1) / l[r];
      for (int64_t e = 0; e < a.Ev; ++e) o[e] = acc[r * a.Ev + e] * inv;
    }
  }
}

template <typename T>
void forward_all(bool values, const AttentionLayout& a, const T* q, const T* k, const T* v, const void* mask, T* out, T* lse) {
  const int64_t tiles = (a.L + kRows - 1) / kRows;
  parallel_for(a.batch * tiles, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> scratch;
    for (int64_t t = begin; t < end; ++t) {
      forward_rows<T>(values, a, t / tiles, (t % tiles) * kRows, q, k, v, mask, out, lse, scratch);
    }
  });
}

// The backward of problem b: for each key tile, every query tile that sees it.
template <typename T>
void backward_problem(const AttentionLayout& a, int64_t b, const T* q, const T* k, const T* v, const void* mask,
                      const T* out, const T* dout, const T* lse, T* dq, T* dk, T* dv, T* dmask,
                      std::vector<T>& scratch) {
  scratch.assign(static_cast<size_t>(2 * kRows * kCols + a.L), T(0));
  T* p = scratch.data();
  T* ds = p + kRows * kCols;
  T* D = ds + kRows * kCols;  // rowsum(dout * out), the softmax backward's correction
  for (int64_t i = 0; i < a.L; ++i) {
    const T* o = out + a.out_off[b] + i * a.Ev;
    const T* g = dout + a.out_off[b] + i * a.Ev;
    T sum = 0;
    for (int64_t e = 0; e < a.Ev; ++e) sum += o[e] * g[e];
    D[i] = sum;
  }
  const T scale = static_cast<T>(a.scale);
  for (int64_t j0 = 0; j0 < a.S; j0 += kCols) {
    const int64_t cols = std::min(kCols, a.S - j0);
    for (int64_t i0 = a.causal ? j0 / kRows * kRows : 0; i0 < a.L; i0 += kRows) {
      const int64_t rows = std::min(kRows, a.L - i0);
      if (a.causal && i0 + rows - 1 < j0) continue;  // every row of the tile is before every key: all masked
      score_tile(a, b, q, k, mask, i0, rows, j0, cols, p);
      for (int64_t r = 0; r < rows; ++r) {
        const T row_lse = lse[b * a.L + i0 + r];
        T* row = p + r * kCols;
        if (row_lse == kNegInf<T>) {  // a fully masked row: no probabilities
          std::fill(row, row + cols, T(0));
        } else {
          exp_shifted(row, cols, row_lse);  // masked scores (-inf) give 0
        }
      }
      const T* g = dout + a.out_off[b] + i0 * a.Ev;
      gemm<Trans::Yes, Trans::No>(cols, a.Ev, rows, p, kCols, g, a.Ev, T(1), dv + a.v_off[b] + j0 * a.Ev, a.Ev);
      gemm<Trans::No, Trans::Yes>(rows, cols, a.Ev, g, a.Ev, v + a.v_off[b] + j0 * a.Ev, a.Ev, T(0), ds, kCols);
      for (int64_t r = 0; r < rows; ++r) {
        T* d = ds + r * kCols;
        const T* pr = p + r * kCols;
        for (int64_t c = 0; c < cols; ++c) d[c] = pr[c] * (d[c] - D[i0 + r]);
        if (dmask) {
          T* dm = dmask + a.mask_off[b] + (i0 + r) * a.mask_row_stride + j0 * a.mask_col_stride;
          for (int64_t c = 0; c < cols; ++c) dm[c * a.mask_col_stride] += d[c];
        }
        for (int64_t c = 0; c < cols; ++c) d[c] *= scale;
      }
      gemm<Trans::No, Trans::No>(rows, a.E, cols, ds, kCols, k + a.k_off[b] + j0 * a.E, a.E, T(1),
                                 dq + a.q_off[b] + i0 * a.E, a.E);
      gemm<Trans::Yes, Trans::No>(cols, a.E, rows, ds, kCols, q + a.q_off[b] + i0 * a.E, a.E, T(1),
                                  dk + a.k_off[b] + j0 * a.E, a.E);
    }
  }
}

}  // namespace

template <typename T>
void flash_attention_forward(const AttentionLayout& a, const T* q, const T* k, const T* v, const void* mask, T* out,
                             T* lse) {
  forward_all<T>(true, a, q, k, v, mask, out, lse);
}

template <typename T>
void flash_attention_lse(const AttentionLayout& a, const T* q, const T* k, const void* mask, T* lse) {
  forward_all<T>(false, a, q, k, nullptr, mask, nullptr, lse);
}

template <typename T>
void flash_attention_backward(const AttentionLayout& a, const T* q, const T* k, const T* v, const void* mask,
                              const T* out, const T* dout, const T* lse, T* dq, T* dk, T* dv, T* dmask) {
  auto run = [&](int64_t begin, int64_t end) {
    std::vector<T> scratch;
    for (int64_t b = begin; b < end; ++b) backward_problem(a, b, q, k, v, mask, out, dout, lse, dq, dk, dv, dmask, scratch);
  };
  if (a.disjoint) parallel_for(a.batch, 1, run);
  else run(0, a.batch);  // shared blocks accumulate in problem order
}

template void flash_attention_forward<float>(const AttentionLayout&, const float*, const float*, const float*,
                                             const void*, float*, float*);
template void flash_attention_forward<double>(const AttentionLayout&, const double*, const double*, const double*,
                                              const void*, double*, double*);
template void flash_attention_lse<float>(const AttentionLayout&, const float*, const float*, const void*, float*);
template void flash_attention_lse<double>(const AttentionLayout&, const double*, const double*, const void*, double*);
template void flash_attention_backward<float>(const AttentionLayout&, const float*, const float*, const float*,
                                              const void*, const float*, const float*, const float*, float*, float*,
                                              float*, float*);
template void flash_attention_backward<double>(const AttentionLayout&, const double*, const double*, const double*,
                                               const void*, const double*, const double*, const double*, double*,
                                               double*, double*, double*);

}  // namespace bprop::cpu
