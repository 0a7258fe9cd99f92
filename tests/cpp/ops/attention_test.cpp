// scaled_dot_product_attention: the tiled kernel against attention composed from ops (matmul, softmax, where) over
// shapes spanning several tiles, masks, broadcasting, fully masked rows, errors and memory. (First and second
// order gradchecks of small cases run from the op table; the shared vectors compare with PyTorch.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "bprop/bprop.h"

namespace bprop {
namespace {

Tensor randn(Random& rng, const Shape& s, DType dt = DType::Float64, double scale = 1.0) {
  std::vector<double> v(static_cast<size_t>(shape_numel(s)));
  for (double& x : v) x = rng.normal() * scale;
  return tensor(v, s, dt);
}

Tensor swap_last(const Tensor& x) {
  IntList perm;
  for (int64_t i = 0; i < x.dim(); ++i) perm.push_back(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return ops::transpose(x, perm);
}

// The textbook composition (no fully masked rows allowed): softmax(q k^T scale + mask, where allowed) v.
Tensor composed(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& float_mask, const Tensor& allowed,
                double scale) {
  Tensor s = ops::matmul(q, swap_last(k)) * scalar(scale, q.dtype());
  if (float_mask.defined()) s = s + float_mask;
  if (allowed.defined()) s = ops::where(allowed, s, scalar(-std::numeric_limits<double>::infinity(), q.dtype()));
  return ops::matmul(ops::softmax(s, -1), v);
}

Tensor causal(int64_t L, int64_t S) {
  std::vector<bool> m(static_cast<size_t>(L * S));
  for (int64_t i = 0; i < L; ++i) {
    for (int64_t j = 0; j < S; ++j) m[static_cast<size_t>(i * S + j)] = j <= i;
  }
  return tensor_bool(m, {L, S});
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return ops::amax(ops::abs(ops::cast(a, DType::Float64) - ops::cast(b, DType::Float64))).item();
}

TEST(Attention, TiledKernelMatchesTheCompositionAcrossTiles) {
  // L and S past two 64-wide tiles with ragged ends, heads sharing one key/value (broadcast), causal + float mask
  Random rng(5);
  const int64_t L = 150, S = 131, E = 12, Ev = 20;
  const Tensor q = randn(rng, {2, 3, L, E}), k = randn(rng, {2, 1, S, E}), v = randn(rng, {2, 1, S, Ev});
  const Tensor mask = randn(rng, {L, S}, DType::Float64, 0.5), w = randn(rng, {2, 3, L, Ev});
  const double scale = 0.4;
  auto tiled = [&](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::scaled_dot_product_attention(a[0], a[1], a[2], a[3], true, scale) * w);
  };
  auto reference = [&](const std::vector<Tensor>& a) -> Value {
    return ops::sum(composed(a[0], a[1], a[2], a[3], causal(L, S), scale) * w);
  };
  EXPECT_LT(max_abs_diff(ops::scaled_dot_product_attention(q, k, v, mask, true, scale),
                         composed(q, k, v, mask, causal(L, S), scale)),
            1e-12);
  const auto [y, g] = vjp(tiled, {q, k, v, mask}, scalar(1.0, DType::Float64));
  const auto [y_ref, g_ref] = vjp(reference, {q, k, v, mask}, scalar(1.0, DType::Float64));
  EXPECT_NEAR(y.item(), y_ref.item(), 1e-9);
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_EQ(g[i].shape(), g_ref[i].shape()) << "input " << i;
    EXPECT_LT(max_abs_diff(g[i], g_ref[i]), 1e-10) << "gradient of input " << i;
  }
}

TEST(Attention, Float32AndBoolMasksAndNonCausalMatchTheComposition) {
  Random rng(8);
  const int64_t L = 70, S = 200, E = 32, Ev = 8;
  const Tensor q = randn(rng, {3, L, E}, DType::Float32), k = randn(rng, {3, S, E}, DType::Float32);
  const Tensor v = randn(rng, {3, S, Ev}, DType::Float32);
  std::vector<bool> keep(static_cast<size_t>(S));
  for (int64_t j = 0; j < S; ++j) keep[static_cast<size_t>(j)] = j % 3 != 1;  // padding-style key mask
  const Tensor mask = tensor_bool(keep, {S});
  const double scale = 1.0 / std::sqrt(static_cast<double>(E));
  EXPECT_LT(max_abs_diff(ops::scaled_dot_product_attention(q, k, v, mask), composed(q, k, v, {}, mask, scale)), 2e-6);
  const auto g = grad([&](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::square(ops::scaled_dot_product_attention(a[0], a[1], a[2], mask)));
  }, GradPosition{std::vector<int>{0, 1, 2}})({q, k, v});
  const auto g_ref = grad([&](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::square(composed(a[0], a[1], a[2], {}, mask, scale)));
  }, GradPosition{std::vector<int>{0, 1, 2}})({q, k, v});
  for (size_t i = 0; i < 3; ++i) EXPECT_LT(max_abs_diff(g[i].tensor(), g_ref[i].tensor()), 1e-4) << "input " << i;
}

