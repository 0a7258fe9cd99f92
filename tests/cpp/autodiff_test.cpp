// The functional autodiff API: grad / value_and_grad semantics, nesting, vjp / jvp / Jacobians, checks.
#include <gtest/gtest.h>

#include <cmath>

#include "bprop/bprop.h"
#include "primitive_test_util.h"

using namespace bprop;

namespace {
std::vector<double> vals(const Tensor& t) { return t.to_vector<double>(); }
Tensor vec(std::vector<double> v) { return tensor(v, {static_cast<int64_t>(v.size())}, DType::Float64); }

// Registers a float64 x^2 primitive with the given (possibly wrong) bprop.
void register_square_with(const std::string& name, decltype(PrimitiveDef::bprop) bprop) {
  PrimitiveDef def = primtest::elementwise_float64(name, [](double x) { return x * x; });
  def.bprop = std::move(bprop);
  register_primitive(def);
}
}  // namespace

TEST(Grad, PerturbationConfusion) {
  // d/dx [x * d/dy (x + y)] at x = 1, y = 1 must be 1: the inner derivative is the constant 1, not x-dependent.
  const Fn outer = [](const std::vector<Tensor>& a) -> Value {
    const Tensor x = a[0];
    const Fn inner = [x](const std::vector<Tensor>& b) -> Value { return x + b[0]; };
    return x * grad(inner)({a[0]}).tensor();
  };
  EXPECT_DOUBLE_EQ(grad(outer)({scalar(1.0)}).tensor().item(), 1.0);
}

TEST(Grad, NestedLevelsOnTheSameTensorStayApart) {
  // f(x) = x * grad(y -> x * y^2)(x) = x * 2 x x = 2 x^3 -> f'(x) = 6 x^2 = 24 at 2.
  const Fn outer = [](const std::vector<Tensor>& a) -> Value {
    const Tensor x = a[0];
    const Fn inner = [x](const std::vector<Tensor>& b) -> Value { return x * b[0] * b[0]; };
    return x * grad(inner)({x}).tensor();
  };
  EXPECT_DOUBLE_EQ(grad(outer)({scalar(2.0)}).tensor().item(), 24.0);
}

TEST(Grad, PositionListReturnsTupleAndIntReturnsTensor) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0] * a[1]); };
  const std::vector<Tensor> args = {vec({1, 2}), vec({3, 4})};
  const Value one = grad(f, 1)(args);
  ASSERT_TRUE(one.is_tensor());
  EXPECT_EQ(vals(one.tensor()), (std::vector<double>{1, 2}));
  const Value both = grad(f, {0, 1})(args);
  ASSERT_FALSE(both.is_tensor());
  EXPECT_EQ(vals(both[0].tensor()), (std::vector<double>{3, 4}));
  EXPECT_EQ(vals(both[1].tensor()), (std::vector<double>{1, 2}));
  const Value single_list = grad(f, {1})(args);
  EXPECT_FALSE(single_list.is_tensor());
  EXPECT_EQ(single_list.size(), 1u);
}

TEST(Grad, NegativePositionCountsFromTheEnd) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0] * a[1]); };
  EXPECT_EQ(vals(grad(f, -1)({vec({1, 2}), vec({3, 4})}).tensor()), (std::vector<double>{1, 2}));
}

TEST(Grad, UnusedInputGetsZerosOfItsShape) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0] * 2.0); };
  const Value g = grad(f, {0, 1})({vec({1, 2}), zeros({2, 3}, DType::Float64)});
  EXPECT_EQ(g[1].tensor().shape(), (Shape{2, 3}));
  for (double v : vals(g[1].tensor())) EXPECT_EQ(v, 0.0);
}

TEST(Grad, SensIsTheCotangent) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return a[0] * a[0]; };
  const Value g = grad(f)({vec({1, 2, 3})}, vec({1, 0, -1}));
  EXPECT_EQ(vals(g.tensor()), (std::vector<double>{2, 0, -6}));
}

