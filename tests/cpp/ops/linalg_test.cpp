// matmul: every NumPy shape form against hand-computed numbers and a naive reference, dtypes, large and
// batched GEMMs over the threads, first and second order gradients, and the error paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "bprop/bprop.h"
#include "kernels/cpu/parallel.h"
#include "expectations.h"

using namespace bprop;

namespace {

using expectations::expect_values;

void expect_grads(const Fn& f, const std::vector<Tensor>& in, const std::string& what) {
  const CheckResult g1 = gradcheck(f, in);
  EXPECT_TRUE(g1.ok) << what << ": " << g1.message;
  const CheckResult g2 = gradgradcheck(f, in);
  EXPECT_TRUE(g2.ok) << what << ": " << g2.message;
}

template <typename E, typename F>
void expect_error(F f, const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const E& e) {
    for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

// NumPy's matmul written out with loops: 1-D promotion, broadcast batch dims.
std::pair<Shape, std::vector<double>> reference(const Tensor& a, const Tensor& b) {
  Shape as = a.shape(), bs = b.shape();
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t n = as[as.size() - 2], k = as.back(), m = bs.back();
  const Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  const size_t rank = std::max(ab.size(), bb.size());
  Shape batch(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i + ab.size() < rank ? 1 : ab[i + ab.size() - rank];
    const int64_t y = i + bb.size() < rank ? 1 : bb[i + bb.size() - rank];
    batch[i] = std::max(x, y);
  }
  const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
  const int64_t nb = shape_numel(batch);
  std::vector<double> out;
  for (int64_t bi = 0; bi < nb; ++bi) {
    // batch multi-index -> offsets into a and b (size-1 dims broadcast)
    int64_t rem = bi, ao = 0, bo = 0, astride = n * k, bstride = k * m;
    for (size_t d = rank; d-- > 0;) {
      const int64_t idx = rem % batch[d];
      rem /= batch[d];
      const int64_t ad = d + ab.size() < rank ? -1 : static_cast<int64_t>(d + ab.size() - rank);
      const int64_t bd = d + bb.size() < rank ? -1 : static_cast<int64_t>(d + bb.size() - rank);
      if (ad >= 0) {
        if (ab[static_cast<size_t>(ad)] != 1) ao += idx * astride;
        astride *= ab[static_cast<size_t>(ad)];
      }
      if (bd >= 0) {
        if (bb[static_cast<size_t>(bd)] != 1) bo += idx * bstride;
        bstride *= bb[static_cast<size_t>(bd)];
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) {
          s += av[static_cast<size_t>(ao + i * k + p)] * bv[static_cast<size_t>(bo + p * m + j)];
        }
        out.push_back(s);
      }
    }
  }
  Shape shape = batch;
  if (!a_vec) shape.push_back(n);
  if (!b_vec) shape.push_back(m);
  return {shape, out};
}

void expect_reference(const Tensor& a, const Tensor& b, double tol) {
  const auto [shape, want] = reference(a, b);
  SCOPED_TRACE(shape_str(a.shape()) + " @ " + shape_str(b.shape()));
  expect_values(ops::matmul(a, b), shape, want, tol);
}

// Shape pairs covering every NumPy form.
const std::vector<std::pair<Shape, Shape>> kForms = {
    {{3}, {3}},          {{2}, {2, 3}},          {{2, 3}, {3}},       {{2, 3}, {3, 4}},
    {{2, 2, 3}, {3, 2}}, {{3, 2}, {2, 2, 4}},    {{4}, {2, 4, 3}},    {{2, 3, 4}, {4}},
    {{2, 1, 3, 4}, {5, 4, 2}}, {{2, 3, 4}, {2, 4, 5}}, {{1, 2, 3}, {4, 3, 2}}, {{3, 4}, {1, 4, 2}}};

}  // namespace

