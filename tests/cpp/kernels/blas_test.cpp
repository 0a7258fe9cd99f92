// The GEMM dispatch (core/kernels/cpu/blas.h): the BLAS and Eigen paths agree with a plain loop and with each
// other (every transpose, padded strides, beta, above and below the size threshold, float32 and float64, split
// over threads), so do matmul and conv2d values and gradients with BLAS routing on and off, gradients on the
// BLAS path pass gradcheck/gradgradcheck, BPROP_BLAS=off keeps to Eigen, and OpenBLAS runs the kernel chosen
// for this CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "bprop/bprop.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/parallel.h"
#include "kernels/gemm_reference.h"

using namespace bprop;
using cpu::Trans;
using bprop::testing::gemm_values;
using bprop::testing::GemmCase;
using bprop::testing::reference_gemm;

namespace {

// Restores BLAS routing and the thread count whatever a test changed.
class Blas : public ::testing::Test {
 protected:
  void TearDown() override {
    cpu::set_blas_enabled(true);
    cpu::set_num_threads(threads_);
  }
  const int threads_ = cpu::num_threads();
};

// Runs one GEMM through `run` (a callable taking the template transposes) and returns C.
template <typename T, typename Run>
std::vector<T> run_gemm(const GemmCase& g, std::vector<T> c, Run run) {
  if (g.ta && g.tb) run.template operator()<Trans::Yes, Trans::Yes>(c);
  else if (g.ta) run.template operator()<Trans::Yes, Trans::No>(c);
  else if (g.tb) run.template operator()<Trans::No, Trans::Yes>(c);
  else run.template operator()<Trans::No, Trans::No>(c);
  return c;
}

template <typename T>
void check_gemm(const GemmCase& g, double tol) {
  SCOPED_TRACE(std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k) + " ta " +
               std::to_string(g.ta) + " tb " + std::to_string(g.tb) + " pad " + std::to_string(g.pad) + " beta " +
               std::to_string(g.beta));
  const int64_t a_rows = g.ta ? g.k : g.m, a_cols = g.ta ? g.m : g.k;
  const int64_t b_rows = g.tb ? g.n : g.k, b_cols = g.tb ? g.k : g.n;
  const int64_t lda = a_cols + g.pad, ldb = b_cols + g.pad, ldc = g.n + g.pad;
  const std::vector<T> a = gemm_values<T>(static_cast<size_t>(a_rows * lda), 1);
  const std::vector<T> b = gemm_values<T>(static_cast<size_t>(b_rows * ldb), 2);
  const std::vector<T> c0 = gemm_values<T>(static_cast<size_t>(g.m * ldc), 3);
  const std::vector<double> want = reference_gemm(g, a, lda, b, ldb, c0, ldc);
  const T beta = static_cast<T>(g.beta);
  auto expect_near = [&](const std::vector<T>& got, const char* path) {
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(static_cast<double>(got[i]), want[i], tol * (1.0 + std::abs(want[i]))) << path << " at " << i;
    }
  };
  expect_near(run_gemm<T>(g, c0, [&]<Trans TA, Trans TB>(std::vector<T>& c) {
                cpu::detail::eigen_gemm<TA, TB>(g.m, g.n, g.k, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
              }),
              "eigen");
  if (cpu::blas_active() && g.k > 0) {  // (CBLAS rejects k = 0 strides; the dispatch never sends it)
    expect_near(run_gemm<T>(g, c0, [&]<Trans TA, Trans TB>(std::vector<T>& c) {
                  cpu::detail::gemm_on<TA, TB>(true, g.m, g.n, g.k, a.data(), lda, b.data(), ldb, beta, c.data(),
                                               ldc);
                }),
                "blas");
  }
  // The dispatching entry points, serial and split over threads: the same numbers.
  expect_near(run_gemm<T>(g, c0, [&]<Trans TA, Trans TB>(std::vector<T>& c) {
                cpu::gemm<TA, TB>(g.m, g.n, g.k, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
              }),
              "gemm");
  for (int threads : {1, 2, 3}) {
    cpu::set_num_threads(threads);
    expect_near(run_gemm<T>(g, c0, [&]<Trans TA, Trans TB>(std::vector<T>& c) {
                  cpu::gemm_threaded<TA, TB>(g.m, g.n, g.k, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
                }),
                "gemm_threaded");
  }
}

std::vector<GemmCase> gemm_cases() {
  std::vector<GemmCase> cases;
  // below the threshold (Eigen), at it, far above it, tall and wide (split by rows or by columns), vectors
  const int64_t sizes[][3] = {{3, 5, 2}, {16, 16, 16}, {17, 33, 29}, {300, 40, 50}, {20, 400, 60}, {1, 300, 70},
                              {90, 1, 80}, {2, 0, 5},   {4, 3, 0}};
  for (const auto& s : sizes) {
    for (int t = 0; t < 4; ++t) {
      cases.push_back({s[0], s[1], s[2], (t & 1) != 0, (t & 2) != 0, t == 3 ? 3 : 0, t == 1 ? 1.0 : 0.0});
    }
  }
  cases.push_back({40, 50, 60, false, true, 2, 0.5});
  return cases;
}

// Flat values of t.
std::vector<double> flat(const Tensor& t) { return t.to_vector<double>(); }

// Elementwise within tol relative to the largest element (a gradient summed over many terms can cancel to a
// small value whose rounding error is that of its terms).
void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 1.0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol * scale) << what << " element " << i;
}

