// The exported forward/backward graph of x * x * x.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bprop/bprop.h"

using namespace bprop;
using nlohmann::json;

TEST(GraphExport, CubeShowsForwardOpsAndTheirBackwardOperators) {
  const Fn cube = [](const std::vector<Tensor>& a) -> Value { return a[0] * a[0] * a[0]; };
  const json g = json::parse(export_grad_graph(cube, {scalar(2.0, DType::Float64)}, {{"x"}}));
  EXPECT_EQ(g["format"], "bprop-graph/1");
  ASSERT_EQ(g["forward"].size(), 2u);  // (x * x) * x
  EXPECT_EQ(g["forward"][0]["op"], "mul");
  EXPECT_EQ(g["forward"][1]["op"], "mul");
  const auto& tensors = g["tensors"];
  EXPECT_EQ(tensors[g["output"].get<int>()]["values"][0], 8.0);
  EXPECT_EQ(tensors[g["inputs"][0]["tensor"].get<int>()]["name"], "x");
  // Backward: the last mul first, then the first; each step ran mul ops (dout * y, dout * x).
  ASSERT_EQ(g["backward"].size(), 2u);
  EXPECT_EQ(g["backward"][0]["forward"], 1);
  EXPECT_EQ(g["backward"][1]["forward"], 0);
  for (const auto& step : g["backward"]) {
    EXPECT_EQ(step["op"], "mul");
    ASSERT_FALSE(step["ops"].empty());
    for (const auto& op : step["ops"]) EXPECT_EQ(op["op"], "mul");
  }
  // x is used three times: its gradient contributions are accumulated with add.
  bool accumulated = false;
  for (const auto& step : g["backward"]) accumulated |= !step["accumulate"].empty();
  EXPECT_TRUE(accumulated);
  ASSERT_EQ(g["grads"].size(), 1u);
  EXPECT_EQ(tensors[g["grads"][0]["tensor"].get<int>()]["values"][0], 12.0);
}

TEST(GraphExport, ErrorsLeaveNoObserverOrLevelBehind) {
  const Fn bad = [](const std::vector<Tensor>& a) -> Value { return ops::add(a[0], ones({3}, DType::Float64)); };
  EXPECT_THROW(export_grad_graph(bad, {ones({2}, DType::Float64)}), ShapeError);
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0] * 2.0); };
  EXPECT_DOUBLE_EQ(grad(f)({ones({2}, DType::Float64)}).tensor().to_vector<double>()[0], 2.0);
  const json g = json::parse(export_grad_graph(f, {ones({2}, DType::Float64)}));
  EXPECT_EQ(g["forward"].size(), 2u);  // mul, sum: nothing from the earlier failed export
}
