// The fast paths of the elementwise ops: float32 unary ops through the vectorised functions (checked against
// float64 over a range that crosses the thread split), the fused gradient ops tanh_grad and sigmoid_grad
// (values, their own bprops to third order), the float32 arithmetic loops with a scalar operand, and the
// backward graph of W5's loss (bench/README.md), which must run one fused op per activation and no wasted
// passes.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bprop/bprop.h"
#include "bprop/graph_export.h"

using namespace bprop;

namespace {

Tensor f64(std::vector<double> v) { return tensor(v, {static_cast<int64_t>(v.size())}, DType::Float64); }

double sigmoid_ref(double x) { return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x)); }

// n points spread over [lo, hi].
std::vector<double> grid(int64_t n, double lo, double hi) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = lo + (hi - lo) * static_cast<double>(i) / (n - 1);
  return v;
}

}  // namespace

TEST(ElementwiseFastPaths, Float32UnaryOpsMatchFloat64) {
  // 100,003 elements: more than one thread chunk, and a tail that is no multiple of a vector width.
  const std::vector<double> xs = grid(100003, -30.0, 30.0);
  const Tensor x32 = tensor(xs, {static_cast<int64_t>(xs.size())}, DType::Float32);
  struct Case {
    const char* op;
    double (*ref)(double);
    double lo;  // inputs below are skipped (log's domain)
  };
  const Case cases[] = {
      {"exp", [](double v) { return std::exp(v); }, -1e9},
      {"expm1", [](double v) { return std::expm1(v); }, -1e9},
      {"log", [](double v) { return std::log(v); }, 1e-30},
      {"log1p", [](double v) { return std::log1p(v); }, -0.999},
      {"tanh", [](double v) { return std::tanh(v); }, -1e9},
      {"sigmoid", sigmoid_ref, -1e9},
      {"softplus", [](double v) { return std::max(v, 0.0) + std::log1p(std::exp(-std::fabs(v))); }, -1e9},
      {"silu", [](double v) { return v * sigmoid_ref(v); }, -1e9},
  };
  for (const Case& c : cases) {
    const std::vector<float> y = call_op(c.op, {x32}).to_vector<float>();
    ASSERT_EQ(y.size(), xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const double xi = static_cast<float>(xs[i]);
      if (xi < c.lo) continue;
      const double exact = c.ref(xi);
      ASSERT_NEAR(y[i], exact, 4.0 * std::numeric_limits<float>::epsilon() * std::fabs(exact) + 1e-38)
          << c.op << " at " << xi;
    }
  }
}

TEST(ElementwiseFastPaths, Float64KeepsTheStdFunctions) {
  const Tensor x = f64({-3.0, -0.5, 0.25, 2.0});
  const std::vector<double> t = ops::tanh(x).to_vector<double>();
  const std::vector<double> s = ops::sigmoid(x).to_vector<double>();
  const std::vector<double> xv = x.to_vector<double>();
  for (size_t i = 0; i < xv.size(); ++i) {
    EXPECT_EQ(t[i], std::tanh(xv[i]));
    EXPECT_DOUBLE_EQ(s[i], sigmoid_ref(xv[i]));
  }
}

TEST(ElementwiseFastPaths, FusedGradientOpsComputeTheirFormulas) {
  const Tensor y = f64({-0.9, -0.2, 0.0, 0.4, 0.95});
  const Tensor dy = f64({1.5, -2.0, 3.0, 0.5, -1.0});
  const std::vector<double> yv = y.to_vector<double>(), dv = dy.to_vector<double>();
  const std::vector<double> tg = call_op("tanh_grad", {y, dy}).to_vector<double>();
  const std::vector<double> sg = call_op("sigmoid_grad", {y, dy}).to_vector<double>();
  for (size_t i = 0; i < yv.size(); ++i) {
    EXPECT_DOUBLE_EQ(tg[i], dv[i] * (1.0 - yv[i] * yv[i]));
    EXPECT_DOUBLE_EQ(sg[i], dv[i] * yv[i] * (1.0 - yv[i]));
  }
  // float32, a broadcast dy, and int32 promoted to float32
  const Tensor y32 = tensor({0.5, -0.25, 0.75, 0.1}, {2, 2}, DType::Float32);
  const Tensor d32 = tensor({2.0, -1.0}, {2}, DType::Float32);
  const Tensor g = call_op("tanh_grad", {y32, d32});
  EXPECT_EQ(g.dtype(), DType::Float32);
  EXPECT_EQ(g.shape(), (Shape{2, 2}));
  EXPECT_FLOAT_EQ(g.to_vector<float>()[3], -1.0f * (1.0f - 0.1f * 0.1f));
  EXPECT_EQ(call_op("sigmoid_grad", {tensor_i32({1, 2}, {2}), d32}).dtype(), DType::Float32);
  EXPECT_THROW(call_op("tanh_grad", {y32, tensor({1, 2, 3}, {3})}), ShapeError);
}

