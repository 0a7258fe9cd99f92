// The Ascend backend against the strict fake CANN of tests/fake_ascend (its libraries do the maths on the CPU in a
// device heap the host cannot touch, run kernels only when a stream is synchronised, and abort on protocol
// errors). Each test runs in a process of its own (gtest_discover_tests), so each sets up its environment before
// the backend's first use.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "ascend/backend.h"
#include "bprop/bprop.h"
#include "bprop/device.h"

#ifndef BPROP_FAKE_ASCEND_HOME
#error "the Ascend backend tests need the fake CANN (tests/fake_ascend)"
#endif

namespace bprop {
namespace {

namespace fs = std::filesystem;

// (ctest runs each test in a process of its own; run together in one, the first test that loads the backend
// fixes the device count for the others.)
void use_fake(int devices = 1) {
  setenv("ASCEND_HOME_PATH", BPROP_FAKE_ASCEND_HOME, 1);
  setenv("FAKE_ASCEND_DEVICES", std::to_string(devices).c_str(), 1);
  unsetenv("FAKE_ASCEND_FAIL_INIT");
}

// A fake-only counter of libascendcl.so (the copy the backend loaded).
int64_t kernel_launches() {
  void* h = dlopen((std::string(BPROP_FAKE_ASCEND_HOME) + "/lib64/libascendcl.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!h) return -1;
  auto f = reinterpret_cast<int64_t (*)()>(dlsym(h, "fake_ascend_kernel_launches"));
  return f ? f() : -1;
}

void expect_close(const Tensor& got, const Tensor& want, double tol = 1e-5) {
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], tol * (1 + std::fabs(w[i]))) << "element " << i;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(AscendLoading, MissingLibrariesAreAClearErrorNamingTheLibraryAndTheCause) {
  setenv("ASCEND_HOME_PATH", "/nonexistent-cann", 1);
  const std::string e = error_of([] { device_backend(ascend::backend()); });
  EXPECT_NE(e.find("libascendcl.so"), std::string::npos) << e;
  EXPECT_NE(e.find("set_env.sh"), std::string::npos) << e;
  EXPECT_NE(e.find("/nonexistent-cann/lib64/libascendcl.so"), std::string::npos) << e;
  EXPECT_FALSE(device_backend_available(ascend::backend()));
  // The CPU is unaffected, and a device tensor is refused with the same reason.
  EXPECT_EQ((ones({2}) + ones({2})).to_vector<float>(), (std::vector<float>{2, 2}));
  EXPECT_THROW(ones({2}).to(ascend::device()), ValueError);
}

TEST(AscendLoading, AMissingDriverLibraryIsNamed) {
  const fs::path dir = fs::temp_directory_path() / ("bprop-no-hal-" + std::to_string(getpid()));
  fs::create_directories(dir / "lib64");
  for (const auto& entry : fs::directory_iterator(fs::path(BPROP_FAKE_ASCEND_HOME) / "lib64")) {
    if (entry.path().filename() != "libascend_hal.so") fs::copy(entry.path(), dir / "lib64" / entry.path().filename());
  }
  setenv("ASCEND_HOME_PATH", dir.c_str(), 1);
  const std::string e = error_of([] { device_backend(ascend::backend()); });
  fs::remove_all(dir);
  EXPECT_NE(e.find("libascend_hal.so"), std::string::npos) << e;
  EXPECT_NE(e.find("driver"), std::string::npos) << e;
}

TEST(AscendLoading, AFailingAclInitReportsTheCodeAndTheRuntimeMessage) {
  use_fake();
  setenv("FAKE_ASCEND_FAIL_INIT", "507033", 1);
  const std::string e = error_of([] { device_backend(ascend::backend()); });
  unsetenv("FAKE_ASCEND_FAIL_INIT");
  EXPECT_NE(e.find("aclInit"), std::string::npos) << e;
  EXPECT_NE(e.find("507033"), std::string::npos) << e;
  EXPECT_EQ(device_backend(ascend::backend()).device_count(), 1);  // a failed start is not remembered
}

TEST(AscendTensors, MoveToTheDeviceAndBack) {
  use_fake();
  const Tensor h = tensor({1, -2.5, 3, 4e10, -0.0, 6}, {2, 3});
  const Tensor d = h.to(ascend::device(0));
  EXPECT_EQ(d.device(), ascend::device(0));
  EXPECT_EQ(d.device().str(), "ascend:0");
  EXPECT_EQ(d.shape(), h.shape());
  EXPECT_EQ(d.to_vector<float>(), h.to_vector<float>());  // to_vector copies to the host
  EXPECT_EQ(d.cpu().device(), Device::cpu());
  EXPECT_DOUBLE_EQ(d.to(ascend::device(0)).clone().cpu().to_vector<double>()[3], 4e10);
  EXPECT_NE(d.to_string().find("device=ascend:0"), std::string::npos) << d.to_string();
  const std::string e = error_of([&] { (void)d.data<float>(); });  // no host pointer into device memory
  EXPECT_NE(e.find("lives on ascend:0"), std::string::npos) << e;
  EXPECT_DOUBLE_EQ(scalar(7.5, DType::Float64).to(ascend::device()).item(), 7.5);
  const Tensor i = tensor_i32({1, 2, 3}, {3}).to(ascend::device());
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
}

TEST(AscendOps, ElementwiseReductionsAndMatmulRunAsAclnnKernels) {
  use_fake();
  const Device npu = ascend::device();
  const Tensor a = randn({4, 5}, 1), b = randn({5}, 2), m = randn({5, 3}, 3);
  const int64_t before = kernel_launches();
  reset_fallback_counts();
  const Tensor ad = a.to(npu), bd = b.to(npu), md = m.to(npu);
  expect_close(ops::add(ad, bd), ops::add(a, b));
  expect_close(ops::sub(ad, bd), ops::sub(a, b));
  expect_close(ops::mul(ad, bd), ops::mul(a, b));
  expect_close(ops::div(ad, bd), ops::div(a, b));
  expect_close(ops::exp(ad), ops::exp(a));
  expect_close(ops::tanh(ad), ops::tanh(a));
  expect_close(ops::sigmoid(ad), ops::sigmoid(a));
  expect_close(ops::relu(ad), ops::relu(a));
  expect_close(ops::neg(ad), ops::neg(a));
  expect_close(ops::sum(ad, {1}, true), ops::sum(a, {1}, true));
  expect_close(ops::mean(ad, {0}), ops::mean(a, {0}));
  expect_close(ops::matmul(ad, md), ops::matmul(a, m));
  expect_close(ops::softmax(ad, 1), ops::softmax(a, 1));
  expect_close(ops::log_softmax(ad, -1), ops::log_softmax(a, -1));
  expect_close(ops::cast(ad, DType::Float64), ops::cast(a, DType::Float64));
  EXPECT_EQ(ops::add(ad, bd).device(), npu);
  EXPECT_GE(kernel_launches() - before, 15);
  EXPECT_TRUE(fallback_counts().empty()) << fallback_counts().begin()->first;
}

// float16 and bfloat16 run as aclnn kernels in the tensors' own dtype: the results are half, computed in float by
// the fake and rounded once, within one half ulp or two of the CPU's (float32 arithmetic, rounded once).
TEST(AscendOps, HalfTensorsRunAsAclnnKernelsInTheirDtype) {
  use_fake();
  const Device npu = ascend::device();
  for (const DType dt : {DType::Float16, DType::BFloat16}) {
    const double tol = dt == DType::Float16 ? 2e-3 : 1.6e-2;
    const Tensor a = randn({4, 5}, 1, dt), b = randn({5}, 2, dt), m = randn({5, 3}, 3, dt);
    const Tensor x = randn({2, 3, 6, 6}, 4, dt), w = randn({4, 3, 3, 3}, 5, dt);
    reset_fallback_counts();
    const Tensor ad = a.to(npu), bd = b.to(npu), md = m.to(npu), xd = x.to(npu), wd = w.to(npu);
    expect_close(ops::add(ad, bd), ops::add(a, b), tol);
    expect_close(ops::mul(ad, bd), ops::mul(a, b), tol);
    expect_close(ops::div(ad, bd), ops::div(a, b), tol);
    expect_close(ops::exp(ad), ops::exp(a), tol);
    expect_close(ops::tanh(ad), ops::tanh(a), tol);
    expect_close(ops::relu(ad), ops::relu(a), tol);
    expect_close(ops::sum(ad, {1}, true), ops::sum(a, {1}, true), tol);
    expect_close(ops::matmul(ad, md), ops::matmul(a, m), tol);
    expect_close(ops::softmax(ad, 1), ops::softmax(a, 1), tol);
    expect_close(ops::conv2d(xd, wd), ops::conv2d(x, w), tol);
    expect_close(ops::cast(ops::cast(ad, DType::Float32), dt), a, 0);
    const Tensor y = ops::matmul(ad, md);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(y.device(), npu);
    EXPECT_TRUE(fallback_counts().empty()) << dtype_name(dt) << ": " << fallback_counts().begin()->first;
    // the gradient of a half function, on the NPU, is half
    const Fn f = [](const std::vector<Tensor>& v) -> Value { return ops::sum(ops::tanh(ops::matmul(v[0], v[1]))); };
    const Value g = grad(f, GradPosition({0, 1}))({ad, md}), g_cpu = grad(f, GradPosition({0, 1}))({a, m});
    expect_close(g[0].tensor().to(Device::cpu()), g_cpu[0].tensor(), 2 * tol);
    expect_close(g[1].tensor().to(Device::cpu()), g_cpu[1].tensor(), 2 * tol);
  }
}

TEST(AscendOps, OpsWithoutAnNpuKernelFallBackToTheCpuAndAreCounted) {
  use_fake();
  reset_fallback_counts();
  const Tensor x = randn({3, 4}, 4);
  const Tensor xd = x.to(ascend::device());
  const Tensor s = ops::sign(xd);  // no aclnn kernel (aclnnSign's NaN differs)
  EXPECT_EQ(s.device(), ascend::device());
  expect_close(s, ops::sign(x));
  // float64 where the NPU's Matmul and Tanh have none
  const Tensor x64 = ops::cast(x, DType::Float64), w64 = randn({4, 2}, 5, DType::Float64);
  expect_close(ops::matmul(x64.to(ascend::device()), w64.to(ascend::device())), ops::matmul(x64, w64), 1e-12);
  expect_close(ops::tanh(x64.to(ascend::device())), ops::tanh(x64), 1e-12);
  const auto counts = fallback_counts();
  EXPECT_EQ(counts.at("sign"), 1);
  EXPECT_EQ(counts.at("matmul"), 1);
  EXPECT_EQ(counts.at("tanh"), 1);
  EXPECT_EQ(counts.count("cast"), 0u);
}

TEST(AscendOps, MixingDevicesIsAnErrorNamingBoth) {
  use_fake(2);
  if (device_backend(ascend::backend()).device_count() < 2) GTEST_SKIP() << "run in a process of its own (ctest)";
  const Tensor a = ones({2, 2}).to(ascend::device(0));
  const std::string e = error_of([&] { ops::add(a, ones({2, 2})); });
  EXPECT_NE(e.find("For 'add'"), std::string::npos) << e;
  EXPECT_NE(e.find("ascend:0"), std::string::npos) << e;
  EXPECT_NE(e.find("cpu"), std::string::npos) << e;
  const std::string e2 = error_of([&] { ops::matmul(a, ones({2, 2}).to(ascend::device(1))); });
  EXPECT_NE(e2.find("ascend:0"), std::string::npos) << e2;
  EXPECT_NE(e2.find("ascend:1"), std::string::npos) << e2;
  // A 0-d host tensor meets a device tensor as a scalar does (x * 2.0).
  EXPECT_EQ((a * 2.0).device(), ascend::device(0));
  EXPECT_EQ((a * 2.0).to_vector<float>(), (std::vector<float>{2, 2, 2, 2}));
  const std::string e3 = error_of([] { set_context({.device = ascend::device(2)}); });
  EXPECT_NE(e3.find("2 ascend devices"), std::string::npos) << e3;
}

TEST(AscendAutodiff, GradientsOfAnMlpLossMatchTheCpu) {
  use_fake();
  const Tensor x = randn({8, 5}, 10), w1 = randn({5, 6}, 11), w2 = randn({6, 3}, 12);
  const Tensor labels = tensor_i32({0, 1, 2, 0, 1, 2, 0, 1}, {8});
  const Fn loss = [&labels](const std::vector<Tensor>& p) -> Value {
    const Tensor h = ops::tanh(ops::matmul(p[0], p[1]));
    const Tensor logp = ops::log_softmax(ops::matmul(h, p[2]), -1);
    return ops::nll_loss(logp, labels.to(p[0].device()));
  };
  const Value cpu = value_and_grad(loss, GradPosition({1, 2}))({x, w1, w2});
  const Device npu = ascend::device();
  const Value dev = value_and_grad(loss, GradPosition({1, 2}))({x.to(npu), w1.to(npu), w2.to(npu)});
  expect_close(dev[0].tensor(), cpu[0].tensor());
  const auto gc = cpu[1].flatten(), gd = dev[1].flatten();
  ASSERT_EQ(gd.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(gd[i].device(), npu);
    expect_close(gd[i], gc[i]);
  }
}

TEST(AscendContext, TheContextsDeviceRunsHostTensorsOnTheNpu) {
  use_fake();
  set_context({.device = ascend::device(0)});
  EXPECT_EQ(default_device(), ascend::device(0));
  const int64_t before = kernel_launches();
  const Tensor y = ops::mul(tensor({1, 2, 3}, {3}), tensor({4, 5, 6}, {3}));
  EXPECT_EQ(y.device(), ascend::device(0));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{4, 10, 18}));
  EXPECT_GT(kernel_launches(), before);
  const Value g = grad([](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0] * a[0]); })(
      {tensor({1, 2}, {2})});
  EXPECT_EQ(g.tensor().to_vector<float>(), (std::vector<float>{2, 4}));
  set_context({});
  EXPECT_EQ(default_device(), Device::cpu());
}

