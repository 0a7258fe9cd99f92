// jit: tracing into a graph and replaying it. Results are bit-identical to eager (the replay runs the same
// kernels on the same inputs in the same order), first and second order; the cache retraces only for a new
// signature; Parameters stay live; values read while tracing, random tensors and Parameter assignment inside a
// trace are clear errors; grad(jit(f)) stays exact.
#include <gtest/gtest.h>

#include <cstring>

#include "bprop/bprop.h"
#include "graph/trace.h"

using namespace bprop;

namespace {

void expect_bitwise_equal(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), got.nbytes()), 0)
      << got.to_string() << " vs " << want.to_string();
}

void expect_bitwise_equal(const Value& got, const Value& want) {
  const std::vector<Tensor> g = got.flatten(), w = want.flatten();
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); ++i) expect_bitwise_equal(g[i], w[i]);
}

// sin(x) * y + x^3 summed: a few ops, broadcasting, a reduction.
const Fn f = [](const std::vector<Tensor>& a) -> Value {
  return ops::sum(ops::sin(a[0]) * a[1] + a[0] * a[0] * a[0]);
};

}  // namespace

TEST(Jit, ForwardMatchesEagerBitForBit) {
  const Tensor x = randn({3, 4}, 1), y = randn({4}, 2);
  const JitFn jf = jit(f);
  expect_bitwise_equal(jf({x, y}), f({x, y}));
  expect_bitwise_equal(jf({x, y}), f({x, y}));  // replayed
  EXPECT_EQ(jf.stats().traces, 1);
  EXPECT_EQ(jf.stats().replays, 1);
}

TEST(Jit, GradientsFirstAndSecondOrderInsideTheTrace) {
  const Tensor x = randn({3, 4}, 3, DType::Float64), y = randn({4}, 4, DType::Float64);
  const GradFn g = value_and_grad(f, {0, 1});
  expect_bitwise_equal(jit(g)({x, y}), g({x, y}));
  // d/dx sum(df/dx): the gradient computation differentiated again, all in one graph.
  const Fn g0 = [](const std::vector<Tensor>& a) -> Value { return ops::sum(grad(f)(a).tensor()); };
  const GradFn gg = grad(g0, {0, 1});
  const JitFn jgg = jit(gg);
  expect_bitwise_equal(jgg({x, y}), gg({x, y}));
  EXPECT_GT(jgg.stats().nodes, 10);
}

TEST(Jit, ANewSignatureRetraces) {
  const JitFn jf = jit(f);
  jf({ones({2, 3}), ones({3})});
  jf({ones({2, 3}), ones({3})});
  jf({ones({5, 3}), ones({3})});
  jf({ones({5, 3}, DType::Float64), ones({3}, DType::Float64)});
  EXPECT_EQ(jf.stats().traces, 3);
  EXPECT_EQ(jf.stats().replays, 1);
}

TEST(Jit, LowerPrintsTheGraph) {
  const JitFn jf = jit([](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::exp(a[0]) * 2.0, 1); });
  const std::string ir = jf.lower({ones({2, 3})});
  EXPECT_NE(ir.find("%0 = argument 0"), std::string::npos) << ir;
  EXPECT_NE(ir.find("= exp(%0) : (2, 3) float32"), std::string::npos) << ir;
  EXPECT_NE(ir.find("= constant : () float32"), std::string::npos) << ir;
  EXPECT_NE(ir.find("= sum("), std::string::npos) << ir;
  EXPECT_NE(ir.find("{axis: 1, keepdims: false} : (2,) float32"), std::string::npos) << ir;
  EXPECT_NE(ir.find("return %"), std::string::npos) << ir;
}

TEST(Jit, ParametersStayLive) {
  Parameter w(ones({3}), "w");
  const JitFn jf = jit([w](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0] * w * 2.0); });
  const Tensor x = ones({3});
  EXPECT_DOUBLE_EQ(jf({x}).tensor().item(), 6.0);
  w.assign(full({3}, 2.0));  // an optimizer's in-place update
  EXPECT_DOUBLE_EQ(jf({x}).tensor().item(), 12.0);
  EXPECT_EQ(jf.stats().traces, 1);
  EXPECT_NE(jf.lower({x}).find("parameter 'w'"), std::string::npos);
}

