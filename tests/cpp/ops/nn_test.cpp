// Neural-network ops: softmax, log_softmax and the losses. Expected values were computed with PyTorch 1.13
// (torch.nn.functional, float64) on the inputs below and copied here; gradients are checked against torch
// where torch differentiates, and everywhere (targets and weights too) with gradcheck and gradgradcheck.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "bprop/bprop.h"
#include "expectations.h"

using namespace bprop;

namespace {

using expectations::expect_op_error;

Tensor f64(std::vector<double> v, Shape s) { return tensor(v, s, DType::Float64); }
Tensor i32(std::vector<int32_t> v, Shape s) { return tensor_i32(v, s); }

// The shared inputs (the same numbers were given to torch).
Tensor X() { return f64({0.2, -1.3, 0.8, 2.1, 1.5, 0.3, -0.7, 0.0, -0.4, 0.9, 1.1, -2.0}, {3, 4}); }
Tensor Y() { return i32({3, 0, 1}, {3}); }
Tensor W() { return f64({0.5, 1.0, 2.0, 1.5}, {4}); }
Tensor T() { return f64({0.0, 1.0, 0.3, 0.8, 1.0, 0.0, 0.5, 0.1, 0.9, 0.2, 1.0, 0.0}, {3, 4}); }
Tensor P() { return f64({0.1, 0.7, 0.45, 0.9, 0.6, 0.05, 0.3, 0.2, 0.85, 0.5, 0.99, 0.35}, {3, 4}); }
Tensor PW() { return f64({2.0, 0.5, 1.0, 3.0}, {4}); }
Tensor X3() { return f64({0.1, -0.2, 0.5, 1.0, -1.0, 0.3, 2.0, 0.0, -0.5, 0.4, 0.7, -0.9}, {2, 3, 2}); }
Tensor Y3() { return i32({2, 0, 1, -100}, {2, 2}); }
Tensor Yb() { return f64({0.5, -1.0, 2.0, 0.25}, {4}); }

void expect_values(const Tensor& t, const Shape& shape, const std::vector<double>& expected, double tol = 1e-12) {
  ASSERT_EQ(t.shape(), shape);
  const std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], tol * std::max(1.0, std::abs(expected[i]))) << "element " << i;
  }
}

// First and second order finite-difference checks w.r.t. every float input.
void check_grads(const Fn& fn, const std::vector<Tensor>& inputs) {
  const CheckResult first = gradcheck(fn, inputs);
  EXPECT_TRUE(first.ok) << first.message;
  const CheckResult second = gradgradcheck(fn, inputs);
  EXPECT_TRUE(second.ok) << second.message;
}

const std::vector<std::string> kReductions = {"mean", "sum", "none"};

}  // namespace

// ---- softmax / log_softmax --------------------------------------------------------------------------------

TEST(Softmax, ValuesMatchTorch) {
  expect_values(ops::softmax(X()), {3, 4},
                {0.10276284693434821, 0.022929490493769692, 0.18724611538072808, 0.6870615471911541,
                 0.6115730922476276, 0.1842022755462327, 0.06776423019045609, 0.13646040201568357,
                 0.10691891254844169, 0.39231720951947047, 0.4791773217807825, 0.021586556151305444});
  expect_values(ops::log_softmax(X(), 0), {3, 4},
                {-1.6521349422893397, -2.706585523908016, -0.9450682455812944, -0.13017623607428305,
                 -0.35213494228933956, -1.106585523908016, -2.4450682455812944, -2.230176236074283,
                 -2.2521349422893393, -0.506585523908016, -0.6450682455812944, -4.230176236074283});
  expect_values(ops::softmax(X3(), 1), {2, 3, 2},
                {0.3540204246440453, 0.1675367915149046, 0.5281364129534369, 0.5562417366896195,
                 0.11784316240251766, 0.2762214717954759, 0.7382161554162511, 0.34501861261671235,
                 0.06059647210148283, 0.5147072874475375, 0.2011873724822662, 0.1402740999357503});
  expect_values(ops::log_softmax(X3(), -2), {2, 3, 2},
                {-1.038400670778164, -1.7865523010014774, -0.638400670778164, -0.5865523010014776,
                 -2.138400670778164, -1.2865523010014774, -0.30351860374864204, -1.0641569137923466,
                 -2.803518603748642, -0.6641569137923465, -1.603518603748642, -1.9641569137923467});
}

TEST(Softmax, Float32AndDtypes) {
  const Tensor x = convert(X(), DType::Float32);
  const Tensor s = ops::softmax(x);
  EXPECT_EQ(s.dtype(), DType::Float32);
  expect_values(s, {3, 4},
                {0.10276284693434821, 0.022929490493769692, 0.18724611538072808, 0.6870615471911541,
                 0.6115730922476276, 0.1842022755462327, 0.06776423019045609, 0.13646040201568357,
                 0.10691891254844169, 0.39231720951947047, 0.4791773217807825, 0.021586556151305444},
                1e-6);
  EXPECT_EQ(ops::log_softmax(x, 0).dtype(), DType::Float32);
}