TEST(Grad, ValueAndGrad) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::square(a[0])); };
  const Value r = value_and_grad(f)({vec({1, 2})});
  EXPECT_DOUBLE_EQ(r[0].tensor().item(), 5.0);
  EXPECT_EQ(vals(r[1].tensor()), (std::vector<double>{2, 4}));
}

TEST(Grad, WeightsOnlyAndPositionsWithWeights) {
  Parameter w(vec({1, 2}), "w"), b(scalar(0.5, DType::Float64), "b");
  const Fn f = [&](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0] * w) + b; };
  const Value gw = grad(f, nullptr, {w, b})({vec({3, 4})});
  ASSERT_EQ(gw.size(), 2u);
  EXPECT_EQ(vals(gw[0].tensor()), (std::vector<double>{3, 4}));
  EXPECT_DOUBLE_EQ(gw[1].tensor().item(), 1.0);
  const Value both = grad(f, 0, {w})({vec({3, 4})});
  EXPECT_EQ(vals(both[0].tensor()), (std::vector<double>{1, 2}));  // d/dx
  EXPECT_EQ(vals(both[1][0].tensor()), (std::vector<double>{3, 4}));  // d/dw
  EXPECT_TRUE(w.impl()->trace.empty());  // the grad level left no trace on the parameter
}

TEST(Grad, FrozenParameterGetsZeros) {
  Parameter w(vec({1, 2}), "w", /*requires_grad=*/false);
  const Fn f = [&](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0] * w); };
  const Value g = grad(f, nullptr, {w})({vec({3, 4})});
  EXPECT_EQ(vals(g[0].tensor()), (std::vector<double>{0, 0}));
}

TEST(Grad, HasAuxValueAndGrad) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    const Tensor y = a[0] * 3.0;
    return Value{ops::sum(y), y, a[0]};
  };
  const Value r = value_and_grad(f, 0, {}, true)({vec({1, 2})});
  EXPECT_DOUBLE_EQ(r[0][0].tensor().item(), 9.0);
  EXPECT_EQ(vals(r[0][1].tensor()), (std::vector<double>{3, 6}));
  EXPECT_EQ(vals(r[1].tensor()), (std::vector<double>{3, 3}));
  const Value g = grad(f, 0, {}, true)({vec({1, 2})});
  EXPECT_EQ(g[1].size(), 2u);  // two aux values stay a tuple
}

TEST(Grad, FloatMixOfFloat32AndFloat64GivesGradsInInputDtype) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0] * a[1]); };
  const Value g = grad(f, {0, 1})({ones({2}, DType::Float32), full({2}, 2.0, DType::Float64)});
  EXPECT_EQ(g[0].tensor().dtype(), DType::Float32);
  EXPECT_EQ(g[1].tensor().dtype(), DType::Float64);
  EXPECT_EQ(vals(g[0].tensor()), (std::vector<double>{2, 2}));
}

TEST(Grad, BroadcastGradientsAreSummedToTheInputShape) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0] * a[1]); };
  const Value g = grad(f, {0, 1})({ones({2, 3}, DType::Float64), vec({1, 2, 3})});
  EXPECT_EQ(g[1].tensor().shape(), (Shape{3}));
  EXPECT_EQ(vals(g[1].tensor()), (std::vector<double>{2, 2, 2}));
}

