// MindSpore's set_context: in graph mode the functions grad / value_and_grad return, and Cell calls, compile
// themselves with jit on their first call (the Python-level function then runs once per signature), with the
// same results as PyNative mode, BatchNorm's moving statistics included.
#include <gtest/gtest.h>


#include "ascend/backend.h"
#include "bprop/bprop.h"
#include "bprop/nn/layers.h"
#include "same_bits.h"

using namespace bprop;

namespace {

// Graph mode for one test, PyNative again after it (however it ends).
struct GraphModeScope {
  GraphModeScope() {
    Context c;
    c.mode = Mode::Graph;
    set_context(c);
  }
  ~GraphModeScope() { set_context(Context{}); }
};

using bitwise::expect_bitwise_equal;

}  // namespace

TEST(Context, DefaultsToPyNativeAndRefusesUnknownDevices) {
  EXPECT_EQ(get_context().mode, Mode::PyNative);
  Context npu;
  npu.device = ascend::device(7);  // no NPU here, and not seven of them anywhere this runs
  EXPECT_THROW(set_context(npu), ValueError);
  EXPECT_EQ(get_context().device, Device::cpu());
  EXPECT_STREQ(mode_name(Mode::Graph), "graph");
}

TEST(Context, GradFunctionsCompileThemselvesInGraphMode) {
  int runs = 0;
  const Fn f = [&runs](const std::vector<Tensor>& a) -> Value {
    ++runs;
    return ops::sum(ops::sin(a[0]) * a[0]);
  };
  const Tensor x = randn({5}, 1);
  const GradFn g = value_and_grad(f);
  const Value eager = g({x});
  EXPECT_EQ(runs, 1);
  GraphModeScope graph;
  for (int i = 0; i < 3; ++i) {
    const Value r = g({x});
    expect_bitwise_equal(r[0].tensor(), eager[0].tensor());
    expect_bitwise_equal(r[1].tensor(), eager[1].tensor());
  }
  EXPECT_EQ(runs, 2);  // traced once, replayed twice
  g({randn({7}, 2)});  // a new signature traces again
  EXPECT_EQ(runs, 3);
  // with a sens, its own graph
  const Value s = g({x}, scalar(2.0));
  EXPECT_EQ(runs, 4);
  EXPECT_NEAR(s[1].tensor().to_vector<float>()[0], eager[1].tensor().to_vector<float>()[0] * 2.0f, 1e-6);
}

TEST(Context, CellCallsCompileThemselvesPerTrainMode) {
  auto bn = std::make_shared<nn::BatchNorm2d>(3);
  auto bn_eager = std::make_shared<nn::BatchNorm2d>(3);
  const Tensor x = randn({4, 3, 2, 2}, 3);
  Tensor eager_y;
  for (int i = 0; i < 3; ++i) eager_y = (*bn_eager)(x);
  {
    GraphModeScope graph;
    Tensor y;
    for (int i = 0; i < 3; ++i) y = (*bn)(x);
    expect_bitwise_equal(y, eager_y);
    bn->set_train(false);
    bn_eager->set_train(false);
    expect_bitwise_equal((*bn)(x), (*bn_eager)(x));
  }
  // the moving statistics, assigned inside the traced call, were updated at every replay
  const auto a = bn->parameters_and_names(), b = bn_eager->parameters_and_names();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) expect_bitwise_equal(a[i].second, b[i].second);
}
