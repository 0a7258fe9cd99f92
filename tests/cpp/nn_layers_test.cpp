// nn layers, initialisers, Cell registration and SequentialCell. Expected values were computed with PyTorch
// 1.13 in float64 (torch.nn.functional on the same inputs, MindSpore's pad modes written out with F.pad) and
// copied here.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "bprop/bprop.h"
#include "nn_test_util.h"

using namespace bprop;
using namespace nntest;

namespace {

nn::Initializer dense_w() { return f64({0.1, 0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8, 0.9, 0.05, 0.15, -0.25}, {4, 3}); }
nn::Initializer dense_b() { return f64({0.01, -0.02, 0.03, 0.04}, {4}); }
Tensor dense_x() { return f64({0.5, -1.0, 2.0, 1.5, 0.25, -0.75}, {2, 3}); }

double sample_mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}
double sample_std(const std::vector<double>& v) {
  const double m = sample_mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size()));
}

}  // namespace

// ---- Cell and SequentialCell --------------------------------------------------------------------------

TEST(NnCell, RegistrationNamesAndErrors) {
  struct Net : Cell {
    Value construct(const std::vector<Tensor>& in) override { return in[0]; }
  } net;
  net.register_parameter("w", Parameter(zeros({2}), "w"));
  expect_error<ValueError>([&] { net.register_parameter("w", Parameter(zeros({2}), "w")); }, {"'w'", "already"});
  expect_error<ValueError>([&] { net.register_cell("w", std::make_shared<nn::ReLU>()); }, {"'w'", "already"});
  expect_error<ValueError>([&] { net.register_parameter("a.b", Parameter(zeros({2}), "a")); }, {"'a.b'", "'.'"});
  expect_error<ValueError>([&] { net.register_parameter("", Parameter(zeros({2}), "e")); }, {"empty"});
  auto sub = net.register_cell("fc", std::make_shared<nn::Dense>(2, 3));
  EXPECT_EQ(sub->cell_name(), "fc");
  std::vector<std::string> names;
  for (const auto& [n, p] : net.parameters_and_names()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"w", "fc.weight", "fc.bias"}));
  EXPECT_EQ(net.cells_and_names().size(), 1u);
}

TEST(NnCell, SetGradKeepsStateNonTrainable) {
  nn::SequentialCell net{std::make_shared<nn::Dense>(3, 4), std::make_shared<nn::BatchNorm1d>(4)};
  EXPECT_EQ(net.trainable_params().size(), 4u);  // weight, bias, gamma, beta
  EXPECT_EQ(net.parameters_and_names().size(), 6u);
  net.set_grad(false);
  EXPECT_TRUE(net.trainable_params().empty());
  net.set_grad(true);
  EXPECT_EQ(net.trainable_params().size(), 4u);  // moving_mean and moving_variance stay state
  for (const auto& [name, p] : net.parameters_and_names()) {
    if (name.find("moving_") != std::string::npos) {
      EXPECT_FALSE(p.requires_grad()) << name;
    }
  }
}

TEST(NnCell, TiedParameterIsTrainedOnce) {
  struct Tied : Cell {
    Parameter w{ones({2}), "w"};
    Tied() {
      register_parameter("a", w);
      register_parameter("b", w);
    }
    Value construct(const std::vector<Tensor>& in) override { return in[0] * w; }
  } net;
  EXPECT_EQ(net.parameters_and_names().size(), 2u);
  EXPECT_EQ(net.trainable_params().size(), 1u);
}

TEST(NnSequential, ChainsNamesAndPropagatesMode) {
  auto fc1 = std::make_shared<nn::Dense>(
      3, 4, nn::DenseOptions{.weight_init = dense_w(), .bias_init = dense_b(), .dtype = DType::Float64});
  auto drop = std::make_shared<nn::Dropout>(0.5, 1);
  nn::SequentialCell seq{fc1, std::make_shared<nn::ReLU>(), drop};
  EXPECT_EQ(seq.size(), 3u);
  std::vector<std::string> names;
  for (const auto& [n, p] : seq.parameters_and_names()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias"}));
  seq.set_train(false);
  EXPECT_FALSE(drop->training());
  expect_values(seq(dense_x()), {2, 4}, {0.46, 0.0, 2.98, 0.0, 0.0, 0.0, 0.205, 0.34});
  seq.append(std::make_shared<nn::Sigmoid>());
  EXPECT_EQ(seq.size(), 4u);
  EXPECT_EQ(seq[3]->cell_name(), "3");
  expect_error<ValueError>([&] { seq[4]; }, {"index 4", "4 cells"});
  nn::SequentialCell empty;
  EXPECT_EQ(empty(dense_x()).to_vector<double>(), dense_x().to_vector<double>());
}

TEST(NnSequential, SecondOrderThroughLayers) {
  nn::set_seed(21);
  SequentialCell net{
      std::make_shared<nn::Dense>(3, 4, nn::DenseOptions{.activation = "tanh", .dtype = DType::Float64}),
      std::make_shared<nn::LayerNorm>(Shape{4}, nn::LayerNormOptions{.dtype = DType::Float64}),
      std::make_shared<nn::Dense>(4, 2, nn::DenseOptions{.activation = "gelu", .dtype = DType::Float64})};
  const Fn f = [&](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::square(net(a[0]))); };
  const Tensor x = f64({0.3, -0.7, 1.1, 0.5, 0.2, -0.4}, {2, 3});
  const CheckResult c1 = gradcheck(f, {x});
  EXPECT_TRUE(c1.ok) << c1.message;
  const CheckResult c2 = gradgradcheck(f, {x});
  EXPECT_TRUE(c2.ok) << c2.message;
}

