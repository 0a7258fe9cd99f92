// float16 and bfloat16: the conversions over every bit pattern against a reference written from the formats'
// definitions (independent of bprop/half.h's bit tricks), and the half dtypes through tensors, promotion, ops
// (computed in float32, rounded once), gradients, graph mode and checkpoints.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <set>

#include "bprop/bprop.h"
#include "bprop/nn/checkpoint.h"
#include "bprop/op_table.h"
#include "same_bits.h"

using bitwise::expect_bitwise_equal;

namespace bprop {
namespace {

// ---- the reference: decoding from the fields, rounding by searching the sorted values ----

struct Format {
  int exponent_bits, mantissa_bits;
  int bias() const { return (1 << (exponent_bits - 1)) - 1; }
};
constexpr Format kHalf{5, 10}, kBf16{8, 7};

// The value of a bit pattern, from sign, exponent and mantissa as IEEE 754 defines them.
double reference_decode(uint16_t bits, Format f) {
  const bool negative = bits >> 15;
  const int e = (bits >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1);
  const int m = bits & ((1 << f.mantissa_bits) - 1);
  double v;
  if (e == (1 << f.exponent_bits) - 1) {
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - f.bias() - f.mantissa_bits);
  } else {
    v = std::ldexp(static_cast<double>(m + (1 << f.mantissa_bits)), e - f.bias() - f.mantissa_bits);
  }
  return negative ? -v : v;
}

// The non-negative finite patterns in increasing order of value, and one past the largest: the power of two that
// the rounding of IEEE 754 treats as the next value (reaching it means overflow to infinity).
struct Table {
  std::vector<uint16_t> bits;
  std::vector<double> values;
};
Table positive_values(Format f) {
  Table t;
  const uint16_t inf = static_cast<uint16_t>(((1 << f.exponent_bits) - 1) << f.mantissa_bits);
  for (uint32_t b = 0; b < inf; ++b) {
    t.bits.push_back(static_cast<uint16_t>(b));
    t.values.push_back(reference_decode(static_cast<uint16_t>(b), f));
  }
  t.bits.push_back(inf);
  t.values.push_back(std::ldexp(1.0, (1 << f.exponent_bits) - 1 - f.bias()));  // 2^(emax + 1)
  return t;
}

// Round to nearest, ties to the even pattern, by finding the neighbours of |x| in the table.
uint16_t reference_encode(float x, const Table& t, Format f) {
  if (std::isnan(x)) return 0;  // (NaN is checked apart)
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(x));
  if (std::isinf(a) || a >= t.values.back()) return sign | t.bits.back();
  const auto hi = std::upper_bound(t.values.begin(), t.values.end(), a);
  const size_t j = static_cast<size_t>(hi - t.values.begin());  // values[j - 1] <= a < values[j]
  const double below = t.values[j - 1], above = t.values[j];
  uint16_t r;
  if (a - below < above - a) r = t.bits[j - 1];
  else if (a - below > above - a) r = t.bits[j];
  else r = (t.bits[j - 1] & 1) == 0 ? t.bits[j - 1] : t.bits[j];
  (void)f;
  return sign | r;
}

float next_up(float x) { return std::nextafter(x, std::numeric_limits<float>::infinity()); }
float next_down(float x) { return std::nextafter(x, -std::numeric_limits<float>::infinity()); }

template <typename Decode, typename Encode>
void check_format(Format f, Decode decode, Encode encode, const char* name) {
  // decoding: all 65,536 patterns
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const double want = reference_decode(static_cast<uint16_t>(b), f);
    const float got = decode(static_cast<uint16_t>(b));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << name << " 0x" << std::hex << b;
    } else {
      ASSERT_EQ(static_cast<double>(got), want) << name << " 0x" << std::hex << b;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << name << " 0x" << std::hex << b;  // -0 stays -0
    }
  }
  // encoding: every value, the midpoints between neighbours (ties) and the floats on either side of them
  const Table t = positive_values(f);
  int64_t checked = 0;
  auto expect = [&](float x) {
    const uint16_t want = reference_encode(x, t, f);
    ASSERT_EQ(encode(x), want) << name << " of " << x << " (float bits 0x" << std::hex
                               << std::bit_cast<uint32_t>(x) << ")";
    ++checked;
  };
  for (size_t i = 0; i + 1 < t.values.size(); ++i) {
    const float v = static_cast<float>(t.values[i]);
    const float mid = static_cast<float>((t.values[i] + t.values[i + 1]) / 2);  // exact in float32
    ASSERT_EQ(static_cast<double>(mid), (t.values[i] + t.values[i + 1]) / 2);
    for (const float x : {v, mid, next_up(mid), next_down(mid), next_up(v)}) {
      expect(x);
      expect(-x);
    }
  }
  // random float32 bit patterns (every binade, the subnormals of float32, the infinities)
  std::mt19937 rng(20261204);
  for (int i = 0; i < 200000; ++i) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (!std::isnan(x)) expect(x);
  }
  for (const float x : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::max(), 1e30f,
                        std::numeric_limits<float>::denorm_min(), 0.0f}) {
    expect(x);
    expect(-x);
  }
  EXPECT_GT(checked, 400000);
}

