// bench_native: the benchmark workloads W1..W7 (bench/README.md) through the bprop C++ API on one thread,
// with the shared fixed-seed inputs (bench/README.md, "Inputs"). Prints one JSON line per workload on stdout:
//   {"impl":"bprop-native","workload":"W1","metric":"ms_per_step","median":..,"min":..,"max":..,"reps":30,
//    "check":{"ok":true,...}}
// W3 lines also carry the speed of a raw single-threaded GEMM of the same size (OpenBLAS when the build found
// it, and Eigen) as the physical limit of this machine, and under "gemm" the backend of bprop's own GEMMs.
// W1/W4/W6 lines carry the peak bytes of one step. --dtypes float32,bfloat16 adds the half rows: W3 in bfloat16
// ("dtype":"bfloat16") and W1/W4/W6 under mixed precision O2 ("amp":"O2","dtype":"bfloat16", float32 master
// weights).
//
//   bench_native [--quick] [--jit] [--workloads W1,W3] [--dtypes float32,bfloat16]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "bprop/bprop.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cpu/parallel.h"

#ifdef BPROP_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

using bprop::Fn;
using bprop::GradFn;
using bprop::JitFn;
using bprop::JitStats;
using bprop::Parameter;
using bprop::Tensor;
using bprop::Value;
using json = nlohmann::ordered_json;  // keys in insertion order: impl, workload, n, metric, ...
namespace ops = bprop::ops;

// ---- the shared input generator (identical in bench/common.mjs and bench/torch_bench.py) ----------------

/// A 32-bit LCG (Numerical Recipes constants); each draw keeps the top 24 bits, so every value below is an
/// exact float32 and every implementation builds bit-identical inputs.
class Lcg {
 public:
  explicit Lcg(uint32_t seed) : s_(seed) {}
  uint32_t next24() {
    s_ = s_ * 1664525u + 1013904223u;
    return s_ >> 8;
  }

 private:
  uint32_t s_;
};

/// Uniform in [0, 1): k / 2^24.
std::vector<float> unit(uint32_t seed, size_t n) {
  Lcg g(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(g.next24()) * 0x1p-24f;
  return v;
}

/// Uniform in [-a, a): (k / 2^23 - 1) * a, rounded once to float32.
std::vector<float> sym(uint32_t seed, size_t n, float a) {
  Lcg g(seed);
  std::vector<float> v(n);
  for (auto& x : v) {
    const float u = static_cast<float>(g.next24()) * 0x1p-23f - 1.0f;  // exact
    x = u * a;
  }
  return v;
}

/// Class labels in [0, classes): k mod classes.
std::vector<int32_t> labels(uint32_t seed, size_t n, int classes) {
  Lcg g(seed);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = static_cast<int32_t>(g.next24() % static_cast<uint32_t>(classes));
  return v;
}

/// PyTorch's default init bound 1 / sqrt(fan_in), rounded to float32.
float fan_scale(int fan_in) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(fan_in))); }

Tensor make_f32(const std::vector<float>& v, const bprop::Shape& shape) {
  Tensor t = Tensor::empty(shape, bprop::DType::Float32);
  std::memcpy(t.data<float>(), v.data(), v.size() * sizeof(float));
  return t;
}

Tensor make_i32(const std::vector<int32_t>& v, const bprop::Shape& shape) {
  Tensor t = Tensor::empty(shape, bprop::DType::Int32);
  std::memcpy(t.data<int32_t>(), v.data(), v.size() * sizeof(int32_t));
  return t;
}

// ---- timing ------------------------------------------------------------------------------------------------

struct Reps {
  int warmup;
  int timed;
};

struct Stats {
  double median = 0, min = 0, max = 0;
  int reps = 0;
};

Stats summarize(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  Stats s;
  s.reps = static_cast<int>(xs.size());
  s.min = xs.front();
  s.max = xs.back();
  const size_t m = xs.size() / 2;
  s.median = xs.size() % 2 ? xs[m] : 0.5 * (xs[m - 1] + xs[m]);
  return s;
}

