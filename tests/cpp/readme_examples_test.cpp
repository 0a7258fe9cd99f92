// The README's C++ examples, compiled and run, so the README stays true.
#include <gtest/gtest.h>

#include <cmath>

#include "bprop/bprop.h"

using namespace bprop;

TEST(Readme, FunctionalApi) {
  Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::sin(a[0]) * a[1]); };
  Tensor x = randn({3}, /*seed=*/1), y = ones({3});
  Value g = grad(f, {0, 1})({x, y});
  Value vg = value_and_grad(f)({x, y});
  Tensor d2 = grad([f](const std::vector<Tensor>& a) { return grad(f)(a); })({x, y}).tensor();
  const auto xs = x.to_vector<double>(), gx = g[0].tensor().to_vector<double>(), gy = g[1].tensor().to_vector<double>();
  const auto second = d2.to_vector<double>();
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(gx[i], std::cos(xs[i]), 1e-6);
    EXPECT_NEAR(gy[i], std::sin(xs[i]), 1e-6);
    EXPECT_NEAR(second[i], -std::sin(xs[i]), 1e-6);
  }
  EXPECT_EQ(vg.size(), 2u);
}

namespace {
struct Net : Cell {
  std::shared_ptr<nn::Dense> fc1 = register_cell("fc1", std::make_shared<nn::Dense>(2, 64, nn::DenseOptions{.activation = "relu"}));
  std::shared_ptr<nn::Dense> fc2 = register_cell("fc2", std::make_shared<nn::Dense>(64, 2));
  Value construct(const std::vector<Tensor>& in) override { return (*fc2)((*fc1)(in[0])); }
};
}  // namespace

TEST(Readme, NnCell) {
  Net net;
  EXPECT_EQ(net.trainable_params().size(), 4u);
  EXPECT_EQ(net(ones({5, 2})).shape(), (Shape{5, 2}));
  EXPECT_EQ(net.parameters_and_names()[0].first, "fc1.weight");
}
