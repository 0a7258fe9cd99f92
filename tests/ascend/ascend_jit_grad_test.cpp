// grad of a jitted function on the NPU (the fake CANN of tests/fake_ascend): the forward graph replays there as
// one recorded op, its backward as a jitted vjp replayed there too, with the eager gradient's values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "ascend/backend.h"
#include "bprop/bprop.h"
#include "bprop/device.h"

#ifndef BPROP_FAKE_ASCEND_HOME
#error "the Ascend backend tests need the fake CANN (tests/fake_ascend)"
#endif

namespace bprop {
namespace {

void use_fake() {
  setenv("ASCEND_HOME_PATH", BPROP_FAKE_ASCEND_HOME, 1);
  setenv("FAKE_ASCEND_DEVICES", "1", 1);
  unsetenv("FAKE_ASCEND_FAIL_INIT");
}

void expect_close(const Tensor& got, const Tensor& want, double tol = 1e-5) {
  ASSERT_EQ(got.shape(), want.shape());
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], tol * (1 + std::fabs(w[i]))) << "element " << i;
}

const Fn loss = [](const std::vector<Tensor>& a) -> Value {
  return ops::sum(ops::tanh(ops::matmul(a[0], a[1])) * ops::sum(ops::exp(a[0] * 0.5)));
};

TEST(AscendJitGrad, GradOfAJittedFunctionReplaysOnTheNpu) {
  use_fake();
  const Device npu = ascend::device();
  const Tensor x = randn({3, 4}, 11), w = randn({4, 2}, 12);
  const JitFn jf = jit(loss);
  const Value want = grad(loss, {0, 1})({x, w});  // eager, on the CPU
  reset_fallback_counts();
  for (int i = 0; i < 3; ++i) {
    const Value got = grad(jf, {0, 1})({x.to(npu), w.to(npu)});
    ASSERT_EQ(got.size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(got[k].tensor().device(), npu);
      expect_close(got[k].tensor(), want[k].tensor());
    }
  }
  const JitStats st = jf.stats();
  EXPECT_EQ(st.eager_calls, 0) << "the forward replayed its graph instead of running eagerly";
  EXPECT_EQ(st.grad_calls, 3);
  EXPECT_EQ(st.traces, 1);  // one graph, the NPU's
  EXPECT_TRUE(fallback_counts().empty()) << fallback_counts().begin()->first;
}

TEST(AscendJitGrad, SecondOrderThroughAJittedFunctionOnTheNpu) {
  use_fake();
  const Device npu = ascend::device();
  const Fn cube = [](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0] * a[0] * a[0]); };
  const JitFn jf = jit(cube);
  const Tensor x = tensor({0.5, -1.0, 2.0}, {3}).to(npu);
  const GradFn d2 = grad([&](const std::vector<Tensor>& a) -> Value { return ops::sum(grad(jf)(a).tensor()); });
  const Tensor got = d2({x}).tensor();  // d/dx sum(3x^2) = 6x
  EXPECT_EQ(got.device(), npu);
  expect_close(got, tensor({3.0, -6.0, 12.0}, {3}));
}

}  // namespace
}  // namespace bprop
