// Size limits every tensor obeys, and overflow-checked integer arithmetic for sizes computed from user input
// (shapes, attributes, data lengths). A shape, stride or byte count past these is an error, never a wrapped
// number: in WebAssembly size_t has 32 bits and a wrapped byte count reads or writes outside the heap.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

namespace bprop {

/// The most dimensions a tensor may have (kernels and printing walk the dimensions recursively).
inline constexpr int64_t kMaxRank = 64;

#if SIZE_MAX <= UINT32_MAX
/// The most bytes one tensor may hold: the WebAssembly heap's ceiling (2 GiB).
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 31;
/// The most elements a shape may describe, zero dimensions aside (so every stride fits an int32 too).
inline constexpr int64_t kMaxElements = (int64_t{1} << 31) - 1;
#else
/// The most bytes one tensor may hold (64 TiB: past any host's memory, far from overflowing any index type).
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 46;
/// The most elements a shape may describe, zero dimensions aside (so every stride fits too).
inline constexpr int64_t kMaxElements = int64_t{1} << 46;
#endif

/// a + b, or nothing when it overflows int64.
inline std::optional<int64_t> add_checked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// a - b, or nothing when it overflows int64.
inline std::optional<int64_t> sub_checked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// a * b, or nothing when it overflows int64.
inline std::optional<int64_t> mul_checked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace bprop