TEST(Softmax, ScalarAndExtremeValues) {
  expect_values(ops::softmax(scalar(3.0, DType::Float64)), {}, {1.0});
  expect_values(ops::log_softmax(scalar(3.0, DType::Float64), 0), {}, {0.0});
  // Stable: no overflow for large logits.
  expect_values(ops::softmax(f64({1000.0, 0.0, -1000.0}, {3})), {3}, {1.0, 0.0, 0.0});
  expect_values(ops::log_softmax(f64({1000.0, 0.0}, {2})), {2}, {0.0, -1000.0});
  expect_values(ops::softmax(tensor({1000.0, 1000.0}, {2}, DType::Float32)), {2}, {0.5, 0.5}, 1e-7);
  // Empty tensors pass through.
  EXPECT_EQ(ops::softmax(zeros({0, 3}, DType::Float64)).shape(), (Shape{0, 3}));
  EXPECT_EQ(ops::log_softmax(zeros({2, 0}, DType::Float64)).shape(), (Shape{2, 0}));
}

// Large inputs take the parallel paths (rows of the last axis; blocks of columns for another axis).
TEST(Softmax, LargeInputsMatchNaive) {
  const Tensor a = randn({300, 257}, 7, DType::Float64);
  const std::vector<double> av = a.to_vector<double>();
  const std::vector<double> s = ops::softmax(a).to_vector<double>();
  const std::vector<double> l = ops::log_softmax(a).to_vector<double>();
  for (int64_t r = 0; r < 300; ++r) {
    double sum = 0.0;
    for (int64_t k = 0; k < 257; ++k) sum += std::exp(av[static_cast<size_t>(r * 257 + k)]);
    for (int64_t k = 0; k < 257; ++k) {
      const size_t i = static_cast<size_t>(r * 257 + k);
      ASSERT_NEAR(s[i], std::exp(av[i]) / sum, 1e-14);
      ASSERT_NEAR(l[i], av[i] - std::log(sum), 1e-12);
    }
  }
  const Tensor b = randn({129, 700}, 8, DType::Float32);  // softmax over axis 0: 3 column blocks
  const std::vector<double> bv = b.to_vector<double>();
  const std::vector<double> s0 = ops::softmax(b, 0).to_vector<double>();
  const std::vector<double> l0 = ops::log_softmax(b, 0).to_vector<double>();
  for (int64_t j = 0; j < 700; ++j) {
    double sum = 0.0;
    for (int64_t k = 0; k < 129; ++k) sum += std::exp(bv[static_cast<size_t>(k * 700 + j)]);
    for (int64_t k = 0; k < 129; ++k) {
      const size_t i = static_cast<size_t>(k * 700 + j);
      ASSERT_NEAR(s0[i], std::exp(bv[i]) / sum, 1e-6);
      ASSERT_NEAR(l0[i], bv[i] - std::log(sum), 1e-5);
    }
  }
}

TEST(Softmax, GradientsFirstAndSecondOrder) {
  for (int64_t axis : {-1, 0}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    check_grads([axis](const std::vector<Tensor>& a) -> Value { return ops::softmax(a[0], axis); }, {X()});
    check_grads([axis](const std::vector<Tensor>& a) -> Value { return ops::log_softmax(a[0], axis); }, {X()});
  }
  check_grads([](const std::vector<Tensor>& a) -> Value { return ops::softmax(a[0], 1); }, {X3()});
  check_grads([](const std::vector<Tensor>& a) -> Value { return ops::log_softmax(a[0], 1); }, {X3()});
  check_grads([](const std::vector<Tensor>& a) -> Value { return ops::softmax(a[0]); }, {scalar(0.3, DType::Float64)});
  // Composed: the gradient of softmax feeding log_softmax.
  check_grads([](const std::vector<Tensor>& a) -> Value { return ops::log_softmax(ops::softmax(a[0], 0) * 3.0); },
              {X()});
}

TEST(Softmax, Errors) {
  expect_op_error<DTypeError>([] { ops::softmax(i32({1, 2}, {2})); }, "softmax", "int32");
  expect_op_error<DTypeError>([] { ops::log_softmax(i32({1, 2}, {2})); }, "log_softmax", "int32");
  expect_op_error<ShapeError>([] { ops::softmax(X(), 2); }, "softmax", "axis");
  expect_op_error<ShapeError>([] { ops::log_softmax(X(), -3); }, "log_softmax", "axis");
}

// ---- values against torch --------------------------------------------------------------------------------

struct LossCase {
  std::string name;
  std::function<Tensor(const std::string& reduction)> run;
  Shape none_shape;
  std::vector<double> mean, sum, none;
};