/// Runs body warmup + timed times; returns the timed durations in milliseconds.
std::vector<double> time_ms(const Reps& r, const std::function<void()>& body) {
  for (int i = 0; i < r.warmup; ++i) body();
  std::vector<double> out;
  out.reserve(r.timed);
  for (int i = 0; i < r.timed; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    const auto t1 = std::chrono::steady_clock::now();
    out.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return out;
}

/// --jit: every differentiated function wrapped in jit (graph mode: traced once, optimised, replayed).
bool g_jit = false;
const char* impl_name() { return g_jit ? "bprop-native-jit" : "bprop-native"; }

/// A differentiated function as the run calls it: itself, or its jit (kept for the stats).
struct Compiled {
  Fn fn;
  std::optional<JitFn> jitted;
};
Compiled compile(const Fn& g) {
  if (!g_jit) return {g, std::nullopt};
  JitFn j = jit(g);
  return {Fn(j), j};
}
/// What jit made of the function: trace + optimise time, nodes as traced and after the passes, kernels per call.
void add_jit_stats(json& j, const Compiled& c) {
  if (!c.jitted) return;
  const JitStats s = c.jitted->stats();
  j["jit"] = {{"compile_ms", s.compile_seconds * 1e3}, {"nodes_traced", s.nodes_traced}, {"nodes", s.nodes},
              {"fused_groups", s.fused_groups}, {"kernels", s.kernels}, {"traces", s.traces},
              {"planned_bytes", s.planned_bytes}, {"eager_bytes", s.eager_bytes}};
}

/// Which variant of a workload a line measures: float32 (no fields), a half dtype, or mixed precision.
struct Precision {
  bprop::DType dtype = bprop::DType::Float32;
  bool amp = false;  // level O2 in `dtype`, float32 parameters
  bool half() const { return dtype != bprop::DType::Float32; }
};

void add_precision(json& j, const Precision& p) {
  if (p.amp) j["amp"] = "O2";
  if (p.half()) j["dtype"] = bprop::dtype_name(p.dtype);
}

json line(const std::string& workload, const std::string& metric, const Stats& s, int64_t n = 0,
          const Precision& p = {}) {
  json j;
  j["impl"] = impl_name();
  j["workload"] = workload;
  if (n) j["n"] = n;
  add_precision(j, p);
  j["metric"] = metric;
  j["median"] = s.median;
  j["min"] = s.min;
  j["max"] = s.max;
  j["reps"] = s.reps;
  return j;
}

void emit(const json& j) { std::cout << j.dump() << std::endl; }

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

/// Times `whole` (one training step returning its loss) on `inputs`, and checks that the step-0 loss is finite and
/// within 1 of `loss0_expected` (the loss of a uniform guess) and that the loss decreases. After the timed steps, one
/// more step measures the peak bytes live during a step (parameters and inputs included, as torch's
/// max_memory_allocated).
json time_step(const std::string& workload, const Reps& reps, const Fn& whole, const std::vector<Tensor>& inputs,
               const Precision& p, double loss0_expected) {
  const Compiled step = compile(whole);
  std::vector<double> losses;
  auto body = [&] { losses.push_back(step.fn(inputs).tensor().item()); };
  json j = line(workload, "ms_per_step", summarize(time_ms(reps, body)), 0, p);
  add_jit_stats(j, step);
  const int64_t live_before = bprop::memory_stats().bytes;
  bprop::reset_peak_memory();
  step.fn(inputs);
  j["peak_bytes"] = bprop::memory_stats().peak_bytes;
  j["step_bytes"] = bprop::memory_stats().peak_bytes - live_before;  // above what lives between steps
  const double loss0 = losses.front(), last = losses.back();
  const bool ok = std::isfinite(loss0) && std::isfinite(last) && last < loss0 && std::abs(loss0 - loss0_expected) < 1.0;
  j["check"] = {{"ok", ok},
                {"loss0", loss0},
                {"loss_last", last},
                {"steps", losses.size()},
                {"message", ok ? "step-0 loss " + fmt(loss0) + ", decreasing"
                               : "loss not finite or not decreasing: " + fmt(loss0) + " -> " + fmt(last)}};
  return j;
}

/// The forward of loss_fn, under autocast O2 in p.dtype with p.amp (the loss in float32, the parameters and their
/// gradients float32).
Fn forward_of(const std::function<Value(const std::vector<Tensor>&)>& loss_fn, const Precision& p) {
  if (!p.amp) return Fn(loss_fn);
  return [loss_fn, p](const std::vector<Tensor>& a) -> Value {
    const bprop::amp::AutocastScope autocast(bprop::amp::Level::O2, p.dtype);
    return loss_fn(a);
  };
}

/// Times SGD (lr 0.01) training steps of loss_fn over params on `inputs` (10 classes: the step-0 loss near ln 10).
json time_training(const std::string& workload, const Reps& reps,
                   const std::function<Value(const std::vector<Tensor>&)>& loss_fn,
                   const std::vector<Parameter>& params, const std::vector<Tensor>& inputs, const Precision& p) {
  // One training step: loss, gradients and the SGD update (with --jit, all in one graph).
  const GradFn vg = bprop::value_and_grad(forward_of(loss_fn, p), nullptr, params);
  bprop::optim::SGD sgd(params, 0.01);
  const Fn whole = [&vg, &sgd](const std::vector<Tensor>& a) -> Value {
    const Value r = vg(a);
    sgd.apply_gradients(r[1]);
    return r[0];
  };
  return time_step(workload, reps, whole, inputs, p, std::log(10.0));
}

// ---- W1 mlp_step ---------------------------------------------------------------------------------------

void w1(const Reps& reps, const Precision& p) {
  const int64_t batch = 128;
  Tensor x = make_f32(unit(11, batch * 784), {batch, 784});
  Tensor y = make_i32(labels(12, batch, 10), {batch});
  Parameter w1(make_f32(sym(13, 784 * 512, fan_scale(784)), {784, 512}), "w1");
  Parameter b1(make_f32(sym(14, 512, fan_scale(784)), {512}), "b1");
  Parameter w2(make_f32(sym(15, 512 * 256, fan_scale(512)), {512, 256}), "w2");
  Parameter b2(make_f32(sym(16, 256, fan_scale(512)), {256}), "b2");
  Parameter w3(make_f32(sym(17, 256 * 10, fan_scale(256)), {256, 10}), "w3");
  Parameter b3(make_f32(sym(18, 10, fan_scale(256)), {10}), "b3");
  const std::vector<Parameter> params = {w1, b1, w2, b2, w3, b3};

  auto loss_fn = [&](const std::vector<Tensor>& a) -> Value {
    Tensor h1 = ops::relu(ops::matmul(a[0], w1) + b1);
    Tensor h2 = ops::relu(ops::matmul(h1, w2) + b2);
    Tensor logits = ops::matmul(h2, w3) + b3;
    return ops::cross_entropy(logits, a[1]);
  };
  emit(time_training("W1", reps, loss_fn, params, {x, y}, p));
}

// ---- W2 scalar_chain --------------------------------------------------------------------------------------

void w2(const Reps& reps) {
  constexpr int kIters = 10000;
  constexpr double kOps = 3.0 * kIters;
  Tensor x = bprop::scalar(0.5);
  auto fn = [](const std::vector<Tensor>& a) -> Value {
    Tensor y = a[0];
    for (int i = 0; i < kIters; ++i) y = ops::sin(y) * 1.0001 + 0.1;
    return y;
  };
  const Compiled vg = compile(bprop::value_and_grad(fn, 0));
  double value = 0, grad = 0;
  auto body = [&] {
    const Value r = vg.fn({x});
    value = r[0].tensor().item();
    grad = r[1].tensor().item();
  };
  std::vector<double> ms = time_ms(reps, body);
  for (auto& v : ms) v = v * 1e6 / kOps;  // ns per op
  json j = line("W2", "ns_per_op", summarize(ms));
  add_jit_stats(j, vg);
  // Reference in double: the value and the chain-rule product of 1.0001 cos(y).
  double ry = 0.5, rg = 1.0;
  for (int i = 0; i < kIters; ++i) {
    rg *= 1.0001 * std::cos(ry);
    ry = std::sin(ry) * 1.0001 + 0.1;
  }
  const bool ok = std::abs(value - ry) < 1e-4 && std::abs(grad - rg) < 1e-6;
  j["check"] = {{"ok", ok},
                {"value", value},
                {"grad", grad},
                {"message", "value " + fmt(value) + " (reference " + fmt(ry) + "), gradient " + fmt(grad) +
                                " (reference " + fmt(rg) + ")"}};
  emit(j);
}

// ---- W3 matmul_grad -------------------------------------------------------------------------------------

/// GFLOP/s of a raw single-threaded n x n x n GEMM (2 n^3 flops): Eigen, and OpenBLAS when linked.
json raw_gemm(int64_t n, const std::vector<float>& a, const std::vector<float>& b, const Reps& reps) {
  json ref;
  std::vector<float> c(static_cast<size_t>(n * n));
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Mat> ea(a.data(), n, n), eb(b.data(), n, n);
  Eigen::Map<Mat> ec(c.data(), n, n);
  const double flops = 2.0 * static_cast<double>(n) * n * n;
  const Stats se = summarize(time_ms(reps, [&] { ec.noalias() = ea * eb; }));
  ref["eigen_gflops"] = flops / (se.median * 1e6);
#ifdef BPROP_BENCH_HAVE_OPENBLAS
  openblas_set_num_threads(1);
  const Stats so = summarize(time_ms(reps, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(n),
                static_cast<int>(n), 1.0f, a.data(), static_cast<int>(n), b.data(), static_cast<int>(n), 0.0f,
                c.data(), static_cast<int>(n));
  }));
  ref["openblas_gflops"] = flops / (so.median * 1e6);
  ref["openblas_core"] = openblas_get_corename();  // the kernel OpenBLAS picked for this CPU
