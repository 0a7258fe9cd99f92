// The order in which the `sum` kernel adds the elements of one contiguous float32 lane (every axis reduced): split
// into chunks over the threads when the lane is long, each chunk halved down to leaves of at most kLeaf elements,
// each leaf summed by vm::sum in double, then the halves and the chunks added in order. A fused loop that sums
// a value it computes (graph/fusion.h) walks the same tree over the same leaves, so its result is the kernel's to
// the bit; ops/reduce.cpp's row loop is the other walker of it (tests/cpp/graph/fused_sum_test.cpp compares them).
#pragma once
#include <algorithm>
#include <cstdint>

#include "kernels/cpu/elementwise.h"

namespace bprop::sum_order {

/// Lanes up to this length are a leaf (pairwise summation above it).
inline constexpr int64_t kLeaf = 256;

/// The sum of [b, e): leaf(b, e) for a leaf, the sum of the two halves' results otherwise.
template <typename Leaf>
double lane(int64_t b, int64_t e, Leaf& leaf) {
  if (e - b > kLeaf) {
    const int64_t mid = b + (e - b) / 2;
    const double left = lane(b, mid, leaf);
    return left + lane(mid, e, leaf);
  }
  return leaf(b, e);
}

/// The sum of a lane of n elements with `threads` threads: leaf(b, e) is called for each leaf in order (an empty
/// one, e <= b, must give 0.0) and the results combined as the kernel combines them.
template <typename Leaf>
double full(int64_t n, int64_t threads, Leaf&& leaf) {
  constexpr int64_t kGrain = cpu::kParallelGrain;
  if (threads <= 1 || n < 2 * kGrain) return lane(0, n, leaf);
  const int64_t chunks = std::min(threads, (n + kGrain - 1) / kGrain);
  const int64_t step = (n + chunks - 1) / chunks;
  double a = lane(0, std::min(n, step), leaf);
  for (int64_t k = 1; k < chunks; ++k) a = a + lane(k * step, std::min(n, (k + 1) * step), leaf);
  return a;
}

}  // namespace bprop::sum_order