TEST(Losses, ValuesMatchTorch) {
  const std::vector<LossCase> cases = {
      {"cross_entropy",
       [](const std::string& r) { return ops::cross_entropy(X(), Y(), {}, r); },
       {3},
       {0.6009122541541407},
       {1.8027367624624222},
       {0.37533140243029234, 0.4917208015660495, 0.9356845584660805}},
      {"cross_entropy weight",
       [](const std::string& r) { return ops::cross_entropy(X(), Y(), W(), r); },
       {3},
       {0.5815140209648479},
       {1.7445420628945438},
       {0.5629971036454385, 0.24586040078302476, 0.9356845584660805}},
      {"cross_entropy ignore_index",
       [](const std::string& r) { return ops::cross_entropy(X(), i32({3, -100, 1}, {3}), {}, r); },
       {3},
       {0.6555079804481864},
       {1.3110159608963727},
       {0.37533140243029234, 0.0, 0.9356845584660805}},
      {"cross_entropy weight ignore_index=0",
       [](const std::string& r) { return ops::cross_entropy(X(), Y(), W(), r, 0); },
       {3},
       {0.5994726648446076},
       {1.4986816621115189},
       {0.5629971036454385, 0.0, 0.9356845584660805}},
      {"cross_entropy label_smoothing",
       [](const std::string& r) { return ops::cross_entropy(X(), Y(), {}, r, -100, 0.1); },
       {3},
       {0.7300789208208075},
       {2.190236762462422},
       {0.5403314024302923, 0.6142208015660495, 1.0356845584660805}},
      {"cross_entropy label_smoothing weight ignore_index",
       [](const std::string& r) { return ops::cross_entropy(X(), i32({3, 2, -100}, {3}), W(), r, -100, 0.2); },
       {3},
       {1.6325468618346044},
       {5.713914016421116},
       {0.891730533523924, 4.822183482897192, 0.0}},
      {"cross_entropy (N, C, d)",
       [](const std::string& r) { return ops::cross_entropy(X3(), Y3(), {}, r); },
       {2, 2},
       {2.242823858509428},
       {6.728471575528284},
       {2.138400670778164, 1.7865523010014774, 2.803518603748642, 0.0}},
      {"cross_entropy (N, C, d) weight label_smoothing",
       [](const std::string& r) {
         return ops::cross_entropy(X3(), Y3(), f64({0.5, 1.0, 2.0}, {3}), r, -100, 0.3);
       },
       {2, 2},
       {2.0418520909996842},
       {7.146482318498895},
       {3.537201173861787, 1.0305866107010342, 2.578694533936074, 0.0}},
      {"cross_entropy (C,) with a 0-d label",
       [](const std::string& r) {
         return ops::cross_entropy(f64({0.2, -1.3, 0.8, 2.1}, {4}), i32({2}, {}), W(), r);
       },
       {},
       {1.6753314024302923},
       {3.3506628048605847},
       {3.3506628048605847}},
      {"nll_loss",
       [](const std::string& r) { return ops::nll_loss(X(), Y(), {}, r); },
       {3},
       {-1.5},
       {-4.5},
       {-2.1, -1.5, -0.9}},
      {"nll_loss weight ignore_index",
       [](const std::string& r) { return ops::nll_loss(X(), i32({3, 1, 1}, {3}), W(), r, 1); },
       {3},
       {-2.1},
       {-3.1500000000000004},
       {-3.1500000000000004, 0.0, 0.0}},
      {"binary_cross_entropy_with_logits",
       [](const std::string& r) { return ops::binary_cross_entropy_with_logits(X(), T(), {}, {}, r); },
       {3, 4},
       {0.7213584772941036},
       {8.656301727529243},
       {0.7981388693815918, 1.5410084538329922, 0.9311006659477776, 0.5355195231797548, 0.20141327798275246,
        0.854355244468527, 0.7531860488854578, 0.6931471805599453, 0.8730152523999526, 1.061153874732088,
        0.28733532511543075, 0.1269280110429726}},
      {"binary_cross_entropy_with_logits weight pos_weight",
       [](const std::string& r) { return ops::binary_cross_entropy_with_logits(X(), T(), W(), PW(), r); },
       {3, 4},
       {0.8801310269140119},
       {10.561572322968143},
       {0.3990694346907959, 0.7705042269164961, 1.8622013318955553, 1.0805261404010442, 0.20141327798275246,
        0.854355244468527, 1.5063720977709159, 1.2476649250079015, 0.8473644897799548, 1.0270384872588791,
        0.5746706502308615, 0.19039201656445903}},
      {"binary_cross_entropy",
       [](const std::string& r) { return ops::binary_cross_entropy(P(), T(), {}, r); },
       {3, 4},
       {0.40325452894753794},
       {4.839054347370455},
       {0.10536051565782628, 0.35667494393873245, 0.6580382093942657, 0.5448054311250701, 0.5108256237659907,
        0.05129329438755058, 0.7803238741323343, 0.3617729874261988, 0.3359790350365855, 0.6931471805599453,
        0.01005033585350145, 0.4307829160924542}},
      {"binary_cross_entropy weight",
       [](const std::string& r) { return ops::binary_cross_entropy(P(), T(), W(), r); },
       {3, 4},
       {0.5400054039035181},
       {6.480064846842217},
       {0.05268025782891314, 0.35667494393873245, 1.3160764187885314, 0.8172081466876051, 0.25541281188299536,
        0.05129329438755058, 1.5606477482646686, 0.5426594811392982, 0.16798951751829275, 0.6931471805599453,
        0.0201006717070029, 0.6461743741386814}},
      {"mse_loss (broadcast target)",
       [](const std::string& r) { return ops::mse_loss(X(), Yb(), r); },
       {3, 4},
       {2.1147916666666666},
       {25.3775},
       {0.09, 0.09000000000000002, 1.44, 3.4225000000000003, 1.0, 1.6900000000000002, 7.290000000000001, 0.0625,
        0.81, 3.61, 0.8099999999999998, 5.0625}},
      {"l1_loss (broadcast target)",
       [](const std::string& r) { return ops::l1_loss(X(), Yb(), r); },
       {3, 4},
       {1.2375},
       {14.85},
       {0.3, 0.30000000000000004, 1.2, 1.85, 1.0, 1.3, 2.7, 0.25, 0.9, 1.9, 0.8999999999999999, 2.25}},
      {"smooth_l1_loss",
       [](const std::string& r) { return ops::smooth_l1_loss(X(), Yb(), r); },
       {3, 4},
       {0.8026041666666667},
       {9.63125},
       {0.045, 0.04500000000000001, 0.7, 1.35, 0.5, 0.8, 2.2, 0.03125, 0.405, 1.4, 0.4049999999999999, 1.75}},
      {"smooth_l1_loss beta=0.5",
       [](const std::string& r) { return ops::smooth_l1_loss(X(), Yb(), r, 0.5); },
       {3, 4},
       {0.9993750000000001},
       {11.992500000000001},
       {0.09, 0.09000000000000002, 0.95, 1.6, 0.75, 1.05, 2.45, 0.0625, 0.65, 1.65, 0.6499999999999999, 2.0}},
  };
  for (const LossCase& c : cases) {
    SCOPED_TRACE(c.name);
    expect_values(c.run("mean"), {}, c.mean);
    expect_values(c.run("sum"), {}, c.sum);
    expect_values(c.run("none"), c.none_shape, c.none);
  }
}