#endif
  return ref;
}

/// W3 in float32, or with p.half() in that dtype: the inputs rounded to it once (the reference uses the rounded
/// values), the products and the gradients in it, float32 accumulation inside.
void w3(int64_t n, const Reps& reps, const Precision& p) {
  std::vector<float> av = sym(31, static_cast<size_t>(n * n), 1.0f);
  std::vector<float> bv = sym(32, static_cast<size_t>(n * n), 1.0f);
  Tensor a = ops::cast(make_f32(av, {n, n}), p.dtype), b = ops::cast(make_f32(bv, {n, n}), p.dtype);
  if (p.half()) {
    av = a.to_vector<float>();
    bv = b.to_vector<float>();
  }
  auto fn = [](const std::vector<Tensor>& x) -> Value { return ops::sum(ops::matmul(x[0], x[1])); };
  const Compiled vg = compile(bprop::value_and_grad(fn, {0, 1}));
  Value r;
  const Stats s = summarize(time_ms(reps, [&] { r = vg.fn({a, b}); }));
  json j = line("W3", "ms", s, n, p);
  j["gflops"] = 6.0 * static_cast<double>(n) * n * n / (s.median * 1e6);
  if (p.half()) {
    j["gemm"] = bprop::cpu::onednn_name();  // the bfloat16 GEMM library, e.g. "onednn 2.6.3 (avx512_core_amx)"
    const bprop::cpu::HalfGemmStats hs = bprop::cpu::half_gemm_stats();
    j["half_gemms"] = {{"onednn", hs.onednn}, {"widened", hs.fallback}};
  } else {
    j["gemm"] = bprop::cpu::blas_name();  // the backend bprop's GEMMs ran on, e.g. "openblas (SkylakeX)"
  }
  add_jit_stats(j, vg);

  // dA = ones @ B^T: every row of dA is the row sums of B; dB = A^T @ ones: every column is A's column sums.
  std::vector<double> rowsum_b(n, 0.0), colsum_a(n, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k) {
      rowsum_b[i] += bv[i * n + k];
      colsum_a[k] += av[i * n + k];
    }
  const std::vector<float> dav = r[1][0].tensor().to_vector<float>(), dbv = r[1][1].tensor().to_vector<float>();
  const float* da = dav.data();
  const float* db = dbv.data();
  // A half gradient element is its float32 sum rounded once (relative 2^-9 for bfloat16); the value is n^2 rounded
  // products (each about sqrt(scale / n) in size) summed in float32: a random walk of their rounding errors.
  const double rel = p.dtype == bprop::DType::BFloat16 ? 0x1p-8 : p.dtype == bprop::DType::Float16 ? 0x1p-11 : 0.0;
  double err_a = 0, err_b = 0, ref_value = 0, ref_scale = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k) {  // errors beyond the half rounding of the exact value
      err_a = std::max(err_a, std::abs(da[i * n + k] - rowsum_b[k]) - rel * std::abs(rowsum_b[k]));
      err_b = std::max(err_b, std::abs(db[i * n + k] - colsum_a[i]) - rel * std::abs(colsum_a[i]));
    }
  for (int64_t k = 0; k < n; ++k) {
    ref_value += colsum_a[k] * rowsum_b[k];
    ref_scale += std::abs(colsum_a[k] * rowsum_b[k]);
  }
  const double value = r[0].tensor().item();
  const double tol = 1e-5 * static_cast<double>(n);
  const double nd = static_cast<double>(n);
  const double value_tol = 1e-4 * ref_scale + rel * (std::abs(ref_value) + 4.0 * nd * std::sqrt(ref_scale / nd));
  const bool ok = err_a < tol && err_b < tol && std::abs(value - ref_value) <= value_tol;
  j["check"] = {{"ok", ok},
                {"max_err_dA", err_a},
                {"max_err_dB", err_b},
                {"value", value},
                {"message", "dA = ones @ B^T within " + fmt(err_a) + ", dB = A^T @ ones within " + fmt(err_b) +
                                ", value " + fmt(value) + " (reference " + fmt(ref_value) + ")"}};
  if (!p.half()) j["ref"] = raw_gemm(n, av, bv, reps);
  emit(j);
}

