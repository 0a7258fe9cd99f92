// Reductions: values against hand-computed numbers and a naive reference, dtypes, keepdims, axis forms,
// empty and special values, the parallel paths, first and second order gradients, and the error paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "bprop/bprop.h"
#include "kernels/cpu/parallel.h"
#include "expectations.h"

using namespace bprop;

namespace {

using expectations::expect_values;

// x = [[0, 1, 2], [3, 4, 5]]
Tensor x23(DType dt = DType::Float32) { return tensor({0, 1, 2, 3, 4, 5}, {2, 3}, dt); }

void expect_grads(const Fn& f, const std::vector<Tensor>& in, const std::string& what) {
  const CheckResult g1 = gradcheck(f, in);
  EXPECT_TRUE(g1.ok) << what << ": " << g1.message;
  const CheckResult g2 = gradgradcheck(f, in);
  EXPECT_TRUE(g2.ok) << what << ": " << g2.message;
}

template <typename E, typename F>
void expect_error(F f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error thrown, expected one containing \"" << needle << "\"";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// ---- a naive reference: the elements of each output's lane, in row-major order ----------------------

std::vector<std::vector<double>> lanes(const std::vector<double>& x, const Shape& shape, const IntList& axes) {
  std::vector<bool> red(shape.size(), false);
  for (int64_t a : axes) red[static_cast<size_t>(a)] = true;
  int64_t nout = 1;
  for (size_t d = 0; d < shape.size(); ++d) nout *= red[d] ? 1 : shape[d];
  std::vector<std::vector<double>> out(static_cast<size_t>(nout));
  const std::vector<int64_t> st = row_major_strides(shape);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      const int64_t idx = (static_cast<int64_t>(i) / st[d]) % shape[d];
      if (!red[d]) o = o * shape[d] + idx;
    }
    out[static_cast<size_t>(o)].push_back(x[i]);
  }
  return out;
}

double ref(const std::string& op, const std::vector<double>& v, int64_t correction = 1) {
  double s = 0, p = 1, mx = -INFINITY, mn = INFINITY;
  for (double e : v) {
    s += e;
    p *= e;
    mx = std::max(mx, e);
    mn = std::min(mn, e);
  }
  const double n = static_cast<double>(v.size()), mean = s / n;
  double ss = 0, se = 0;
  for (double e : v) {
    ss += (e - mean) * (e - mean);
    se += std::exp(e - mx);
  }
  if (op == "sum") return s;
  if (op == "mean") return mean;
  if (op == "prod") return p;
  if (op == "amax") return mx;
  if (op == "amin") return mn;
  if (op == "logsumexp") return mx + std::log(se);
  if (op == "var") return ss / (n - static_cast<double>(correction));
  if (op == "std") return std::sqrt(ss / (n - static_cast<double>(correction)));
  if (op == "argmax") return static_cast<double>(std::max_element(v.begin(), v.end()) - v.begin());
  if (op == "argmin") return static_cast<double>(std::min_element(v.begin(), v.end()) - v.begin());
  ADD_FAILURE() << "no reference for " << op;
  return 0;
}

Tensor run(const std::string& op, const Tensor& x, const AttrValue& axis, bool keepdims) {
  return call_op(op, {x}, {{"axis", axis}, {"keepdims", keepdims}});
}

// Checks op over every subset of x's axes (as a list; all axes also as null), keepdims both ways.
void check_against_reference(const std::string& op, const Tensor& x, double tol) {
  const std::vector<double> xv = x.to_vector<double>();
  const Shape& shape = x.shape();
  const int64_t rank = x.dim();
  for (int64_t mask = 0; mask < (int64_t{1} << rank); ++mask) {
    IntList axes;
    for (int64_t d = 0; d < rank; ++d) {
      if (mask & (int64_t{1} << d)) axes.push_back(d);
    }
    Shape kept, dropped;
    for (int64_t d = 0; d < rank; ++d) {
      const bool r = (mask & (int64_t{1} << d)) != 0;
      kept.push_back(r ? 1 : shape[static_cast<size_t>(d)]);
      if (!r) dropped.push_back(shape[static_cast<size_t>(d)]);
    }
    std::vector<double> want;
    for (const auto& lane : lanes(xv, shape, axes)) want.push_back(ref(op, lane));
    const std::string what = op + " axes mask " + std::to_string(mask);
    SCOPED_TRACE(what);
    expect_values(run(op, x, axes, false), dropped, want, tol);
    expect_values(run(op, x, axes, true), kept, want, tol);
    if (mask == (int64_t{1} << rank) - 1) expect_values(run(op, x, std::monostate{}, false), {}, want, tol);
  }
}