// ---- initialisers -------------------------------------------------------------------------------------

TEST(NnInit, SeededAndDeterministic) {
  const Tensor a = nn::init::normal(0.5, 1.0, 42)({1000}, DType::Float64);
  const Tensor b = nn::init::normal(0.5, 1.0, 42)({1000}, DType::Float64);
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>());
  EXPECT_NE(a.to_vector<double>(), nn::init::normal(0.5, 1.0, 43)({1000}, DType::Float64).to_vector<double>());
  EXPECT_NEAR(sample_mean(a.to_vector<double>()), 1.0, 0.05);
  EXPECT_NEAR(sample_std(a.to_vector<double>()), 0.5, 0.03);
  // Without a seed, the process-wide stream: the same after the same set_seed.
  nn::set_seed(7);
  const auto d1 = nn::Dense(5, 4).weight.to_vector<double>();
  nn::set_seed(7);
  const auto d2 = nn::Dense(5, 4).weight.to_vector<double>();
  EXPECT_EQ(d1, d2);
  EXPECT_NE(d1, nn::Dense(5, 4).weight.to_vector<double>());
}

TEST(NnInit, DistributionsAndBounds) {
  const auto u = nn::init::uniform(0.3, 1)({2000}, DType::Float64).to_vector<double>();
  for (double v : u) ASSERT_TRUE(v >= -0.3 && v < 0.3);
  EXPECT_NEAR(sample_std(u), 0.3 / std::sqrt(3.0), 0.01);

  const double xb = std::sqrt(6.0 / 50.0);
  const auto xu = nn::init::xavier_uniform(1.0, 2)({20, 30}, DType::Float64).to_vector<double>();
  for (double v : xu) ASSERT_TRUE(std::abs(v) <= xb);
  EXPECT_NEAR(sample_std(xu), xb / std::sqrt(3.0), 0.015);

  const auto hn = nn::init::he_normal(0.0, "fan_in", "relu", 3)({64, 32, 3, 3}, DType::Float64).to_vector<double>();
  EXPECT_NEAR(sample_std(hn), std::sqrt(2.0 / (32 * 9)), 0.002);
  const auto hf = nn::init::he_normal(0.0, "fan_out", "leaky_relu", 4)({64, 32, 3, 3}).to_vector<double>();
  EXPECT_NEAR(sample_std(hf), std::sqrt(2.0 / (64 * 9)), 0.002);

  EXPECT_EQ(nn::initializer("zeros", {2, 2}).to_vector<double>(), std::vector<double>(4, 0.0));
  EXPECT_EQ(nn::initializer("ones", {3}, DType::Float64).to_vector<double>(), std::vector<double>(3, 1.0));
  EXPECT_EQ(nn::init::constant(2.5)({2}).to_vector<double>(), std::vector<double>(2, 2.5));
  EXPECT_EQ(nn::Initializer("xavier_uniform").name(), "xavier_uniform");

  // Default Dense initialisation: U(-1/sqrt(in), 1/sqrt(in)) for weight and bias, as PyTorch.
  nn::Dense d(100, 50);
  for (double v : d.weight.to_vector<double>()) ASSERT_LE(std::abs(v), 0.1);
  for (double v : d.bias.to_vector<double>()) ASSERT_LE(std::abs(v), 0.1);
  EXPECT_NEAR(sample_std(d.weight.to_vector<double>()), 0.1 / std::sqrt(3.0), 0.005);
}

