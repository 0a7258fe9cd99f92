// A seeded random stream that gives bit-identical numbers on every platform (native and WebAssembly):
// xoshiro256** for bits, and Box-Muller with our own log/cos written in plain IEEE arithmetic, so no
// libm difference can change a value.
#pragma once
#include <cstdint>

namespace bprop {

class Random {
 public:
  explicit Random(uint64_t seed);
  uint64_t next_u64();
  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Standard normal.
  double normal();

 private:
  uint64_t s_[4];
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace bprop