TEST(Jit, WeightGradientsOfATrainingStep) {
  Parameter w(randn({4, 2}, 5), "w");
  const Tensor x = randn({8, 4}, 6);
  const Tensor labels = tensor_i32({0, 1, 1, 0, 1, 0, 0, 1}, {8});
  const Fn loss = [w](const std::vector<Tensor>& a) -> Value { return ops::cross_entropy(ops::matmul(a[0], w), a[1]); };
  const GradFn step = value_and_grad(loss, nullptr, {w});
  const JitFn jstep = jit(step);
  for (int i = 0; i < 3; ++i) {
    const Value eager = step({x, labels}), traced = jstep({x, labels});
    expect_bitwise_equal(traced, eager);
    w.assign(w - traced[1][0].tensor() * 0.1);
  }
  EXPECT_EQ(jstep.stats().traces, 1);
}

TEST(Jit, GradOfAJittedFunctionIsExact) {
  const Tensor x = randn({3, 4}, 7), y = randn({4}, 8);
  const JitFn jf = jit(f);
  expect_bitwise_equal(grad(jf, {0, 1})({x, y}), grad(f, {0, 1})({x, y}));
  EXPECT_EQ(jf.stats().eager_calls, 1);
}

TEST(Jit, ReadingValuesWhileTracingIsAClearError) {
  const JitFn branchy = jit([](const std::vector<Tensor>& a) -> Value {
    return ops::sum(a[0]).item() > 0 ? a[0] : ops::neg(a[0]);
  });
  try {
    branchy({ones({2})});
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("For 'jit', item() needs the value of a traced tensor"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("where()"), std::string::npos);
  }
  EXPECT_THROW(jit([](const std::vector<Tensor>& a) -> Value { return a[0] + randn({2}, 1); })({ones({2})}),
               ValueError);
  Parameter w(ones({2}), "w");
  EXPECT_THROW(jit([w](const std::vector<Tensor>& a) -> Value {
                 Parameter(w).assign(a[0]);
                 return a[0];
               })({ones({2})}),
               ValueError);
  EXPECT_DOUBLE_EQ(ops::sum(w).item(), 2.0);  // unchanged, still usable
}

TEST(Jit, ErrorsAtTraceAndReplayTimeAreTheOpsOwn) {
  const JitFn bad_shapes = jit([](const std::vector<Tensor>& a) -> Value { return a[0] + a[1]; });
  EXPECT_THROW(bad_shapes({ones({2}), ones({3})}), ShapeError);
  // Data-dependent checks run in the kernels, at replay.
  const JitFn gather = jit([](const std::vector<Tensor>& a) -> Value { return ops::gather(a[0], a[1], 0); });
  EXPECT_EQ(gather({ones({3}), tensor_i32({0, 2}, {2})}).tensor().shape(), (Shape{2}));
  try {
    gather({ones({3}), tensor_i32({0, 7}, {2})});
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("For 'gather', index 7"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(graph::tracing()) << "a failed trace left its tracer installed";
}

TEST(Jit, OutputsMayBeInputsConstantsAndTuples) {
  const Tensor c = full({2}, 3.0);
  const JitFn jf = jit([c](const std::vector<Tensor>& a) -> Value { return Value{a[0], c, Value{ops::neg(a[0])}}; });
  const Value r = jf({ones({2})});
  EXPECT_EQ(r[0].tensor().to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_EQ(r[1].tensor().to_vector<float>(), (std::vector<float>{3, 3}));
  EXPECT_EQ(r[2][0].tensor().to_vector<float>(), (std::vector<float>{-1, -1}));
}

TEST(Jit, MemoryDoesNotGrowOverReplays) {
  const JitFn jf = jit(value_and_grad(f, {0, 1}));
  const Tensor x = randn({16, 16}, 9), y = randn({16}, 10);
  jf({x, y});
  const MemoryStats before = memory_stats();
  for (int i = 0; i < 200; ++i) jf({x, y});
  EXPECT_EQ(memory_stats().storages, before.storages);
  EXPECT_EQ(memory_stats().bytes, before.bytes);
}
