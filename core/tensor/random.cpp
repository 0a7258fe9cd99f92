// Deterministic across platforms: only IEEE +, -, *, / and sqrt (all correctly rounded) are used, and this
// file is compiled with -ffp-contract=off so no fused multiply-add can change a rounding.
#include "bprop/random.h"

#include <algorithm>
#include <cmath>

namespace bprop {
namespace {

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

constexpr double kLn2 = 0.69314718055994530942;
constexpr double kPi = 3.14159265358979323846;

// log(x) for x in (0, 1]: x = m * 2^e with m in [1/sqrt2, sqrt2), log m = 2 atanh((m-1)/(m+1)) by series.
double det_log(double x) {
  int e = 0;
  while (x < 0.70710678118654752440) {
    x *= 2.0;
    --e;
  }
  while (x > 1.41421356237309504880) {
    x *= 0.5;
    ++e;
  }
  const double s = (x - 1.0) / (x + 1.0), s2 = s * s;
  double term = s, sum = 0.0;
  for (int k = 1; k < 60; k += 2) {  // |s| < 0.172: 30 terms are far past double precision
    sum += term / k;
    term *= s2;
  }
  return 2.0 * sum + e * kLn2;
}

// cos(t) for t in [0, 2pi): reduce to [-pi, pi], then Taylor series.
double det_cos(double t) {
  if (t > kPi) t -= 2.0 * kPi;
  const double t2 = t * t;
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 30; ++k) {
    term *= -t2 / ((2.0 * k - 1.0) * (2.0 * k));
    sum += term;
  }
  return sum;
}

}  // namespace

Random::Random(uint64_t seed) {
  uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
}

uint64_t Random::next_u64() {  // xoshiro256**
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Random::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Random::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double u1 = 1.0 - uniform();  // (0, 1]
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * det_log(u1));
  const double theta = 2.0 * kPi * u2;
  const double c = det_cos(theta);
  double s = std::sqrt(std::max(0.0, 1.0 - c * c));
  if (theta > kPi) s = -s;
  spare_ = r * s;
  has_spare_ = true;
  return r * c;
}

}  // namespace bprop
