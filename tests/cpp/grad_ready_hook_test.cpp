// OnGradReady: the backward reports each weight's gradient as soon as it is final, before the walk ends, with
// the value grad returns; weights the output does not depend on come afterwards as zeros; grad calls inside the
// differentiated function do not see the hook; and results without a hook are unchanged.
#include <gtest/gtest.h>

#include <vector>

#include "bprop/bprop.h"

using namespace bprop;

namespace {

// Records the order of bprop calls through a custom op, so "before the walk ends" can be checked.
struct Event {
  std::string what;
  size_t index;
};

}  // namespace

TEST(GradReadyHook, ReportsEachWeightWhenFinalBeforeTheWalkEnds) {
  Parameter w1(tensor({0.5, -1.0, 2.0}, {3}), "w1");
  Parameter w2(tensor({1.5, 0.25, -0.5}, {3}), "w2");
  Parameter unused(tensor({1.0}, {1}), "unused");
  std::vector<Event> events;
  // first(x) runs its bprop last in the walk (it is the first op of the forward).
  const autodiff::CustomBprop first_bprop = [&events](const std::vector<Tensor>&, const Tensor&, const Tensor& dout) {
    events.push_back({"first-bprop", 0});
    return std::vector<Tensor>{dout};
  };
  Fn f = [&](const std::vector<Tensor>& a) -> Value {
    const Tensor h = autodiff::apply_custom("first", {a[0] * w1}, [](const std::vector<Tensor>& in) { return in[0]; },
                                            first_bprop);
    return ops::sum(ops::tanh(h) * w2);
  };
  std::vector<Tensor> reported(3);
  Value g;
  {
    OnGradReady hook([&](size_t i, const Tensor& grad) {
      events.push_back({"ready", i});
      reported.at(i) = grad;
    });
    g = grad(f, 0, {w1, w2, unused})({tensor({1.0, 2.0, 3.0}, {3})});
  }
  // w2 is final before first's bprop runs; w1 only after it; the unused weight after the walk.
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].what, "ready");
  EXPECT_EQ(events[0].index, 1u);
  EXPECT_EQ(events[1].what, "first-bprop");
  EXPECT_EQ(events[2].what, "ready");
  EXPECT_EQ(events[2].index, 0u);
  EXPECT_EQ(events[3].what, "ready");
  EXPECT_EQ(events[3].index, 2u);
  // The reported gradients are the returned ones.
  const auto& wg = g[1].items();
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(reported[i].defined());
    EXPECT_EQ(reported[i].to_vector<double>(), wg[i].tensor().to_vector<double>()) << i;
  }
  EXPECT_EQ(reported[2].to_vector<double>(), std::vector<double>{0.0});
  // And the same as without a hook.
  const Value plain = grad(f, 0, {w1, w2, unused})({tensor({1.0, 2.0, 3.0}, {3})});
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(plain[1][i].tensor().to_vector<double>(), wg[i].tensor().to_vector<double>()) << i;
  }
}

TEST(GradReadyHook, InnerGradCallsDoNotSeeIt) {
  Parameter w(tensor({2.0}, {1}), "w");
  int calls = 0;
  Fn inner = [&](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0] * a[0] * w); };
  Fn outer = [&](const std::vector<Tensor>& a) -> Value {
    const Tensor d = grad(inner, 0, {w})({a[0]})[0].tensor();  // d/dx = 2 x w
    return ops::sum(d * w);                                       // 2 x w^2
  };
  OnGradReady hook([&](size_t i, const Tensor& g) {
    ++calls;
    EXPECT_EQ(i, 0u);
    EXPECT_NEAR(g.item(), 4.0 * 3.0 * 2.0, 1e-9);  // d/dw 2 x w^2 = 4 x w at x = 3, w = 2
  });
  grad(outer, nullptr, {w})({tensor({3.0}, {1})});
  EXPECT_EQ(calls, 1);
}