TEST(Half, Float16ConversionsOverEveryBitPatternMatchTheReference) {
  check_format(kHalf, half_bits_to_float, float_to_half_bits, "float16");
  // the edges named: the largest finite value, the rounding to infinity, the smallest subnormal and its half
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65519.996f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -25)), 0x0000);  // a tie: to even, zero
  EXPECT_EQ(float_to_half_bits(next_up(std::ldexp(1.0f, -25))), 0x0001);
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
}

TEST(Half, BFloat16ConversionsOverEveryBitPatternMatchTheReference) {
  check_format(kBf16, bfloat16_bits_to_float, float_to_bfloat16_bits, "bfloat16");
  EXPECT_EQ(float_to_bfloat16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // a tie: to even (1.0)
  EXPECT_EQ(float_to_bfloat16_bits(std::numeric_limits<float>::max()), 0x7f80);  // past the largest: infinity
  EXPECT_EQ(float_to_bfloat16_bits(-0.0f), 0x8000);
}

TEST(Half, NaNStaysAQuietNaNWithItsSign) {
  for (const uint32_t bits : {0x7fc00000u, 0x7f800001u, 0xffc00001u, 0x7fbfffffu, 0xff800001u}) {
    const float x = std::bit_cast<float>(bits);
    const uint16_t sign = (bits >> 31) ? 0x8000 : 0;
    EXPECT_EQ(float_to_half_bits(x), sign | 0x7e00) << std::hex << bits;
    EXPECT_EQ(float_to_bfloat16_bits(x), sign | 0x7fc0) << std::hex << bits;
  }
}

// ---- the dtypes in the library ----

uint16_t bits_at(const Tensor& t, int64_t i) {
  uint16_t b;
  std::memcpy(&b, static_cast<const uint8_t*>(t.raw_data()) + 2 * i, 2);
  return b;
}

TEST(Half, DtypesNamesSizesAndPromotionFollowPyTorch) {
  EXPECT_EQ(parse_dtype("float16"), DType::Float16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::BFloat16);
  EXPECT_STREQ(dtype_name(DType::BFloat16), "bfloat16");
  EXPECT_EQ(dtype_size(DType::Float16), 2u);
  EXPECT_TRUE(is_float(DType::BFloat16));
  EXPECT_EQ(promote_types(DType::Float16, DType::Float32), DType::Float32);
  EXPECT_EQ(promote_types(DType::BFloat16, DType::Float64), DType::Float64);
  EXPECT_EQ(promote_types(DType::Float16, DType::BFloat16), DType::Float32);
  EXPECT_EQ(promote_types(DType::Int32, DType::BFloat16), DType::BFloat16);
  EXPECT_EQ(promote_types(DType::Bool, DType::Float16), DType::Float16);
  const Tensor h = tensor({1, 2}, {2}, DType::Float16), f = tensor({1, 2}, {2});
  EXPECT_EQ((h + f).dtype(), DType::Float32);
  EXPECT_EQ((h * 2.5).dtype(), DType::Float16);  // a number keeps the half dtype
  EXPECT_EQ((h + tensor_i32({1, 2}, {2})).dtype(), DType::Float16);
  EXPECT_EQ((h + tensor({1, 2}, {2}, DType::BFloat16)).dtype(), DType::Float32);
}

TEST(Half, TensorsHoldTheRoundedValuesAndPrintThem) {
  const Tensor h = tensor({0.1, 1.0, 65519.0, 1e6, -0.0}, {5}, DType::Float16);
  EXPECT_EQ(h.dtype(), DType::Float16);
  EXPECT_EQ(h.nbytes(), 10u);
  EXPECT_EQ(bits_at(h, 0), float_to_half_bits(0.1f));
  EXPECT_EQ(bits_at(h, 2), 0x7bff);
  EXPECT_EQ(bits_at(h, 3), 0x7c00);
  EXPECT_EQ(bits_at(h, 4), 0x8000);
  EXPECT_EQ(h.to_vector<double>()[0], static_cast<double>(half_bits_to_float(float_to_half_bits(0.1f))));
  const Tensor b = tensor({3.14159}, {}, DType::BFloat16);
  EXPECT_EQ(b.item(), 3.140625);
  EXPECT_NE(b.to_string().find("bfloat16"), std::string::npos) << b.to_string();
  EXPECT_NE(b.to_string().find("3.14062"), std::string::npos) << b.to_string();
  // casts between every pair keep what the target holds (int32 truncates, NaN -> 0)
  const Tensor x = tensor({-2.75, 0.5, 300.0, std::nan("")}, {4}, DType::Float16);
  EXPECT_EQ(ops::cast(x, DType::Int32).to_vector<int32_t>(), (std::vector<int32_t>{-2, 0, 300, 0}));
  EXPECT_EQ(ops::cast(x, DType::BFloat16).to_vector<double>()[2], 300.0);
  EXPECT_EQ(ops::cast(tensor({1.0 / 3}, {1}, DType::Float64), DType::Float16).to_vector<double>()[0],
            static_cast<double>(half_bits_to_float(float_to_half_bits(1.0f / 3))));
}

TEST(Half, OpsComputeInFloat32AndRoundOnce) {
  const Tensor a = randn({64}, 1, DType::Float16), b = randn({64}, 2, DType::Float16);
  const std::vector<float> af = a.to_vector<float>(), bf = b.to_vector<float>();
  const Tensor sum = a + b, e = ops::exp(a), t = ops::tanh(b);
  ASSERT_EQ(sum.dtype(), DType::Float16);
  const std::vector<float> ef = ops::exp(ops::cast(a, DType::Float32)).to_vector<float>();
  const std::vector<float> tf = ops::tanh(ops::cast(b, DType::Float32)).to_vector<float>();
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_EQ(bits_at(sum, i), float_to_half_bits(af[i] + bf[i])) << i;
    EXPECT_EQ(bits_at(e, i), float_to_half_bits(ef[i])) << i;
    EXPECT_EQ(bits_at(t, i), float_to_half_bits(tf[i])) << i;
  }
  // a reduction and a product accumulate in float32: 4096 ones of bfloat16 sum to 4096 (a bfloat16 accumulator
  // would stop at 256)
  EXPECT_EQ(ops::sum(ones({4096}, DType::BFloat16)).item(), 4096.0);
  const Tensor m = ones({2, 512}, DType::BFloat16);
  EXPECT_EQ(ops::matmul(m, ops::transpose(m, {1, 0})).to_vector<double>(), (std::vector<double>{512, 512, 512, 512}));
  EXPECT_EQ(ops::matmul(m, ops::transpose(m, {1, 0})).dtype(), DType::BFloat16);
  // an op with an int32 result reads its half input
  EXPECT_EQ(ops::argmax(tensor({1, 5, 3}, {3}, DType::Float16), 0).item(), 1.0);
}

