// The optimisation passes, one by one on small graphs (the graph before and after, and the value unchanged to
// the bit), then the pipeline on traced functions: dead code, common subexpressions, constant folding,
// algebraic simplification, elementwise fusion, memory planning, and the stats that report them.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "bprop/bprop.h"
#include "graph/executor.h"
#include "graph/fusion.h"
#include "graph/passes.h"
#include "kernels/cpu/parallel.h"
#include "same_bits.h"

using namespace bprop;
using namespace bprop::graph;

namespace {

using bitwise::expect_bitwise_equal;

// Builds graphs by hand, so that a pass meets exactly the pattern under test.
struct Builder {
  Graph g;
  int value(const Shape& s, DType dt) {
    g.types.push_back({s, dt});
    return g.num_values++;
  }
  int arg(const Shape& s, DType dt = DType::Float32) {
    const int v = value(s, dt);
    g.inputs.push_back(v);
    return v;
  }
  int constant(const Tensor& t) {
    const int v = value(t.shape(), t.dtype());
    g.constants.emplace_back(v, t);
    return v;
  }
  int node(const std::string& op, std::vector<int> inputs, const Shape& s, DType dt = DType::Float32,
           const Attrs& attrs = {}) {
    GraphNode n;
    n.op = &registry().get(op);
    n.attrs = attrs;
    n.inputs = std::move(inputs);
    n.shape = s;
    n.dtype = dt;
    n.out = value(s, dt);
    g.nodes.push_back(n);
    return n.out;
  }
  Graph& returning(std::vector<int> outs) {
    g.outputs = outs;
    std::vector<Value> items;
    for (size_t i = 0; i < outs.size(); ++i) items.emplace_back(Tensor());
    g.output_template = outs.size() == 1 ? Value(Tensor()) : Value(std::move(items));
    g.recompute_uses();
    return g;
  }
};

Value run_prepared(const Graph& g, const std::vector<Tensor>& args) {
  return run(*compile(std::make_shared<const Graph>(g)), args);
}

std::vector<std::string> op_names(const Graph& g) {
  std::vector<std::string> out;
  for (const GraphNode& n : g.nodes) out.push_back(n.op->name);
  return out;
}

using Names = std::vector<std::string>;

}  // namespace

TEST(GraphPasses, DeadCodeGoesWithItsConstants) {
  Builder b;
  const int x = b.arg({3});
  const int c = b.constant(full({3}, 2.0));
  b.node("exp", {x}, {3});                  // unused
  const int unused = b.node("mul", {x, c}, {3});
  b.node("sin", {unused}, {3});             // unused, reads an unused value
  const int y = b.node("cos", {x}, {3});
  Graph& g = b.returning({y});
  const Tensor arg = randn({3}, 1);
  const Value before = run_prepared(g, {arg});
  EXPECT_TRUE(eliminate_dead_code(g));
  EXPECT_EQ(op_names(g), (Names{"cos"}));
  EXPECT_TRUE(g.constants.empty());
  expect_bitwise_equal(run_prepared(g, {arg}), before);
  EXPECT_FALSE(eliminate_dead_code(g));
}

TEST(GraphPasses, CommonSubexpressionsAreComputedOnce) {
  Builder b;
  const int x = b.arg({4});
  const int s1 = b.node("sin", {x}, {4});
  const int s2 = b.node("sin", {x}, {4});
  const int t1 = b.node("sum", {s1}, {}, DType::Float32, Attrs{{"axis", int64_t{0}}, {"keepdims", false}});
  const int t2 = b.node("sum", {s2}, {}, DType::Float32, Attrs{{"axis", int64_t{0}}, {"keepdims", false}});
  const int t3 = b.node("sum", {s2}, {1}, DType::Float32, Attrs{{"axis", int64_t{0}}, {"keepdims", true}});
  const int y = b.node("add", {t1, t2}, {});
  Graph& g = b.returning({y, t3});
  const Tensor arg = randn({4}, 2);
  const Value before = run_prepared(g, {arg});
  EXPECT_TRUE(eliminate_common_subexpressions(g));
  // one sin and one sum with each attribute set
  EXPECT_EQ(op_names(g), (Names{"sin", "sum", "sum", "add"}));
  EXPECT_EQ(g.nodes[3].inputs[0], g.nodes[3].inputs[1]);
  expect_bitwise_equal(run_prepared(g, {arg}), before);
}