TEST(Attention, FullyMaskedRowsGiveZerosAndZeroGradients) {
  Random rng(3);
  const Tensor q = randn(rng, {2, 4, 3}, DType::Float32), k = randn(rng, {2, 5, 3}, DType::Float32);
  const Tensor v = randn(rng, {2, 5, 2}, DType::Float32);
  std::vector<bool> m(20, true);
  for (int j = 0; j < 5; ++j) m[static_cast<size_t>(5 + j)] = false;  // row 1 sees nothing
  const Tensor mask = tensor_bool(m, {4, 5});
  // an additive mask of -inf everywhere in row 2 is fully masked too
  std::vector<double> f(20, 0.0);
  for (int j = 0; j < 5; ++j) f[static_cast<size_t>(10 + j)] = -std::numeric_limits<double>::infinity();
  const Tensor fmask = tensor(f, {4, 5}, DType::Float32);
  for (const auto& [mk, row] : {std::pair{mask, 1}, std::pair{fmask, 2}}) {
    const Tensor out = ops::scaled_dot_product_attention(q, k, v, mk);
    const std::vector<float> o = out.to_vector<float>();
    for (int b = 0; b < 2; ++b) {
      for (int e = 0; e < 2; ++e) EXPECT_EQ(o[static_cast<size_t>(b * 8 + row * 2 + e)], 0.0f);
    }
    const auto g = grad([&](const std::vector<Tensor>& a) -> Value {
      return ops::sum(ops::scaled_dot_product_attention(a[0], a[1], a[2], mk));
    }, GradPosition{std::vector<int>{0, 1, 2}})({q, k, v});
    for (size_t i = 0; i < 3; ++i) {
      for (float x : g[i].tensor().to_vector<float>()) ASSERT_TRUE(std::isfinite(x)) << "input " << i;
    }
    const std::vector<float> dq = g[0].tensor().to_vector<float>();
    for (int b = 0; b < 2; ++b) {
      for (int e = 0; e < 3; ++e) EXPECT_EQ(dq[static_cast<size_t>(b * 12 + row * 3 + e)], 0.0f);
    }
  }
  // L > S with is_causal: every row sees at least key 0, and the last rows see every key
  const Tensor out = ops::scaled_dot_product_attention(randn(rng, {6, 3}), randn(rng, {2, 3}), randn(rng, {2, 4}),
                                                       {}, true);
  for (double x : out.to_vector<double>()) EXPECT_TRUE(std::isfinite(x));
}

TEST(Attention, TheBackwardReadsTheForwardsLogSumExpOnlyWhenItsInputsMadeIt) {
  Random rng(11);
  const Tensor q = randn(rng, {2, 70, 8}), k = randn(rng, {2, 90, 8}), v = randn(rng, {2, 90, 4});
  const Tensor mask = randn(rng, {70, 90}), dout = randn(rng, {2, 70, 4});
  const Tensor out = ops::scaled_dot_product_attention(q, k, v, mask, true);
  ASSERT_NE(out.residual(), nullptr);
  EXPECT_EQ(out.residual()->values.shape(), (Shape{2 * 70}));
  const Attrs attrs{{"is_causal", true}, {"mask_grad", true}};
  const Tensor with_saved = call_op("scaled_dot_product_attention_grad", {q, k, v, mask, out, dout}, attrs);
  // the same values without the residual (a copy of out): the log-sum-exp recomputed, the same bits
  const Tensor copy = tensor(out.to_vector<double>(), out.shape(), DType::Float64);
  ASSERT_EQ(copy.residual(), nullptr);
  const Tensor recomputed = call_op("scaled_dot_product_attention_grad", {q, k, v, mask, copy, dout}, attrs);
  EXPECT_EQ(with_saved.to_vector<double>(), recomputed.to_vector<double>());
  // other inputs than the forward's (another key, another scale, not causal): the saved values are not used
  const Tensor k2 = randn(rng, {2, 90, 8});
  const Tensor other = call_op("scaled_dot_product_attention_grad", {q, k2, v, mask, out, dout}, attrs);
  const Tensor other_ref = call_op("scaled_dot_product_attention_grad", {q, k2, v, mask, copy, dout}, attrs);
  EXPECT_EQ(other.to_vector<double>(), other_ref.to_vector<double>());
  for (const Attrs& a : {Attrs{{"is_causal", false}, {"mask_grad", true}},
                         Attrs{{"is_causal", true}, {"scale", 0.5}, {"mask_grad", true}}}) {
    EXPECT_EQ(call_op("scaled_dot_product_attention_grad", {q, k, v, mask, out, dout}, a).to_vector<double>(),
              call_op("scaled_dot_product_attention_grad", {q, k, v, mask, copy, dout}, a).to_vector<double>());
  }
}