TEST(Half, LossesWithElementReadingFastPathsTakeHalfInputs) {
  // cross_entropy's fused host kernel and nll_loss's label check read elements themselves
  const Tensor logits = randn({4, 5}, 7, DType::BFloat16);
  const Tensor labels = tensor_i32({0, 3, 4, 1}, {4});
  const Tensor ce = ops::cross_entropy(logits, labels);
  ASSERT_EQ(ce.dtype(), DType::BFloat16);
  EXPECT_NEAR(ce.item(), ops::cross_entropy(ops::cast(logits, DType::Float32), labels).item(), 2e-2);
  const Tensor lp = ops::log_softmax(ops::cast(logits, DType::Float16));
  EXPECT_NEAR(ops::nll_loss(lp, labels).item(), ops::nll_loss(ops::cast(lp, DType::Float32), labels).item(), 2e-3);
  EXPECT_THROW(ops::nll_loss(lp, tensor_i32({0, 3, 5, 1}, {4})), ValueError);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const DTypeError& e) {
    return e.what();
  }
  return "(no DTypeError)";
}

// The ops PyTorch 1.13 has no bfloat16 CPU kernel for refuse both half dtypes, naming the op, the argument, its
// dtype and shape; every other float op of the catalogue takes all four float dtypes.
TEST(Half, OpsWithoutAPyTorchBfloat16KernelRefuseHalfInputs) {
  const Tensor p = tensor({0.25, 0.5, 0.875}, {3}, DType::BFloat16), t = tensor({0, 1, 1}, {3}, DType::Float16);
  std::string e = error_of([&] { ops::binary_cross_entropy(p, ops::cast(t, DType::BFloat16)); });
  EXPECT_NE(e.find("For 'binary_cross_entropy', 'probs' is bfloat16 of shape (3,)"), std::string::npos) << e;
  EXPECT_NE(e.find("takes float32 or float64"), std::string::npos) << e;
  e = error_of([&] { ops::mse_loss(ops::cast(p, DType::Float32), t); });
  EXPECT_NE(e.find("For 'mse_loss', 'y' is float16"), std::string::npos) << e;
  e = error_of([&] { ops::prod(t); });
  EXPECT_NE(e.find("For 'prod', 'x' is float16"), std::string::npos) << e;
  EXPECT_NEAR(ops::prod(ops::cast(p, DType::Float32)).item(), 0.109375, 1e-7);

  const std::vector<DType> all = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
  const std::vector<DType> full = {DType::Float32, DType::Float64};
  // The catalogue's ops: other tests register ops of their own (no check row) in this process.
  std::set<std::string> catalogue;
  for (const OpCheckRow& row : op_check_table()) catalogue.insert(row.op);
  ASSERT_EQ(catalogue.count("mse_loss"), 1u);
  for (const std::string& op : catalogue) {
    const bool refuses = op == "prod" || op == "mse_loss" || op == "binary_cross_entropy";
    EXPECT_EQ(op_float_dtypes(op), refuses ? full : all) << op;
  }
}

