// What the Ascend backend passes to CANN, checked against what CANN documents (the fake's operator table,
// tests/fake_ascend/src/cann_table.cpp): the operators it launches, the formats and addresses of its tensors, the
// split operator libraries, and the product lines whose operators lack what bprop needs (the backend declines to
// the CPU there, counted, and never raises). Each test runs in a process of its own (gtest_discover_tests).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "ascend/backend.h"
#include "ascend/kernels.h"
#include "ascend/runtime.h"
#include "bprop/bprop.h"
#include "bprop/device.h"

#ifndef BPROP_FAKE_ASCEND_HOME
#error "the Ascend backend tests need the fake CANN (tests/fake_ascend)"
#endif

namespace bprop {
namespace {

void use_fake(const char* soc = nullptr) {
  setenv("ASCEND_HOME_PATH", BPROP_FAKE_ASCEND_HOME, 1);
  setenv("FAKE_ASCEND_DEVICES", "1", 1);
  unsetenv("FAKE_ASCEND_FAIL_INIT");
  if (soc) setenv("FAKE_ASCEND_SOC", soc, 1);
  else unsetenv("FAKE_ASCEND_SOC");
}

void expect_close(const Tensor& got, const Tensor& want, double tol = 1e-5) {
  ASSERT_EQ(got.shape(), want.shape());
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], tol * (1 + std::fabs(w[i]))) << "element " << i;
}