const std::vector<std::string> kFloatReductions = {"sum", "mean", "prod", "amax", "amin", "logsumexp", "var", "std"};

}  // namespace

// ---- values -------------------------------------------------------------------------------------------

TEST(Reduce, SumAxes) {
  const Tensor x = x23();
  expect_values(ops::sum(x), {}, {15});
  expect_values(ops::sum(x, 0), {3}, {3, 5, 7});
  expect_values(ops::sum(x, 1), {2}, {3, 12});
  expect_values(ops::sum(x, -1), {2}, {3, 12});
  expect_values(ops::sum(x, -2, true), {1, 3}, {3, 5, 7});
  expect_values(ops::sum(x, 1, true), {2, 1}, {3, 12});
  expect_values(ops::sum(x, {0, 1}), {}, {15});
  expect_values(ops::sum(x, {-1, 0}, true), {1, 1}, {15});
  expect_values(ops::sum(x, {}, true), {1, 1}, {15});
  expect_values(ops::sum(x, IntList{}), {2, 3}, {0, 1, 2, 3, 4, 5});  // an empty list reduces nothing
  expect_values(ops::sum(scalar(4.0)), {}, {4});
  expect_values(ops::sum(scalar(4.0), 0), {}, {4});
}

TEST(Reduce, ThreeDimensionalLayouts) {
  const Tensor x = arange(0, 24).view({2, 3, 4});
  expect_values(ops::sum(x, 1), {2, 4}, {12, 15, 18, 21, 48, 51, 54, 57});               // middle axis
  expect_values(ops::sum(x, {0, 2}), {3}, {60, 92, 124});                                 // strided path
  expect_values(ops::sum(x, {0, 2}, true), {1, 3, 1}, {60, 92, 124});
  expect_values(ops::amax(x, {0, 2}), {3}, {15, 19, 23});
  expect_values(ops::argmax(x, 1), {2, 4}, {2, 2, 2, 2, 2, 2, 2, 2});
  expect_values(ops::sum(ones({1, 3, 1}), 0), {3, 1}, {1, 1, 1});                          // size-1 axes
}

TEST(Reduce, HandComputed) {
  const Tensor x = x23();
  expect_values(ops::mean(x), {}, {2.5});
  expect_values(ops::mean(x, 0), {3}, {1.5, 2.5, 3.5});
  expect_values(ops::prod(x + 1.0, 1), {2}, {6, 120});
  expect_values(ops::prod(x + 1.0), {}, {720});
  expect_values(ops::amax(x, 0), {3}, {3, 4, 5});
  expect_values(ops::amin(x, 1, true), {2, 1}, {0, 3});
  expect_values(ops::logsumexp(x, 1), {2}, {2.40760596, 5.40760596});
  expect_values(ops::var(x, 1), {2}, {1, 1});
  expect_values(ops::var(x, 1, false, 0), {2}, {2.0 / 3.0, 2.0 / 3.0});
  expect_values(ops::var(x), {}, {3.5});
  expect_values(ops::stddev(x, 0), {3}, {2.12132034, 2.12132034, 2.12132034});
  expect_values(ops::stddev(x, 0, true, 0), {1, 3}, {1.5, 1.5, 1.5});
  expect_values(ops::logsumexp(tensor({1000, 1000}, {2})), {}, {1000 + std::log(2.0)});
  expect_values(ops::logsumexp(tensor({-1000, -1000}, {2})), {}, {-1000 + std::log(2.0)});
}

