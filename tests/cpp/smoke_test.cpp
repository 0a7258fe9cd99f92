#include <gtest/gtest.h>

#include "bprop/bprop.h"

using namespace bprop;

TEST(Smoke, CubeGrads) {
  Fn cube = [](const std::vector<Tensor>& a) -> Value { return a[0] * a[0] * a[0]; };
  Tensor x = scalar(2.0);
  EXPECT_DOUBLE_EQ(cube({x}).tensor().item(), 8.0);
  GradFn g1 = grad(cube);
  EXPECT_DOUBLE_EQ(g1({x}).tensor().item(), 12.0);
  Fn d1 = [cube](const std::vector<Tensor>& a) -> Value { return grad(cube)(a); };
  EXPECT_DOUBLE_EQ(grad(d1)({x}).tensor().item(), 12.0);
  Fn d2 = [d1](const std::vector<Tensor>& a) -> Value { return grad(d1)(a); };
  EXPECT_DOUBLE_EQ(grad(d2)({x}).tensor().item(), 6.0);
}
