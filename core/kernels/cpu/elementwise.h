// The broadcasting every elementwise CPU kernel shares: the driver of binary ops' array functions, the strides of a
// broadcast operand, and a loop over broadcast offsets for the kernels that index elements one by one.
#pragma once
#include <cstdint>
#include <vector>

#include "bprop/registry.h"
#include "bprop/tensor.h"
#include "kernels/cpu/parallel.h"

namespace bprop::cpu {

inline constexpr int64_t kParallelGrain = 1 << 15;

/// Strides (in elements) of `in` broadcast to `out`: 0 along broadcast dimensions.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

/// out = fn(a, b) with NumPy broadcasting, for a and b of one element type (in_size bytes) and out of elements of
/// out_size bytes: fn (an op's array function for that type, ElementFn) runs on stretches of the output along
/// which each operand is contiguous or one repeated element, as long as the shapes allow (dimensions that every
/// operand steps through as one are merged). One driver for every op and dtype, so that an op's broadcasting costs
/// no code beyond its array functions.
void broadcast_binary(ElementFn fn, const void* a, const Shape& as, const void* b, const Shape& bs, size_t in_size,
                      void* out, const Shape& os, size_t out_size);

/// Whether `operand` broadcast to `shape` repeats its data in one of the patterns a tile copy reads: aligned to
/// `shape`'s rank, it is some 1s, then `shape`'s own dimensions, then 1s (a row (n,) or (1, n) of (batch, n); a
/// column (batch, 1); (c, 1, 1) of (n, c, h, w)). Element i of the result then reads element (i / inner) mod numel
/// of the operand, `inner` being the size of the trailing dimensions it repeats along.
bool repeats_in(const Shape& operand, const Shape& shape, int64_t* inner);
/// Copies elements [t0, t0 + len) of a repeated operand (`count` elements of `esize` bytes, each repeated `inner`
/// times, the whole repeated along the leading dimensions) into dst.
void copy_repeated(const char* src, int64_t count, int64_t inner, int64_t esize, int64_t t0, int64_t len, char* dst);

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

/// Converts t to dtype when it differs (kernels compute in one type).
inline Tensor as_dtype(const Tensor& t, DType dt) { return t.dtype() == dt ? t : convert(t, dt); }

}  // namespace bprop::cpu