TEST(Losses, Float32Values) {
  const Tensor x = convert(X(), DType::Float32);
  const Tensor ce = ops::cross_entropy(x, Y());  // the fused path
  EXPECT_EQ(ce.dtype(), DType::Float32);
  expect_values(ce, {}, {0.6009122541541407}, 1e-6);
  const Tensor ce_w = ops::cross_entropy(x, Y(), convert(W(), DType::Float32), "sum", -100, 0.2);
  EXPECT_EQ(ce_w.dtype(), DType::Float32);
  const Tensor bce = ops::binary_cross_entropy_with_logits(x, convert(T(), DType::Float32));
  expect_values(bce, {}, {0.7213584772941036}, 1e-6);
  // Mixed float widths promote.
  EXPECT_EQ(ops::mse_loss(x, Yb()).dtype(), DType::Float64);
  EXPECT_EQ(ops::cross_entropy(x, Y(), W()).dtype(), DType::Float64);
}

TEST(Losses, EdgeValues) {
  // BCE clamps each log at -100, like PyTorch.
  expect_values(ops::binary_cross_entropy(f64({0.0, 1.0, 0.0, 1.0}, {4}), f64({1.0, 0.0, 0.0, 1.0}, {4}), {}, "none"),
                {4}, {100.0, 100.0, 0.0, 0.0});
  // ... and its gradient stays finite there.
  const Fn bce = [](const std::vector<Tensor>& a) -> Value {
    return ops::binary_cross_entropy(a[0], f64({1.0, 0.0, 0.0, 1.0}, {4}), {}, "sum");
  };
  for (double g : grad(bce)({f64({0.0, 1.0, 0.0, 1.0}, {4})}).tensor().to_vector<double>()) {
    EXPECT_TRUE(std::isfinite(g));
  }
  // Large logits: stable.
  expect_values(ops::cross_entropy(f64({1000.0, -1000.0, 0.0}, {1, 3}), i32({1}, {1})), {}, {2000.0});
  // ... on the composite route too (class weights, label smoothing).
  expect_values(ops::cross_entropy(f64({1000.0, -1000.0, 0.0}, {1, 3}), i32({1}, {1}), f64({1, 2, 3}, {3}), "mean",
                                   -100, 0.3),
                {}, {0.7 * 2000.0 + 0.1 * (2.0 * 2000.0 + 3.0 * 1000.0) / 2.0});  // torch: 1750
  expect_values(ops::binary_cross_entropy_with_logits(f64({800.0, -800.0}, {2}), f64({0.0, 1.0}, {2}), {}, {}, "none"),
                {2}, {800.0, 800.0});
  // Every row ignored: "mean" is 0 / 0 = NaN (as PyTorch), "sum" is 0.
  const Tensor all_ignored = i32({-100, -100, -100}, {3});
  EXPECT_TRUE(std::isnan(ops::cross_entropy(X(), all_ignored).item()));
  EXPECT_TRUE(std::isnan(ops::cross_entropy(X(), all_ignored, W(), "mean", -100, 0.1).item()));
  EXPECT_EQ(ops::cross_entropy(X(), all_ignored, {}, "sum").item(), 0.0);
  EXPECT_TRUE(std::isnan(ops::nll_loss(X(), all_ignored).item()));
  // An empty batch.
  EXPECT_TRUE(std::isnan(ops::cross_entropy(zeros({0, 4}, DType::Float64), i32({}, {0})).item()));
  EXPECT_EQ(ops::cross_entropy(zeros({0, 4}, DType::Float64), i32({}, {0}), {}, "sum").item(), 0.0);
  EXPECT_EQ(ops::cross_entropy(zeros({0, 4}, DType::Float64), i32({}, {0}), {}, "none").shape(), (Shape{0}));
  // beta = 0 makes smooth_l1 the l1 loss.
  expect_values(ops::smooth_l1_loss(X(), Yb(), "none", 0.0), {3, 4},
                ops::l1_loss(X(), Yb(), "none").to_vector<double>());
}

