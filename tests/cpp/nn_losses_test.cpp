// Loss cells: values against PyTorch 1.13 (torch.nn losses, float64, same inputs), gradients, argument errors.
#include <gtest/gtest.h>

#include "bprop/bprop.h"
#include "nn_test_util.h"

using namespace bprop;
using namespace nntest;

namespace {
Tensor Z() { return f64({0.5, -1.2, 2.0, -0.3, 0.8, -2.5}, {2, 3}); }
Tensor T() { return f64({1.0, 0.0, 1.0, 0.0, 1.0, 0.5}, {2, 3}); }
Tensor W() { return f64({1.0, 2.0, 0.5}, {3}); }
Tensor PW() { return f64({3.0, 1.0, 0.25}, {3}); }
Tensor LG() { return f64({0.2, -1.0, 0.5, 1.5, 0.3, -0.7, 0.0, 0.1, 0.2, -0.4, 0.9, 1.1}, {4, 3}); }
Tensor A() { return f64({0.5, -1.0, 2.0, 0.3}, {4}); }
Tensor B() { return f64({0.0, 1.0, 0.5, 0.2}, {4}); }
}  // namespace

TEST(NnLosses, BinaryCrossEntropyMatchesTorch) {
  nn::BCEWithLogitsLoss mean("mean", W(), PW());
  EXPECT_NEAR(mean(Z(), T()).item(), 0.5736869178212097, 1e-12);
  expect_values(nn::BCEWithLogitsLoss("none", W(), PW())(Z(), T()), {2, 3},
                {1.42223095254032, 0.5265649346760628, 0.015866001380371576, 0.5543552444685269, 0.7422013318955554,
                 0.1809030419664217});
  EXPECT_NEAR(nn::BCELoss(W(), "sum")(ops::sigmoid(Z()), T()).item(), 3.0251073678880127, 1e-12);
  EXPECT_EQ(mean.reduction(), "mean");
}

TEST(NnLosses, ClassificationLossesMatchTorch) {
  const Tensor labels = tensor_i32({0, 2, -100, 1}, {4});
  EXPECT_NEAR(nn::CrossEntropyLoss(W(), -100, "mean", 0.1)(LG(), labels).item(), 1.1885554116912085, 1e-12);
  const Tensor l2 = tensor_i32({0, 2, 1, 1}, {4});
  EXPECT_NEAR(nn::CrossEntropyLoss({}, -100, "sum")(LG(), l2).item(), 5.535766656209764, 1e-12);
  EXPECT_NEAR(nn::NLLLoss(W(), 2)(ops::log_softmax(LG(), 1), l2).item(), 1.0013131664381318, 1e-12);
}

TEST(NnLosses, RegressionLossesMatchTorch) {
  EXPECT_NEAR(nn::MSELoss()(A(), B()).item(), 1.6275, 1e-12);
  EXPECT_NEAR(nn::L1Loss("sum")(A(), B()).item(), 4.1, 1e-12);
  EXPECT_NEAR(nn::SmoothL1Loss(0.5)(A(), B()).item(), 0.815, 1e-12);
  EXPECT_EQ(nn::MSELoss("none")(A(), B()).shape(), (Shape{4}));
}

TEST(NnLosses, DifferentiableThroughTheCell) {
  nn::CrossEntropyLoss ce(W(), -100, "mean", 0.1);
  const Tensor labels = tensor_i32({0, 2, -100, 1}, {4});
  const Fn f = [&](const std::vector<Tensor>& a) -> Value { return ce(a[0], labels); };
  const CheckResult c1 = gradcheck(f, {LG()});
  EXPECT_TRUE(c1.ok) << c1.message;
  const CheckResult c2 = gradgradcheck(f, {LG()});
  EXPECT_TRUE(c2.ok) << c2.message;
  nn::BCEWithLogitsLoss bce("sum", W(), PW());
  const Fn g = [&](const std::vector<Tensor>& a) -> Value { return bce(a[0], a[1]); };
  const CheckResult c3 = gradcheck(g, {Z(), T()});
  EXPECT_TRUE(c3.ok) << c3.message;
}

TEST(NnLosses, ArgumentErrors) {
  expect_error<ValueError>([] { nn::MSELoss("average"); }, {"For 'MSELoss'", "'average'"});
  expect_error<ValueError>([] { nn::CrossEntropyLoss({}, -100, "mean", 1.5); }, {"label_smoothing"});
  expect_error<ValueError>([] { nn::SmoothL1Loss(-1.0); }, {"beta"});
  nn::L1Loss l1;
  expect_error<ValueError>([&] { l1(std::vector<Tensor>{A()}); }, {"For 'L1Loss'", "2 input tensors"});
  // Shape errors come from the op, naming it.
  expect_error<ShapeError>([&] { nn::MSELoss()(A(), Z()); }, {"mse_loss"});
}