// ---- W4 cnn_step ----------------------------------------------------------------------------------------

void w4(const Reps& reps, const Precision& p) {
  const int64_t batch = 32;
  Tensor x = make_f32(unit(41, batch * 28 * 28), {batch, 1, 28, 28});
  Tensor y = make_i32(labels(48, batch, 10), {batch});
  Parameter c1w(make_f32(sym(42, 16 * 1 * 9, fan_scale(9)), {16, 1, 3, 3}), "c1w");
  Parameter c1b(make_f32(sym(43, 16, fan_scale(9)), {16}), "c1b");
  Parameter c2w(make_f32(sym(44, 32 * 16 * 9, fan_scale(144)), {32, 16, 3, 3}), "c2w");
  Parameter c2b(make_f32(sym(45, 32, fan_scale(144)), {32}), "c2b");
  Parameter dw(make_f32(sym(46, 1568 * 10, fan_scale(1568)), {1568, 10}), "dw");
  Parameter db(make_f32(sym(47, 10, fan_scale(1568)), {10}), "db");
  const std::vector<Parameter> params = {c1w, c1b, c2w, c2b, dw, db};

  auto loss_fn = [&](const std::vector<Tensor>& a) -> Value {
    Tensor h = ops::max_pool2d(ops::relu(ops::conv2d(a[0], c1w, c1b, 1, 1)), 2);
    h = ops::max_pool2d(ops::relu(ops::conv2d(h, c2w, c2b, 1, 1)), 2);
    Tensor logits = ops::matmul(ops::reshape(h, {batch, 32 * 7 * 7}), dw) + db;
    return ops::cross_entropy(logits, a[1]);
  };
  emit(time_training("W4", reps, loss_fn, params, {x, y}, p));
}