TEST(AscendOps, ConvolutionPoolingAndBatchNormRunOnTheNpuWithTheirGradients) {
  use_fake();
  reset_fallback_counts();
  const Device npu = ascend::device();
  const Tensor x = randn({2, 3, 9, 8}, 20), w = randn({4, 3, 3, 3}, 21), b = randn({4}, 22);
  // conv (stride 2, padding 1, dilation 1) -> max pool 2x2 -> batch norm, and the gradients of all inputs
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    const Tensor y = ops::conv2d(a[0], a[1], a[2], 1, 1);
    const Tensor p = ops::max_pool2d(y, 2);
    const Tensor n = ops::batch_norm(p, a[3], a[4]);
    return ops::sum(n * n * n);
  };
  const Tensor gw = randn({4}, 25), bw = randn({4}, 26);
  const Value cpu = value_and_grad(f, GradPosition({0, 1, 2, 3, 4}))({x, w, b, gw, bw});
  const Value dev =
      value_and_grad(f, GradPosition({0, 1, 2, 3, 4}))({x.to(npu), w.to(npu), b.to(npu), gw.to(npu), bw.to(npu)});
  expect_close(dev[0].tensor(), cpu[0].tensor(), 1e-4);
  const auto gc = cpu[1].flatten(), gd = dev[1].flatten();
  for (size_t i = 0; i < gc.size(); ++i) expect_close(gd[i], gc[i], 1e-4);
  const auto counts = fallback_counts();
  for (const char* op : {"conv2d", "conv2d_input_grad", "conv2d_weight_grad", "max_pool2d", "max_pool2d_grad",
                         "batch_norm"}) {
    EXPECT_EQ(counts.count(op), 0u) << op << " fell back to the CPU";
  }
}