TEST(ElementwiseFastPaths, TanhAndSigmoidDifferentiateToThirdOrder) {
  // tanh: t' = 1 - t^2, t'' = -2 t (1 - t^2), t''' = (6 t^2 - 2)(1 - t^2)
  // sigmoid: s' = s (1 - s), s'' = s'(1 - 2 s), s''' = s'(1 - 6 s + 6 s^2)
  const std::vector<double> xs = {-1.7, -0.3, 0.0, 0.6, 2.1};
  const Fn tanh_fn = [](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::tanh(a[0])); };
  const Fn sig_fn = [](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::sigmoid(a[0])); };
  auto d = [](const Fn& f) -> Fn {
    return [g = grad(f)](const std::vector<Tensor>& a) -> Value { return ops::sum(g(a).tensor()); };
  };
  const Fn t1 = grad(tanh_fn), t2 = grad(d(tanh_fn)), t3 = grad(d(d(tanh_fn)));
  const Fn s1 = grad(sig_fn), s2 = grad(d(sig_fn)), s3 = grad(d(d(sig_fn)));
  const Tensor x = f64(xs);
  const std::vector<double> a1 = t1({x}).tensor().to_vector<double>(), a2 = t2({x}).tensor().to_vector<double>(),
                            a3 = t3({x}).tensor().to_vector<double>();
  const std::vector<double> b1 = s1({x}).tensor().to_vector<double>(), b2 = s2({x}).tensor().to_vector<double>(),
                            b3 = s3({x}).tensor().to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double t = std::tanh(xs[i]), s = sigmoid_ref(xs[i]), ds = s * (1 - s);
    EXPECT_NEAR(a1[i], 1 - t * t, 1e-14);
    EXPECT_NEAR(a2[i], -2 * t * (1 - t * t), 1e-14);
    EXPECT_NEAR(a3[i], (6 * t * t - 2) * (1 - t * t), 1e-13);
    EXPECT_NEAR(b1[i], ds, 1e-14);
    EXPECT_NEAR(b2[i], ds * (1 - 2 * s), 1e-14);
    EXPECT_NEAR(b3[i], ds * (1 - 6 * s + 6 * s * s), 1e-13);
  }
  // and the finite-difference checks of the composition, at second order
  const Fn w5 = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::tanh(a[0] * a[0] + 1.0) * ops::sigmoid(a[0]));
  };
  const CheckResult r1 = gradcheck(w5, {x});
  EXPECT_TRUE(r1.ok) << r1.message;
  const CheckResult r2 = gradgradcheck(w5, {x});
  EXPECT_TRUE(r2.ok) << r2.message;
}

TEST(ElementwiseFastPaths, MulOfOneTensorWithItselfKeepsBothPaths) {
  const Tensor x = f64({-1.5, 0.5, 2.0});
  // d/dx sum(x * x) = 2 x, d2 = 2
  const Fn sq = [](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0] * a[0]); };
  const std::vector<double> g = grad(sq)({x}).tensor().to_vector<double>();
  EXPECT_EQ(g, (std::vector<double>{-3.0, 1.0, 4.0}));
  const Fn dsq = [&](const std::vector<Tensor>& a) -> Value { return ops::sum(grad(sq)(a).tensor()); };
  EXPECT_EQ(grad(dsq)({x}).tensor().to_vector<double>(), (std::vector<double>{2.0, 2.0, 2.0}));
  // x * stop_gradient(x): the same values but not the same tensor, so the gradient is x (not 2 x) and its
  // derivative is 0 (the stopped factor carries no history).
  const Fn half = [](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0] * ops::stop_gradient(a[0])); };
  EXPECT_EQ(grad(half)({x}).tensor().to_vector<double>(), x.to_vector<double>());
  const Fn dhalf = [&](const std::vector<Tensor>& a) -> Value { return ops::sum(grad(half)(a).tensor()); };
  EXPECT_EQ(grad(dhalf)({x}).tensor().to_vector<double>(), (std::vector<double>{0.0, 0.0, 0.0}));
}