// ---- gradients against torch -------------------------------------------------------------------------------

TEST(Losses, GradientsMatchTorch) {
  auto grad_of = [](const Fn& f, const std::vector<Tensor>& args, std::vector<int> pos) {
    return grad(f, GradPosition(std::move(pos)))(args);
  };
  {
    // The fused cross_entropy path.
    const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::cross_entropy(a[0], Y()); };
    expect_values(grad(f)({X()}).tensor(), {3, 4},
                  {0.0342542823114494, 0.007643163497923232, 0.062415371793576035, -0.10431281760294864,
                   -0.12947563591745748, 0.06140075851541089, 0.022588076730152028, 0.04548680067189452,
                   0.035639637516147224, -0.2025609301601765, 0.1597257739269275, 0.007195518717101814});
    const Fn g = [](const std::vector<Tensor>& a) -> Value {
      return ops::cross_entropy(a[0], i32({3, -100, 1}, {3}), {}, "sum");
    };
    expect_values(grad(g)({X()}).tensor(), {3, 4},
                  {0.1027628469343482, 0.022929490493769696, 0.1872461153807281, -0.3129384528088459, 0.0, 0.0, 0.0,
                   0.0, 0.10691891254844169, -0.6076827904805295, 0.4791773217807825, 0.021586556151305444});
  }
  {
    const Fn f = [](const std::vector<Tensor>& a) -> Value {
      return ops::cross_entropy(a[0], i32({3, 2, -100}, {3}), W(), "mean", -100, 0.2);
    };
    expect_values(grad(f)({X()}).tensor(), {3, 4},
                  {0.03543032230137282, -0.004786353938295414, 0.049001962086301636, -0.07964593044937902,
                   0.3161172059023175, 0.08307834564586586, -0.44989604975647324, 0.0507004982082899, 0.0, 0.0, 0.0,
                   0.0});
  }
  {
    // The sum of the unreduced (N, C, d) loss.
    const Fn f = [](const std::vector<Tensor>& a) -> Value {
      return ops::sum(ops::cross_entropy(a[0], Y3(), f64({0.5, 1.0, 2.0}, {3}), "none", -100, 0.3));
    };
    expect_values(grad(f)({X3()}).tensor(), {2, 3, 2},
                  {0.5695357431270792, -0.28272424593956674, 0.8242387226685145, 0.28936921568273366,
                   -1.393774465795594, -0.006644969743166825, 0.7251269631870637, 0.0, -0.736373704293443, 0.0,
                   0.011246741106379568, 0.0});
  }
  {
    const Fn f = [](const std::vector<Tensor>& a) -> Value {
      return ops::binary_cross_entropy_with_logits(a[0], a[1], W(), PW());
    };
    const Value g = grad_of(f, {X(), T()}, {0, 1});
    expect_values(g[0].tensor(), {3, 4},
                  {0.022909749888019915, -0.032743124293439944, 0.06499574685460209, -0.010456466888574212,
                   -0.015202126983863029, 0.04787020973430492, -0.02803129536136102, 0.03749999999999999,
                   -0.043229439758902456, 0.04498787936354196, -0.04162331573414705, 0.014900365252764692});
    expect_values(g[1].tensor(), {3, 4},
                  {0.016589119557566322, 0.04412464775695866, -0.13333333333333336, -0.23362011920506123,
                   -0.05410778008405198, -0.048098135186188634, 0.11666666666666665, 0.17328679513998627,
                   0.05470896884999802, -0.08921474478050366, -0.18333333333333335, 0.7817320027607432});
  }
  {
    const Fn f = [](const std::vector<Tensor>& a) -> Value {
      return ops::binary_cross_entropy(a[0], a[1], W(), "sum");
    };
    const Value g = grad_of(f, {P(), T()}, {0, 1});
    expect_values(g[0].tensor(), {3, 4},
                  {0.5555555555555555, -1.4285714285714286, 1.2121212121212122, 1.6666666666666667,
                   -0.8333333333333334, 1.0526315789473684, -1.9047619047619049, 0.9374999999999998,
                   -0.19607843137254918, 1.2, -2.02020202020202, 2.307692307692308},
                  1e-10);
    expect_values(g[1].tensor(), {3, 4},
                  {1.0986122886681096, -0.8472978603872034, 0.40134139092430243, -3.295836866004329,
                   -0.20273255405408214, 2.9444389791664403, 1.6945957207744073, 2.0794415416798357,
                   -0.8673005276940531, 0.0, -9.19023970026918, 0.9285588126093354},
                  1e-10);
  }
  {
    const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::smooth_l1_loss(a[0], a[1], "mean", 0.5); };
    const Value g = grad_of(f, {X(), Yb()}, {0, 1});
    expect_values(g[0].tensor(), {3, 4},
                  {-0.049999999999999996, -0.05, -0.08333333333333333, 0.08333333333333333, 0.08333333333333333,
                   0.08333333333333333, -0.08333333333333333, -0.041666666666666664, -0.08333333333333333,
                   0.08333333333333333, -0.08333333333333333, -0.08333333333333333});
    expect_values(g[1].tensor(), {4},
                  {0.049999999999999996, -0.11666666666666665, 0.25, 0.041666666666666664});
  }
}

