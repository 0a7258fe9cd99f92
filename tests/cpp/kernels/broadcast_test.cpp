// Broadcasting of the binary ops (kernels/cpu/elementwise.h, broadcast_binary): every pair of shapes from a
// random sweep (ranks 0-4, dimensions of 1 anywhere, missing leading dimensions, both operands broadcast, empty
// outputs), through arithmetic, libm-backed, select-like and comparison ops in every dtype they take, checked to
// the bit against the element function applied index by index (float32, float64, int32; bool for comparisons). Large
// cases cross the threads' split, and short rows (a row repeated, or an element per row) run several rows at a time.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bprop/bprop.h"
#include "kernels/cpu/parallel.h"

using namespace bprop;

namespace {

// The element of a (of shape `as`, broadcast to `os`) at the output's flat index o.
int64_t source_index(const Shape& as, const Shape& os, int64_t o) {
  int64_t index = 0, stride = 1;
  for (size_t k = 0; k < os.size(); ++k) {
    const size_t d = os.size() - 1 - k;
    const int64_t i = o % os[d];
    o /= os[d];
    if (k < as.size()) {
      const size_t ad = as.size() - 1 - k;
      if (as[ad] != 1) index += i * stride;
      stride *= as[ad];
    }
  }
  return index;
}

Shape broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t k = 0; k < out.size(); ++k) {
    const int64_t x = k < a.size() ? a[a.size() - 1 - k] : 1, y = k < b.size() ? b[b.size() - 1 - k] : 1;
    out[out.size() - 1 - k] = x == 1 ? y : x;
  }
  return out;
}

// Values of dtype dt that keep every op defined: no zero divisors, small powers.
Tensor values(const Shape& s, DType dt, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<double> v(static_cast<size_t>(shape_numel(s)));
  for (double& x : v) {
    const int k = static_cast<int>(rng() % 7) + 1;  // 1..7
    x = is_float(dt) ? (rng() % 2 ? 1.0 : -1.0) * k * 0.37 : dt == DType::Bool ? k % 2 : k;
  }
  return tensor(v, s, dt);
}

template <typename T>
T at(const Tensor& t, int64_t i) {
  return static_cast<const T*>(t.raw_data())[i];
}

// The reference of one op on one element, computed in the element type as the kernels compute.
template <typename T>
T element(const std::string& op, T x, T y) {
  if (op == "add") return static_cast<T>(x + y);
  if (op == "sub") return static_cast<T>(x - y);
  if (op == "mul") return static_cast<T>(x * y);
  if (op == "maximum") return x > y ? x : y;
  if (op == "minimum") return x < y ? x : y;
  if (op == "squared_difference") return static_cast<T>((x - y) * (x - y));
  if (op == "pow") return static_cast<T>(std::pow(x, y));
  if (op == "atan2") return static_cast<T>(std::atan2(x, y));
  ADD_FAILURE() << "no reference for " << op;
  return T{};
}

template <typename T>
bool comparison(const std::string& op, T x, T y) {
  if (op == "greater") return x > y;
  if (op == "less_equal") return x <= y;
  if (op == "equal") return x == y;
  ADD_FAILURE() << "no reference for " << op;
  return false;
}

// Runs op on a (as) and b (bs) in dtype dt and compares every element with the reference.
void check_case(const std::string& op, bool compare, DType dt, const Shape& as, const Shape& bs, uint32_t seed) {
  const Tensor a = values(as, dt, seed), b = values(bs, dt, seed + 1);
  const Tensor out = call_op(op, {a, b});
  const Shape os = broadcast(as, bs);
  ASSERT_EQ(out.shape(), os) << op;
  const std::string where = op + " " + dtype_name(dt) + " " + shape_str(as) + " with " + shape_str(bs);
  visit_dtype(dt, [&]<typename T>() {
    for (int64_t o = 0; o < shape_numel(os); ++o) {
      const T x = at<T>(a, source_index(as, os, o)), y = at<T>(b, source_index(bs, os, o));
      if (compare) {
        ASSERT_EQ(at<bool>(out, o), comparison<T>(op, x, y)) << where << " at " << o;
      } else if constexpr (!std::is_same_v<T, bool>) {
        ASSERT_EQ(out.dtype(), dt) << where;
        const T want = element<T>(op, x, y), got = at<T>(out, o);
        ASSERT_EQ(std::memcmp(&want, &got, sizeof(T)), 0) << where << " at " << o << ": " << got << " vs " << want;
      }
    }
  });
}

const char* const kOps[] = {"add", "sub", "mul", "maximum", "minimum", "squared_difference", "pow", "atan2",
                            "greater", "less_equal", "equal"};

bool is_compare(const std::string& op) { return op == "greater" || op == "less_equal" || op == "equal"; }

}  // namespace

TEST(Broadcast, EveryShapePairMatchesTheElementFunctionToTheBit) {
  std::mt19937 rng(7);
  const int64_t dims[] = {1, 2, 3, 5};
  for (int trial = 0; trial < 60; ++trial) {
    // an output shape, and each operand a suffix of it with some dimensions set to 1
    const size_t rank = rng() % 5;
    Shape os(rank);
    for (int64_t& d : os) d = dims[rng() % 4];
    auto operand = [&]() {
      Shape s(os.begin() + static_cast<std::ptrdiff_t>(rng() % (rank + 1)), os.end());
      for (int64_t& d : s) {
        if (rng() % 3 == 0) d = 1;
      }
      return s;
    };
    const Shape as = operand(), bs = operand();
    for (const char* op : kOps) {
      const bool floats_only = std::string(op) == "atan2";
      for (DType dt : {DType::Float32, DType::Float64, DType::Int32, DType::Bool}) {
        if (floats_only && !is_float(dt)) continue;           // (atan2 of integers is float32)
        if (dt == DType::Bool && !is_compare(op)) continue;  // (bools are promoted to int32)
        check_case(op, is_compare(op), dt, as, bs, static_cast<uint32_t>(trial));
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(Broadcast, EmptyOutputsAndLargeOnesAcrossThreads) {
  const int before = cpu::num_threads();
  for (const int threads : {1, 2}) {
    cpu::set_num_threads(threads);
    const std::vector<std::pair<Shape, Shape>> pairs = {
        {{0, 3}, {3}},                 // nothing to compute
        {{4, 0}, {1}},
        {{300, 257}, {257}},           // a bias row over more than one thread's share
        {{3, 1, 40000}, {1, 7, 1}},    // both operands broadcast, long stretches and short ones
        {{70000, 2}, {70000, 1}},      // stretches of two elements
        {{5, 1, 9000}, {5, 8, 1}},
        {{40000, 3}, {3}},             // a short row repeated: several rows per call, split mid-row by threads
        {{7, 5000, 6}, {7, 1, 6}},     // ... a different repeated row in each outer block
        {{9000, 2, 5}, {9000, 1, 5}},  // ... two rows per block
        {{3, 1, 37}, {3, 20000, 37}},  // ... the first operand repeats
        {{40000, 3}, {40000, 1}},      // one element per short row, several rows per call
        {{6, 7000, 5}, {6, 7000, 1}},
        {{20000, 1}, {20000, 4}},      // ... in the first operand
    };
    for (const auto& [as, bs] : pairs) {
      for (const char* op : {"add", "maximum", "pow", "greater"}) {
        check_case(op, is_compare(op), DType::Float32, as, bs, 3);
        check_case(op, is_compare(op), DType::Int32, bs, as, 4);  // (operands swapped)
        if (HasFatalFailure()) break;
      }
    }
  }
  cpu::set_num_threads(before);
}