TEST(Half, GradientsOfHalfTensorsAreHalfToSecondOrder) {
  const Tensor x = tensor({0.5, -1.25, 2.0}, {3}, DType::BFloat16);
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::sin(a[0]) * a[0]); };
  const Value g = grad(f)({x});
  ASSERT_EQ(g.tensor().dtype(), DType::BFloat16);
  const Value g32 = grad(f)({ops::cast(x, DType::Float32)});
  const std::vector<double> got = g.tensor().to_vector<double>(), want = g32.tensor().to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 2e-2 * (1 + std::fabs(want[i]))) << i;
  const Value gg = grad(grad(f))({x});  // d2/dx2 sum(x sin x) = 2 cos x - x sin x
  ASSERT_EQ(gg.tensor().dtype(), DType::BFloat16);
  const std::vector<double> second = gg.tensor().to_vector<double>(), xs = x.to_vector<double>();
  for (size_t i = 0; i < second.size(); ++i) {
    const double w = 2 * std::cos(xs[i]) - xs[i] * std::sin(xs[i]);
    EXPECT_NEAR(second[i], w, 5e-2 * (1 + std::fabs(w))) << i;
  }
}

TEST(Half, GraphModeGivesTheEagerBits) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::sigmoid(a[0] * 1.5 + a[1]) * a[0]);
  };
  for (const DType dt : {DType::Float16, DType::BFloat16}) {
    const Tensor x = randn({5, 7}, 3, dt), y = randn({7}, 4, dt);
    const Value eager = value_and_grad(f, GradPosition({0, 1}))({x, y});
    const Value jitted = jit(value_and_grad(f, GradPosition({0, 1})))({x, y});
    expect_bitwise_equal(jitted, eager);
    EXPECT_EQ(jitted[1][0].tensor().dtype(), dt);
  }
}