TEST(AscendTraining, LayersOptimizersAndCheckpointsWorkOnTheNpu) {
  use_fake();
  set_context({.device = ascend::device()});
  nn::Dense layer(5, 3);
  ASSERT_EQ(layer.trainable_params()[0].device(), ascend::device());  // made on the context's device
  optim::Adam opt(layer.trainable_params(), 0.05);
  const Tensor x = randn({16, 5}, 30), target = randn({16, 3}, 31);
  const Fn loss = [&](const std::vector<Tensor>& a) -> Value { return ops::mean(ops::square(layer(a[0]) - a[1])); };
  const GradFn step = value_and_grad(loss, GradPosition(nullptr), layer.trainable_params());
  double first = 0, last = 0;
  for (int i = 0; i < 30; ++i) {
    const Value r = step({x, target});
    opt.apply_gradients(r[1]);
    (i == 0 ? first : last) = r[0].tensor().item();
  }
  EXPECT_LT(last, 0.5 * first);
  EXPECT_EQ(opt.step_count(), 30);
  // saved through host copies, loaded into a model on the NPU again
  const std::vector<uint8_t> bytes = save_checkpoint_bytes(layer);
  nn::Dense other(5, 3);
  load_checkpoint_bytes(other, bytes.data(), bytes.size());
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(other.trainable_params()[i].device(), ascend::device());
    EXPECT_EQ(other.trainable_params()[i].to_vector<float>(), layer.trainable_params()[i].to_vector<float>());
  }
  set_context({});
}