// f's value and gradients (w.r.t. every input) with BLAS routing on and off agree within tol.
void expect_paths_agree(const Fn& f, const std::vector<Tensor>& inputs, double tol, const std::string& what) {
  std::vector<int> all(inputs.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  auto run = [&](bool blas) {
    cpu::set_blas_enabled(blas);
    const Value r = value_and_grad(f, all)(inputs);
    std::vector<std::vector<double>> out{flat(r[0].tensor())};
    for (size_t i = 0; i < inputs.size(); ++i) out.push_back(flat(r[1][i].tensor()));
    return out;
  };
  const auto on = run(true), off = run(false);
  cpu::set_blas_enabled(true);
  for (size_t i = 0; i < on.size(); ++i) {
    expect_close(on[i], off[i], tol, what + (i == 0 ? " value" : " gradient " + std::to_string(i - 1)));
  }
}

// sum(f(inputs) * weights): a scalar whose gradient is a non-uniform cotangent through f.
Fn weighted_sum(std::function<Tensor(const std::vector<Tensor>&)> f) {
  return [f](const std::vector<Tensor>& a) -> Value {
    const Tensor y = f(a);
    return ops::sum(y * ops::sin(ops::reshape(arange(0, static_cast<double>(y.numel()), 1, y.dtype()),
                                              y.shape())));
  };
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

TEST_F(Blas, NameAndToggle) {
  const std::string name = cpu::blas_name();
  EXPECT_TRUE(name == "eigen" || name.rfind("openblas", 0) == 0) << name;
  EXPECT_EQ(cpu::blas_active(), name != "eigen");
  cpu::set_blas_enabled(false);
  EXPECT_EQ(cpu::blas_name(), "eigen");
  EXPECT_FALSE(cpu::blas_active());
  EXPECT_FALSE(cpu::detail::use_blas<float>(512, 512, 512));
  cpu::set_blas_enabled(true);
  EXPECT_EQ(cpu::blas_name(), name);
}

TEST_F(Blas, OnlyLargeFloatGemmsGoToBlas) {
  const bool active = cpu::blas_active();
  EXPECT_FALSE(cpu::detail::use_blas<float>(8, 8, 8));  // 512 multiply-adds
  EXPECT_FALSE(cpu::detail::use_blas<double>(15, 16, 16));
  EXPECT_EQ(cpu::detail::use_blas<float>(16, 16, 16), active);  // exactly kBlasMinMacs
  EXPECT_EQ(cpu::detail::use_blas<double>(128, 10, 256), active);
  EXPECT_FALSE(cpu::detail::use_blas<int32_t>(256, 256, 256));  // BLAS has no integer GEMM
  EXPECT_FALSE(cpu::detail::use_blas<float>(int64_t{1} << 32, 2, 2));  // beyond CBLAS's int sizes
}

TEST_F(Blas, GemmMatchesLoopsOnBothPaths) {
  if (!cpu::blas_active()) std::cout << "note: no OpenBLAS in this process; only the Eigen path is checked\n";
  for (const GemmCase& g : gemm_cases()) {
    check_gemm<float>(g, 1e-5 * std::sqrt(static_cast<double>(g.k) + 1.0));
    check_gemm<double>(g, 1e-13 * (static_cast<double>(g.k) + 1.0));
  }
}

TEST_F(Blas, IntegerGemmStaysExact) {
  const Tensor a = ops::cast(ops::reshape(arange(0, 64 * 48, 1, DType::Float64), {64, 48}), DType::Int32);
  const Tensor b = ops::cast(ops::reshape(arange(0, 48 * 40, 1, DType::Float64), {48, 40}), DType::Int32);
  const Tensor c = ops::matmul(a, b);
  ASSERT_EQ(c.dtype(), DType::Int32);
  const std::vector<double> got = flat(c);
  for (int64_t i : {0, 17, 63}) {
    for (int64_t j : {0, 5, 39}) {
      int64_t s = 0;
      for (int64_t p = 0; p < 48; ++p) s += (i * 48 + p) * (p * 40 + j);
      EXPECT_EQ(got[static_cast<size_t>(i * 40 + j)], static_cast<double>(s)) << i << ", " << j;
    }
  }
}

TEST_F(Blas, MatmulValuesAndGradientsAgreeOnBothPaths) {
  // (a shape, b shape): above and below the threshold, plain, batched, broadcast batch, shared b, vectors
  const std::vector<std::pair<Shape, Shape>> forms = {
      {{3, 4}, {4, 5}},          {{64, 48}, {48, 40}},      {{5, 40, 30}, {5, 30, 20}}, {{2, 1, 20, 30}, {3, 30, 25}},
      {{4, 30, 40}, {40, 35}},   {{30, 40}, {2, 40, 33}},   {{300}, {300, 50}},         {{70, 200}, {200}},
      {{2, 3}, {4, 3, 2}},       {{128, 784}, {784, 16}}};
  for (int threads : {1, 2}) {
    cpu::set_num_threads(threads);
    for (DType dt : {DType::Float32, DType::Float64}) {
      const double tol = dt == DType::Float32 ? 2e-5 : 1e-12;
      uint64_t seed = 100;
      for (const auto& [as, bs] : forms) {
        const Fn f = weighted_sum([](const std::vector<Tensor>& x) { return ops::matmul(x[0], x[1]); });
        expect_paths_agree(f, {randn(as, seed, dt), randn(bs, seed + 1, dt)}, tol,
                           shape_str(as) + " @ " + shape_str(bs) + " " + dtype_name(dt) + " threads " +
                               std::to_string(threads));
        seed += 2;
      }
    }
  }
}

TEST_F(Blas, Conv2dValuesAndGradientsAgreeOnBothPaths) {
  struct ConvCase {
    Shape x, w;
    int64_t stride, padding, dilation, groups;
    bool bias;
  };
  const std::vector<ConvCase> cases = {
      {{1, 1, 4, 4}, {1, 1, 2, 2}, 1, 0, 1, 1, false},     // below the threshold
      {{4, 8, 12, 12}, {16, 8, 3, 3}, 1, 1, 1, 1, true},   // above: every GEMM on BLAS
      {{3, 6, 11, 9}, {8, 3, 3, 2}, 2, 1, 2, 2, true},     // strided, dilated, grouped
      {{2, 32, 10, 10}, {48, 32, 1, 1}, 1, 0, 1, 1, true}, // pointwise: no im2col
      {{32, 1, 28, 28}, {16, 1, 3, 3}, 1, 1, 1, 1, true},  // the benchmark's first layer
  };
  for (int threads : {1, 2}) {
    cpu::set_num_threads(threads);
    for (DType dt : {DType::Float32, DType::Float64}) {
      const double tol = dt == DType::Float32 ? 2e-5 : 1e-12;
      uint64_t seed = 200;
      for (const ConvCase& c : cases) {
        const Fn f = weighted_sum([c](const std::vector<Tensor>& a) {
          return ops::conv2d(a[0], a[1], c.bias ? a[2] : Tensor(), c.stride, c.padding, c.dilation, c.groups);
        });
        std::vector<Tensor> in = {randn(c.x, seed, dt), randn(c.w, seed + 1, dt)};
        if (c.bias) in.push_back(randn({c.w[0]}, seed + 2, dt));
        expect_paths_agree(f, in, tol,
                           "conv2d " + shape_str(c.x) + " * " + shape_str(c.w) + " " + dtype_name(dt) + " threads " +
                               std::to_string(threads));
        seed += 3;
      }
    }
  }
}

// The op table checks every op at first and second order on small shapes, below the BLAS threshold; these
// shapes put every GEMM of matmul, conv2d and their gradients on the BLAS path.
TEST_F(Blas, GradientsOnTheBlasPathPassGradcheck) {
  ASSERT_TRUE(cpu::detail::use_blas<double>(12, 16, 24) || !cpu::blas_active());
  const Fn mm = [](const std::vector<Tensor>& a) -> Value { return ops::matmul(a[0], a[1]); };
  const std::vector<Tensor> mm_in = {randn({12, 24}, 1, DType::Float64), randn({24, 16}, 2, DType::Float64)};
  const CheckResult g1 = gradcheck(mm, mm_in);
  EXPECT_TRUE(g1.ok) << g1.message;
  const CheckResult g2 = gradgradcheck(mm, mm_in);
  EXPECT_TRUE(g2.ok) << g2.message;
  const Fn bmm = [](const std::vector<Tensor>& a) -> Value { return ops::matmul(a[0], a[1]); };
  const CheckResult g3 = gradcheck(bmm, {randn({2, 16, 20}, 3, DType::Float64), randn({2, 20, 16}, 4, DType::Float64)});
  EXPECT_TRUE(g3.ok) << g3.message;
  // conv2d: 8 x 27 x 36 multiply-adds per image for the forward GEMM and each gradient's
  const Fn conv = [](const std::vector<Tensor>& a) -> Value { return ops::conv2d(a[0], a[1], a[2], 1, 1); };
  const std::vector<Tensor> conv_in = {randn({2, 3, 6, 6}, 5, DType::Float64), randn({8, 3, 3, 3}, 6, DType::Float64),
                                       randn({8}, 7, DType::Float64)};
  const CheckResult g4 = gradcheck(conv, conv_in);
  EXPECT_TRUE(g4.ok) << g4.message;
  const CheckResult g5 = gradgradcheck(conv, conv_in);
  EXPECT_TRUE(g5.ok) << g5.message;
}

namespace {

// The OpenBLAS kernel family bprop asks for on this CPU (blas.cpp's rule, written out again), or "".
std::string expected_coretype() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return "SkylakeX";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return "";
}

// Sets (or, with nullptr, unsets) environment variables until the end of the scope.
class EnvOverride {
 public:
  explicit EnvOverride(const std::vector<std::pair<std::string, const char*>>& vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name.c_str());
      saved_.push_back({name, old != nullptr, old ? old : ""});
      if (value) setenv(name.c_str(), value, 1);
      else unsetenv(name.c_str());
    }
  }
  ~EnvOverride() {
    for (const auto& s : saved_) {
      if (s.had) setenv(s.name.c_str(), s.value.c_str(), 1);
      else unsetenv(s.name.c_str());
    }
  }

 private:
  struct Saved {
    std::string name;
    bool had;
    std::string value;
  };
  std::vector<Saved> saved_;
};