TEST(GraphPasses, EqualSmallConstantsBecomeOneValue) {
  Builder b;
  const int x = b.arg({3});
  const int c1 = b.constant(scalar(0.1));
  const int c2 = b.constant(scalar(0.1));                     // equal bits: merged
  const int c3 = b.constant(scalar(0.1, DType::Float64));     // float64: kept
  const int c4 = b.constant(tensor({-0.0}, {1}));             // -0 of shape (1,): kept
  const int c5 = b.constant(scalar(-0.0));                    // -0: not +0's bits, kept
  const int c6 = b.constant(scalar(0.0));
  const int c7 = b.constant(scalar(0.0));                     // merged with c6
  Tensor live = scalar(0.1);
  live.impl()->is_parameter = true;
  const int p = b.constant(live);                             // a Parameter: never merged
  const int y1 = b.node("mul", {x, c1}, {3});
  const int y2 = b.node("add", {y1, c2}, {3});
  const int c3f = b.node("cast", {c3}, {}, DType::Float32, Attrs{{"dtype", std::string("float32")}});
  const int y3 = b.node("add", {c3f, y2}, {3});
  const int y4 = b.node("sub", {y3, c4}, {3});
  const int y5 = b.node("mul", {y4, b.node("add", {c5, c6}, {})}, {3});
  const int y6 = b.node("add", {b.node("add", {y5, c7}, {3}), p}, {3});
  Graph& g = b.returning({y6, c2});
  const Tensor arg = randn({3}, 4);
  const Value before = run_prepared(g, {arg});
  EXPECT_TRUE(eliminate_common_subexpressions(g));
  EXPECT_EQ(g.nodes[1].inputs[1], c1);  // the add reads the first 0.1
  EXPECT_EQ(g.outputs[1], c1);
  std::set<int> kept;
  for (const auto& [id, t] : g.constants) kept.insert(id);
  EXPECT_EQ(kept, (std::set<int>{c1, c3, c4, c5, c6, p}));
  expect_bitwise_equal(run_prepared(g, {arg}), before);
}

TEST(GraphPasses, ConstantsAreFoldedUnlessTheResultIsLarge) {
  Builder b;
  const int x = b.arg({2});
  const int c = b.constant(tensor({1.0, 2.0}, {2}));
  const int folded = b.node("exp", {c}, {2});
  const int three = b.constant(scalar(3.0));
  const int big = b.node("broadcast_to", {three}, {1000, 1000}, DType::Float32,
                         Attrs{{"shape", IntList{1000, 1000}}});
  const int y = b.node("mul", {x, folded}, {2});
  const int z = b.node("sum", {big}, {}, DType::Float32, Attrs{{"axis", std::monostate{}}, {"keepdims", false}});
  Graph& g = b.returning({y, z});
  const Tensor arg = randn({2}, 3);
  const Value before = run_prepared(g, {arg});
  EXPECT_TRUE(fold_constants(g));
  // exp(c) is now a constant; the broadcast to a million elements stays a node (the graph would hold 4 MB)
  EXPECT_EQ(op_names(g), (Names{"broadcast_to", "mul", "sum"}));
  expect_bitwise_equal(run_prepared(g, {arg}), before);
}

TEST(GraphPasses, SimplificationKeepsEveryBit) {
  Builder b;
  const int x = b.arg({2, 3});
  const int one = b.constant(scalar(1.0));
  const int zero = b.constant(scalar(0.0));
  const int neg_zero = b.constant(scalar(-0.0));
  int v = b.node("mul", {x, one}, {2, 3});           // x * 1
  v = b.node("mul", {one, v}, {2, 3});               // 1 * x
  v = b.node("div", {v, one}, {2, 3});               // x / 1
  v = b.node("sub", {v, zero}, {2, 3});              // x - 0
  v = b.node("add", {v, neg_zero}, {2, 3});          // x + (-0)
  v = b.node("neg", {v}, {2, 3});
  v = b.node("neg", {v}, {2, 3});                    // neg(neg x)
  v = b.node("reshape", {v}, {2, 3}, DType::Float32, Attrs{{"shape", IntList{2, 3}}});  // to its own shape
  v = b.node("reshape", {v}, {6}, DType::Float32, Attrs{{"shape", IntList{6}}});
  v = b.node("reshape", {v}, {3, 2}, DType::Float32, Attrs{{"shape", IntList{3, 2}}});  // a chain
  v = b.node("transpose", {v}, {2, 3}, DType::Float32, Attrs{{"perm", IntList{1, 0}}});
  v = b.node("transpose", {v}, {3, 2}, DType::Float32, Attrs{{"perm", IntList{1, 0}}});  // back again
  const int kept = b.node("add", {v, zero}, {3, 2});  // x + 0 turns -0 into +0: stays
  Graph& g = b.returning({kept});
  const Tensor arg = tensor({-0.0, 1.5, -2.0, 0.0, 3.25, -7.0}, {2, 3});
  const Value before = run_prepared(g, {arg});
  OptimizeOptions no_fusion;
  no_fusion.fusion = false;
  optimize(g, no_fusion);
  // the reshapes collapse to one; the transposes compose to the identity permutation, which goes too
  EXPECT_EQ(op_names(g), (Names{"reshape", "add"})) << g.to_text();
  expect_bitwise_equal(run_prepared(g, {arg}), before);
  EXPECT_TRUE(std::signbit(run_prepared(g, {arg}).tensor().to_vector<float>()[0]) == false);
}