TEST(Attention, BadArgumentsNameTheOpTheArgumentAndTheShapes) {
  const Tensor q = zeros({2, 3, 4}), k = zeros({2, 5, 4}), v = zeros({2, 5, 6});
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string e1 = message([&] { ops::scaled_dot_product_attention(q, zeros({2, 5, 3}), v); });
  EXPECT_NE(e1.find("scaled_dot_product_attention"), std::string::npos) << e1;
  EXPECT_NE(e1.find("'key' of shape (2, 5, 3)"), std::string::npos) << e1;
  EXPECT_THROW(ops::scaled_dot_product_attention(q, k, zeros({2, 4, 6})), ShapeError);
  EXPECT_THROW(ops::scaled_dot_product_attention(zeros({4}), k, v), ShapeError);
  EXPECT_THROW(ops::scaled_dot_product_attention(q, k, v, zeros({3, 4})), ShapeError);
  EXPECT_THROW(ops::scaled_dot_product_attention(q, k, v, zeros({3, 2, 3, 5})), ShapeError);  // would grow the batch
  EXPECT_THROW(ops::scaled_dot_product_attention(q, k, v, tensor_i32({1}, {1})), DTypeError);
  EXPECT_THROW(ops::scaled_dot_product_attention(q, ops::cast(k, DType::Float64), v), DTypeError);
  EXPECT_THROW(ops::scaled_dot_product_attention(tensor_i32({1, 2}, {1, 2}), tensor_i32({1, 2}, {1, 2}),
                                                 tensor_i32({1, 2}, {1, 2})),
               DTypeError);
}

TEST(Attention, ForwardAndBackwardPeakFarBelowTheComposition) {
  // one head, L = S = 1024, E = 64: the composition holds (L, S) scores, probabilities and their gradients
  Random rng(1);
  const int64_t L = 1024, E = 64;
  const Tensor q = randn(rng, {1, L, E}, DType::Float32), k = randn(rng, {1, L, E}, DType::Float32);
  const Tensor v = randn(rng, {1, L, E}, DType::Float32);
  auto peak_of = [&](const std::function<Tensor(const std::vector<Tensor>&)>& f) {
    const int64_t before = memory_stats().bytes;
    reset_peak_memory();
    {
      const auto g = grad([&](const std::vector<Tensor>& a) -> Value { return ops::sum(f(a)); },
                          GradPosition{std::vector<int>{0, 1, 2}})({q, k, v});
      EXPECT_EQ(g.size(), 3u);
    }
    return memory_stats().peak_bytes - before;
  };
  const int64_t tiled = peak_of([](const std::vector<Tensor>& a) {
    return ops::scaled_dot_product_attention(a[0], a[1], a[2], {}, true);
  });
  const int64_t reference = peak_of([&](const std::vector<Tensor>& a) {
    return composed(a[0], a[1], a[2], {}, causal(L, L), 1.0 / 8.0);
  });
  EXPECT_LT(tiled * 8, reference) << "tiled " << tiled << " bytes, composed " << reference;
}

// Bitwise equality of two tensors of one dtype (half dtypes compared as their bits).
void expect_same_bits(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  const Tensor a = got.clone(), b = want.clone();  // (dense copies)
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.nbytes())), 0) << what;
}