// In a new process started with BPROP_BLAS=off: a large GEMM runs, on Eigen, and BLAS cannot be switched on.
bool eigen_only_in_this_process() {
  const Tensor c = ops::matmul(randn({64, 64}, 1), randn({64, 64}, 2));
  const bool eigen = cpu::blas_name() == "eigen" && !cpu::blas_active() && c.shape() == Shape{64, 64};
  cpu::set_blas_enabled(true);  // nothing to turn on: the library was never loaded
  return eigen && !cpu::blas_active();
}

// In a new process started without OpenBLAS settings: after the first large GEMM, OpenBLAS (when installed)
// runs the kernels chosen for this CPU, and the environment holds no OpenBLAS settings still.
bool tuned_kernel_and_clean_environment() {
  const Tensor c = ops::matmul(randn({64, 64}, 1), randn({64, 64}, 2));
  const bool clean = std::getenv("OPENBLAS_CORETYPE") == nullptr && std::getenv("OPENBLAS_NUM_THREADS") == nullptr;
  const std::string core = expected_coretype();
  const bool tuned = !cpu::blas_active() || core.empty() || lower(cpu::blas_name()) == lower("openblas (" + core + ")");
  if (!tuned) std::cerr << "GEMM backend " << cpu::blas_name() << ", expected " << core << "\n";
  return clean && tuned && c.shape() == Shape{64, 64};
}

}  // namespace