TEST(GraphPasses, TransposesCompose) {
  Builder b;
  const int x = b.arg({2, 3, 4});
  int v = b.node("transpose", {x}, {3, 4, 2}, DType::Float32, Attrs{{"perm", IntList{1, 2, 0}}});
  v = b.node("transpose", {v}, {4, 3, 2}, DType::Float32, Attrs{{"perm", IntList{1, 0, 2}}});
  Graph& g = b.returning({v});
  const Tensor arg = randn({2, 3, 4}, 8);
  const Value before = run_prepared(g, {arg});
  EXPECT_TRUE(simplify(g));
  ASSERT_EQ(op_names(g), (Names{"transpose"}));
  EXPECT_EQ(g.nodes[0].attrs.get_ints("perm"), (IntList{2, 1, 0}));
  EXPECT_EQ(g.nodes[0].inputs[0], x);
  expect_bitwise_equal(run_prepared(g, {arg}), before);
}

TEST(GraphPasses, AResultNeverBecomesAnArgument) {
  Builder b;
  const int x = b.arg({2});
  const int y = b.node("mul", {x, b.constant(scalar(1.0))}, {2});
  Graph& g = b.returning({y});
  EXPECT_FALSE(simplify(g));  // x * 1 returned: the caller gets a new tensor, as eagerly
  EXPECT_EQ(op_names(g), (Names{"mul"}));
}

TEST(GraphPasses, ElementwiseChainsFuseIntoOneLoop) {
  Builder b;
  const int x = b.arg({5});
  const int bias = b.arg({3, 5});
  const int c = b.constant(scalar(2.0));
  const int a1 = b.node("mul", {x, x}, {5});
  const int a2 = b.node("add", {a1, c}, {5});
  const int a3 = b.node("tanh", {a2}, {5});        // a1..a3: one group, only a3 written out
  // (the sum of every element joins the group, moved up to its end: it adds a3's tiles up as they are made)
  const int s = b.node("sum", {a3}, {}, DType::Float32, Attrs{{"axis", std::monostate{}}, {"keepdims", false}});
  const int m = b.node("add", {a3, bias}, {3, 5});  // a3 broadcast as a row of (3, 5): the second group
  const int e = b.node("exp", {m}, {3, 5});
  Graph& g = b.returning({s, e});
  const Tensor xa = randn({5}, 4), ba = randn({3, 5}, 5);
  const Value before = run_prepared(g, {xa, ba});
  fuse_elementwise(g);
  ASSERT_EQ(g.groups.size(), 2u) << g.to_text();
  EXPECT_EQ(g.groups[0].nodes, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(g.groups[0].loop->results, (std::vector<int>{a3}));  // a1 and a2 stay in the loop's scratch
  ASSERT_EQ(g.groups[0].loop->sums.size(), 1u);
  EXPECT_EQ(g.groups[0].loop->sums[0].out, s);
  EXPECT_EQ(g.groups[0].loop->outside, (std::vector<int>{x, c}));
  EXPECT_EQ(g.groups[1].nodes, (std::vector<int>{4, 5}));
  EXPECT_EQ(g.groups[1].loop->outside, (std::vector<int>{a3, bias}));
  EXPECT_EQ(g.groups[1].loop->row_length, (std::vector<int64_t>{5, 0}));
  EXPECT_EQ(g.groups[1].loop->results, (std::vector<int>{e}));
  EXPECT_NE(g.to_text().find("fused #0 {"), std::string::npos);
  expect_bitwise_equal(run_prepared(g, {xa, ba}), before);
}

TEST(GraphPasses, RowBroadcastsFuseAndMatchEager) {
  // A bias row added to a batch and activated, as in a dense layer, with rows that do not divide the tile, a
  // loop split across threads, (1, n) and (n,) rows, float64.
  for (DType dt : {DType::Float32, DType::Float64}) {
    for (const Shape& bias_shape : {Shape{7}, Shape{1, 7}}) {
      const Fn layer = [](const std::vector<Tensor>& a) -> Value {
        return ops::sum(ops::tanh(a[0] + a[1]) * a[1] + ops::sigmoid(a[0]));
      };
      const Tensor x = randn({10001, 7}, 8, dt), bias = randn(bias_shape, 9, dt);
      const GradFn g = value_and_grad(layer, {0, 1});
      const JitFn j = jit(g);
      expect_bitwise_equal(j({x, bias}), g({x, bias}));
      const auto exported = nlohmann::json::parse(j.export_graph({x, bias}));
      bool fused_add = false;
      for (const auto& node : exported["nodes"]) fused_add |= node["op"] == "add" && !node["group"].is_null();
      EXPECT_TRUE(fused_add) << j.lower({x, bias});
    }
  }
}

TEST(GraphPasses, ColumnBroadcastsFuseAndMatchEager) {
  // A column (batch, 1), as a softmax's backward subtracts, and a per-channel (c, 1, 1) of (n, c, h, w): each
  // element repeats along the trailing dimensions; sizes that do not divide the tile, a threaded loop, float64.
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::exp(a[0] - a[1]) * a[1] + a[0]; };
  for (DType dt : {DType::Float32, DType::Float64}) {
    for (const auto& [shape, col] : std::vector<std::pair<Shape, Shape>>{
             {{4, 3}, {4, 1}}, {{10001, 7}, {10001, 1}}, {{5, 3, 33, 31}, {3, 1, 1}}, {{2, 6, 40, 40}, {1, 6, 1, 1}},
             {{3, 70, 500}, {70, 1}}}) {
      const Tensor x = randn(shape, 1, dt), c = randn(col, 2, dt);
      const JitFn j = jit(f);
      expect_bitwise_equal(j({x, c}), f({x, c}));
      EXPECT_EQ(j.stats().fused_groups, 1) << j.lower({x, c});
      EXPECT_EQ(j.stats().kernels, 1) << j.lower({x, c});
    }
  }
  // the log_softmax backward's column, inside a traced gradient
  const Fn loss = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::log_softmax(a[0], -1) * a[0]);
  };
  const GradFn g = value_and_grad(loss);
  const Tensor x = randn({300, 10}, 3);
  expect_bitwise_equal(jit(g)({x}), g({x}));
  // a broadcast that is neither (a middle dimension repeated) keeps its own kernel
  const Tensor y = randn({4, 3, 5}, 4), mid = randn({4, 1, 5}, 5);
  const JitFn jm = jit(f);
  expect_bitwise_equal(jm({y, mid}), f({y, mid}));
  EXPECT_EQ(jm.stats().fused_groups, 0) << jm.lower({y, mid});
}