TEST(Matmul, HandComputedForms) {
  const Tensor v3 = tensor({1, 2, 3}, {3});
  expect_values(ops::matmul(v3, tensor({4, 5, 6}, {3})), {}, {32});                                 // 1-D x 1-D
  const Tensor m23 = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_values(ops::matmul(tensor({1, 2}, {2}), m23), {3}, {9, 12, 15});                           // 1-D x 2-D
  expect_values(ops::matmul(m23, tensor({1, 1, 1}, {3})), {2}, {6, 15});                            // 2-D x 1-D
  expect_values(ops::matmul(m23, tensor({1, 0, 0, 1, 1, 1}, {3, 2})), {2, 2}, {4, 5, 10, 11});     // 2-D x 2-D
  // batched 3-D x 2-D: two (2, 3) matrices times the same (3, 2)
  const Tensor b = tensor({1, 2, 3, 4, 5, 6, 0, 0, 0, 1, 0, 0}, {2, 2, 3});
  expect_values(ops::matmul(b, tensor({1, 0, 0, 1, 1, 1}, {3, 2})), {2, 2, 2}, {4, 5, 10, 11, 0, 0, 1, 0});
  // 1-D x 3-D: the vector multiplies every matrix of the batch
  expect_values(ops::matmul(tensor({1, 1}, {2}), tensor({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2})), {2, 2},
                {4, 6, 12, 14});
}

TEST(Matmul, EveryFormMatchesReference) {
  uint64_t seed = 1;
  for (const auto& [as, bs] : kForms) {
    expect_reference(randn(as, seed, DType::Float64), randn(bs, seed + 100, DType::Float64), 1e-12);
    ++seed;
  }
  // broadcast batch (2, 1, 3, 4) x (5, 4, 2) -> (2, 5, 3, 2)
  const Tensor r = ops::matmul(randn({2, 1, 3, 4}, 3), randn({5, 4, 2}, 4));
  EXPECT_EQ(r.shape(), (Shape{2, 5, 3, 2}));
}

TEST(Matmul, DTypes) {
  const Tensor ai = tensor_i32({1, 2, 3, 4}, {2, 2});
  const Tensor ri = ops::matmul(ai, tensor_i32({5, 6, 7, 8}, {2, 2}));
  EXPECT_EQ(ri.dtype(), DType::Int32);
  expect_values(ri, {2, 2}, {19, 22, 43, 50}, 0);
  const Tensor rb = ops::matmul(tensor_bool({true, true, false}, {3}), tensor_bool({true, true, true}, {3}));
  EXPECT_EQ(rb.dtype(), DType::Int32);
  expect_values(rb, {}, {2}, 0);
  const Tensor rf = ops::matmul(tensor({1, 2}, {1, 2}), tensor({3, 4}, {2, 1}, DType::Float64));
  EXPECT_EQ(rf.dtype(), DType::Float64);
  expect_values(rf, {1, 1}, {11});
  const Tensor rm = ops::matmul(ai, tensor({0.5, 0.5}, {2}));
  EXPECT_EQ(rm.dtype(), DType::Float32);
  expect_values(rm, {2}, {1.5, 3.5});
}

TEST(Matmul, EmptyDimensions) {
  expect_values(ops::matmul(zeros({2, 0}), zeros({0, 3})), {2, 3}, {0, 0, 0, 0, 0, 0});  // k = 0: zeros
  expect_values(ops::matmul(zeros({0, 4}), zeros({4, 3})), {0, 3}, {});
  expect_values(ops::matmul(zeros({2, 0, 4}), zeros({2, 4, 3})), {2, 0, 3}, {});
  expect_values(ops::matmul(zeros({0}), zeros({0})), {}, {0});
}