TEST(AscendJit, AJittedFunctionReplaysOnTheNpuAsOneGraphWithoutFallingBack) {
  use_fake();
  const JitFn f = jit([](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::exp(a[0]) * a[0] + ops::matmul(a[0], a[1]));
  });
  const Tensor x = randn({3, 4}, 7), w = randn({4, 4}, 8);
  const Tensor want = f({x, w}).tensor();  // (traced for the CPU)
  const Device npu = ascend::device();
  reset_fallback_counts();
  const Tensor first = f({x.to(npu), w.to(npu)}).tensor();
  const int64_t before = kernel_launches();
  const Tensor again = f({x.to(npu), w.to(npu)}).tensor();
  EXPECT_EQ(again.device(), npu);
  expect_close(again, want);  // (reading synchronises: the queued kernels run)
  EXPECT_GE(kernel_launches() - before, 5);  // exp, mul, matmul, add, sum
  EXPECT_EQ(again.to_vector<float>(), first.to_vector<float>());
  const JitStats st = f.stats();
  EXPECT_EQ(st.traces, 2);  // one graph per device
  EXPECT_EQ(st.eager_calls, 0);
  EXPECT_GE(st.replays, 1);
  EXPECT_TRUE(fallback_counts().empty()) << fallback_counts().begin()->first;
}

// Host arguments and Parameters on the NPU (the context back on the CPU): the call runs on the NPU, traced once
// (for the NPU, not first for the CPU).
TEST(AscendJit, HostArgumentsWithParametersOnTheNpuTraceOnceForTheNpu) {
  use_fake();
  set_context({.device = ascend::device()});
  nn::Dense layer(4, 3);
  set_context({});
  ASSERT_EQ(layer.trainable_params()[0].device(), ascend::device());
  const JitFn f = jit([&layer](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::tanh(layer(a[0]))); });
  const Tensor x = randn({5, 4}, 9);
  const Tensor eager = ops::sum(ops::tanh(layer(x.to(ascend::device()))));
  for (int i = 0; i < 3; ++i) {
    const Tensor r = f({x}).tensor();
    EXPECT_EQ(r.device(), ascend::device());
    expect_close(r, eager);
  }
  EXPECT_EQ(f.stats().traces, 1);
  EXPECT_EQ(f.stats().replays, 2);
}

TEST(AscendJit, AJittedTrainingStepOnTheNpuUpdatesParametersAsEagerSteps) {
  use_fake();
  set_context({.device = ascend::device()});
  auto run = [](bool use_jit) {
    nn::Dense layer(5, 3);
    for (Parameter& p : layer.trainable_params()) p.assign(randn(p.shape(), 42));  // the same start for both
    optim::Adam opt(layer.trainable_params(), 0.05);
    const Tensor x = randn({16, 5}, 40), target = randn({16, 3}, 41);
    const Fn loss = [&](const std::vector<Tensor>& a) -> Value { return ops::mean(ops::square(layer(a[0]) - a[1])); };
    const GradFn grads = value_and_grad(loss, GradPosition(nullptr), layer.trainable_params());
    const Fn step = [&](const std::vector<Tensor>& a) -> Value {
      const Value r = grads(a);
      opt.apply_gradients(r[1]);
      return r[0];
    };
    const JitFn jitted = jit(step);
    std::vector<float> losses;
    for (int i = 0; i < 6; ++i) {
      const Value r = use_jit ? jitted({x, target}) : step({x, target});
      losses.push_back(static_cast<float>(r.tensor().item()));
    }
    if (use_jit) {
      EXPECT_EQ(jitted.stats().traces, 1);
      EXPECT_EQ(jitted.stats().eager_calls, 0);
    }
    std::vector<float> w = layer.trainable_params()[0].to_vector<float>();
    w.insert(w.end(), losses.begin(), losses.end());
    return w;
  };
  const std::vector<float> eager = run(false), graph = run(true);
  ASSERT_EQ(eager.size(), graph.size());
  for (size_t i = 0; i < eager.size(); ++i) EXPECT_NEAR(graph[i], eager[i], 1e-6 * (1 + std::fabs(eager[i]))) << i;
  set_context({});
}