TEST(GraphPasses, OpsWithAttributesFuseWithTheirAttributesAsNumbers) {
  // leaky_relu's and elu's alpha, gelu's approximation, clamp's bounds (one or both): each step gets its own
  // numbers, and the loop gives the eager kernels' bits
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    const Tensor& x = a[0];
    const Tensor y = ops::leaky_relu(x * 3.0, 0.2) + ops::leaky_relu(x, 0.05) + ops::elu(x, 0.7) +
                     ops::gelu(x, "tanh") * ops::gelu(x) + ops::clamp(x, -0.5, std::nullopt) +
                     ops::clamp(x, std::nullopt, 0.25) + ops::clamp(x, -1.0, 1.0);
    return ops::exp(y);
  };
  for (DType dt : {DType::Float32, DType::Float64}) {
    for (int64_t n : {int64_t{7}, int64_t{50001}}) {
      Tensor x = randn({n}, 11, dt) * 2.0;
      const JitFn j = jit(f);
      expect_bitwise_equal(j({x}), f({x}));
      EXPECT_EQ(j.stats().kernels, 1) << j.lower({x});
    }
  }
  // a NaN passes clamp unchanged, as eagerly
  const Tensor nan = tensor({std::nan(""), 3.0, -3.0}, {3});
  const Fn clamp_only = [](const std::vector<Tensor>& a) -> Value { return ops::clamp(a[0] * 1.0, -1.0, 1.0) + 0.0; };
  expect_bitwise_equal(jit(clamp_only)({nan}), clamp_only({nan}));
}

TEST(GraphPasses, FusedLoopsMatchEagerOnLargeAndDoubleData) {
  // > one parallel grain (threads split the loop), not a multiple of the tile; float64; the vectorised
  // float32 functions (tanh, sigmoid, their gradients) and the plain ones (sin, pow).
  const Fn loss = [](const std::vector<Tensor>& a) -> Value {
    const Tensor& x = a[0];
    return ops::sum(ops::tanh(x * x + 1.0) * ops::sigmoid(x) + ops::sin(x) * ops::pow(x, x * 0.0 + 2.0));
  };
  for (DType dt : {DType::Float32, DType::Float64}) {
    const Tensor x = randn({70001}, 6, dt);
    const GradFn g = value_and_grad(loss);
    const JitFn j = jit(g);
    expect_bitwise_equal(j({x}), g({x}));
    EXPECT_GE(j.stats().fused_groups, 2) << j.lower({x});
    EXPECT_LT(j.stats().kernels, j.stats().nodes / 2) << j.lower({x});
  }
}

TEST(GraphPasses, PipelineOnATracedGradient) {
  // value_and_grad of sum(tanh(x * x + 1) * sigmoid(x)): the sens of ones multiplied into both branches is
  // removed, the backward's elementwise nodes move up to the forward's, and all of it runs as one loop that also
  // adds up the loss (the product is never written out).
  const Fn loss = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::tanh(a[0] * a[0] + 1.0) * ops::sigmoid(a[0]));
  };
  const GradFn g = value_and_grad(loss);
  const JitFn j = jit(g);
  const Tensor x = randn({16}, 7);
  expect_bitwise_equal(j({x}), g({x}));
  const JitStats st = j.stats();
  EXPECT_EQ(st.nodes_traced, 13);
  EXPECT_EQ(st.nodes, 11);
  EXPECT_EQ(st.fused_groups, 1);
  EXPECT_EQ(st.kernels, 1);
  ASSERT_GE(st.passes.size(), 2u);
  EXPECT_EQ(st.passes[0].pass, "simplify");
  EXPECT_EQ(st.passes[0].before, 13);
  EXPECT_EQ(st.passes.back().pass, "fuse-elementwise");
  EXPECT_EQ(st.passes.back().after, 1);
  // and with everything off, the graph is run as traced
  JitOptions off;
  off.optimize = false;
  off.fuse = false;
  const JitFn plain = jit(g, off);
  expect_bitwise_equal(plain({x}), g({x}));
  EXPECT_EQ(plain.stats().nodes, 13);
  EXPECT_EQ(plain.stats().kernels, 13);
}