TEST(ElementwiseFastPaths, Float32ArithmeticWithScalarOperands) {
  const Tensor x = tensor({1.0, -2.0, 4.0, 0.5}, {2, 2}, DType::Float32);
  const Tensor s = scalar(2.0, DType::Float32);
  EXPECT_EQ((x + s).to_vector<float>(), (std::vector<float>{3, 0, 6, 2.5}));
  EXPECT_EQ((s - x).to_vector<float>(), (std::vector<float>{1, 4, -2, 1.5}));
  EXPECT_EQ((x * s).to_vector<float>(), (std::vector<float>{2, -4, 8, 1}));
  EXPECT_EQ((s / x).to_vector<float>(), (std::vector<float>{2, -1, 0.5, 4}));
  // a one-element operand of rank 2 still broadcasts through the scalar loop
  const Tensor one = tensor({10.0}, {1, 1}, DType::Float32);
  EXPECT_EQ((x - one).to_vector<float>(), (std::vector<float>{-9, -12, -6, -9.5}));
  // mixed dtypes leave the float32 loops and promote
  EXPECT_EQ((x * scalar(2.0, DType::Float64)).dtype(), DType::Float64);
  EXPECT_EQ((tensor_i32({1, 2}, {2}) / tensor_i32({2, 4}, {2})).to_vector<float>(), (std::vector<float>{0.5, 0.5}));
}

TEST(ElementwiseFastPaths, W5BackwardRunsFusedOpsAndNoWastedPasses) {
  // loss = sum(tanh(x * x + 1) * sigmoid(x)), the benchmark's W5, on a small x (one statement per op, so the
  // forward order is fixed)
  const Fn w5 = [](const std::vector<Tensor>& a) -> Value {
    const Tensor u = a[0] * a[0] + 1.0;
    const Tensor t = ops::tanh(u);
    const Tensor s = ops::sigmoid(a[0]);
    return ops::sum(t * s);
  };
  const Tensor x = tensor({-1.0, 0.5, 2.0}, {3}, DType::Float32);
  const nlohmann::json g = nlohmann::json::parse(export_grad_graph(w5, {x}));
  std::vector<std::string> forward;
  for (const auto& f : g["forward"]) forward.push_back(f["op"]);
  ASSERT_EQ(forward, (std::vector<std::string>{"mul", "add", "tanh", "sigmoid", "mul", "sum"}));
  std::map<std::string, std::vector<std::string>> bprop_ops;  // forward op -> ops its bprop ran
  int accumulations = 0;
  for (const auto& step : g["backward"]) {
    const std::string op = forward[step["forward"].get<size_t>()];
    std::vector<std::string>& ran = bprop_ops[op + "#" + std::to_string(step["forward"].get<int>())];
    for (const auto& o : step["ops"]) ran.push_back(o["op"]);
    accumulations += static_cast<int>(step["accumulate"].size());
  }
  EXPECT_EQ(bprop_ops["tanh#2"], (std::vector<std::string>{"tanh_grad"}));
  EXPECT_EQ(bprop_ops["sigmoid#3"], (std::vector<std::string>{"sigmoid_grad"}));
  EXPECT_EQ(bprop_ops["add#1"], (std::vector<std::string>{}));      // the constant 1 needs no sum_to
  EXPECT_EQ(bprop_ops["mul#0"], (std::vector<std::string>{"mul"}));  // x * x: dout x once
  EXPECT_EQ(bprop_ops["mul#4"], (std::vector<std::string>{"mul", "mul"}));
  EXPECT_EQ(accumulations, 2);  // x's gradient: the two uses in x * x, then the sigmoid path
  // the gradient itself: (1 - t^2) 2 x s + t s (1 - s)
  const std::vector<float> dx = grad(w5)({x}).tensor().to_vector<float>();
  const std::vector<double> xv = {-1.0, 0.5, 2.0};
  for (size_t i = 0; i < xv.size(); ++i) {
    const double t = std::tanh(xv[i] * xv[i] + 1), s = sigmoid_ref(xv[i]);
    EXPECT_NEAR(dx[i], (1 - t * t) * 2 * xv[i] * s + t * s * (1 - s), 1e-6);
  }
}
