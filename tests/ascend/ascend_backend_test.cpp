// The Ascend backend against the strict fake CANN of tests/fake_ascend (its libraries do the maths on the CPU in a
// device heap the host cannot touch, run kernels only when a stream is synchronised, and abort on protocol
// errors). Each test runs in a process of its own (gtest_discover_tests), so each sets up its environment before
// the backend's first use.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

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
  const std::string e = error_of([] { device_backend(Backend::Ascend); });
  EXPECT_NE(e.find("libascendcl.so"), std::string::npos) << e;
  EXPECT_NE(e.find("set_env.sh"), std::string::npos) << e;
  EXPECT_NE(e.find("/nonexistent-cann/lib64/libascendcl.so"), std::string::npos) << e;
  EXPECT_FALSE(device_backend_available(Backend::Ascend));
  // The CPU is unaffected, and a device tensor is refused with the same reason.
  EXPECT_EQ((ones({2}) + ones({2})).to_vector<float>(), (std::vector<float>{2, 2}));
  EXPECT_THROW(ones({2}).to(Device::ascend()), ValueError);
}

TEST(AscendLoading, AMissingDriverLibraryIsNamed) {
  const fs::path dir = fs::temp_directory_path() / ("bprop-no-hal-" + std::to_string(getpid()));
  fs::create_directories(dir / "lib64");
  for (const auto& entry : fs::directory_iterator(fs::path(BPROP_FAKE_ASCEND_HOME) / "lib64")) {
    if (entry.path().filename() != "libascend_hal.so") fs::copy(entry.path(), dir / "lib64" / entry.path().filename());
  }
  setenv("ASCEND_HOME_PATH", dir.c_str(), 1);
  const std::string e = error_of([] { device_backend(Backend::Ascend); });
  fs::remove_all(dir);
  EXPECT_NE(e.find("libascend_hal.so"), std::string::npos) << e;
  EXPECT_NE(e.find("driver"), std::string::npos) << e;
}

TEST(AscendLoading, AFailingAclInitReportsTheCodeAndTheRuntimeMessage) {
  use_fake();
  setenv("FAKE_ASCEND_FAIL_INIT", "507033", 1);
  const std::string e = error_of([] { device_backend(Backend::Ascend); });
  unsetenv("FAKE_ASCEND_FAIL_INIT");
  EXPECT_NE(e.find("aclInit"), std::string::npos) << e;
  EXPECT_NE(e.find("507033"), std::string::npos) << e;
  EXPECT_EQ(device_backend(Backend::Ascend).device_count(), 1);  // a failed start is not remembered
}

TEST(AscendTensors, MoveToTheDeviceAndBack) {
  use_fake();
  const Tensor h = tensor({1, -2.5, 3, 4e10, -0.0, 6}, {2, 3});
  const Tensor d = h.to(Device::ascend(0));
  EXPECT_EQ(d.device(), Device::ascend(0));
  EXPECT_EQ(d.device().str(), "ascend:0");
  EXPECT_EQ(d.shape(), h.shape());
  EXPECT_EQ(d.to_vector<float>(), h.to_vector<float>());  // to_vector copies to the host
  EXPECT_EQ(d.cpu().device(), Device::cpu());
  EXPECT_DOUBLE_EQ(d.to(Device::ascend(0)).clone().cpu().to_vector<double>()[3], 4e10);
  EXPECT_NE(d.to_string().find("device=ascend:0"), std::string::npos) << d.to_string();
  const std::string e = error_of([&] { (void)d.data<float>(); });  // no host pointer into device memory
  EXPECT_NE(e.find("lives on ascend:0"), std::string::npos) << e;
  EXPECT_DOUBLE_EQ(scalar(7.5, DType::Float64).to(Device::ascend()).item(), 7.5);
  const Tensor i = tensor_i32({1, 2, 3}, {3}).to(Device::ascend());
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
}

TEST(AscendOps, ElementwiseReductionsAndMatmulRunAsAclnnKernels) {
  use_fake();
  const Device npu = Device::ascend();
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

TEST(AscendOps, OpsWithoutAnNpuKernelFallBackToTheCpuAndAreCounted) {
  use_fake();
  reset_fallback_counts();
  const Tensor x = randn({3, 4}, 4);
  const Tensor xd = x.to(Device::ascend());
  const Tensor s = ops::tan(xd);  // no aclnn kernel
  EXPECT_EQ(s.device(), Device::ascend());
  expect_close(s, ops::tan(x));
  // float64 where the NPU's Matmul and Tanh have none
  const Tensor x64 = ops::cast(x, DType::Float64), w64 = randn({4, 2}, 5, DType::Float64);
  expect_close(ops::matmul(x64.to(Device::ascend()), w64.to(Device::ascend())), ops::matmul(x64, w64), 1e-12);
  expect_close(ops::tanh(x64.to(Device::ascend())), ops::tanh(x64), 1e-12);
  const auto counts = fallback_counts();
  EXPECT_EQ(counts.at("tan"), 1);
  EXPECT_EQ(counts.at("matmul"), 1);
  EXPECT_EQ(counts.at("tanh"), 1);
  EXPECT_EQ(counts.count("cast"), 0u);
}

TEST(AscendOps, MixingDevicesIsAnErrorNamingBoth) {
  use_fake(2);
  if (device_backend(Backend::Ascend).device_count() < 2) GTEST_SKIP() << "run in a process of its own (ctest)";
  const Tensor a = ones({2, 2}).to(Device::ascend(0));
  const std::string e = error_of([&] { ops::add(a, ones({2, 2})); });
  EXPECT_NE(e.find("For 'add'"), std::string::npos) << e;
  EXPECT_NE(e.find("ascend:0"), std::string::npos) << e;
  EXPECT_NE(e.find("cpu"), std::string::npos) << e;
  const std::string e2 = error_of([&] { ops::matmul(a, ones({2, 2}).to(Device::ascend(1))); });
  EXPECT_NE(e2.find("ascend:0"), std::string::npos) << e2;
  EXPECT_NE(e2.find("ascend:1"), std::string::npos) << e2;
  // A 0-d host tensor meets a device tensor as a scalar does (x * 2.0).
  EXPECT_EQ((a * 2.0).device(), Device::ascend(0));
  EXPECT_EQ((a * 2.0).to_vector<float>(), (std::vector<float>{2, 2, 2, 2}));
  const std::string e3 = error_of([] { set_context({.device = Device::ascend(2)}); });
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
  const Device npu = Device::ascend();
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
  set_context({.device = Device::ascend(0)});
  EXPECT_EQ(default_device(), Device::ascend(0));
  const int64_t before = kernel_launches();
  const Tensor y = ops::mul(tensor({1, 2, 3}, {3}), tensor({4, 5, 6}, {3}));
  EXPECT_EQ(y.device(), Device::ascend(0));
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
  const Device npu = Device::ascend();
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
  set_context({.device = Device::ascend()});
  nn::Dense layer(5, 3);
  ASSERT_EQ(layer.trainable_params()[0].device(), Device::ascend());  // made on the context's device
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
    EXPECT_EQ(other.trainable_params()[i].device(), Device::ascend());
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
  const Device npu = Device::ascend();
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

TEST(AscendJit, AJittedTrainingStepOnTheNpuUpdatesParametersAsEagerSteps) {
  use_fake();
  set_context({.device = Device::ascend()});
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

}  // namespace
}  // namespace bprop