TEST(GraphPasses, ALongScalarChainIsOneLoop) {
  // W2's shape: 3,000 ops on a 0-d tensor, value and gradient
  const Fn chain = [](const std::vector<Tensor>& a) -> Value {
    Tensor y = a[0];
    for (int i = 0; i < 1000; ++i) y = ops::sin(y) * 1.0001 + 0.1;
    return y;
  };
  const GradFn g = value_and_grad(chain);
  const JitFn j = jit(g);
  const Tensor x = scalar(0.3);
  expect_bitwise_equal(j({x}), g({x}));
  EXPECT_EQ(j.stats().kernels, 1);
  EXPECT_LT(j.stats().compile_seconds, 5.0);
}

TEST(MemoryPlan, IntermediateValuesShareBuffersAcrossTheCall) {
  // a chain of non-elementwise ops (no fusion): each value dies at the next op, so two buffers serve them all
  const Fn chain = [](const std::vector<Tensor>& a) -> Value {
    Tensor y = a[0];
    for (int i = 0; i < 6; ++i) y = ops::softmax(ops::matmul(y, a[1]), -1);
    return ops::sum(y);
  };
  JitOptions no_fusion;
  no_fusion.fuse = false;
  const JitFn j = jit(chain, no_fusion);
  const Tensor x = randn({8, 16}, 1), w = randn({16, 16}, 2);
  for (int call = 0; call < 3; ++call) expect_bitwise_equal(j({x, w}), chain({x, w}));
  const JitStats s = j.stats();
  EXPECT_EQ(s.eager_bytes, 12 * 8 * 16 * 4 + 4);  // 12 outputs of (8, 16) float32, and the sum
  EXPECT_EQ(s.planned_bytes, 2 * 8 * 16 * 4) << "the sum is returned: its own memory";
}

TEST(MemoryPlan, ElementwiseOpsWriteOverAnInputThatDiesThere) {
  // matmul -> exp -> tanh -> sum, unfused: exp and tanh each take over their dying input's buffer, so the
  // intermediate values need one buffer, not two (an input and an output live at once)
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::tanh(ops::exp(ops::matmul(a[0], a[1]))));
  };
  JitOptions no_fusion;
  no_fusion.fuse = false;
  const JitFn j = jit(f, no_fusion);
  const Tensor x = randn({8, 16}, 1), w = randn({16, 16}, 2);
  for (int call = 0; call < 3; ++call) expect_bitwise_equal(j({x, w}), f({x, w}));
  EXPECT_EQ(j.stats().in_place, 2) << j.lower({x, w});
  EXPECT_EQ(j.stats().planned_bytes, 8 * 16 * 4);
  // an input read again later keeps its buffer: exp(m) + m reads m after exp
  const Fn reread = [](const std::vector<Tensor>& a) -> Value {
    const Tensor m = ops::matmul(a[0], a[1]);
    return ops::sum(ops::matmul(ops::exp(m) + m, a[1]));
  };
  const JitFn k = jit(reread, no_fusion);
  for (int call = 0; call < 2; ++call) expect_bitwise_equal(k({x, w}), reread({x, w}));
  EXPECT_EQ(k.stats().in_place, 1) << "only the add, where m dies";
}

TEST(MemoryPlan, FusedLoopsWriteOverAnOperandNoLaterStepReads) {
  // one loop over m: e = exp(m) is written out (the next matmul reads it) and later steps still read m, so e
  // needs its own buffer; the last result, e * m + 1, is written over m
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    const Tensor m = ops::matmul(a[0], a[1]);
    const Tensor e = ops::exp(m);
    const Tensor z = e * m + 1.0;
    return ops::sum(ops::matmul(e, a[1])) + ops::sum(ops::matmul(z, a[1]));
  };
  const JitFn j = jit(f);
  const Tensor x = randn({8, 16}, 3), w = randn({16, 16}, 4);
  for (int call = 0; call < 3; ++call) expect_bitwise_equal(j({x, w}), f({x, w}));
  const JitStats s = j.stats();
  EXPECT_EQ(s.in_place, 1) << j.lower({x, w});
  // and over a large, threaded loop, and a gradient's chains
  const Fn loss = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::tanh(ops::matmul(a[0], a[1]) * 0.5) * ops::sigmoid(ops::matmul(a[0], a[1])));
  };
  const Tensor big = randn({4096, 16}, 5);
  const GradFn g = value_and_grad(loss, {0, 1});
  const JitFn jg = jit(g);
  for (int call = 0; call < 2; ++call) expect_bitwise_equal(jg({big, w}), g({big, w}));
  EXPECT_GE(jg.stats().in_place, 1) << jg.lower({big, w});
}