// ---- W6 gpt_step ----------------------------------------------------------------------------------------

/// The contract's GPT (untied head) and one AdamW step (lr 3e-4, weight decay 0.1 on matrices only) on fixed
/// token ids.
void w6(const Reps& reps, const Precision& p) {
  const int64_t batch = 16, context = 128, vocab = 96;
  bprop::nn::set_seed(61);
  bprop::nn::GPT gpt({.vocab_size = vocab, .context = context, .layers = 4, .heads = 4, .width = 128,
                      .tie_weights = false});
  Tensor x = make_i32(labels(62, batch * context, static_cast<int>(vocab)), {batch, context});
  Tensor y = make_i32(labels(63, batch * context, static_cast<int>(vocab)), {batch, context});
  const std::vector<Parameter> params = gpt.trainable_params();
  bprop::optim::AdamW adamw(params, 3e-4, {0.9, 0.999}, 1e-8, 0.1);
  adamw.exclude_from_weight_decay(bprop::optim::Optimizer::is_bias_or_norm);
  const GradFn vg = bprop::value_and_grad(
      forward_of([&gpt](const std::vector<Tensor>& a) -> Value { return gpt.loss(a[0], a[1]); }, p), nullptr, params);
  const Fn whole = [&vg, &adamw](const std::vector<Tensor>& a) -> Value {
    const Value r = vg(a);
    adamw.apply_gradients(r[1]);
    return r[0];
  };
  emit(time_step("W6", reps, whole, {x, y}, p, std::log(static_cast<double>(vocab))));
}