// BPROP_BLAS and the OpenBLAS settings are read once, at the first GEMM: these checks run in a new copy of this
// test program (gtest's "threadsafe" death-test style re-executes it) started with the environment given.
TEST_F(Blas, EnvironmentOffKeepsEigen) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const EnvOverride env({{std::string("BPROP_BLAS"), "off"}});
  EXPECT_EXIT(std::exit(eigen_only_in_this_process() ? 0 : 1), ::testing::ExitedWithCode(0), "");
}

TEST_F(Blas, OpenBlasRunsTheKernelChosenForThisCpuAndLeavesTheEnvironment) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const EnvOverride env({{"BPROP_BLAS", nullptr}, {"OPENBLAS_CORETYPE", nullptr}, {"OPENBLAS_NUM_THREADS", nullptr}});
  EXPECT_EXIT(std::exit(tuned_kernel_and_clean_environment() ? 0 : 1), ::testing::ExitedWithCode(0), "");
}

// In this process: a kernel family the caller named is the one OpenBLAS runs; otherwise the CPU's.
TEST_F(Blas, OpenBlasRunsTheRequestedKernel) {
  if (!cpu::blas_active()) GTEST_SKIP() << "no OpenBLAS in this process";
  const char* preset = std::getenv("OPENBLAS_CORETYPE");
  const std::string core = preset && *preset ? preset : expected_coretype();
  if (core.empty()) GTEST_SKIP() << "no kernel family chosen for this CPU";
  EXPECT_EQ(lower(cpu::blas_name()), lower("openblas (" + core + ")"));
}