TEST(MemoryPlan, ResultsAndTheirViewsKeepTheirOwnMemory) {
  // the result is a view (reshape) of an intermediate value: that value must not live in a reused buffer, or the
  // next call would overwrite the first call's result
  const JitFn j = jit([](const std::vector<Tensor>& a) -> Value {
    return ops::reshape(ops::matmul(ops::exp(a[0]), a[0]), {16});
  });
  const Tensor x1 = randn({4, 4}, 3), x2 = randn({4, 4}, 4);
  const Tensor r1 = j({x1}).tensor();
  const std::vector<float> first = r1.to_vector<float>();
  j({x2});
  EXPECT_EQ(r1.to_vector<float>(), first);
}

TEST(MemoryPlan, ConcurrentReplaysTakeTheirOwnBuffers) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::softmax(ops::matmul(a[0], a[0]), -1) * a[0]);
  };
  const JitFn j = jit(value_and_grad(f));
  const Tensor x = randn({32, 32}, 5), y = randn({32, 32}, 6);
  const Value want_x = value_and_grad(f)({x}), want_y = value_and_grad(f)({y});
  j({x});
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const bool use_x = (t + i) % 2 == 0;
        const Value r = j({use_x ? x : y});
        const Tensor& want = (use_x ? want_x : want_y)[1].tensor();
        if (std::memcmp(r[1].tensor().raw_data(), want.raw_data(), want.nbytes()) != 0) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(GraphPasses, ExportGraphGivesNodesGroupsAndUpdatesAsJson) {
  const Fn loss = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::tanh(a[0] * a[0] + 1.0) * ops::sigmoid(a[0]));
  };
  const JitFn j = jit(value_and_grad(loss));
  const Tensor x = randn({16}, 7);
  const auto g = nlohmann::json::parse(j.export_graph({x}));
  EXPECT_EQ(g["format"], "bprop-jit-graph/1");
  ASSERT_EQ(g["nodes"].size(), 11u);
  ASSERT_EQ(g["groups"].size(), 1u);
  std::set<int> ids;
  for (const auto& v : g["values"]) ids.insert(v["id"].get<int>());
  EXPECT_EQ(g["values"][0]["kind"], "argument");
  EXPECT_EQ(g["values"][0]["shape"], nlohmann::json::array({16}));
  for (const auto& group : g["groups"]) {
    const auto& members = group["nodes"];
    ASSERT_GE(members.size(), 2u);
    for (size_t k = 0; k < members.size(); ++k) {
      const auto& node = g["nodes"][members[k].get<size_t>()];
      EXPECT_EQ(node["group"], group["id"]);
      if (k > 0) {
        EXPECT_EQ(members[k].get<int>(), members[k - 1].get<int>() + 1) << "a group is consecutive";
      }
    }
  }
  int grouped = 0;
  for (const auto& node : g["nodes"]) {
    for (const auto& in : node["inputs"]) {
      if (!in.is_null()) {
        EXPECT_TRUE(ids.count(in.get<int>())) << node.dump();
      }
    }
    EXPECT_TRUE(ids.count(node["output"].get<int>()));
    grouped += !node["group"].is_null();
  }
  EXPECT_EQ(grouped, 11);  // the sum too: the loop adds up its input
  ASSERT_EQ(g["outputs"].size(), 2u);  // the value and the gradient
  for (const auto& o : g["outputs"]) EXPECT_TRUE(ids.count(o.get<int>()));
  EXPECT_EQ(g["passes"].back()["pass"], "fuse-elementwise");
  bool constant_one = false;
  for (const auto& v : g["values"]) {
    if (v["kind"] == "constant" && v["values"] == nlohmann::json::array({1.0})) constant_one = true;
  }
  EXPECT_TRUE(constant_one) << "the + 1.0 is a constant with its value";

  // A training step: the weight is a parameter, read and assigned.
  Parameter w(ones({3}), "w");
  const JitFn step = jit([w](const std::vector<Tensor>& a) -> Value {
    const Fn f = [w](const std::vector<Tensor>& b) -> Value { return ops::sum(b[0] * w); };
    const Value r = value_and_grad(f, nullptr, {w})({a[0]});
    Parameter(w).assign(w - r[1][0].tensor() * 0.1);
    return r[0];
  });
  const auto s = nlohmann::json::parse(step.export_graph({ones({3})}));
  bool parameter = false;
  for (const auto& v : s["values"]) parameter |= v["kind"] == "parameter" && v["name"] == "w";
  EXPECT_TRUE(parameter) << s.dump();
  ASSERT_EQ(s["updates"].size(), 1u);
  EXPECT_EQ(s["updates"][0]["parameter"], "w");
}