// tan, leaky_relu, elu, clamp and flip run as aclnn kernels, with their gradients (composed of ops that run there).
TEST(AscendOps, TanLeakyReluEluClampAndFlipRunOnTheNpuWithTheirGradients) {
  use_fake();
  const Device npu = ascend::device();
  const Tensor x = randn({3, 4}, 70), y = randn({3, 4}, 71);
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    const Tensor t = ops::tan(a[0] * 0.5) + ops::leaky_relu(a[1], 0.2) * ops::elu(a[0], 1.5);
    const Tensor c =
        ops::clamp(t, -0.5, 0.8) + ops::clamp(a[1], std::nullopt, 0.3) + ops::clamp(a[0], -0.2, std::nullopt);
    return ops::sum(ops::flip(c * a[1], IntList{1}) * ops::flip(a[0]));
  };
  const Value cpu = value_and_grad(f, GradPosition({0, 1}))({x, y});
  reset_fallback_counts();
  const int64_t before = kernel_launches();
  const Value dev = value_and_grad(f, GradPosition({0, 1}))({x.to(npu), y.to(npu)});
  expect_close(dev[0].tensor(), cpu[0].tensor());
  const auto gc = cpu[1].flatten(), gd = dev[1].flatten();
  for (size_t i = 0; i < gc.size(); ++i) {
    EXPECT_EQ(gd[i].device(), npu);
    expect_close(gd[i], gc[i]);
  }
  EXPECT_GT(kernel_launches(), before);
  EXPECT_TRUE(fallback_counts().empty()) << fallback_counts().begin()->first;
  // float64 where the NPU has it (Tan, Clamp, Flip), int32 clamp and flip
  const Tensor x64 = ops::cast(x, DType::Float64), xd64 = x64.to(npu);
  expect_close(ops::tan(xd64), ops::tan(x64), 1e-12);
  expect_close(ops::clamp(xd64, -0.3, 0.4), ops::clamp(x64, -0.3, 0.4), 1e-12);
  expect_close(ops::flip(xd64, IntList{0, -1}), ops::flip(x64, IntList{0, -1}), 1e-12);
  const Tensor i = tensor_i32({-7, 3, 0, 12, 5, -1}, {2, 3});
  EXPECT_EQ(ops::clamp(i.to(npu), -2, 4).to_vector<int32_t>(), ops::clamp(i, -2, 4).to_vector<int32_t>());
  EXPECT_EQ(ops::flip(i.to(npu)).to_vector<int32_t>(), ops::flip(i).to_vector<int32_t>());
  EXPECT_TRUE(fallback_counts().empty()) << fallback_counts().begin()->first;
  // Declined, so the CPU kernel runs: min > max (CANN applies min last, the op max), an int32 bound of 2.5,
  // leaky_relu in float64 (no DOUBLE on the NPU).
  expect_close(ops::clamp(x.to(npu), 0.5, -0.5), ops::clamp(x, 0.5, -0.5));
  EXPECT_EQ(ops::clamp(i.to(npu), 2.5, std::nullopt).to_vector<int32_t>(),
            ops::clamp(i, 2.5, std::nullopt).to_vector<int32_t>());
  expect_close(ops::leaky_relu(xd64, 0.1), ops::leaky_relu(x64, 0.1), 1e-12);
  EXPECT_EQ(fallback_counts().at("clamp"), 2);
  EXPECT_EQ(fallback_counts().at("leaky_relu"), 1);
}

// gelu's gradient runs on aclnnGeluBackwardV2 (its erf form; the tanh form composes ops that run there too), to
// second order (gelu_grad's own gradient is composed of ops the NPU has) and in half precision.
TEST(AscendOps, GeluAndItsGradientRunOnTheNpu) {
  use_fake();
  const auto gelu_grad = [](const Tensor& x, const Tensor& dy) { return call_op("gelu_grad", {x, dy}); };
  const Device npu = ascend::device();
  const Tensor x = randn({3, 5}, 72) * 2.0, w = randn({3, 5}, 73);
  for (const std::string form : {"none", "tanh"}) {
    const Fn f = [&form](const std::vector<Tensor>& a) -> Value {
      return ops::sum(ops::gelu(a[0], form) * a[1]);
    };
    const Value cpu = value_and_grad(f, GradPosition({0, 1}))({x, w});
    reset_fallback_counts();
    const Value dev = value_and_grad(f, GradPosition({0, 1}))({x.to(npu), w.to(npu)});
    expect_close(dev[0].tensor(), cpu[0].tensor());
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(dev[1].flatten()[i].device(), npu);
      expect_close(dev[1].flatten()[i], cpu[1].flatten()[i]);
    }
    EXPECT_TRUE(fallback_counts().empty()) << form << ": " << fallback_counts().begin()->first;
  }
  // gelu_grad itself on the NPU, and its gradients (second order of gelu)
  const Fn g = [](const std::vector<Tensor>& a) -> Value { return ops::sum(call_op("gelu_grad", {a[0], a[1]}) * a[0]); };
  const Value cpu2 = value_and_grad(g, GradPosition({0, 1}))({x, w});
  reset_fallback_counts();
  const int64_t before = kernel_launches();
  const Value dev2 = value_and_grad(g, GradPosition({0, 1}))({x.to(npu), w.to(npu)});
  expect_close(dev2[0].tensor(), cpu2[0].tensor());
  for (size_t i = 0; i < 2; ++i) expect_close(dev2[1].flatten()[i], cpu2[1].flatten()[i]);
  EXPECT_GT(kernel_launches(), before);
  EXPECT_TRUE(fallback_counts().empty()) << fallback_counts().begin()->first;
  // half: computed in float32 and rounded once, by the fake as by the CPU (to a rounding of the result)
  for (const DType dt : {DType::Float16, DType::BFloat16}) {
    const Tensor xh = ops::cast(x, dt), wh = ops::cast(w, dt);
    const Tensor got = gelu_grad(xh.to(npu), wh.to(npu));
    EXPECT_EQ(got.dtype(), dt);
    expect_close(ops::cast(got, DType::Float32), ops::cast(gelu_grad(xh, wh), DType::Float32),
                 dt == DType::Float16 ? 1e-3 : 8e-3);
  }
  EXPECT_TRUE(fallback_counts().empty()) << fallback_counts().begin()->first;
  // float64 and broadcast operands are declined to the CPU (no DOUBLE in the NPU's GELU operators)
  const Tensor x64 = ops::cast(x, DType::Float64);
  expect_close(gelu_grad(x64.to(npu), x64.to(npu)), gelu_grad(x64, x64), 1e-12);
  EXPECT_EQ(fallback_counts().at("gelu_grad"), 1);
}