TEST(Half, ElementwiseOpsConvertTileByTileWithoutFloat32Copies) {
  // Sizes that split over threads and end inside a tile; operands whole or one element; an op with attributes.
  for (const DType dt : {DType::Float16, DType::BFloat16}) {
    for (const int64_t n : {int64_t{1}, int64_t{1023}, int64_t{100003}}) {
      const Tensor x = randn({n}, 5, dt), y = randn({n}, 6, dt), s = scalar(0.75, dt);
      const auto wide = [](const Tensor& t) { return ops::cast(t, DType::Float32); };
      const std::vector<std::pair<Tensor, Tensor>> got_want = {
          {x + y, ops::cast(wide(x) + wide(y), dt)},
          {x * s, ops::cast(wide(x) * wide(s), dt)},
          {ops::exp(x), ops::cast(ops::exp(wide(x)), dt)},
          {ops::leaky_relu(x, 0.2), ops::cast(ops::leaky_relu(wide(x), 0.2), dt)},
          {ops::maximum(x, y), ops::cast(ops::maximum(wide(x), wide(y)), dt)},
          {ops::clamp(x, -0.5, 0.25), ops::cast(ops::clamp(wide(x), -0.5, 0.25), dt)},
      };
      for (const auto& [got, want] : got_want) {
        ASSERT_EQ(got.dtype(), dt);
        expect_bitwise_equal(got, want);
      }
      reset_peak_memory();
      const int64_t before = memory_stats().bytes;
      const Tensor z = ops::sigmoid(x * y);
      // the two outputs only (2 bytes an element each): no float32 copy of an operand or a result
      EXPECT_EQ(memory_stats().peak_bytes - before, 2 * n * 2) << dtype_name(dt) << " " << n;
      EXPECT_EQ(z.dtype(), dt);
    }
    // a bias row and a column repeated over the output: also tile by tile
    const Tensor m = randn({14287, 7}, 7, dt), row = randn({7}, 8, dt), col = randn({14287, 1}, 9, dt);
    const auto wide = [](const Tensor& t) { return ops::cast(t, DType::Float32); };
    expect_bitwise_equal(m + row, ops::cast(wide(m) + wide(row), dt));
    expect_bitwise_equal(col * m, ops::cast(wide(col) * wide(m), dt));
    reset_peak_memory();
    const int64_t before = memory_stats().bytes;
    const Tensor biased = m + row;
    EXPECT_EQ(memory_stats().peak_bytes - before, biased.nbytes()) << dtype_name(dt);
  }
}

TEST(Half, ReductionsReadHalfInputsInTilesWithoutFloat32Copies) {
  // Each reduction of a half tensor is the float32 reduction of its widened values rounded once, bit for bit, over
  // every loop of the kernels: long lanes split over the threads, rows, columns, blocks (axes 0, 2, 3 of NCHW) and
  // a strided layout moved first; with a NaN and infinities among the values.
  struct Case {
    Shape shape;
    Axis axis;
  };
  const std::vector<Case> cases = {{{1, 100003}, 1}, {{300, 257}, 1},     {{257, 300}, 0},
                                   {{4, 3, 5, 6}, IntList{0, 2, 3}}, {{5, 6, 7}, IntList{0, 2}}, {{33, 9}, {}}};
  for (const DType dt : {DType::Float16, DType::BFloat16}) {
    for (const Case& k : cases) {
      Tensor x = randn(k.shape, 11, dt);
      if (x.numel() > 1000) {  // values a reduction must carry through: inf, -inf and a NaN in separate lanes
        std::vector<double> v = ops::cast(x, DType::Float32).to_vector<double>();
        v[3] = INFINITY, v[500] = -INFINITY, v[777] = NAN;
        x = ops::cast(tensor(v, k.shape), dt);
      }
      const Tensor w = ops::cast(x, DType::Float32);
      const auto round = [dt](const Tensor& t) { return ops::cast(t, dt); };
      const std::vector<std::pair<Tensor, Tensor>> got_want = {
          {ops::sum(x, k.axis), round(ops::sum(w, k.axis))},
          {ops::mean(x, k.axis, true), round(ops::mean(w, k.axis, true))},
          {ops::amax(x, k.axis), round(ops::amax(w, k.axis))},
          {ops::amin(x, k.axis), round(ops::amin(w, k.axis))},
          {ops::logsumexp(x, k.axis), round(ops::logsumexp(w, k.axis))},
          {ops::var(x, k.axis), round(ops::var(w, k.axis))},
          {ops::stddev(x, k.axis, false, 0), round(ops::stddev(w, k.axis, false, 0))},
      };
      for (const auto& [got, want] : got_want) {
        ASSERT_EQ(got.dtype(), dt);
        expect_bitwise_equal(got, want);
      }
      if (k.shape.size() == 2 && !std::holds_alternative<std::monostate>(k.axis.value())) {
        const int64_t a = std::get<int64_t>(k.axis.value());
        EXPECT_EQ(ops::argmax(x, a).to_vector<int32_t>(), ops::argmax(w, a).to_vector<int32_t>());
        EXPECT_EQ(ops::argmin(x, a).to_vector<int32_t>(), ops::argmin(w, a).to_vector<int32_t>());
      }
    }
    // Memory: the output and its float32 values only, never a float32 (or any) copy of the input.
    const Tensor x = randn({8, 50000}, 12, dt);
    reset_peak_memory();
    const int64_t before = memory_stats().bytes;
    const Tensor total = ops::sum(x, 1);
    EXPECT_LE(memory_stats().peak_bytes - before, 8 * (2 + 4) + 256) << dtype_name(dt);
    expect_bitwise_equal(total, ops::cast(ops::sum(ops::cast(x, DType::Float32), 1), dt));
  }
}

