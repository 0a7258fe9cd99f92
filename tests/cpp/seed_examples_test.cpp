// The seed examples: the three ways to define a backward operator, and MindSpore's functional-grad examples.
#include <gtest/gtest.h>

#include <cmath>

#include "bprop/bprop.h"
#include "seed_examples.h"

using namespace bprop;

TEST(Seed, CubeToThirdOrder) {
  const Tensor x = scalar(2.0);
  EXPECT_DOUBLE_EQ(examples::cube({x}).tensor().item(), 8.0);
  const Fn d1 = [](const std::vector<Tensor>& a) { return grad(examples::cube)(a); };
  const Fn d2 = [d1](const std::vector<Tensor>& a) { return grad(d1)(a); };
  const Fn d3 = [d2](const std::vector<Tensor>& a) { return grad(d2)(a); };
  EXPECT_DOUBLE_EQ(d1({x}).tensor().item(), 12.0);
  EXPECT_DOUBLE_EQ(d2({x}).tensor().item(), 12.0);
  EXPECT_DOUBLE_EQ(d3({x}).tensor().item(), 6.0);
}

TEST(Seed, CustomBpropCell) {
  examples::MySquare cell;
  const Tensor x = scalar(3.0);
  EXPECT_DOUBLE_EQ(cell(x).item(), 9.0);
  const Fn f = [&cell](const std::vector<Tensor>& a) -> Value { return cell(a[0]); };
  EXPECT_DOUBLE_EQ(grad(f)({x}).tensor().item(), 6.0);
  EXPECT_EQ(cell.bprop_calls, 1);  // the custom bprop ran, not automatic differentiation of construct
}

TEST(Seed, CustomBpropCellIsUsedEvenWhenItDisagreesWithConstruct) {
  // A cell whose bprop deliberately differs from d(construct): grad must follow the bprop.
  struct Scaled : Cell {
    Value construct(const std::vector<Tensor>& in) override { return in[0] * in[0]; }
    bool has_bprop() const override { return true; }
    std::vector<Tensor> bprop(const std::vector<Tensor>&, const Tensor&, const Tensor& dout) override {
      return {dout * 10.0};
    }
  } cell;
  const Fn f = [&cell](const std::vector<Tensor>& a) -> Value { return cell(a[0]); };
  EXPECT_DOUBLE_EQ(grad(f)({scalar(3.0)}).tensor().item(), 10.0);
}

TEST(Seed, CustomBpropIsDifferentiableAgain) {
  examples::MySquare cell;  // bprop 2 x dout -> second derivative 2
  const Fn f = [&cell](const std::vector<Tensor>& a) -> Value { return cell(a[0]); };
  const Fn df = [f](const std::vector<Tensor>& a) { return grad(f)(a); };
  EXPECT_DOUBLE_EQ(grad(df)({scalar(3.0)}).tensor().item(), 2.0);
}

TEST(Seed, RegisteredPrimitive) {
  examples::register_my_square_prim();
  const Tensor x = scalar(4.0);
  EXPECT_DOUBLE_EQ(call_op("my_square_prim", {x}).item(), 16.0);
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return call_op("my_square_prim", {a[0]}); };
  EXPECT_DOUBLE_EQ(grad(f)({x}).tensor().item(), 8.0);
  const Fn df = [f](const std::vector<Tensor>& a) { return grad(f)(a); };
  EXPECT_DOUBLE_EQ(grad(df)({x}).tensor().item(), 2.0);  // its bprop is written with ops
  // Registering the same name twice is an error, not a silent replacement.
  EXPECT_THROW(examples::register_my_square_prim(), ValueError);
}

namespace {
// MindSpore's example: x = ones(5), y = zeros(3), w (5, 3), b (3,); loss = bce_with_logits(x @ w + b, y, 1, 1).
struct LinearCase {
  Tensor x = ones({5}), y = zeros({3});
  Tensor w = randn({5, 3}, 7), b = randn({3}, 8);
  std::vector<Tensor> args() const { return {x, y, w, b}; }
  // d loss / d z = sigmoid(z) / 3 (y = 0, unit weights, mean over 3)
  std::vector<double> dz() const {
    const auto z = (ops::matmul(x, w) + b).to_vector<double>();
    std::vector<double> out;
    for (double v : z) out.push_back(1.0 / (1.0 + std::exp(-v)) / 3.0);
    return out;
  }
};
}  // namespace

TEST(Seed, LinearBceGradPosition23) {
  LinearCase c;
  const Value g = grad(examples::linear_bce, {2, 3})(c.args());
  ASSERT_EQ(g.size(), 2u);
  const auto dw = g[0].tensor().to_vector<double>(), db = g[1].tensor().to_vector<double>();
  const auto dz = c.dz();
  ASSERT_EQ(dw.size(), 15u);
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(dw[i * 3 + j], dz[j], 1e-6);  // x is ones: every row of dw is dz
  }
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(db[j], dz[j], 1e-6);
}

TEST(Seed, StopGradientGivesExactZeros) {
  LinearCase c;
  const Value g = grad(examples::linear_bce_stopped, {2, 3})(c.args());
  for (const Tensor& t : g.flatten()) {
    for (double v : t.to_vector<double>()) EXPECT_EQ(v, 0.0);
  }
  EXPECT_EQ(g[0].tensor().shape(), (Shape{5, 3}));
  EXPECT_EQ(g[1].tensor().shape(), (Shape{3}));
}

TEST(Seed, HasAuxReturnsLogits) {
  LinearCase c;
  const Value r = grad(examples::linear_bce_with_logits, {2, 3}, {}, true)(c.args());
  ASSERT_EQ(r.size(), 2u);  // (grads, aux)
  const Tensor logits = r[1].tensor();
  const auto expected = (ops::matmul(c.x, c.w) + c.b).to_vector<double>();
  EXPECT_EQ(logits.to_vector<double>(), expected);
  const auto dz = c.dz();
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(r[0][1].tensor().to_vector<double>()[j], dz[j], 1e-6);
}