TEST(Reduce, Argmax) {
  const Tensor x = tensor({3, 7, 7, 1, 9, 0}, {2, 3});
  const Tensor am = ops::argmax(x);
  EXPECT_EQ(am.dtype(), DType::Int32);
  expect_values(am, {}, {4});  // flat index in row-major order
  expect_values(ops::argmax(x, {}, true), {1, 1}, {4});
  expect_values(ops::argmax(x, 1), {2}, {1, 1});  // ties: the first
  expect_values(ops::argmax(x, -2, true), {1, 3}, {0, 1, 0});
  expect_values(ops::argmin(x), {}, {5});
  expect_values(ops::argmin(x, 0), {3}, {1, 0, 1});
  expect_values(ops::argmax(x, IntList{1}), {2}, {1, 1});
  expect_values(ops::argmax(scalar(2.0)), {}, {0});
  expect_values(ops::argmax(tensor_bool({false, true, true}, {3})), {}, {1});
  expect_values(ops::argmin(tensor_i32({4, -2, 8, -2}, {4})), {}, {1});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expect_values(ops::argmax(tensor({1, nan, 5, nan}, {4})), {}, {1});  // the first NaN, as NumPy
  expect_values(ops::argmin(tensor({1, 5, nan}, {3})), {}, {2});
}

