// The broadcasting loops every elementwise CPU kernel shares, with fast paths for equal shapes, a scalar
// operand, and a trailing-dims operand (a bias row).
#pragma once
#include <cstdint>
#include <vector>

#include "bprop/tensor.h"
#include "kernels/cpu/parallel.h"

namespace bprop::cpu {

inline constexpr int64_t kParallelGrain = 1 << 15;

/// Strides (in elements) of `in` broadcast to `out`: 0 along broadcast dimensions.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

/// Calls body(out_index, offsets...) for every element of `out`, offsets into each broadcast input.
template <size_t N, typename Body>
void for_each_broadcast(const Shape& out, const std::vector<int64_t> (&strides)[N], Body body) {
  const size_t rank = out.size();
  const int64_t total = shape_numel(out);
  if (total == 0) return;
  if (rank == 0) {
    int64_t off[N] = {};
    body(0, off);
    return;
  }
  const int64_t inner = out[rank - 1];
  std::vector<int64_t> idx(rank, 0);
  int64_t off[N] = {};
  int64_t inner_stride[N];
  for (size_t k = 0; k < N; ++k) inner_stride[k] = strides[k][rank - 1];
  for (int64_t o = 0; o < total; o += inner) {
    int64_t cur[N];
    for (size_t k = 0; k < N; ++k) cur[k] = off[k];
    for (int64_t i = 0; i < inner; ++i) {
      body(o + i, cur);
      for (size_t k = 0; k < N; ++k) cur[k] += inner_stride[k];
    }
    // advance the outer multi-index
    for (size_t d = rank - 1; d-- > 0;) {
      ++idx[d];
      for (size_t k = 0; k < N; ++k) off[k] += strides[k][d];
      if (idx[d] < out[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= strides[k][d] * out[d];
      idx[d] = 0;
    }
  }
}

/// out[i] = f(x[i]) over contiguous buffers, split over threads when large.
template <typename T, typename R, typename F>
void map_unary(const T* x, R* out, int64_t n, F f) {
  parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = f(x[i]);
  });
}

/// out = f(a, b) with NumPy broadcasting; a, b already in type T.
template <typename T, typename R, typename F>
void map_binary(const T* a, const Shape& as, const T* b, const Shape& bs, R* out, const Shape& os, F f) {
  const int64_t n = shape_numel(os);
  const int64_t an = shape_numel(as), bn = shape_numel(bs);
  if (an == n && bn == n) {
    parallel_for(n, kParallelGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) out[i] = f(a[i], b[i]);
    });
    return;
  }
  if (bn == 1 && an == n) {
    const T bv = b[0];
    parallel_for(n, kParallelGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) out[i] = f(a[i], bv);
    });
    return;
  }
  if (an == 1 && bn == n) {
    const T av = a[0];
    parallel_for(n, kParallelGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) out[i] = f(av, b[i]);
    });
    return;
  }
  // b's shape equals the trailing dims of out (a bias row): b repeats every bn elements.
  auto is_suffix = [&](const Shape& small) {
    if (small.size() > os.size()) return false;
    for (size_t i = 0; i < small.size(); ++i) {
      if (small[small.size() - 1 - i] != os[os.size() - 1 - i]) return false;
    }
    return true;
  };
  if (an == n && bn > 0 && is_suffix(bs)) {
    parallel_for(n / bn, std::max<int64_t>(1, kParallelGrain / bn), [&](int64_t s, int64_t e) {
      for (int64_t r = s; r < e; ++r) {
        for (int64_t j = 0; j < bn; ++j) out[r * bn + j] = f(a[r * bn + j], b[j]);
      }
    });
    return;
  }
  if (bn == n && an > 0 && is_suffix(as)) {
    parallel_for(n / an, std::max<int64_t>(1, kParallelGrain / an), [&](int64_t s, int64_t e) {
      for (int64_t r = s; r < e; ++r) {
        for (int64_t j = 0; j < an; ++j) out[r * an + j] = f(a[j], b[r * an + j]);
      }
    });
    return;
  }
  const std::vector<int64_t> st[2] = {broadcast_strides(as, os), broadcast_strides(bs, os)};
  for_each_broadcast<2>(os, st, [&](int64_t o, const int64_t* off) { out[o] = f(a[off[0]], b[off[1]]); });
}

/// Converts t to dtype when it differs (kernels compute in one type).
inline Tensor as_dtype(const Tensor& t, DType dt) { return t.dtype() == dt ? t : convert(t, dt); }

}  // namespace bprop::cpu