TEST(Attention, HalfCallsAreTheWidenedFloat32KernelsRoundedOnceHeadByHead) {
  // PyTorch's CPU semantics: the float32 attention of the widened operands, each result rounded once. The half
  // kernels widen a group of heads at a time; these cases span several groups (40 heads), tiles (L, S > 64),
  // causal, bool masks of their own and shared by the heads, and a key shared by the heads (its gradient takes
  // the widening path); the gradient op reads the forward's float32 log-sum-exp, or recomputes it.
  Random rng(9);
  struct Case {
    Shape q, k, v;
    bool causal;
    int mask;  // 0 none, 1 one per head, 2 one for all heads
  };
  const std::vector<Case> cases = {{{2, 20, 70, 8}, {2, 20, 90, 8}, {2, 20, 90, 6}, false, 0},
                                   {{1, 40, 33, 16}, {1, 40, 33, 16}, {1, 40, 33, 16}, true, 0},
                                   {{2, 3, 9, 4}, {2, 3, 11, 4}, {2, 3, 11, 5}, false, 1},
                                   {{2, 3, 9, 4}, {2, 3, 11, 4}, {2, 3, 11, 5}, true, 2},
                                   {{2, 4, 7, 4}, {2, 1, 7, 4}, {2, 1, 7, 4}, false, 0}};
  for (const DType dt : {DType::Float16, DType::BFloat16}) {
    for (const Case& k : cases) {
      const Tensor q = randn(rng, k.q, dt), key = randn(rng, k.k, dt), v = randn(rng, k.v, dt);
      const int64_t L = k.q.end()[-2], S = k.k.end()[-2];
      Tensor mask;
      if (k.mask != 0) {
        std::vector<bool> m;
        const Shape ms = k.mask == 1 ? Shape{k.q[0], k.q[1], L, S} : Shape{L, S};
        for (int64_t i = 0; i < shape_numel(ms); ++i) m.push_back(rng.uniform() < 0.8 || i % S == 0);
        mask = tensor_bool(m, ms);
      }
      const auto wide = [](const Tensor& t) { return ops::cast(t, DType::Float32); };
      const Tensor out = ops::scaled_dot_product_attention(q, key, v, mask, k.causal);
      expect_same_bits(out, ops::cast(ops::scaled_dot_product_attention(wide(q), wide(key), wide(v), mask, k.causal), dt),
                       "forward");
      const Tensor dout = randn(rng, out.shape(), dt);
      Attrs attrs;
      attrs.set("is_causal", k.causal);
      const auto grads = [&](const Tensor& o) {
        return call_op("scaled_dot_product_attention_grad", {q, key, v, mask, o, dout}, attrs);
      };
      const Tensor want = ops::cast(
          call_op("scaled_dot_product_attention_grad", {wide(q), wide(key), wide(v), mask, wide(out), wide(dout)}, attrs),
          dt);
      expect_same_bits(grads(out), want, "gradients from the forward's log-sum-exp");
      expect_same_bits(grads(out.clone()), want, "gradients, the log-sum-exp recomputed");
    }
  }
}

TEST(Attention, HalfCallsWidenAGroupOfHeadsNotWholeTensors) {
  // 32 heads of L = S = 256, E = 64 in bfloat16: the float32 copies of q, k, v and out would take 8 MiB; the group
  // of heads the kernels widen at a time, a fraction of it.
  Random rng(3);
  const Shape s{1, 32, 256, 64};
  const Tensor q = randn(rng, s, DType::BFloat16), k = randn(rng, s, DType::BFloat16), v = randn(rng, s, DType::BFloat16);
  const int64_t widened = 4 * shape_numel(s) * 4;
  const int64_t before = memory_stats().bytes;
  reset_peak_memory();
  const Tensor out = ops::scaled_dot_product_attention(q, k, v, {}, true);
  const int64_t forward = memory_stats().peak_bytes - before;
  EXPECT_LT(forward * 2, widened) << "forward peak " << forward << " bytes";
  const Tensor dout = randn(rng, s, DType::BFloat16);
  Attrs attrs;
  attrs.set("is_causal", true);
  const int64_t before_grad = memory_stats().bytes;
  reset_peak_memory();
  const Tensor g = call_op("scaled_dot_product_attention_grad", {q, k, v, Tensor(), out, dout}, attrs);
  const int64_t backward = memory_stats().peak_bytes - before_grad;
  // the widening path: q, k, v, out, dout and the packed float32 gradients
  EXPECT_LT(backward * 2, 4 * shape_numel(s) * (5 + 3)) << "gradient peak " << backward << " bytes";
  EXPECT_EQ(g.dtype(), DType::BFloat16);
}

}  // namespace
}  // namespace bprop