TEST(Reduce, DTypes) {
  const Tensor xi = tensor_i32({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(ops::sum(xi).dtype(), DType::Int32);
  expect_values(ops::sum(xi, 0), {2}, {4, 6});
  EXPECT_EQ(ops::prod(xi).dtype(), DType::Int32);
  expect_values(ops::prod(xi), {}, {24});
  EXPECT_EQ(ops::amax(xi).dtype(), DType::Int32);
  expect_values(ops::amin(xi, 1), {2}, {1, 3});
  EXPECT_EQ(ops::mean(xi).dtype(), DType::Float32);
  expect_values(ops::mean(xi, 1), {2}, {1.5, 3.5});
  EXPECT_EQ(ops::var(xi).dtype(), DType::Float32);
  EXPECT_EQ(ops::stddev(xi).dtype(), DType::Float32);
  EXPECT_EQ(ops::logsumexp(xi).dtype(), DType::Float32);
  const Tensor xb = tensor_bool({true, false, true, true}, {4});
  EXPECT_EQ(ops::sum(xb).dtype(), DType::Int32);
  expect_values(ops::sum(xb), {}, {3});
  EXPECT_EQ(ops::amax(xb).dtype(), DType::Int32);
  expect_values(ops::amax(xb), {}, {1});
  EXPECT_EQ(ops::mean(xb).dtype(), DType::Float32);
  expect_values(ops::mean(xb), {}, {0.75});
  EXPECT_EQ(ops::sum(x23(DType::Float64)).dtype(), DType::Float64);
  const Tensor big = tensor_i32({2147483647, 1}, {2});
  expect_values(ops::sum(big), {}, {-2147483648.0});  // int32 wraps, as NumPy's int32 sum
}

TEST(Reduce, SpecialValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = INFINITY;
  expect_values(ops::amax(tensor({1, nan, 3}, {3})), {}, {nan});
  expect_values(ops::amin(tensor({1, 3, nan}, {3})), {}, {nan});
  expect_values(ops::amax(tensor({-inf, -inf}, {2})), {}, {-inf});
  expect_values(ops::logsumexp(tensor({-inf, -inf}, {2})), {}, {-inf});
  expect_values(ops::logsumexp(tensor({inf, 1}, {2})), {}, {inf});
  expect_values(ops::logsumexp(tensor({nan, 1}, {2})), {}, {nan});
  expect_values(ops::var(tensor({2}, {1})), {}, {nan});  // N - correction = 0
  expect_values(ops::var(tensor({2}, {1}), {}, false, 0), {}, {0});
}

TEST(Reduce, EmptyFollowsNumPy) {
  const Tensor e = zeros({0, 3});
  expect_values(ops::sum(e, 0), {3}, {0, 0, 0});
  expect_values(ops::sum(e), {}, {0});
  expect_values(ops::prod(e, 0), {3}, {1, 1, 1});
  expect_values(ops::mean(e), {}, {std::numeric_limits<double>::quiet_NaN()});
  expect_values(ops::logsumexp(e, 0), {3}, {-INFINITY, -INFINITY, -INFINITY});
  expect_values(ops::sum(e, 1), {0}, {});
  expect_values(ops::amax(e, 1), {0}, {});  // no output element: nothing to fail
  expect_values(ops::argmax(e, 1, true), {0, 1}, {});
  expect_error<ValueError>([&] { ops::amax(e, 0); }, "For 'amax'");
  expect_error<ValueError>([&] { ops::amin(e); }, "(0, 3)");
  expect_error<ValueError>([&] { ops::argmax(e); }, "For 'argmax'");
  expect_error<ValueError>([&] { ops::argmin(e, 0); }, "For 'argmin'");
  // An empty run of reduced axes before kept ones (the layout of axes {0, 2, 3} of NCHW): every lane is empty,
  // nothing is read (once read past the empty input).
  const Tensor z = zeros({1, 1, 0, 2, 8});
  expect_values(ops::sum(z, IntList{4, 0, 1, 2}), {2}, {0, 0});
  expect_values(ops::prod(z, IntList{2, 4}), {1, 1, 2}, {1, 1});
  expect_values(ops::mean(zeros({0, 3, 5}), IntList{0, 2}), {3}, {NAN, NAN, NAN});
  expect_error<ValueError>([&] { ops::amax(z, IntList{2, 4}); }, "For 'amax'");
}

TEST(Reduce, MatchesReferenceOnEveryAxisSubset) {
  const Tensor x = randn({3, 4, 5, 2}, 7, DType::Float64);
  for (const auto& op : kFloatReductions) check_against_reference(op, x, 1e-12);
  const Tensor p = rand({3, 4, 5, 2}, 8, 0.5, 1.5, DType::Float64);
  check_against_reference("prod", p, 1e-12);
  const Tensor xf = randn({2, 3, 4}, 9, DType::Float32);
  for (const auto& op : kFloatReductions) check_against_reference(op, xf, 1e-5);
  const Tensor xi = tensor_i32({5, -3, 8, 0, 2, 2, -7, 9, 1, 4, 4, -1}, {2, 3, 2});
  for (const auto& op : {"sum", "amax", "amin"}) check_against_reference(op, xi, 0);
  // Lanes of several blocks longer than the pairwise leaf (axes {0, 2, 3}: 6 blocks of 600), split over threads.
  const Tensor big = randn({6, 5, 20, 30}, 10, DType::Float64);
  for (const auto& op : {"sum", "mean", "amax", "logsumexp", "var"}) check_against_reference(op, big, 1e-12);
  // argmax / argmin take one axis at a time
  for (int64_t a = 0; a < 4; ++a) {
    for (const auto& op : {"argmax", "argmin"}) {
      std::vector<double> want;
      for (const auto& lane : lanes(x.to_vector<double>(), x.shape(), {a})) want.push_back(ref(op, lane));
      Shape s = x.shape();
      s.erase(s.begin() + a);
      SCOPED_TRACE(std::string(op) + " axis " + std::to_string(a));
      expect_values(run(op, x, a, false), s, want, 0);
    }
  }
}

TEST(Reduce, LargeInputsAndParallelPaths) {
  const int saved = cpu::num_threads();
  for (int threads : {1, 2, 4}) {
    cpu::set_num_threads(threads);
    SCOPED_TRACE("threads " + std::to_string(threads));
    // Accuracy: float32 sums accumulate in double (a float32 running sum of 0.1 drifts by ~1%).
    const Tensor tenth = full({1000000}, 0.1);
    expect_values(ops::sum(tenth), {}, {100000.0}, 1e-7);
    expect_values(ops::mean(tenth), {}, {0.1}, 1e-7);
    expect_values(ops::sum(full({250000, 4}, 0.1), 0), {4}, {25000, 25000, 25000, 25000}, 1e-7);
    expect_values(ops::sum(full({3, 400000}, 0.1), 1), {3}, {40000, 40000, 40000}, 1e-7);
    // Layouts of large inputs against the reference.
    const Tensor x = randn({300, 700}, 11, DType::Float64);
    for (const auto& op : {"sum", "amax", "logsumexp", "var", "argmax"}) {
      for (int64_t axis : {0, 1}) {
        std::vector<double> want;
        for (const auto& lane : lanes(x.to_vector<double>(), x.shape(), {axis})) want.push_back(ref(op, lane));
        SCOPED_TRACE(std::string(op) + " axis " + std::to_string(axis));
        expect_values(run(op, x, axis, false), {axis == 0 ? 700 : 300}, want, 1e-10);
      }
    }
    const Tensor y = randn({1, 200001}, 12, DType::Float64);  // one long lane split over threads
    for (const auto& op : {"sum", "amin", "std", "argmin", "logsumexp"}) {
      std::vector<double> want = {ref(op, y.to_vector<double>())};
      SCOPED_TRACE(op);
      expect_values(run(op, y, std::monostate{}, false), {}, want, 1e-10);
    }
  }
  cpu::set_num_threads(saved);
}

// ---- gradients ----------------------------------------------------------------------------------------

TEST(ReduceGrad, GradcheckEveryOpAndAxisForm) {
  const std::vector<std::pair<AttrValue, bool>> forms = {
      {std::monostate{}, false}, {std::monostate{}, true}, {int64_t{0}, false}, {int64_t{-1}, true},
      {IntList{0, 2}, false},    {IntList{1}, true},       {IntList{2, 1}, false}};
  const Tensor normal = randn({2, 3, 4}, 21, DType::Float64);
  const Tensor positive = rand({2, 3, 4}, 22, 0.5, 1.5, DType::Float64);
  for (const auto& op : kFloatReductions) {
    for (const auto& [axis, keepdims] : forms) {
      const AttrValue ax = axis;
      const bool kd = keepdims;
      const Fn f = [op, ax, kd](const std::vector<Tensor>& a) -> Value { return run(op, a[0], ax, kd); };
      expect_grads(f, {op == "prod" ? positive : normal},
                   op + " axis " + attr_value_str(ax) + (kd ? " keepdims" : ""));
    }
  }
  for (int64_t correction : {0, 1}) {
    for (const char* op : {"var", "std"}) {
      const Fn f = [op, correction](const std::vector<Tensor>& a) -> Value {
        return call_op(op, {a[0]}, {{"axis", int64_t{1}}, {"correction", correction}});
      };
      expect_grads(f, {normal}, std::string(op) + " correction " + std::to_string(correction));
    }
  }
  // prod through a zero: exact to second order with one zero per lane (the product is multilinear, so
  // central differences are exact there too).
  const Tensor one_zero = tensor({0.5, 0, 1.5, -0.7, 2, 1.4, 0, 0.9, 0, -1.3, 0.8, 1.2}, {3, 4}, DType::Float64);
  for (int64_t axis : {0, 1}) {
    const Fn f = [axis](const std::vector<Tensor>& a) -> Value { return ops::prod(a[0], axis); };
    expect_grads(f, {one_zero}, "prod with zeros, axis " + std::to_string(axis));
  }
  // Composite: a reduction of a reduction, and reductions feeding each other.
  const Fn composite = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::logsumexp(a[0], 2) * ops::mean(a[0], {0, 2}, false), {});
  };
  expect_grads(composite, {normal}, "composite");
}