TEST(Half, FusedLoopsComputeInFloat32TilesAndRoundEachStep) {
  // A chain of steps reading whole operands, a scalar, a row and a column: one fused loop, the eager bits (each
  // step rounded to the half dtype as its eager kernel rounds it), several tiles, threads and a tail.
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    const Tensor h = ops::exp(a[0] - a[2]) * 0.5 + a[1];
    return Value(std::vector<Value>{Value(ops::sigmoid(h * a[3]) - a[0]), Value(h)});
  };
  for (const DType dt : {DType::Float16, DType::BFloat16}) {
    for (const Shape& shape : {Shape{3, 5}, Shape{10001, 7}}) {
      const Tensor x = randn(shape, 1, dt), y = randn(shape, 2, dt);
      const Tensor col = randn({shape[0], 1}, 3, dt), row = randn({shape[1]}, 4, dt);
      const JitFn j = jit(f);
      const Value got = j({x, y, col, row});
      expect_bitwise_equal(got, f({x, y, col, row}));
      EXPECT_EQ(got[0].tensor().dtype(), dt);
      EXPECT_EQ(j.stats().fused_groups, 1) << j.lower({x, y, col, row});
      EXPECT_EQ(j.stats().kernels, 1) << j.lower({x, y, col, row});
    }
  }
  // a traced half gradient with fused loops in it
  const Fn loss = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::tanh(a[0] * 1.5 + a[1]) * ops::relu(a[0]));
  };
  for (const DType dt : {DType::Float16, DType::BFloat16}) {
    const Tensor x = randn({4001, 9}, 7, dt), b = randn({9}, 8, dt);
    const GradFn g = value_and_grad(loss, GradPosition({0, 1}));
    const JitFn j = jit(g);
    expect_bitwise_equal(j({x, b}), g({x, b}));
    EXPECT_EQ(j.stats().fused_groups, 1) << j.lower({x, b});  // the forward and backward chains together
  }
}

TEST(Half, CheckpointsKeepF16AndBf16) {
  const Tensor h = tensor({0.5, -3.0, 1e-4}, {3}, DType::Float16), b = tensor({1e20, -2.5}, {2}, DType::BFloat16);
  const std::vector<uint8_t> bytes = save_checkpoint_bytes(NamedTensors{{"h", h}, {"b", b}}, {});
  const std::string header(bytes.begin() + 8, bytes.end());
  EXPECT_NE(header.find("\"F16\""), std::string::npos);
  EXPECT_NE(header.find("\"BF16\""), std::string::npos);
  const Checkpoint ck = load_checkpoint_bytes(bytes.data(), bytes.size());
  ASSERT_NE(ck.find("h"), nullptr);
  EXPECT_EQ(ck.find("h")->dtype(), DType::Float16);
  EXPECT_EQ(ck.find("b")->dtype(), DType::BFloat16);
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(bits_at(*ck.find("h"), i), bits_at(h, i));
  for (int64_t i = 0; i < 2; ++i) EXPECT_EQ(bits_at(*ck.find("b"), i), bits_at(b, i));
}

}  // namespace
}  // namespace bprop