// stack, tile, pad, logsumexp, slice and strided_slice run on the NPU, with their gradients (slice, pad,
// strided_slice_grad, reshape and sum: on the NPU too).
TEST(AscendOps, LayoutSlicingAndLogSumExpRunOnTheNpuWithTheirGradients) {
  use_fake();
  const Device npu = ascend::device();
  const Tensor x = randn({3, 4}, 80), y = randn({3, 4}, 81), z = randn({2, 3}, 82);
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    const Tensor s = ops::stack({a[0], a[1]}, 1);                                   // [3, 2, 4]
    const Tensor t = ops::tile(a[2], {2, 1, 2});                                    // [2, 2, 6]
    const Tensor p = ops::pad(a[0], IntMatrix{{1, 0}, {2, 1}}, 0.5);                // [4, 7]
    const Tensor l = ops::logsumexp(s, IntList{1}, true);                           // [3, 1, 4]
    const Tensor sl = ops::slice(p, {1, 2}, {3, -1});                               // [3, 5]
    const Tensor ss = ops::strided_slice(p, {0, 1}, {4, 7}, {2, 3});                // [2, 2]
    return ops::sum(l * ops::reshape(ops::slice(sl, {0, 0}, {3, 4}), {3, 1, 4})) + ops::sum(ss * ss) +
           ops::sum(ops::square(t)) + ops::sum(ops::exp(s) * 0.1);
  };
  const Value cpu = value_and_grad(f, GradPosition({0, 1, 2}))({x, y, z});
  reset_fallback_counts();
  const Value dev = value_and_grad(f, GradPosition({0, 1, 2}))({x.to(npu), y.to(npu), z.to(npu)});
  expect_close(dev[0].tensor(), cpu[0].tensor());
  const auto gc = cpu[1].flatten(), gd = dev[1].flatten();
  for (size_t i = 0; i < gc.size(); ++i) {
    EXPECT_EQ(gd[i].device(), npu);
    expect_close(gd[i], gc[i]);
  }
  EXPECT_TRUE(fallback_counts().empty()) << fallback_counts().begin()->first;
  // int32 and float64 data, a logsumexp over every axis
  const Tensor i = tensor_i32({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor id = i.to(npu);
  EXPECT_EQ(ops::stack({id, id}, -1).to_vector<int32_t>(), ops::stack({i, i}, -1).to_vector<int32_t>());
  EXPECT_EQ(ops::tile(id, {3}).to_vector<int32_t>(), ops::tile(i, {3}).to_vector<int32_t>());
  EXPECT_EQ(ops::pad(id, IntMatrix{{0, 1}, {1, 1}}, 7).to_vector<int32_t>(),
            ops::pad(i, IntMatrix{{0, 1}, {1, 1}}, 7).to_vector<int32_t>());
  EXPECT_EQ(ops::strided_slice(id, {-2, 1}, {-1, 3}, {1, 1}).to_vector<int32_t>(),
            ops::strided_slice(i, {-2, 1}, {-1, 3}, {1, 1}).to_vector<int32_t>());
  const Tensor x64 = ops::cast(x, DType::Float64);
  expect_close(ops::slice(x64.to(npu), {1, 1}, {2, 2}), ops::slice(x64, {1, 1}, {2, 2}), 1e-12);
  expect_close(ops::logsumexp(x.to(npu)), ops::logsumexp(x));
  EXPECT_TRUE(fallback_counts().empty()) << fallback_counts().begin()->first;
  // Declined: a negative step, a fractional int32 padding value, logsumexp in float64.
  expect_close(ops::strided_slice(x.to(npu), {2, 3}, {-5, -5}, {-1, -2}),
               ops::strided_slice(x, {2, 3}, {-5, -5}, {-1, -2}));
  EXPECT_EQ(ops::pad(id, IntMatrix{{1, 0}, {0, 0}}, 2.5).to_vector<int32_t>(),
            ops::pad(i, IntMatrix{{1, 0}, {0, 0}}, 2.5).to_vector<int32_t>());
  expect_close(ops::logsumexp(x64.to(npu), IntList{0}), ops::logsumexp(x64, IntList{0}), 1e-12);
  EXPECT_EQ(fallback_counts().at("strided_slice"), 1);
  EXPECT_EQ(fallback_counts().at("pad"), 1);
  EXPECT_EQ(fallback_counts().at("logsumexp"), 1);
}

// layer_norm, var and std run on the NPU with their gradients (the layer norm's bprop: var, mean, rsqrt, sum_to).
TEST(AscendOps, LayerNormVarAndStdRunOnTheNpuWithTheirGradients) {
  use_fake();
  const Device npu = ascend::device();
  const Tensor x = randn({3, 2, 5}, 90), w = randn({2, 5}, 91), b = randn({2, 5}, 92), w1 = randn({5}, 93);
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    const Tensor n2 = ops::layer_norm(a[0], a[1], a[2], 2);
    const Tensor n1 = ops::layer_norm(a[0] * 2.0, a[3], Tensor(), 1, 1e-3);
    const Tensor v = ops::var(a[0], IntList{2}, true, 0) + ops::var(a[0], IntList{0, 1}, true);
    const Tensor s = ops::stddev(a[0], IntList{1, 2}, false, 0), s1 = ops::stddev(a[0], IntList{0}, true);
    return ops::sum(n2 * n1 * v) + ops::sum(s * s * s) + ops::sum(s1 * a[0]);
  };
  const Value cpu = value_and_grad(f, GradPosition({0, 1, 2, 3}))({x, w, b, w1});
  reset_fallback_counts();
  const Value dev = value_and_grad(f, GradPosition({0, 1, 2, 3}))({x.to(npu), w.to(npu), b.to(npu), w1.to(npu)});
  expect_close(dev[0].tensor(), cpu[0].tensor(), 1e-4);
  const auto gc = cpu[1].flatten(), gd = dev[1].flatten();
  for (size_t i = 0; i < gc.size(); ++i) {
    EXPECT_EQ(gd[i].device(), npu);
    expect_close(gd[i], gc[i], 1e-4);
  }
  EXPECT_TRUE(fallback_counts().empty()) << fallback_counts().begin()->first;
  // Declined: float64 (the NPU's Var and LayerNorm have none).
  const Tensor x64 = ops::cast(x, DType::Float64);
  expect_close(ops::var(x64.to(npu), IntList{2}, false, 0), ops::var(x64, IntList{2}, false, 0), 1e-12);
  expect_close(ops::layer_norm(x64.to(npu)), ops::layer_norm(x64), 1e-12);
  EXPECT_EQ(fallback_counts().at("var"), 1);
  EXPECT_EQ(fallback_counts().at("layer_norm"), 1);
}