TEST(ReduceGrad, HandComputed) {
  // sum over axis 0 of a (2, 3): every element gets the dout of its column.
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::sum(a[0], 0) * tensor({1, 2, 3}, {3}));
  };
  expect_values(grad(f)({x23()}).tensor(), {2, 3}, {1, 2, 3, 1, 2, 3});
  // mean: 1 / N each.
  const Fn m = [](const std::vector<Tensor>& a) -> Value { return ops::mean(a[0]); };
  expect_values(grad(m)({x23()}).tensor(), {2, 3}, {1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6});
  // prod: the product of the other elements (out / x without zeros).
  const Fn p = [](const std::vector<Tensor>& a) -> Value { return ops::prod(a[0]); };
  expect_values(grad(p)({tensor({2, 3, 4}, {3})}).tensor(), {3}, {12, 8, 6});
  const Fn prow = [](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::prod(a[0], 1)); };
  // one zero in row 0 (it gets 2 * 4, the others 0), two zeros in row 1 (all 0), none in row 2
  expect_values(grad(prow)({tensor({2, 0, 4, 0, 5, 0, 1, 2, 3}, {3, 3})}).tensor(), {3, 3},
                {0, 8, 0, 0, 0, 0, 6, 3, 2});
  // amax / amin: ties share dout evenly, as PyTorch's amax.
  const Fn mx = [](const std::vector<Tensor>& a) -> Value { return ops::amax(a[0]); };
  expect_values(grad(mx)({tensor({1, 3, 3}, {3})}).tensor(), {3}, {0, 0.5, 0.5});
  const Fn mn = [](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::amin(a[0], 1)); };
  expect_values(grad(mn)({tensor({1, 1, 1, 5, 2, 9}, {2, 3})}).tensor(), {2, 3},
                {1.0 / 3, 1.0 / 3, 1.0 / 3, 0, 1, 0});
  // logsumexp: softmax.
  const Fn l = [](const std::vector<Tensor>& a) -> Value { return ops::logsumexp(a[0]); };
  const double e = std::exp(1.0);
  expect_values(grad(l)({tensor({0, 1}, {2})}).tensor(), {2}, {1 / (1 + e), e / (1 + e)});
  // var: 2 (x - mean) / (N - 1); std: (x - mean) / ((N - 1) std).
  const Fn v = [](const std::vector<Tensor>& a) -> Value { return ops::var(a[0]); };
  expect_values(grad(v)({tensor({1, 2, 6}, {3})}).tensor(), {3}, {-2, -1, 3});
  const Fn s = [](const std::vector<Tensor>& a) -> Value { return ops::stddev(a[0], {}, false, 0); };
  expect_values(grad(s)({tensor({1, 3}, {2})}).tensor(), {2}, {-0.5, 0.5});
  // second order: the Hessian of var(x) (correction 1, N = 3) is 2 / (N - 1) (I - 1/N) = I - 1/3; row 0 of it.
  const Fn dv = [v](const std::vector<Tensor>& a) -> Value {
    return ops::sum(grad(v)(a).tensor() * tensor({1, 0, 0}, {3}));
  };
  expect_values(grad(dv)({tensor({1, 2, 6}, {3})}).tensor(), {3}, {2.0 / 3, -1.0 / 3, -1.0 / 3});
}