TEST(Matmul, LargeAndBatchedOverThreads) {
  const int saved = cpu::num_threads();
  for (int threads : {1, 2, 4}) {
    cpu::set_num_threads(threads);
    SCOPED_TRACE("threads " + std::to_string(threads));
    expect_reference(randn({130, 90}, 31, DType::Float64), randn({90, 110}, 32, DType::Float64), 1e-12);
    expect_reference(randn({3, 40, 70}, 33, DType::Float64), randn({70, 50}, 34, DType::Float64), 1e-12);
    expect_reference(randn({6, 30, 40}, 35, DType::Float64), randn({6, 40, 20}, 36, DType::Float64), 1e-12);
    expect_reference(randn({2, 100, 80}, 37, DType::Float64), randn({2, 80, 90}, 38, DType::Float64), 1e-12);
    expect_reference(randn({200, 150}, 39), randn({150, 120}, 40), 1e-4);  // float32
    expect_reference(randn({1, 500}, 41), randn({500, 300}, 42), 1e-4);
  }
  cpu::set_num_threads(saved);
}

TEST(MatmulGrad, EveryForm) {
  uint64_t seed = 50;
  for (const auto& [as, bs] : kForms) {
    const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::matmul(a[0], a[1]); };
    expect_grads(f, {randn(as, seed, DType::Float64), randn(bs, seed + 1, DType::Float64)},
                 shape_str(as) + " @ " + shape_str(bs));
    seed += 2;
  }
  // only one side differentiated, and a chain through matmul twice
  const Tensor w = randn({3, 2}, 70, DType::Float64);
  const Fn left = [w](const std::vector<Tensor>& a) -> Value { return ops::matmul(a[0], w); };
  expect_grads(left, {randn({2, 4, 3}, 71, DType::Float64)}, "x @ w");
  const Fn chain = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::tanh(ops::matmul(ops::matmul(a[0], a[1]), a[1] * a[1])));
  };
  expect_grads(chain, {randn({2, 3}, 72, DType::Float64), randn({3, 3}, 73, DType::Float64)}, "chain");
}

TEST(MatmulGrad, HandComputed) {
  // f = sum(A B): dA = 1 B^T (row sums of B in every row), dB = A^T 1 (column sums of A in every column)
  const Tensor a = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = tensor({1, 2, 3, 4, 5, 6}, {3, 2});
  const Fn f = [](const std::vector<Tensor>& x) -> Value { return ops::sum(ops::matmul(x[0], x[1])); };
  const Value g = grad(f, {0, 1})({a, b});
  expect_values(g[0].tensor(), {2, 3}, {3, 7, 11, 3, 7, 11});
  expect_values(g[1].tensor(), {3, 2}, {5, 5, 7, 7, 9, 9});
  // dot product: d(u . v)/du = v
  const Fn dot = [](const std::vector<Tensor>& x) -> Value { return ops::matmul(x[0], x[1]); };
  const Value gd = grad(dot, {0, 1})({tensor({1, 2, 3}, {3}), tensor({4, 5, 6}, {3})});
  expect_values(gd[0].tensor(), {3}, {4, 5, 6});
  expect_values(gd[1].tensor(), {3}, {1, 2, 3});
  // a broadcast batch sums into the shared operand: (4, 2, 3) @ (3, 2) -> dB = sum over the batch
  const Fn batched = [](const std::vector<Tensor>& x) -> Value { return ops::sum(ops::matmul(x[0], x[1])); };
  const Tensor gb = grad(batched, 1)({ones({4, 2, 3}), ones({3, 2})}).tensor();
  expect_values(gb, {3, 2}, {8, 8, 8, 8, 8, 8});
}

TEST(MatmulErrors, ShapesAreNamed) {
  expect_error<ShapeError>([] { ops::matmul(ones({2, 3}), ones({4, 5})); },
                           {"For 'matmul'", "inner dimensions", "(2, 3)", "(4, 5)"});
  expect_error<ShapeError>([] { ops::matmul(ones({3}), ones({4})); }, {"(3,)", "(4,)"});
  expect_error<ShapeError>([] { ops::matmul(ones({2, 5, 3}), ones({2})); }, {"(2, 5, 3)", "(2,)"});
  expect_error<ShapeError>([] { ops::matmul(scalar(2.0), ones({3})); }, {"For 'matmul'", "at least one dimension"});
  expect_error<ShapeError>([] { ops::matmul(ones({3, 3}), scalar(1.0)); }, {"'b' of shape ()"});
  expect_error<ShapeError>([] { ops::matmul(ones({2, 3, 4}), ones({5, 4, 2})); },
                           {"batch dimensions", "(2, 3, 4)", "(5, 4, 2)"});
  expect_error<ValueError>([] { call_op("matmul", {ones({2, 2})}); }, {"'b'"});
}