TEST(Functional, VjpJvpJacobiansHessian) {
  // f(x) = [x0 * x1, sin(x0)]  ->  J = [[x1, x0], [cos x0, 0]]
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    const Tensor x0 = ops::slice(a[0], {0}, {1}), x1 = ops::slice(a[0], {1}, {1});
    return ops::concat({x0 * x1, ops::sin(x0)}, 0);
  };
  const Tensor x = vec({0.5, 2.0});
  const double c = std::cos(0.5);
  const auto [out, vj] = vjp(f, {x}, vec({1, 1}));
  EXPECT_NEAR(vals(out)[0], 1.0, 1e-12);
  EXPECT_NEAR(vals(vj[0])[0], 2.0 + c, 1e-12);
  EXPECT_NEAR(vals(vj[0])[1], 0.5, 1e-12);
  const auto [out2, jv] = jvp(f, {x}, {vec({1, 0})});
  EXPECT_NEAR(vals(jv)[0], 2.0, 1e-12);
  EXPECT_NEAR(vals(jv)[1], c, 1e-12);
  const std::vector<double> want = {2.0, 0.5, c, 0.0};
  const Tensor jr = jacrev(f)({x}), jf = jacfwd(f)({x});
  EXPECT_EQ(jr.shape(), (Shape{2, 2}));
  EXPECT_EQ(jf.shape(), (Shape{2, 2}));
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(vals(jr)[i], want[i], 1e-12);
    EXPECT_NEAR(vals(jf)[i], want[i], 1e-12);
  }
  // h(x) = x0^2 x1 + x1^3 -> H = [[2 x1, 2 x0], [2 x0, 6 x1]]
  const Fn h = [](const std::vector<Tensor>& a) -> Value {
    const Tensor x0 = ops::slice(a[0], {0}, {1}), x1 = ops::slice(a[0], {1}, {1});
    return ops::sum(x0 * x0 * x1 + x1 * x1 * x1);
  };
  const Tensor H = hessian(h)({x});
  EXPECT_EQ(H.shape(), (Shape{2, 2}));
  const std::vector<double> hw = {4.0, 1.0, 1.0, 12.0};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(vals(H)[i], hw[i], 1e-10);
}

TEST(Check, GradcheckCatchesAWrongBprop) {
  register_square_with("wrong_square", [](const std::vector<Tensor>& in, const Tensor&, const Tensor& dout) {
    return std::vector<Tensor>{in[0] * 3.0 * dout};  // wrong on purpose: should be 2 x
  });
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return call_op("wrong_square", {a[0]}); };
  const CheckResult r = gradcheck(f, {vec({1.0, 2.0})});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("element 1"), std::string::npos) << r.message;  // the worst element is named
  const Fn good = [](const std::vector<Tensor>& a) -> Value { return a[0] * a[0]; };
  EXPECT_TRUE(gradcheck(good, {vec({1.0, 2.0})}).ok);
  EXPECT_TRUE(gradgradcheck(good, {vec({1.0, 2.0})}).ok);
}

TEST(Check, GradgradcheckCatchesAWrongSecondOrder) {
  // First order right (2 x dout) but written so its own derivative is wrong: dout * stop_gradient(2x).
  register_square_with("square_first_order_only", [](const std::vector<Tensor>& in, const Tensor&, const Tensor& dout) {
    return std::vector<Tensor>{ops::stop_gradient(in[0] * 2.0) * dout};
  });
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return call_op("square_first_order_only", {a[0]}); };
  EXPECT_TRUE(gradcheck(f, {vec({1.0, 2.0})}).ok);
  EXPECT_FALSE(gradgradcheck(f, {vec({1.0, 2.0})}).ok);
}

TEST(Tape, GraphIsReleasedAfterGrad) {
  const auto before = memory_stats();
  {
    const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::exp(a[0]) * a[0]); };
    for (int i = 0; i < 100; ++i) value_and_grad(f)({randn({64}, static_cast<uint64_t>(i))});
  }
  const auto after = memory_stats();
  EXPECT_EQ(after.storages, before.storages);
  EXPECT_EQ(after.bytes, before.bytes);
}

TEST(Tape, DeepChainsNeitherRecurseNorLeak) {
  // 300,000 recorded ops in one chain: the backward walk and the release of the graph are iterative.
  const auto before = memory_stats();
  {
    const Fn f = [](const std::vector<Tensor>& a) -> Value {
      Tensor y = a[0];
      for (int i = 0; i < 300000; ++i) y = y + a[0];
      return y;
    };
    const Value v = value_and_grad(f)({scalar(0.5, DType::Float64)});
    EXPECT_DOUBLE_EQ(v[0].tensor().item(), 150000.5);
    EXPECT_DOUBLE_EQ(v[1].tensor().item(), 300001.0);
  }
  EXPECT_EQ(memory_stats().storages, before.storages);
}