// prod over one, several and all axes runs on the NPU, with its gradient (zeros in a lane included).
TEST(AscendOps, ProdRunsOnTheNpuWithItsGradient) {
  use_fake();
  const Device npu = ascend::device();
  Tensor x = randn({2, 3, 4}, 95);
  x = ops::where(ops::greater(ops::abs(x), scalar(1.5)), zeros_like(x), x);  // a few exact zeros
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::prod(a[0], IntList{2}) * 2.0) + ops::sum(ops::prod(a[0], IntList{0, 2}, true)) +
           ops::prod(a[0] * 0.9 + 0.5);
  };
  const Value cpu = value_and_grad(f, GradPosition({0}))({x});
  reset_fallback_counts();
  const Value dev = value_and_grad(f, GradPosition({0}))({x.to(npu)});
  expect_close(dev[0].tensor(), cpu[0].tensor());
  expect_close(dev[1].flatten()[0], cpu[1].flatten()[0]);
  const Tensor i = tensor_i32({1, -2, 3, 4, 5, -6}, {2, 3});
  EXPECT_EQ(ops::prod(i.to(npu), IntList{1}).to_vector<int32_t>(), ops::prod(i, IntList{1}).to_vector<int32_t>());
  const Tensor x64 = ops::cast(x, DType::Float64);
  expect_close(ops::prod(x64.to(npu), IntList{0, 1}), ops::prod(x64, IntList{0, 1}), 1e-12);
  EXPECT_TRUE(fallback_counts().empty()) << fallback_counts().begin()->first;
}

// The optimizer update ops run on the NPU (the learning rate and step count stay there: 0-d float64 tensors) and
// give the CPU kernels' values to float32 rounding (the CPU computes in float64, the NPU in the parameter's dtype).
TEST(AscendOptimizer, UpdateOpsRunOnTheNpuAndMatchTheCpu) {
  use_fake();
  const Device npu = ascend::device();
  for (const DType dt : {DType::Float32, DType::Float64}) {
    const double tol = dt == DType::Float32 ? 2e-6 : 1e-12;
    const Tensor w = randn({4, 5}, 50, dt), g = randn({4, 5}, 51, dt), b = randn({4, 5}, 52, dt);
    const Tensor m = randn({4, 5}, 53, dt), v = ops::square(randn({4, 5}, 54, dt));
    const Tensor lr = scalar(0.05, DType::Float64);
    const Tensor wd = w.to(npu), gd = g.to(npu), bd = b.to(npu), md = m.to(npu), vd = v.to(npu);
    const Tensor lrd = lr.to(npu);
    reset_fallback_counts();
    for (const double step : {1.0, 3.0}) {
      const Tensor t = scalar(step, DType::Float64), td = t.to(npu);
      for (const double damp : {0.0, 0.25}) {
        const Attrs a{{"weight_decay", 0.1}, {"momentum", 0.9}, {"dampening", damp}};
        expect_close(call_op("sgd_buffer", {bd, gd, wd, td}, a), call_op("sgd_buffer", {b, g, w, t}, a), tol);
      }
      for (const bool decoupled : {false, true}) {
        const Attrs am{{"beta1", 0.8}, {"weight_decay", 0.01}, {"decoupled", decoupled}};
        expect_close(call_op("adam_m", {md, gd, wd}, am), call_op("adam_m", {m, g, w}, am), tol);
        const Attrs av{{"beta2", 0.99}, {"weight_decay", 0.01}, {"decoupled", decoupled}};
        expect_close(call_op("adam_v", {vd, gd, wd}, av), call_op("adam_v", {v, g, w}, av), tol);
        const Attrs as{
            {"beta1", 0.8}, {"beta2", 0.99}, {"eps", 1e-6}, {"weight_decay", 0.01}, {"decoupled", decoupled}};
        expect_close(call_op("adam_step", {wd, md, vd, lrd, td}, as), call_op("adam_step", {w, m, v, lr, t}, as), tol);
      }
      // beta1 = 0 (beta1^t = 0), and a host learning rate, which moves to the NPU as a 0-d tensor does
      const Attrs as0{{"beta1", 0.0}, {"beta2", 0.999}};
      expect_close(call_op("adam_step", {wd, md, vd, lr, td}, as0), call_op("adam_step", {w, m, v, lr, t}, as0), tol);
    }
    for (const bool nesterov : {false, true}) {
      const Attrs a{{"weight_decay", 0.1}, {"momentum", 0.9}, {"nesterov", nesterov}};
      expect_close(call_op("sgd_step", {wd, gd, lrd, bd}, a), call_op("sgd_step", {w, g, lr, b}, a), tol);
    }
    expect_close(call_op("sgd_step", {wd, gd, lrd, Tensor()}, {}), call_op("sgd_step", {w, g, lr, Tensor()}, {}), tol);
    EXPECT_EQ(call_op("sgd_step", {wd, gd, lrd, Tensor()}, {}).device(), npu);
    EXPECT_TRUE(fallback_counts().empty()) << fallback_counts().begin()->first;
  }
  // An empty parameter is declined: the CPU kernel runs, counted.
  const Tensor e = zeros({0, 3}).to(npu);
  EXPECT_EQ(call_op("sgd_step", {e, e, scalar(0.1, DType::Float64), Tensor()}, {}).shape(), (Shape{0, 3}));
  EXPECT_EQ(fallback_counts().at("sgd_step"), 1);
}