TEST(GraphPasses, ASumOfAFusedValueAddsItsTilesInTheKernelsOrder) {
  // sum(x * 2) of values whose double sum depends on the order of the adds (small integers between pairs of
  // +-2^50 multiples that cancel: in order the sum is exact, while a partial sum of several large ones, past 2^53,
  // rounds the small ones): the loop must form the sum kernel's leaves (split over the threads, halved down to 256
  // elements) and add them up as it does. Sizes around the leaf, the tile and two parallel grains; 1 and 2 threads.
  const Fn loss = [](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0] * 2.0); };
  const int before = cpu::num_threads();
  for (const int threads : {1, 2}) {
    cpu::set_num_threads(threads);
    for (const int64_t n : {1, 2, 255, 256, 257, 1023, 1025, 4097, 65535, 65538, 70002, 200001}) {
      std::vector<double> xs(static_cast<size_t>(n));  // (each a float32)
      for (int64_t i = 0; i < n; ++i) {
        const double big = std::ldexp(1.0 + static_cast<double>((i / 3) % 7), 50);
        xs[static_cast<size_t>(i)] = i % 3 == 0 ? static_cast<double>(i % 11) : i % 3 == 1 ? big : -big;
      }
      const Tensor x = tensor(xs, {n});
      const JitFn j = jit(loss);
      expect_bitwise_equal(j({x}), loss({x}));
      EXPECT_EQ(j.stats().kernels, 1) << j.lower({x});  // x * 2 is never written out
      if (n == 65535 && threads == 1) {  // (whole pairs: the large ones cancel)
        // the test can fail: adding in plain order gives another float here
        double plain = 0;
        for (double v : xs) plain += 2.0 * v;
        EXPECT_NE(static_cast<float>(plain), static_cast<float>(loss({x}).tensor().item()));
      }
    }
  }
  cpu::set_num_threads(before);
}

TEST(GraphPasses, OnlySumsOfEveryFloat32ElementJoinALoop) {
  // Taken in: keepdims, a mean, a value also returned, two sums of one loop, the value and the gradient of a loss.
  // Left out: a sum over one axis, float64 (its own order), a value the loop does not compute (an argument).
  const Tensor x = randn({33, 7}, 11), x64 = randn({33, 7}, 12, DType::Float64);
  auto check = [](const Fn& f, const std::vector<Tensor>& args, int kernels) {
    const JitFn j = jit(f);
    expect_bitwise_equal(j(args), f(args));
    EXPECT_EQ(j.stats().kernels, kernels) << j.lower(args);
  };
  check([](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::tanh(a[0]) * a[0], {}, true); }, {x}, 1);
  check([](const std::vector<Tensor>& a) -> Value { return ops::mean(ops::square(a[0] - 0.5)); }, {x}, 1);
  check(value_and_grad([](const std::vector<Tensor>& a) -> Value { return ops::mean(ops::exp(a[0]) * a[0]); }), {x}, 1);
  check([](const std::vector<Tensor>& a) -> Value {
    const Tensor y = ops::sigmoid(a[0]) * a[0];
    return Value({Value(ops::sum(y)), Value(y)});
  }, {x}, 1);
  check([](const std::vector<Tensor>& a) -> Value {
    const Tensor y = ops::exp(a[0] * 0.5);
    return Value({Value(ops::sum(y)), Value(ops::sum(y * y))});
  }, {x}, 1);
  check(value_and_grad([](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::tanh(a[0]) * a[0]); }), {x}, 1);
  check([](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::exp(a[0]) * a[0], 1); }, {x}, 2);
  check([](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::exp(a[0]) * a[0]); }, {x64}, 2);
  // A sum of an argument and a loop that the add joins, traced in both orders (each operand a statement of its own:
  // the operands of one + are evaluated in an order the compiler picks, which differs between x86-64 and aarch64).
  // Sum first: the sum, then one loop of exp, mul and add. Loop first: the loop, the sum, the add (the add reads
  // the sum, and the loop is not moved down past it).
  check([](const std::vector<Tensor>& a) -> Value {
    const Tensor s = ops::sum(a[0]);
    const Tensor e = ops::exp(a[0]) * a[0];
    return s + e;
  }, {x}, 2);
  check([](const std::vector<Tensor>& a) -> Value {
    const Tensor e = ops::exp(a[0]) * a[0];
    const Tensor s = ops::sum(a[0]);
    return s + e;
  }, {x}, 3);
}

TEST(GraphPasses, ElementwiseNodesMoveUpPastNodesTheyDoNotRead) {
  // exp, [sum], sin, [sum], cos(+sum): sin moves up past the first sum (it reads nothing held back), the sum
  // of exp's value and the other sum keep their order, and the add that reads a sum stays after it.
  Builder b;
  const Attrs all{{"axis", std::monostate{}}, {"keepdims", false}};
  const int x = b.arg({5});
  const int e = b.node("exp", {x}, {5});
  const int s1 = b.node("sum", {e}, {}, DType::Float32, all);
  const int s = b.node("sin", {e}, {5});
  const int s2 = b.node("sum", {s}, {}, DType::Float32, all);
  const int c = b.node("cos", {s}, {5});
  const int y = b.node("add", {c, s1}, {5});
  const int z = b.node("mul", {y, x}, {5});
  Graph& g = b.returning({s2, z});
  const Tensor arg = randn({5}, 3);
  const Value before = run_prepared(g, {arg});
  EXPECT_TRUE(cluster_elementwise(g));
  EXPECT_EQ(op_names(g), (Names{"exp", "sin", "cos", "sum", "sum", "add", "mul"}));
  expect_bitwise_equal(run_prepared(g, {arg}), before);
  EXPECT_FALSE(cluster_elementwise(g));  // nothing more to move
  fuse_elementwise(g);
  ASSERT_EQ(g.groups.size(), 2u);  // exp sin cos with both sums, then add mul
  EXPECT_EQ(g.groups[0].nodes, (std::vector<int>{0, 1, 2, 3, 4}));
  expect_bitwise_equal(run_prepared(g, {arg}), before);
}