// ---- W5 elementwise --------------------------------------------------------------------------------------

void w5(const Reps& reps) {
  const int64_t n = 1000000;
  const std::vector<float> xv = sym(51, n, 2.0f);
  Tensor x = make_f32(xv, {n});
  auto fn = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::tanh(a[0] * a[0] + 1.0) * ops::sigmoid(a[0]));
  };
  const Compiled vg = compile(bprop::value_and_grad(fn, 0));
  Value r;
  json j = line("W5", "ms", summarize(time_ms(reps, [&] { r = vg.fn({x}); })));
  add_jit_stats(j, vg);
  // d/dx tanh(x^2 + 1) sigmoid(x) = (1 - t^2) 2x s + t s (1 - s)
  double ref = 0, max_err = 0;
  const float* g = r[1].tensor().data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const double xi = xv[i];
    const double t = std::tanh(xi * xi + 1.0), s = 1.0 / (1.0 + std::exp(-xi));
    ref += t * s;
    const double d = (1.0 - t * t) * 2.0 * xi * s + t * s * (1.0 - s);
    max_err = std::max(max_err, std::abs(g[i] - d) / (1e-3 + std::abs(d)));
  }
  const double value = r[0].tensor().item();
  const bool ok = std::abs(value - ref) <= 1e-4 * std::abs(ref) && max_err < 1e-3;
  j["check"] = {{"ok", ok},
                {"value", value},
                {"max_rel_err_grad", max_err},
                {"message", "value " + fmt(value) + " (reference " + fmt(ref) + "), gradient within " +
                                fmt(max_err) + " relative"}};
  emit(j);
}

// ---- W7 attention ---------------------------------------------------------------------------------------

/// One forward + backward of causal scaled_dot_product_attention, 8 heads, E = 64, L = S = n: value_and_grad of
/// sum(out) w.r.t. q, k, v; the peak bytes of one call above what lived before it.
void w7(int64_t n, const Reps& reps) {
  const int64_t heads = 8, e = 64;
  const bprop::Shape s{1, heads, n, e};
  const int64_t count = heads * n * e;
  Tensor q = make_f32(sym(71, static_cast<size_t>(count), 1.0f), s);
  Tensor k = make_f32(sym(72, static_cast<size_t>(count), 1.0f), s);
  Tensor v = make_f32(sym(73, static_cast<size_t>(count), 1.0f), s);
  auto fn = [](const std::vector<Tensor>& x) -> Value {
    return ops::sum(ops::scaled_dot_product_attention(x[0], x[1], x[2], {}, true));
  };
  const Compiled vg = compile(bprop::value_and_grad(fn, {0, 1, 2}));
  Value r;
  const Stats st = summarize(time_ms(reps, [&] { r = vg.fn({q, k, v}); }));
  json j = line("W7", "ms", st, n);
  add_jit_stats(j, vg);
  r = Value();
  const int64_t live_before = bprop::memory_stats().bytes;
  bprop::reset_peak_memory();
  r = vg.fn({q, k, v});
  j["peak_bytes"] = bprop::memory_stats().peak_bytes - live_before;
  {  // the same in ops, softmax(q k^T / 8 + causal mask) v, once: its peak and time beside the op's
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> mask(static_cast<size_t>(n * n));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < n; ++c) mask[static_cast<size_t>(i * n + c)] = c <= i ? 0.0 : -inf;
    const Tensor additive = bprop::tensor(mask, {n, n});
    auto composed = [&additive](const std::vector<Tensor>& x) -> Value {
      const Tensor scores = ops::matmul(x[0], ops::transpose(x[1], {0, 1, 3, 2})) * bprop::scalar(0.125) + additive;
      return ops::sum(ops::matmul(ops::softmax(scores, -1), x[2]));
    };
    const GradFn cvg = bprop::value_and_grad(composed, {0, 1, 2});
    r = Value();
    const int64_t before = bprop::memory_stats().bytes;
    bprop::reset_peak_memory();
    const auto t0 = std::chrono::steady_clock::now();
    const Value cr = cvg({q, k, v});
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    j["composed"] = {{"ms", ms}, {"peak_bytes", bprop::memory_stats().peak_bytes - before},
                     {"value", cr[0].tensor().item()}};
  }
  r = vg.fn({q, k, v});
  // Each row of the probabilities sums to 1, so d sum(out) / dv sums to heads * n; out is finite.
  const double dv_sum = ops::sum(ops::cast(r[1][2].tensor(), bprop::DType::Float64)).item();
  const double value = r[0].tensor().item();
  const double want = static_cast<double>(heads * n * e);  // (E columns of v)
  const double composed_value = j["composed"]["value"].get<double>();
  const bool ok = std::isfinite(value) && std::abs(dv_sum - want) <= 1e-4 * want &&
                  std::abs(value - composed_value) <= 1e-4 * std::abs(composed_value);
  j["check"] = {{"ok", ok},
                {"dv_sum", dv_sum},
                {"message", "value " + fmt(value) + " (composed " + fmt(composed_value) + "), sum(dv) " + fmt(dv_sum) +
                                " (every probability row sums to 1: " + fmt(want) + ")"}};
  emit(j);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::set<std::string> only;
  std::vector<Precision> precisions = {Precision{}};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--jit") {
      g_jit = true;
    } else if (a == "--workloads" && i + 1 < argc) {
      std::stringstream ss(argv[++i]);
      for (std::string w; std::getline(ss, w, ',');) only.insert(w);
    } else if (a == "--dtypes" && i + 1 < argc) {
      precisions.clear();
      std::stringstream ss(argv[++i]);
      for (std::string d; std::getline(ss, d, ',');) {
        if (d != "float32" && d != "bfloat16" && d != "float16") {
          std::cerr << "bench_native: --dtypes takes float32, bfloat16 and float16, got " << d << "\n";
          return 2;
        }
        const bprop::DType dt = bprop::parse_dtype(d);
        precisions.push_back(Precision{dt, dt != bprop::DType::Float32});
      }
    } else {
      std::cerr << "usage: bench_native [--quick] [--jit] [--workloads W1,W2,W3,W4,W5,W6,W7] [--dtypes float32,bfloat16]\n";
      return 2;
    }
  }
  bprop::cpu::set_num_threads(1);