// The fused cross_entropy path and the composite route agree (unit weights force the composite), to second
// order.
TEST(Losses, CrossEntropyFastPathAgreesWithComposite) {
  for (const std::string reduction : {"mean", "sum"}) {
    for (const Tensor& labels : {Y(), i32({3, -100, 1}, {3})}) {
      SCOPED_TRACE(reduction);
      const Fn fast = [reduction, labels](const std::vector<Tensor>& a) -> Value {
        return ops::cross_entropy(a[0], labels, {}, reduction);
      };
      const Fn composite = [reduction, labels](const std::vector<Tensor>& a) -> Value {
        return ops::cross_entropy(a[0], labels, ones({4}, DType::Float64), reduction);
      };
      expect_values(fast({X()}).tensor(), {}, composite({X()}).tensor().to_vector<double>());
      expect_values(grad(fast)({X()}).tensor(), {3, 4}, grad(composite)({X()}).tensor().to_vector<double>());
      const Fn fast_h = [fast](const std::vector<Tensor>& a) -> Value {
        return ops::sum(ops::square(grad(fast)(a).tensor()));
      };
      const Fn comp_h = [composite](const std::vector<Tensor>& a) -> Value {
        return ops::sum(ops::square(grad(composite)(a).tensor()));
      };
      expect_values(grad(fast_h)({X()}).tensor(), {3, 4}, grad(comp_h)({X()}).tensor().to_vector<double>());
    }
  }
}

// ---- gradcheck and gradgradcheck of every loss, every reduction, w.r.t. every float input ------------------

TEST(Losses, CrossEntropyGradchecks) {
  struct Variant {
    std::string name;
    Tensor labels;
    int64_t ignore_index;
  };
  const std::vector<Variant> variants = {{"plain", Y(), -100},
                                         {"ignored row", i32({3, -100, 1}, {3}), -100},
                                         {"ignore_index in range", i32({3, 0, 1}, {3}), 0}};
  for (const std::string& reduction : kReductions) {
    for (const Variant& v : variants) {
      for (double ls : {0.0, 0.2}) {
        SCOPED_TRACE(reduction + ", " + v.name + ", label_smoothing " + std::to_string(ls));
        const Tensor labels = v.labels;
        const int64_t ign = v.ignore_index;
        check_grads([=](const std::vector<Tensor>& a) -> Value {
          return ops::cross_entropy(a[0], labels, {}, reduction, ign, ls);
        }, {X()});
        // w.r.t. the logits and the class weights
        check_grads([=](const std::vector<Tensor>& a) -> Value {
          return ops::cross_entropy(a[0], labels, a[1], reduction, ign, ls);
        }, {X(), W()});
      }
    }
  }
  for (const std::string& reduction : kReductions) {
    SCOPED_TRACE(reduction);
    check_grads([=](const std::vector<Tensor>& a) -> Value {
      return ops::cross_entropy(a[0], Y3(), a[1], reduction, -100, 0.3);
    }, {X3(), f64({0.5, 1.0, 2.0}, {3})});
    check_grads([=](const std::vector<Tensor>& a) -> Value {
      return ops::cross_entropy(a[0], i32({1}, {}), a[1], reduction, -100, 0.1);
    }, {f64({0.2, -1.3, 0.8, 2.1}, {4}), W()});
  }
}

TEST(Losses, NllLossGradchecks) {
  for (const std::string& reduction : kReductions) {
    SCOPED_TRACE(reduction);
    check_grads([=](const std::vector<Tensor>& a) -> Value { return ops::nll_loss(a[0], Y(), {}, reduction); },
                {X()});
    check_grads([=](const std::vector<Tensor>& a) -> Value {
      return ops::nll_loss(a[0], i32({3, -100, 1}, {3}), a[1], reduction);
    }, {X(), W()});
    check_grads([=](const std::vector<Tensor>& a) -> Value {
      return ops::nll_loss(a[0], i32({3, 1, 1}, {3}), a[1], reduction, 1);
    }, {X(), W()});
    // nll of log_softmax is cross_entropy
    check_grads([=](const std::vector<Tensor>& a) -> Value {
      return ops::nll_loss(ops::log_softmax(a[0]), Y(), a[1], reduction);
    }, {X(), W()});
  }
}