TEST(NnInit, Errors) {
  expect_error<ValueError>([] { nn::Initializer("bogus"); }, {"unknown name 'bogus'"});
  expect_error<ValueError>([] { nn::init::xavier_uniform()({5}); }, {"at least 2 dimensions"});
  expect_error<ValueError>([] { nn::init::he_normal(0.0, "fan_sideways"); }, {"mode"});
  expect_error<ValueError>([] { nn::init::he_uniform(0.0, "fan_in", "swish"); }, {"'swish'"});
  expect_error<ShapeError>([] { nn::Initializer(zeros({2, 3}))({3, 2}); }, {"(2, 3)", "(3, 2)"});
  expect_error<DTypeError>([] { nn::init::ones()({2}, DType::Int32); }, {"int32"});
}

// ---- Dense and activations ----------------------------------------------------------------------------

TEST(NnDense, ValuesActivationAndShapes) {
  nn::Dense d(3, 4, {.weight_init = dense_w(), .bias_init = dense_b(), .dtype = DType::Float64});
  expect_values(d(dense_x()), {2, 4}, {0.46, -1.92, 2.98, -0.585, -0.015, -0.045, 0.205, 0.34});
  nn::Dense r(3, 4, {.weight_init = dense_w(), .bias_init = dense_b(), .activation = "relu", .dtype = DType::Float64});
  expect_values(r(dense_x()), {2, 4}, {0.46, 0.0, 2.98, 0.0, 0.0, 0.0, 0.205, 0.34});
  nn::Dense nb(3, 4, {.weight_init = dense_w(), .has_bias = false, .dtype = DType::Float64});
  EXPECT_FALSE(nb.bias.defined());
  EXPECT_EQ(nb.parameters_and_names().size(), 1u);
  expect_values(nb(dense_x()), {2, 4}, {0.45, -1.9, 2.95, -0.625, -0.025, -0.025, 0.175, 0.3});
  // Batched (2, 5, 3) and a single vector (3,).
  EXPECT_EQ(d(zeros({2, 5, 3}, DType::Float64)).shape(), (Shape{2, 5, 4}));
  EXPECT_EQ(d(ones({3}, DType::Float64)).shape(), (Shape{4}));
  // Initialisers by name, with a seed, or as a tensor.
  nn::Dense named(784, 16, {.weight_init = "xavier_uniform", .bias_init = "zeros", .activation = "relu"});
  EXPECT_EQ(named.bias.to_vector<double>(), std::vector<double>(16, 0.0));
  nn::Dense s1(3, 2, {.weight_init = nn::init::normal(0.02, 0.0, 9)}),
      s2(3, 2, {.weight_init = nn::init::normal(0.02, 0.0, 9)});
  EXPECT_EQ(s1.weight.to_vector<double>(), s2.weight.to_vector<double>());
  expect_error<ShapeError>([&] { d(zeros({2, 5})); }, {"For 'Dense'", "in_channels = 3", "(2, 5)"});
  expect_error<ValueError>([&] { d(std::vector<Tensor>{zeros({3}), zeros({3})}); }, {"For 'Dense'", "1 input"});
  expect_error<ValueError>([] { nn::Dense(0, 3); }, {"in_channels must be positive"});
  expect_error<ValueError>([] { nn::Dense(2, 3, {.activation = "swish"}); }, {"'swish'"});
}

TEST(NnDense, GradientsFlowToParameters) {
  nn::Dense d(3, 4, {.weight_init = dense_w(), .bias_init = dense_b(), .dtype = DType::Float64});
  const Tensor x = dense_x();
  const Fn f = [&](const std::vector<Tensor>& a) -> Value { return ops::sum(d(a[0])); };
  const Value g = grad(f, nullptr, d.trainable_params())({x});
  // d sum(x W^T + b) / dW[o, i] = sum_n x[n, i]; / db[o] = N
  expect_values(g[0].tensor(), {4, 3}, {2.0, -0.75, 1.25, 2.0, -0.75, 1.25, 2.0, -0.75, 1.25, 2.0, -0.75, 1.25});
  expect_values(g[1].tensor(), {4}, {2.0, 2.0, 2.0, 2.0});
  const CheckResult c = gradcheck(f, {x});
  EXPECT_TRUE(c.ok) << c.message;
}