#ifdef BPROP_BENCH_HAVE_OPENBLAS
  // Linked for the raw-GEMM reference, OpenBLAS starts its thread pool at load; one thread, as everything here.
  openblas_set_num_threads(1);
#endif
  auto want = [&](const char* w) { return only.empty() || only.count(w) > 0; };
  // A workload that throws is reported as an error line; the others still run.
  int failures = 0;
  auto run = [&](const char* workload, const std::function<void()>& body, int64_t n = 0, const Precision& p = {}) {
    if (!want(workload)) return;
    try {
      body();
    } catch (const std::exception& e) {
      ++failures;
      json j;
      j["impl"] = impl_name();
      j["workload"] = workload;
      if (n) j["n"] = n;
      add_precision(j, p);
      j["error"] = e.what();
      emit(j);
    }
  };
  // Repetitions (warm-up, timed) of the contract; --quick is a smoke run, not a measurement.
  // Float32 rows, then each half dtype's (W2 and W5 are float32 only).
  for (const Precision& p : precisions) {
    const bool f32 = !p.half();
    const Precision in_dtype{p.dtype, false};  // W3: the tensors themselves in the dtype, no autocast
    run("W1", [&] { w1(quick ? Reps{1, 3} : Reps{5, 30}, p); }, 0, p);
    if (f32) run("W2", [&] { w2(quick ? Reps{1, 2} : Reps{2, 10}); });
    run("W3", [&] { w3(256, quick ? Reps{1, 3} : Reps{3, 10}, in_dtype); }, 256, in_dtype);
    run("W3", [&] { w3(1024, quick ? Reps{1, 3} : Reps{3, 10}, in_dtype); }, 1024, in_dtype);
    run("W4", [&] { w4(quick ? Reps{1, 3} : Reps{3, 20}, p); }, 0, p);
    if (f32) run("W5", [&] { w5(quick ? Reps{1, 3} : Reps{3, 20}); });
    run("W6", [&] { w6(quick ? Reps{1, 2} : Reps{3, 20}, p); }, 0, p);
    if (f32) run("W7", [&] { w7(1024, quick ? Reps{1, 2} : Reps{2, 5}); }, 1024);
    if (f32) run("W7", [&] { w7(4096, quick ? Reps{0, 1} : Reps{1, 3}); }, 4096);
  }
  return failures ? 1 : 0;
}
