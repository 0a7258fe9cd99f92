// parallel_for: splits [0, n) over the CPU threads natively; runs inline in single-threaded builds (WASM).
#pragma once
#include <cstdint>
#include <functional>

namespace bprop::cpu {

/// Threads used by large kernels (default: hardware concurrency, 1 under WebAssembly).
int num_threads();
void set_num_threads(int n);

/// The threaded path of parallel_for.
void parallel_for_chunks(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body);

/// Calls body(begin, end) over chunks of [0, n); work below `grain` elements runs inline, without building a
/// std::function (the small-tensor hot path).
template <typename Body>
inline void parallel_for(int64_t n, int64_t grain, Body&& body) {
  if (n <= 0) return;
  if (n <= grain || num_threads() == 1) {
    body(int64_t{0}, n);
    return;
  }
  parallel_for_chunks(n, grain, std::function<void(int64_t, int64_t)>(body));
}

}  // namespace bprop::cpu