TEST(NnActivations, ValuesMatchTorch) {
  const Tensor x = f64({-2.0, -0.5, 0.0, 0.7, 3.0}, {5});
  expect_values(nn::GELU()(x), {5},
                {-0.04540230591222494, -0.15428599017485606, 0.0, 0.5305701347051167, 2.996362607918227});
  expect_values(nn::GELU(false)(x), {5},
                {-0.04550026389635842, -0.15426876936299344, 0.0, 0.5306254434438489, 2.99595030590511});
  expect_values(nn::ReLU()(x), {5}, {0.0, 0.0, 0.0, 0.7, 3.0});
  expect_values(nn::LeakyReLU(0.1)(x), {5}, {-0.2, -0.05, 0.0, 0.7, 3.0});
  std::vector<double> sig, th;
  for (double v : x.to_vector<double>()) {
    sig.push_back(1.0 / (1.0 + std::exp(-v)));
    th.push_back(std::tanh(v));
  }
  expect_values(nn::Sigmoid()(x), {5}, sig);
  expect_values(nn::Tanh()(x), {5}, th);
  const Tensor sm = nn::Softmax()(x);
  EXPECT_NEAR(ops::sum(sm).item(), 1.0, 1e-15);
  expect_values(nn::LogSoftmax()(x), {5}, ops::log(sm).to_vector<double>());
  expect_values(nn::SiLU()(x), {5}, (x * nn::Sigmoid()(x)).to_vector<double>());
  EXPECT_EQ(nn::get_activation("softmax")->construct({x}).tensor().to_vector<double>(), sm.to_vector<double>());
  expect_error<ValueError>([] { nn::get_activation("nope"); }, {"'nope'"});
}

TEST(NnFlatten, Shapes) {
  const Tensor x = zeros({2, 3, 4, 5});
  EXPECT_EQ(nn::Flatten()(x).shape(), (Shape{2, 60}));
  EXPECT_EQ(nn::Flatten(0, -1)(x).shape(), (Shape{120}));
  EXPECT_EQ(nn::Flatten(1, 2)(x).shape(), (Shape{2, 12, 5}));
  EXPECT_EQ(nn::Flatten(-2)(x).shape(), (Shape{2, 3, 20}));
  expect_error<ValueError>([] { nn::Flatten()(zeros({4})); }, {"For 'Flatten'", "(4,)"});
  expect_error<ValueError>([&] { nn::Flatten(3, 1)(x); }, {"start_dim 3"});
}

// ---- Dropout ------------------------------------------------------------------------------------------