TEST(ReduceGrad, ArgmaxIsNotDifferentiable) {
  const OpDef& op = registry().get("argmax");
  EXPECT_TRUE(op.no_grad);
  EXPECT_TRUE(registry().get("argmin").no_grad);
  for (const auto& name : kFloatReductions) EXPECT_TRUE(registry().get(name).bprop) << name;
}

// ---- errors -------------------------------------------------------------------------------------------

TEST(ReduceErrors, AxisAndAttributes) {
  const Tensor x = x23();
  expect_error<ShapeError>([&] { ops::sum(x, 2); }, "For 'sum'");
  expect_error<ShapeError>([&] { ops::mean(x, -3); }, "For 'mean'");
  expect_error<ShapeError>([&] { ops::amax(x, {0, 5}); }, "For 'amax'");
  expect_error<ValueError>([&] { ops::sum(x, {1, 1}); }, "more than once");
  expect_error<ValueError>([&] { ops::prod(x, {0, -2}); }, "For 'prod'");
  expect_error<ValueError>([&] { ops::var(x, 0, false, 2); }, "'correction' must be 0 or 1");
  expect_error<ValueError>([&] { ops::stddev(x, 0, false, -1); }, "For 'std'");
  expect_error<ValueError>([&] { ops::argmax(x, {0, 1}); }, "For 'argmax'");
  expect_error<ValueError>([&] { ops::argmin(x, IntList{}); }, "one axis or null");
  expect_error<ShapeError>([&] { ops::argmax(x, 2); }, "For 'argmax'");
  expect_error<ValueError>([&] { call_op("sum", {x}, {{"axis", std::string("rows")}}); }, "'axis'");
  expect_error<ValueError>([&] { call_op("sum", {x}, {{"keepdims", int64_t{1}}}); }, "'keepdims'");
}