TEST(AscendFidelity, EveryOperatorTheBackendLaunchesIsDocumentedInTheFakesTable) {
  const std::string lib64 = std::string(BPROP_FAKE_ASCEND_HOME) + "/lib64/";
  void* math = dlopen((lib64 + "libopapi.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  void* nn = dlopen((lib64 + "libopapi_nn.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  void* transformer = dlopen((lib64 + "libopapi_transformer.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(math && nn && transformer) << dlerror();
  auto documented = reinterpret_cast<bool (*)(const char*)>(dlsym(math, "fake_ascend_documented"));
  ASSERT_NE(documented, nullptr);
  int checked = 0;
  for (const ascend::DeviceKernel& k : ascend::aclnn_kernels()) {
    std::vector<std::string> launched = k.also;
    launched.push_back(k.aclnn);
    for (const std::string& name : launched) {
      const std::string op = "aclnn" + name, ws = op + "GetWorkspaceSize";
      EXPECT_TRUE(documented(op.c_str())) << k.op << " launches " << op << ", which the fake's table lacks";
      EXPECT_TRUE(dlsym(math, ws.c_str()) || dlsym(nn, ws.c_str()) || dlsym(transformer, ws.c_str()))
          << k.op << ": the fake has no " << ws;
      ++checked;
    }
  }
  EXPECT_GT(checked, 80);
}

TEST(AscendFidelity, EverySplitOperatorLibraryIsLoadedBeforeLibopapi) {
  use_fake();
  (void)tensor({1.0}, {1}).to(ascend::device());  // loads the backend
  const std::vector<std::string>& libs = ascend::Runtime::get().lib().operator_libraries();
  ASSERT_EQ(libs.size(), 3u);
  EXPECT_NE(libs[0].find("libopapi_nn.so"), std::string::npos) << libs[0];
  EXPECT_NE(libs[1].find("libopapi_transformer.so"), std::string::npos) << libs[1];
  EXPECT_NE(libs[2].find("libopapi.so"), std::string::npos) << libs[2];
  // an operator only the split library has runs on the NPU
  reset_fallback_counts();
  const Tensor x = randn({1, 2, 4, 4}, 3);
  expect_close(ops::avg_pool2d(x.to(ascend::device()), 2), ops::avg_pool2d(x, 2));
  EXPECT_TRUE(fallback_counts().empty());
}

TEST(AscendFidelity, AViewIntoAStorageIsPassedAsTheStoragesAddressAndAnElementOffset) {
  // A gradient bucket's slice starts anywhere in its storage: CANN wants tensorData 32-byte aligned (the fake refuses
  // any other), so the view is described by the storage's address and the offset in elements.
  use_fake();
  const Tensor storage = tensor({1, 2, 3, 4, 5, 6, 7, 8}, {8}).to(ascend::device());
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = storage.impl()->storage;
  impl->offset = 3 * sizeof(float);  // elements 3..7: 12 bytes in
  impl->shape = {5};
  impl->numel = 5;
  impl->dtype = DType::Float32;
  const Tensor view(impl);
  reset_fallback_counts();
  EXPECT_EQ((view * 2.0).to_vector<float>(), (std::vector<float>{8, 10, 12, 14, 16}));
  EXPECT_EQ(ops::exp(view).to_vector<float>()[0], std::exp(4.0f));
  EXPECT_TRUE(fallback_counts().empty());
}

TEST(AscendFidelity, SocNamesMapToTheirProductLines) {
  using ascend::SocFamily;
  EXPECT_EQ(ascend::soc_family("Ascend910B1"), SocFamily::Ascend910B);
  EXPECT_EQ(ascend::soc_family("Ascend910B4-1"), SocFamily::Ascend910B);
  EXPECT_EQ(ascend::soc_family("Ascend910B"), SocFamily::Ascend910);  // a first Ascend 910, not the A2 line
  EXPECT_EQ(ascend::soc_family("Ascend910ProB"), SocFamily::Ascend910);
  EXPECT_EQ(ascend::soc_family("Ascend910A"), SocFamily::Ascend910);
  EXPECT_EQ(ascend::soc_family("Ascend910_9391"), SocFamily::Ascend910_93);
  EXPECT_EQ(ascend::soc_family("Ascend310P3"), SocFamily::Other);
}

TEST(AscendFidelity, OnTheAtlasTrainingSeriesBFloat16RunsOnTheCpuAndFloat16OnTheNpu) {
  // The line has no bfloat16 in any operator: bfloat16 calls decline (counted) and give the CPU's results.
  use_fake("Ascend910A");
  (void)device_backend(ascend::backend());
  if (ascend::Runtime::get().soc() != ascend::SocFamily::Ascend910) {
    GTEST_SKIP() << "run in a process of its own (ctest)";
  }
  const Device npu = ascend::device();
  const Tensor h = randn({3, 4}, 6, DType::Float16), b = randn({3, 4}, 7, DType::BFloat16);
  const Tensor hm = randn({4, 2}, 8, DType::Float16);
  reset_fallback_counts();
  const Tensor he = ops::exp(h.to(npu)), hp = ops::matmul(h.to(npu), hm.to(npu));  // (KEEP_DTYPE in float16)
  const std::vector<double> got = he.to_vector<double>(), want = ops::exp(h).to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-3 * want[i]) << i;  // (a float16 ulp)
  EXPECT_EQ(hp.dtype(), DType::Float16);
  EXPECT_TRUE(fallback_counts().empty()) << fallback_counts().begin()->first;
  const Tensor e = ops::exp(b.to(npu));
  EXPECT_EQ(e.device(), npu);
  EXPECT_EQ(e.to_vector<double>(), ops::exp(b).to_vector<double>());  // the CPU's kernel
  EXPECT_EQ(fallback_counts().at("exp"), 1);
}

TEST(AscendFidelity, OnTheAtlasTrainingSeriesWhatItsOperatorsLackRunsOnTheCpu) {
  // Its cube unit has no float32 (Matmul, Convolution and AvgPool2d refuse KEEP_DTYPE with FLOAT) and it has no
  // MaxPool2dWithIndices and no Flip: those ops decline, counted, and give the CPU's results; the rest run on it.
  use_fake("Ascend910A");
  (void)device_backend(ascend::backend());  // (the SoC is read once, at aclInit)
  if (ascend::Runtime::get().soc() != ascend::SocFamily::Ascend910) {
    GTEST_SKIP() << "run in a process of its own (ctest)";
  }
  const Device npu = ascend::device();
  reset_fallback_counts();
  const Tensor a = randn({3, 4}, 1), m = randn({4, 2}, 2), x = randn({2, 3, 6, 6}, 3), w = randn({4, 3, 3, 3}, 4);
  expect_close(ops::matmul(a.to(npu), m.to(npu)), ops::matmul(a, m));
  const Fn f = [](const std::vector<Tensor>& v) -> Value {
    const Tensor y = ops::conv2d(v[0], v[1], Tensor(), 1, 1);
    return ops::sum(ops::avg_pool2d(ops::max_pool2d(y, 2), 2) * 3.0);
  };
  const Value cpu = value_and_grad(f, GradPosition({0, 1}))({x, w});
  const Value dev = value_and_grad(f, GradPosition({0, 1}))({x.to(npu), w.to(npu)});
  expect_close(dev[0].tensor(), cpu[0].tensor(), 1e-4);
  expect_close(dev[1][0].tensor(), cpu[1][0].tensor(), 1e-4);
  expect_close(dev[1][1].tensor(), cpu[1][1].tensor(), 1e-4);
  expect_close(ops::flip(a.to(npu), {1}), ops::flip(a, {1}));
  const auto counts = fallback_counts();
  for (const char* op : {"matmul", "conv2d", "conv2d_input_grad", "conv2d_weight_grad", "max_pool2d",
                         "max_pool2d_grad", "avg_pool2d", "avg_pool2d_grad", "flip"}) {
    EXPECT_EQ(counts.count(op), 1u) << op << " did not fall back";
  }
  reset_fallback_counts();
  expect_close(ops::exp(a.to(npu)) + 1.0, ops::exp(a) + 1.0);  // elementwise operators run there
  EXPECT_TRUE(fallback_counts().empty());
}

}  // namespace
}  // namespace bprop