TEST(Losses, BinaryCrossEntropyWithLogitsGradchecks) {
  for (const std::string& reduction : kReductions) {
    SCOPED_TRACE(reduction);
    // w.r.t. logits and target
    check_grads([=](const std::vector<Tensor>& a) -> Value {
      return ops::binary_cross_entropy_with_logits(a[0], a[1], {}, {}, reduction);
    }, {X(), T()});
    // ... and weight (broadcast over rows) and pos_weight (over the last axis)
    check_grads([=](const std::vector<Tensor>& a) -> Value {
      return ops::binary_cross_entropy_with_logits(a[0], a[1], a[2], a[3], reduction);
    }, {X(), T(), f64({0.5, 2.0, 1.5}, {3, 1}), PW()});
    check_grads([=](const std::vector<Tensor>& a) -> Value {
      return ops::binary_cross_entropy_with_logits(a[0], a[1], {}, a[2], reduction);
    }, {X(), T(), PW()});
    check_grads([=](const std::vector<Tensor>& a) -> Value {
      return ops::binary_cross_entropy_with_logits(a[0], a[1], a[2], {}, reduction);
    }, {X(), T(), W()});
  }
}

TEST(Losses, BinaryCrossEntropyGradchecks) {
  for (const std::string& reduction : kReductions) {
    SCOPED_TRACE(reduction);
    check_grads([=](const std::vector<Tensor>& a) -> Value {
      return ops::binary_cross_entropy(a[0], a[1], {}, reduction);
    }, {P(), T()});
    check_grads([=](const std::vector<Tensor>& a) -> Value {
      return ops::binary_cross_entropy(a[0], a[1], a[2], reduction);
    }, {P(), T(), W()});
  }
}

TEST(Losses, RegressionGradchecks) {
  // Differences kept away from the kinks at 0 and at +-beta.
  const Tensor y = f64({0.55, -1.0, 2.0, 0.25}, {4});
  for (const std::string& reduction : kReductions) {
    SCOPED_TRACE(reduction);
    check_grads([=](const std::vector<Tensor>& a) -> Value { return ops::mse_loss(a[0], a[1], reduction); },
                {X(), y});
    check_grads([=](const std::vector<Tensor>& a) -> Value { return ops::mse_loss(a[0], a[1], reduction); },
                {X(), T()});
    check_grads([=](const std::vector<Tensor>& a) -> Value { return ops::l1_loss(a[0], a[1], reduction); },
                {X(), y});
    for (double beta : {1.0, 0.5, 0.0}) {
      SCOPED_TRACE("beta " + std::to_string(beta));
      check_grads([=](const std::vector<Tensor>& a) -> Value {
        return ops::smooth_l1_loss(a[0], a[1], reduction, beta);
      }, {X(), y});
    }
  }
}

// Losses differentiate to second order inside a training-like expression (grad of a grad norm).
TEST(Losses, GradOfGradThroughLosses) {
  const Fn loss = [](const std::vector<Tensor>& a) -> Value {
    const Tensor logits = ops::matmul(a[0], a[1]);
    return ops::cross_entropy(logits, Y(), W(), "mean", -100, 0.1) +
           ops::binary_cross_entropy_with_logits(logits, T(), {}, PW());
  };
  const Tensor feats = f64({0.3, -0.2, 0.5, 1.0, 0.1, -0.7}, {3, 2});
  const Tensor w = f64({0.2, -0.4, 0.6, 0.1, -0.3, 0.5, 0.7, -0.1}, {2, 4});
  const Fn grad_norm = [loss](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::square(grad(loss, 1)(a).tensor()));
  };
  const CheckResult r = gradcheck(grad_norm, {feats, w});
  EXPECT_TRUE(r.ok) << r.message;
}

// Forward mode (the transpose of the composite bprop) agrees with reverse mode.
TEST(Losses, JacobiansForwardEqualsReverse) {
  const std::vector<Fn> fns = {
      [](const std::vector<Tensor>& a) -> Value {
        return ops::cross_entropy(a[0], i32({3, -100, 1}, {3}), W(), "none", -100, 0.2);
      },
      [](const std::vector<Tensor>& a) -> Value { return ops::cross_entropy(a[0], Y()); },
      [](const std::vector<Tensor>& a) -> Value { return ops::softmax(a[0], 0); },
      [](const std::vector<Tensor>& a) -> Value {
        return ops::binary_cross_entropy_with_logits(a[0], T(), {}, PW(), "none");
      },
  };
  for (size_t k = 0; k < fns.size(); ++k) {
    SCOPED_TRACE("function " + std::to_string(k));
    const Tensor rev = jacrev(fns[k])({X()});
    const Tensor fwd = jacfwd(fns[k])({X()});
    expect_values(fwd, rev.shape(), rev.to_vector<double>());
  }
  // The Hessian of a mean squared error is 2 / n times the identity.
  const Fn mse = [](const std::vector<Tensor>& a) -> Value { return ops::mse_loss(a[0], Yb()); };
  const std::vector<double> h = hessian(mse)({X()}).to_vector<double>();
  for (size_t i = 0; i < 12; ++i) {
    for (size_t j = 0; j < 12; ++j) EXPECT_NEAR(h[i * 12 + j], i == j ? 2.0 / 12.0 : 0.0, 1e-12);
  }
}