TEST(NnDropout, TrainingMasksScaleAndAreSeeded) {
  const Tensor x = ones({100, 100}, DType::Float64);
  nn::Dropout a(0.3, 11), b(0.3, 11);
  const auto ya = a(x).to_vector<double>();
  size_t zeros_count = 0;
  for (double v : ya) {
    ASSERT_TRUE(v == 0.0 || std::abs(v - 1.0 / 0.7) < 1e-15) << v;
    zeros_count += v == 0.0;
  }
  EXPECT_NEAR(static_cast<double>(zeros_count) / 10000.0, 0.3, 0.02);
  EXPECT_EQ(b(x).to_vector<double>(), ya);  // the same seed gives the same masks
  EXPECT_NE(a(x).to_vector<double>(), ya);  // each call draws a new mask
  EXPECT_NE(nn::Dropout(0.3, 12)(x).to_vector<double>(), ya);
  // The gradient is the mask itself.
  nn::Dropout c(0.5, 5), c2(0.5, 5);
  const Tensor xs = f64({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {6});
  const Fn f = [&](const std::vector<Tensor>& in) -> Value { return ops::sum(c(in[0])); };
  const auto g = grad(f)({xs}).tensor().to_vector<double>();
  const auto y2 = c2(xs).to_vector<double>();
  for (size_t i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(g[i], y2[i] / (static_cast<double>(i) + 1.0));
}

TEST(NnDropout, EvalAndZeroProbabilityAreIdentity) {
  const Tensor x = f64({1.0, -2.0, 3.0}, {3});
  nn::Dropout d(0.9, 3);
  d.set_train(false);
  EXPECT_EQ(d(x).to_vector<double>(), x.to_vector<double>());
  EXPECT_EQ(nn::Dropout(0.0)(x).to_vector<double>(), x.to_vector<double>());
  expect_error<ValueError>([] { nn::Dropout(1.0); }, {"For 'Dropout'", "[0, 1)"});
  expect_error<ValueError>([] { nn::Dropout(-0.1); }, {"For 'Dropout'"});
  expect_error<DTypeError>([] { nn::Dropout(0.5, 1)(tensor_i32({1, 2}, {2})); }, {"For 'Dropout'", "int32"});
}

// ---- Embedding ----------------------------------------------------------------------------------------

TEST(NnEmbedding, LooksUpRowsAndZeroesPadding) {
  const Tensor table = f64({0.1, 0.2, 1.1, 1.2, 2.1, 2.2}, {3, 2});
  nn::Embedding e(3, 2, {.embedding_table = table, .dtype = DType::Float64});
  expect_values(e(tensor_i32({0, 2, 1, 0}, {2, 2})), {2, 2, 2}, {0.1, 0.2, 2.1, 2.2, 1.1, 1.2, 0.1, 0.2});
  nn::Embedding p(4, 3, {.padding_idx = 1});
  EXPECT_EQ(p.embedding_table.shape(), (Shape{4, 3}));
  const auto t = p.embedding_table.to_vector<double>();
  for (int j = 0; j < 3; ++j) EXPECT_EQ(t[3 + j], 0.0);
  EXPECT_NE(t[0], 0.0);
  EXPECT_EQ(p.parameters_and_names()[0].first, "embedding_table");
  // Gradient: counts of each index, times the cotangent.
  const Fn f = [&](const std::vector<Tensor>&) -> Value { return ops::sum(e(tensor_i32({0, 2, 0}, {3}))); };
  const Value g = grad(f, nullptr, e.trainable_params())({zeros({1})});
  expect_values(g[0].tensor(), {3, 2}, {2.0, 2.0, 0.0, 0.0, 1.0, 1.0});
  expect_error<DTypeError>([&] { e(f64({0.0}, {1})); }, {"For 'Embedding'", "int32"});
  expect_error<ValueError>([] { nn::Embedding(3, 2, {.padding_idx = 3}); }, {"padding_idx 3"});
}

// ---- Conv2d and pooling -------------------------------------------------------------------------------

namespace {
Tensor conv_x() { return f64(pattern(2 * 2 * 6 * 6, 7, 11, 5, 4.0), {2, 2, 6, 6}); }
Tensor conv_w() { return f64(pattern(3 * 2 * 3 * 3, 5, 13, 6, 10.0), {3, 2, 3, 3}); }
Tensor pool_x() { return f64(pattern(2 * 5 * 5, 7, 11, 5, 4.0), {1, 2, 5, 5}); }
}  // namespace

TEST(NnConv2d, PadModesMatchTorch) {
  nn::Conv2d pad(2, 3, 3,
                 {.stride = 2,
                  .pad_mode = "pad",
                  .padding = 1,
                  .has_bias = true,
                  .weight_init = conv_w(),
                  .bias_init = f64({0.1, -0.2, 0.3}, {3}),
                  .dtype = DType::Float64});
  const Tensor y = pad(conv_x());
  ASSERT_EQ(y.shape(), (Shape{2, 3, 3, 3}));
  expect_values(ops::slice(y, {0, 0, 0, 0}, {1, 1, 3, 3}), {1, 1, 3, 3},
                {-0.5250000000000001, 0.775, 0.4, 0.6, -0.7500000000000002, -1.75, 0.875, 1.225, 1.8749999999999998});
  expect_values(ops::slice(y, {1, 2, 0, 0}, {1, 1, 3, 3}), {1, 1, 3, 3},
                {0.325, -0.35, -0.3000000000000001, 1.4, 0.375, 0.9750000000000002, -0.7250000000000001,
                 0.4000000000000001, 0.44999999999999996});

  // "same" with stride 2 on 6x6: output 3x3, one row/column of padding at the bottom/right only.
  nn::Conv2d same(2, 3, 3, {.stride = 2, .weight_init = conv_w(), .dtype = DType::Float64});
  const Tensor s = same(conv_x());
  ASSERT_EQ(s.shape(), (Shape{2, 3, 3, 3}));
  expect_values(ops::slice(s, {0, 0, 0, 0}, {1, 1, 3, 3}), {1, 1, 3, 3},
                {-0.09999999999999984, 1.1, -1.7, 0.22499999999999987, -1.8750000000000007, 1.5750000000000002,
                 0.6000000000000001, -0.9999999999999999, -0.4750000000000001});

  nn::Conv2d valid(2, 3, 3, {.pad_mode = "valid", .dilation = 2, .weight_init = conv_w(), .dtype = DType::Float64});
  const Tensor v = valid(conv_x());
  ASSERT_EQ(v.shape(), (Shape{2, 3, 2, 2}));
  expect_values(ops::slice(v, {0, 0, 0, 0}, {1, 2, 2, 2}), {1, 2, 2, 2},
                {-1.0000000000000002, 0.9749999999999999, -2.625, -0.6499999999999999, -1.4250000000000003, 1.4,
                 -0.42499999999999993, -1.1749999999999998});

  nn::Conv2d grouped(
      2, 4, 3,
      {.group = 2, .weight_init = f64(pattern(4 * 1 * 3 * 3, 3, 7, 3, 5.0), {4, 1, 3, 3}), .dtype = DType::Float64});
  EXPECT_EQ(grouped.weight.shape(), (Shape{4, 1, 3, 3}));
  const Tensor gy = grouped(conv_x());
  ASSERT_EQ(gy.shape(), (Shape{2, 4, 6, 6}));
  expect_values(
      ops::slice(gy, {0, 0, 0, 0}, {1, 1, 1, 6}), {1, 1, 1, 6},
      {-1.2999999999999998, 0.8500000000000001, -0.20000000000000007, -0.14999999999999997, 0.45000000000000007, 0.35});
}

TEST(NnConv2d, DefaultsGradientsAndErrors) {
  nn::Conv2d c(3, 8, {3, 5});
  EXPECT_EQ(c.weight.shape(), (Shape{8, 3, 3, 5}));
  EXPECT_FALSE(c.bias.defined());  // MindSpore's default: no bias
  const double bound = 1.0 / std::sqrt(45.0);
  for (double v : c.weight.to_vector<double>()) ASSERT_LE(std::abs(v), bound);
  EXPECT_EQ(c(zeros({1, 3, 7, 9})).shape(), (Shape{1, 8, 7, 9}));  // "same"

  nn::Conv2d small(2, 2, 2, {.stride = 2, .has_bias = true, .dtype = DType::Float64});
  const Tensor x = f64(pattern(2 * 3 * 3, 7, 11, 5, 4.0), {1, 2, 3, 3});
  const Fn f = [&](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::square(small(a[0]))); };
  const CheckResult r = gradcheck(f, {x});
  EXPECT_TRUE(r.ok) << r.message;
  const Value g = grad(f, nullptr, small.trainable_params())({x});
  EXPECT_EQ(g[0].tensor().shape(), (Shape{2, 2, 2, 2}));
  EXPECT_EQ(g[1].tensor().shape(), (Shape{2}));

  expect_error<ShapeError>([&] { c(zeros({1, 4, 7, 9})); }, {"For 'Conv2d'", "4 channels", "expects 3"});
  expect_error<ShapeError>([&] { c(zeros({3, 7, 9})); }, {"For 'Conv2d'", "4-D"});
  expect_error<ValueError>([] { nn::Conv2d(3, 4, 3, {.group = 2}); }, {"divisible by group 2"});
  expect_error<ValueError>([] { nn::Conv2d(3, 4, 3, {.padding = 1}); }, {"padding must be 0", "'same'"});
  expect_error<ValueError>([] { nn::Conv2d(3, 4, 3, {.pad_mode = "full"}); }, {"pad_mode"});
  expect_error<ValueError>([] { nn::Conv2d(3, 4, 0); }, {"kernel_size"});
}

TEST(NnPool, MaxAndAvgPadModesMatchTorch) {
  const Tensor x = pool_x();
  expect_values(nn::MaxPool2d(2, 2)(x), {1, 2, 2, 2}, {1.0, 1.25, 0.25, 1.0, 1.25, 1.0, 1.25, 0.75});
  expect_values(nn::MaxPool2d(2, 2, "same")(x), {1, 2, 3, 3},
                {1.0, 1.25, 0.75, 0.25, 1.0, 1.25, 0.75, 0.5, -0.5, 1.25, 1.0, 0.5, 1.25, 0.75, 1.0, 0.5, 1.25, -0.75});
  expect_values(nn::MaxPool2d(3, 2, "pad", 1)(x), {1, 2, 3, 3},
                {1.0, 1.25, 1.25, 1.0, 1.0, 1.25, 0.75, 1.0, 0.5, 1.25, 1.0, 1.0, 1.25, 1.25, 1.0, 0.5, 1.25, 0.25});
  expect_values(nn::AvgPool2d(2, 2)(x), {1, 2, 2, 2}, {-0.125, -0.0625, -0.5, 0.25, 0.3125, -0.3125, -0.0625, 0.0});
  expect_values(nn::AvgPool2d(2, 2, "same")(x), {1, 2, 3, 3},
                {-0.125, -0.0625, 0.5, -0.5, 0.25, 0.125, 0.25, -0.375, -0.5, 0.3125, -0.3125, 0.25, -0.0625, 0.0,
                 -0.125, 0.0, 0.75, -0.75});
  const Tensor a = nn::AvgPool2d(3, 1, "pad", 1)(x);
  ASSERT_EQ(a.shape(), (Shape{1, 2, 5, 5}));
  expect_values(
      ops::slice(a, {0, 0, 0, 0}, {1, 1, 1, 5}), {1, 1, 1, 5},
      {-0.05555555555555555, -0.1111111111111111, 0.1388888888888889, 0.08333333333333333, 0.1388888888888889});
  // MindSpore's default stride is 1.
  EXPECT_EQ(nn::MaxPool2d(2)(x).shape(), (Shape{1, 2, 4, 4}));

  // "same" average pooling stays differentiable through the count correction.
  nn::AvgPool2d same(2, 2, "same");
  const Fn f = [&](const std::vector<Tensor>& in) -> Value { return ops::sum(ops::square(same(in[0]))); };
  const CheckResult r = gradcheck(f, {x});
  EXPECT_TRUE(r.ok) << r.message;

  expect_error<ValueError>([] { nn::MaxPool2d(2, 2, "valid", 1); }, {"For 'MaxPool2d'", "padding must be 0"});
  expect_error<ValueError>([] { nn::AvgPool2d(2, 2, "pad", nn::Padding(1, 0, 1, 1)); }, {"opposite sides"});
  expect_error<ShapeError>([] { nn::MaxPool2d(2, 2)(zeros({5, 5})); }, {"For 'MaxPool2d'", "4-D"});
}

// ---- BatchNorm ----------------------------------------------------------------------------------------

namespace {
Tensor bn_x() {
  std::vector<double> v;
  for (int i = 0; i < 48; ++i) v.push_back(static_cast<double>((i * 7) % 17 - 8) / 5.0 + 0.1 * i / 48);
  return f64(v, {4, 3, 2, 2});
}
nn::BatchNormOptions bn_opts() {
  return {.gamma_init = f64({1.5, 0.5, -1.0}, {3}), .beta_init = f64({0.1, 0.2, -0.3}, {3}), .dtype = DType::Float64};
}
}  // namespace

TEST(NnBatchNorm, TrainingUsesBatchStatsAndUpdatesMovingOnes) {
  nn::BatchNorm2d bn(3, bn_opts());
  const Tensor x = bn_x();
  const Tensor r = f64(pattern(48, 3, 5, 2, 3.0), {4, 3, 2, 2});
  const Fn f = [&](const std::vector<Tensor>& in) -> Value { return ops::sum(bn(in[0]) * r); };
  const Value vg = value_and_grad(f, nullptr, bn.trainable_params())({x});
  expect_values(bn.moving_mean, {3}, {0.0028124999999999986, 0.03239583333333334, -0.023020833333333334});
  expect_values(bn.moving_variance, {3}, {1.0215533564814816, 0.9944005787037038, 0.9810366898148148});
  expect_values(vg[1][0].tensor(), {3}, {1.9532125335748731, 3.0446221016394728, 3.0976648047576187}, 1e-10);
  expect_values(vg[1][1].tensor(), {3}, {-0.33333333333333337, 0.3333333333333333, -0.6666666666666666}, 1e-10);

  nn::BatchNorm2d bn2(3, bn_opts());
  const Tensor y = bn2(x);
  ASSERT_EQ(y.shape(), (Shape{4, 3, 2, 2}));
  expect_values(ops::slice(y, {0, 0, 0, 0}, {1, 3, 2, 2}), {1, 3, 2, 2},
                {-2.1877469367025597, -0.21762065595934446, 1.7525056247838704, -1.054851140792271, 0.35114229004986836,
                 -0.7107291836338221, 0.03446320613585846, 0.7796555959055391, 0.10513440154816069, -1.5034523373421766,
                 0.7887240112400427, -0.8198627276502948},
                1e-10);
  bn2(x * 0.5 + 1.0);
  expect_values(bn2.moving_mean, {3}, {0.10393750000000002, 0.14535416666666667, 0.06777083333333334});
  expect_values(bn2.moving_variance, {3}, {0.9497863599537039, 0.9185606655092594, 0.903192193287037});

  // Eval mode: the moving statistics, and nothing is updated.
  bn2.set_train(false);
  const Tensor e = bn2(x);
  expect_values(ops::slice(e, {0, 0, 0, 0}, {1, 1, 2, 2}), {1, 1, 2, 2},
                {-2.522585583550148, -0.36459355805863986, 1.793398467432868, -1.2816600057415095}, 1e-10);
  expect_values(ops::slice(e, {3, 2, 0, 0}, {1, 1, 2, 2}), {1, 1, 2, 2},
                {0.9375230500005459, -0.5377803220972476, -2.0130836941950414, 0.08916880779869436}, 1e-10);
  expect_values(bn2.moving_mean, {3}, {0.10393750000000002, 0.14535416666666667, 0.06777083333333334});
  // Eval-mode output differentiates with respect to the input and gamma/beta.
  const Fn fe = [&](const std::vector<Tensor>& in) -> Value { return ops::sum(ops::square(bn2(in[0]))); };
  const CheckResult c = gradcheck(fe, {x});
  EXPECT_TRUE(c.ok) << c.message;
}

TEST(NnBatchNorm, OneDimensionalInputs) {
  nn::BatchNorm1d bn(3, bn_opts());
  const Tensor x = f64(pattern(15, 5, 9, 4, 3.0), {5, 3});
  expect_values(bn(x), {5, 3},
                {-1.5770405016544613, 0.3336294278416472, 0.8180270011029742, 1.7770405016544613, -0.3345177113665886,
                 -1.4180270011029743, 0.1, 1.0017765670498828, -0.3, -1.5770405016544613, 0.3336294278416472,
                 0.8180270011029742, 1.7770405016544613, -0.3345177113665886, -1.4180270011029743},
                1e-10);
  expect_values(bn.moving_mean, {3}, {-0.03333333333333333, 0.013333333333333334, 0.0});
  expect_values(bn.moving_variance, {3}, {1.0, 0.97, 1.0});

  nn::BatchNorm1d plain(3, {.affine = false, .dtype = DType::Float64});
  EXPECT_TRUE(plain.trainable_params().empty());
  std::vector<double> v;
  for (int i = 0; i < 24; ++i) v.push_back(static_cast<double>((i * 5) % 9 - 4) / 3.0 + i / 60.0);
  const Tensor y = plain(f64(v, {2, 3, 4}));
  ASSERT_EQ(y.shape(), (Shape{2, 3, 4}));
  expect_values(ops::slice(y, {0, 0, 0}, {1, 1, 4}), {1, 1, 4},
                {-1.6126063199074312, 0.36161475052469666, -1.1825779679321162, 0.7916431025000117}, 1e-10);
  expect_values(plain.moving_mean, {3}, {0.004166666666666668, 0.04, 0.0008333333333333332});
  expect_values(plain.moving_variance, {3}, {0.9830873015873016, 0.9934444444444445, 0.9830873015873016});
}

TEST(NnBatchNorm, ForcedStatisticsAndErrors) {
  nn::BatchNorm2d frozen(3, {.use_batch_statistics = false, .dtype = DType::Float64});
  const Tensor x = bn_x();
  expect_values(frozen(x), {4, 3, 2, 2}, (x / std::sqrt(1.0 + 1e-5)).to_vector<double>());  // moving (0, 1)
  EXPECT_EQ(frozen.moving_mean.to_vector<double>(), std::vector<double>(3, 0.0));

  nn::BatchNorm2d bn(3);
  expect_error<ShapeError>([&] { bn(zeros({2, 4, 2, 2})); }, {"For 'BatchNorm2d'", "3 channels", "(2, 4, 2, 2)"});
  expect_error<ShapeError>([&] { bn(zeros({2, 3})); }, {"For 'BatchNorm2d'", "4-D"});
  expect_error<ValueError>([&] { bn(zeros({1, 3, 1, 1})); }, {"more than 1 value per channel"});
  expect_error<ValueError>([] { nn::BatchNorm1d(3, {.momentum = 1.5}); }, {"momentum"});
  bn.set_train(false);
  EXPECT_EQ(bn(zeros({1, 3, 1, 1})).shape(), (Shape{1, 3, 1, 1}));  // eval mode is fine with one value
}

// ---- LayerNorm ----------------------------------------------------------------------------------------

TEST(NnLayerNorm, ValuesMatchTorch) {
  const Tensor x = f64(pattern(24, 7, 13, 6, 4.0), {2, 3, 4});
  std::vector<double> g, b;
  for (int i = 0; i < 12; ++i) {
    g.push_back(static_cast<double>((i * 3) % 5) / 2.0 + 0.5);
    b.push_back(static_cast<double>((i * 2) % 7 - 3) / 10.0);
  }
  nn::LayerNorm ln({3, 4}, {.gamma_init = f64(g, {3, 4}), .beta_init = f64(b, {3, 4}), .dtype = DType::Float64});
  const Tensor y = ln(x);
  ASSERT_EQ(y.shape(), (Shape{2, 3, 4}));
  expect_values(ops::slice(y, {0, 0, 0}, {1, 1, 4}), {1, 1, 4},
                {-1.070328845886914, 0.4135525639246094, -1.1838814098115233, 1.5838814098115233}, 1e-9);
  expect_values(ops::slice(y, {1, 2, 0}, {1, 1, 4}), {1, 1, 4},
                {3.158930490919216, -0.5517860981838433, 1.0966274533358085, -0.48968271030393035}, 1e-9);
  nn::LayerNorm ln4({4}, {.gamma_init = f64({g[0], g[1], g[2], g[3]}, {4}),
                          .beta_init = f64({b[0], b[1], b[2], b[3]}, {4}),
                          .dtype = DType::Float64});
  expect_values(ops::slice(ln4(x), {1, 0, 0}, {1, 1, 4}), {1, 1, 4},
                {0.11099743271767087, -2.401585623218957, 1.2507928116094784, -1.7549871635883547}, 1e-9);
  EXPECT_EQ(ln.parameters_and_names()[0].first, "gamma");
  expect_error<ShapeError>([&] { ln(zeros({2, 4, 3})); }, {"For 'LayerNorm'", "(3, 4)", "(2, 4, 3)"});
  expect_error<ValueError>([] { nn::LayerNorm({}); }, {"For 'LayerNorm'"});
}