// ---- matmul_t: the internal GEMM of matmul's bprop (transposes as flags) ------------------------------------

namespace {

Tensor swap_last2(const Tensor& t) {
  IntList perm;
  for (int64_t i = 0; i < t.dim(); ++i) perm.push_back(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return ops::transpose(t, perm);
}

Tensor matmul_t(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  return call_op("matmul_t", {a, b}, {{"transpose_a", ta}, {"transpose_b", tb}});
}

}  // namespace

TEST(MatmulT, EqualsMatmulOfExplicitTransposes) {
  const Shape a_shapes[] = {{3, 4}, {2, 3, 4}, {1, 3, 4}, {3, 4}};
  const Shape b_shapes[] = {{4, 5}, {2, 4, 5}, {3, 4, 5}, {2, 2, 4, 5}};
  for (size_t s = 0; s < std::size(a_shapes); ++s) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        // Stored operands: transposed copies of the logical (.., n, k) and (.., k, m).
        const Tensor a = randn(a_shapes[s], 10 + s, DType::Float64), b = randn(b_shapes[s], 20 + s, DType::Float64);
        const Tensor sa = ta ? swap_last2(a).clone() : a, sb = tb ? swap_last2(b).clone() : b;
        const Tensor want = ops::matmul(a, b);
        const Tensor got = matmul_t(sa, sb, ta, tb);
        expect_values(got, want.shape(), want.to_vector<double>(), 1e-12);
      }
    }
  }
  // Large enough for the BLAS path, float32.
  const Tensor a = randn({130, 70}, 1), b = randn({90, 70}, 2);
  const Tensor want = ops::matmul(a, swap_last2(b));
  expect_values(matmul_t(a, b, false, true), want.shape(), want.to_vector<double>(), 1e-4);
}

TEST(MatmulT, GradientsToSecondOrderForEveryTransposeAndBroadcast) {
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      const Fn f = [ta, tb](const std::vector<Tensor>& x) -> Value { return matmul_t(x[0], x[1], ta, tb); };
      const Shape a = ta ? Shape{2, 4, 3} : Shape{2, 3, 4}, b = tb ? Shape{1, 5, 4} : Shape{1, 4, 5};
      expect_grads(f, {randn(a, 3, DType::Float64), randn(b, 4, DType::Float64)},
                   "matmul_t ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
    }
  }
}

TEST(MatmulT, ErrorsNameTheArgumentsAndTransposes) {
  const Tensor a = randn({3, 4}, 1), b = randn({3, 5}, 2);
  expect_error<ShapeError>([&] { matmul_t(a, b, false, false); }, {"matmul_t", "'a' of shape (3, 4)", "(3, 5)", "4 != 3"});
  expect_error<ShapeError>([&] { matmul_t(randn({4}, 1), b, false, false); }, {"matmul_t", "at least two dimensions"});
  expect_error<DTypeError>([&] { matmul_t(full({3, 3}, 1, DType::Int32), a, true, false); }, {"matmul_t", "'a'", "int32"});
  EXPECT_NO_THROW(matmul_t(a, b, true, false));
}

TEST(MatmulGrad, BackwardRunsNoTransposeCopies) {
  // dA = dout B^T and dB = A^T dout run as matmul_t with flags; no transpose op is recorded in between.
  const Tensor a = randn({8, 6}, 1), b = randn({6, 7}, 2);
  const Fn f = [](const std::vector<Tensor>& x) -> Value { return ops::sum(ops::matmul(x[0], x[1])); };
  const std::string graph = export_grad_graph(f, {a, b});
  EXPECT_NE(graph.find("matmul_t"), std::string::npos);
  EXPECT_EQ(graph.find("\"transpose\""), std::string::npos) << graph;
}