// ---- errors ------------------------------------------------------------------------------------------------

TEST(Losses, Errors) {
  expect_op_error<DTypeError>([] { ops::cross_entropy(X(), f64({3, 0, 1}, {3})); }, "cross_entropy", "'labels'");
  expect_op_error<DTypeError>([] { ops::cross_entropy(i32({1, 2, 3, 4}, {1, 4}), i32({1}, {1})); }, "cross_entropy",
                           "'logits'");
  expect_op_error<ShapeError>([] { ops::cross_entropy(X(), i32({3, 0}, {2})); }, "cross_entropy", "(2,)");
  expect_op_error<ShapeError>([] { ops::cross_entropy(X(), i32({3, 0, 1}, {3, 1})); }, "cross_entropy", "(3, 4)");
  expect_op_error<ShapeError>([] { ops::cross_entropy(X(), Y(), f64({1, 1, 1}, {3})); }, "cross_entropy", "'weight'");
  expect_op_error<ShapeError>([] { ops::cross_entropy(scalar(1.0), i32({0}, {})); }, "cross_entropy", "class axis");
  expect_op_error<ShapeError>([] { ops::cross_entropy(f64({1, 2}, {2}), i32({0, 1}, {2})); }, "cross_entropy",
                           "'labels'");
  expect_op_error<ValueError>([] { ops::cross_entropy(X(), i32({3, 4, 1}, {3})); }, "cross_entropy", "label 4");
  expect_op_error<ValueError>([] { ops::cross_entropy(X(), i32({3, -1, 1}, {3})); }, "cross_entropy", "label -1");
  expect_op_error<ValueError>([] { ops::cross_entropy(X(), i32({3, 4, 1}, {3}), W(), "none", -100, 0.1); },
                           "cross_entropy", "out of range");
  expect_op_error<ValueError>([] { ops::cross_entropy(X(), Y(), {}, "mean", -100, 1.5); }, "cross_entropy",
                           "label_smoothing");
  expect_op_error<ValueError>([] { ops::cross_entropy(X(), Y(), {}, "avg"); }, "cross_entropy", "reduction");

  expect_op_error<DTypeError>([] { ops::nll_loss(X(), convert(Y(), DType::Float32)); }, "nll_loss", "'labels'");
  expect_op_error<ShapeError>([] { ops::nll_loss(X(), i32({1, 2, 3, 0}, {4})); }, "nll_loss", "(4,)");
  expect_op_error<ShapeError>([] { ops::nll_loss(X(), Y(), f64({1, 1}, {2})); }, "nll_loss", "'weight'");
  expect_op_error<ValueError>([] { ops::nll_loss(X(), i32({3, 9, 1}, {3})); }, "nll_loss", "label 9");

  expect_op_error<ShapeError>([] { ops::binary_cross_entropy_with_logits(X(), Yb()); },
                           "binary_cross_entropy_with_logits", "'target'");
  expect_op_error<ShapeError>([] { ops::binary_cross_entropy_with_logits(X(), T(), {}, f64({1, 2, 3}, {3})); },
                           "binary_cross_entropy_with_logits", "pos_weight");
  expect_op_error<ShapeError>([] { ops::binary_cross_entropy_with_logits(X(), T(), ones({2, 3, 4}, DType::Float64)); },
                           "binary_cross_entropy_with_logits", "'weight'");
  expect_op_error<DTypeError>([] { ops::binary_cross_entropy_with_logits(X(), i32(std::vector<int32_t>(12, 1), {3, 4})); },
                           "binary_cross_entropy_with_logits", "'target'");

  expect_op_error<ValueError>([] { ops::binary_cross_entropy(X(), T()); }, "binary_cross_entropy", "between 0 and 1");
  expect_op_error<ShapeError>([] { ops::binary_cross_entropy(P(), Yb()); }, "binary_cross_entropy", "'target'");
  expect_op_error<ShapeError>([] { ops::binary_cross_entropy(P(), T(), f64({1, 2, 3}, {3})); }, "binary_cross_entropy",
                           "'weight'");

  expect_op_error<ShapeError>([] { ops::mse_loss(X(), f64({1, 2, 3}, {3})); }, "mse_loss", "(3, 4)");
  expect_op_error<DTypeError>([] { ops::mse_loss(i32({1, 2}, {2}), i32({1, 2}, {2})); }, "mse_loss", "int32");
  expect_op_error<ShapeError>([] { ops::l1_loss(X(), f64({1, 2}, {2})); }, "l1_loss", "(2,)");
  expect_op_error<ValueError>([] { ops::smooth_l1_loss(X(), X(), "mean", -1.0); }, "smooth_l1_loss", "beta");
  expect_op_error<ValueError>([] { ops::smooth_l1_loss(X(), X(), "total"); }, "smooth_l1_loss", "reduction");
}