TEST(GraphPasses, NodesMoveOnlyToContinueARunOfTheirShape) {
  // A node of another shape (the (2, 5) add) does not move up past the matmul, and nothing moves when no run
  // would grow: the graph keeps its order.
  Builder b;
  const int x = b.arg({5});
  const int w = b.arg({5, 2});
  const int e = b.node("exp", {x}, {5});
  const int m = b.node("matmul", {e, w}, {2});
  const int r = b.node("reshape", {w}, {2, 5}, DType::Float32, Attrs{{"shape", IntList{2, 5}}});
  const int a = b.node("add", {r, r}, {2, 5});
  const int y = b.node("neg", {m}, {2});
  Graph& g = b.returning({a, y});
  EXPECT_FALSE(cluster_elementwise(g));
  EXPECT_EQ(op_names(g), (Names{"exp", "matmul", "reshape", "add", "neg"}));
}

// The pipeline is a table of named passes: each can be left out by name, and the verifier checks the IR between
// them (the test suites run every optimize() with it: BPROP_JIT_VERIFY).
TEST(GraphPasses, ThePipelineIsATableOfNamedPassesThatCanBeLeftOut) {
  Names names;
  for (const Pass& p : rewrite_passes()) names.push_back(p.name);
  EXPECT_EQ(names, (Names{"dead-code", "simplify", "fold-constants", "common-subexpressions"}));
  auto twice = [] {
    Builder b;
    const int x = b.arg({3});
    const int e1 = b.node("exp", {x}, {3}), e2 = b.node("exp", {x}, {3});
    return b.returning({b.node("add", {e1, e2}, {3})});
  };
  OptimizeOptions no_fusion;
  no_fusion.fusion = false;
  no_fusion.verify = true;
  Graph all = twice();
  optimize(all, no_fusion);
  EXPECT_EQ(op_names(all), (Names{"exp", "add"}));
  no_fusion.disabled = {"common-subexpressions"};
  Graph without_cse = twice();
  optimize(without_cse, no_fusion);
  EXPECT_EQ(op_names(without_cse), (Names{"exp", "exp", "add"}));
  for (const PassRecord& r : without_cse.passes) EXPECT_NE(r.pass, "common-subexpressions");
  // BPROP_JIT_DUMP names the passes after which the graph is printed (to stderr), or "all"; only a pass that
  // changed the graph prints it.
  for (const char* dump : {"simplify,common-subexpressions", "all", "simplify"}) {
    setenv("BPROP_JIT_DUMP", dump, 1);
    Graph g = twice();
    testing::internal::CaptureStderr();
    no_fusion.disabled = {};
    optimize(g, no_fusion);
    const std::string err = testing::internal::GetCapturedStderr();
    const bool wants_cse = std::string(dump) != "simplify";
    EXPECT_EQ(err.find("bprop: jit graph after common-subexpressions:") != std::string::npos, wants_cse)
        << dump << ": " << err;
    if (!wants_cse) {
      EXPECT_EQ(err, "") << "simplify changed nothing here, so nothing is printed";
    }
  }
  unsetenv("BPROP_JIT_DUMP");
}

TEST(GraphPasses, TheVerifierNamesThePassAndTheNodeThatBrokeTheIr) {
  Builder b;
  const int x = b.arg({3});
  const int e = b.node("exp", {x}, {3});
  Graph& g = b.returning({b.node("neg", {e}, {3})});
  EXPECT_NO_THROW(verify(g, "trace"));
  std::swap(g.nodes[0], g.nodes[1]);  // neg now reads exp's value before exp runs
  try {
    verify(g, "simplify");
    ADD_FAILURE() << "no error";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "jit IR invalid after pass 'simplify': node 0 (neg) reads %1 before it is defined");
  }
  std::swap(g.nodes[0], g.nodes[1]);
  g.nodes[1].out = e;  // two definitions of one value
  EXPECT_THROW(verify(g, "common-subexpressions"), std::logic_error);
  g.nodes[1].out = 2;
  g.outputs = {7};  // an output that is no value
  try {
    verify(g, "dead-code");
    ADD_FAILURE() << "no error";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "jit IR invalid after pass 'dead-code': an output reads %7 before it is defined");
  }
}