// Training with each optimizer on the NPU gives the CPU's parameters, and no update op falls back.
TEST(AscendOptimizer, OptimizersTrainOnTheNpuAsOnTheCpu) {
  use_fake();
  auto run = [](Device dev, int which) {
    set_context({.device = dev});  // (the optimizer's state is made on the context's device)
    std::vector<Parameter> params{Parameter(randn({6, 3}, 60).to(dev), "w"), Parameter(randn({3}, 61).to(dev), "b")};
    std::unique_ptr<optim::Optimizer> opt;
    switch (which) {
      case 0: opt = std::make_unique<optim::SGD>(params, 0.05, 0.9, 0.1, false, 0.01); break;
      case 1: opt = std::make_unique<optim::SGD>(params, 0.05, 0.9, 0.0, true, 0.01); break;
      case 2: opt = std::make_unique<optim::Adam>(params, 0.02, std::pair{0.9, 0.99}, 1e-8, 0.01); break;
      default: opt = std::make_unique<optim::AdamW>(params, 0.02); break;
    }
    const Tensor x = randn({8, 6}, 62).to(dev), y = randn({8, 3}, 63).to(dev);
    const Fn loss = [&](const std::vector<Tensor>& p) -> Value {
      return ops::mean(ops::square(ops::matmul(x, p[0]) + p[1] - y));
    };
    for (int i = 0; i < 5; ++i) opt->step(grad(loss, GradPosition({0, 1}))({params[0], params[1]}).flatten());
    set_context({});
    return std::vector<Tensor>{params[0], params[1]};
  };
  for (int which = 0; which < 4; ++which) {
    const std::vector<Tensor> cpu = run(Device::cpu(), which);
    reset_fallback_counts();
    const std::vector<Tensor> dev = run(ascend::device(), which);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(dev[i].device(), ascend::device());
      expect_close(dev[i], cpu[i], 1e-5);
    }
    for (const char* op : {"sgd_buffer", "sgd_step", "adam_m", "adam_v", "adam_step"}) {
      EXPECT_EQ(fallback_counts().count(op), 0u) << op << " fell back to the CPU (optimizer " << which << ")";
    }
  }
}

// scaled_dot_product_attention on aclnnFlashAttentionScore and its gradient on aclnnFlashAttentionScoreGrad (the
// softmax statistics the forward kept): the CPU kernel's values and gradients, causal or not, L != S, and a mask
// left to the CPU.
TEST(AscendOps, AttentionRunsOnFlashAttentionScoreAndItsGrad) {
  use_fake();
  const Device npu = ascend::device();
  for (const bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "full");
    const Tensor q = randn({2, 3, 5, 4}, 1), k = randn({2, 3, 7, 4}, 2), v = randn({2, 3, 7, 4}, 3);
    const Fn f = [causal](const std::vector<Tensor>& x) -> Value {
      return ops::sum(ops::sin(ops::scaled_dot_product_attention(x[0], x[1], x[2], Tensor(), causal)));
    };
    reset_fallback_counts();
    const Tensor qd = q.to(npu), kd = k.to(npu), vd = v.to(npu);
    expect_close(ops::scaled_dot_product_attention(qd, kd, vd, Tensor(), causal),
                 ops::scaled_dot_product_attention(q, k, v, Tensor(), causal), 1e-5);
    const Value g = grad(f, GradPosition({0, 1, 2}))({qd, kd, vd}), want = grad(f, GradPosition({0, 1, 2}))({q, k, v});
    for (int i = 0; i < 3; ++i) expect_close(g[i].tensor().to(Device::cpu()), want[i].tensor(), 1e-5);
    const auto counts = fallback_counts();
    EXPECT_EQ(counts.count("scaled_dot_product_attention"), 0u);
    EXPECT_EQ(counts.count("scaled_dot_product_attention_grad"), 0u);
  }
  // a mask, broadcast heads or float64: the CPU kernel, counted
  reset_fallback_counts();
  const Tensor q = randn({1, 2, 3, 4}, 4).to(npu), mask = tensor_bool({true, false, true}, {3}).to(npu);
  (void)ops::scaled_dot_product_attention(q, q, q, mask);
  EXPECT_EQ(fallback_counts().count("scaled_dot_product_attention"), 1u);
}

}  // namespace
}  // namespace bprop

