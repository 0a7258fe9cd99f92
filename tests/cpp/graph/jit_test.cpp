// jit: tracing into a graph and replaying it. Results are bit-identical to eager (the replay runs the same
// kernels on the same inputs in the same order), first and second order; the cache retraces only for a new
// signature; Parameters stay live and may be assigned (an effect of every replay); values read while tracing and
// random tensors inside a trace are clear errors; grad(jit(f)) stays exact.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <sstream>

#include "bprop/bprop.h"
#include "bprop/nn/layers.h"
#include "graph/trace.h"
#include "same_bits.h"

using namespace bprop;

namespace {

using bitwise::expect_bitwise_equal;

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

// A float32 x^3 primitive whose forward kernel counts its runs (to see which graphs run f's forward).
std::atomic<int> g_cube_runs{0};
void register_counted_cube() {
  static bool once = [] {
    PrimitiveDef def;
    def.name = "test_counted_cube";
    def.inputs = {"x"};
    def.infer_shape = [](const InferCtx& c) { return c.input(0).shape(); };
    def.infer_dtype = [](const InferCtx& c) { return c.input(0).dtype(); };
    def.forward = [](KernelCtx& c) {
      ++g_cube_runs;
      const float* x = c.inputs[0].data<float>();
      for (int64_t i = 0; i < c.out.numel(); ++i) c.out.data<float>()[i] = x[i] * x[i] * x[i];
    };
    def.bprop = [](const std::vector<Tensor>& in, const Tensor&, const Tensor& dout) {
      return std::vector<Tensor>{dout * in[0] * in[0] * 3.0};
    };
    register_primitive(def);
    return true;
  }();
  (void)once;
}

TEST(Jit, GradOfAJittedFunctionKeepsTheForwardsResidualsInsteadOfRecomputingIt) {
  register_counted_cube();
  const Fn cube_sum = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(call_op("test_counted_cube", {ops::tanh(a[0])}) * a[1]);
  };
  const JitFn jf = jit(cube_sum);
  const Tensor x = randn({5}, 3), y = randn({5}, 4);
  const Value eager = grad(cube_sum, {0, 1})({x, y});
  for (int i = 0; i < 3; ++i) {
    g_cube_runs = 0;
    expect_bitwise_equal(grad(jf, {0, 1})({x, y}), eager);
    // once for the value: the backward reads what the forward kept (the first call traces, which runs no kernel)
    EXPECT_EQ(g_cube_runs.load(), 1) << "call " << i;
  }
  EXPECT_EQ(jf.stats().grad_calls, 3);
  EXPECT_EQ(jf.stats().eager_calls, 0);
  // Second order still differentiates through the forward: that backward traces it again, exactly.
  const Fn dsum = [jf](const std::vector<Tensor>& a) -> Value { return ops::sum(grad(jf, 0)(a).tensor()); };
  const Fn dsum_eager = [cube_sum](const std::vector<Tensor>& a) -> Value {
    return ops::sum(grad(cube_sum, 0)(a).tensor());
  };
  expect_bitwise_equal(grad(dsum, {0, 1})({x, y}), grad(dsum_eager, {0, 1})({x, y}));
}

TEST(Jit, GradOfAJittedFunctionIsExact) {
  const Tensor x = randn({3, 4}, 7), y = randn({4}, 8);
  const JitFn jf = jit(f);
  expect_bitwise_equal(grad(jf, {0, 1})({x, y}), grad(f, {0, 1})({x, y}));
  // the forward graph ran as one recorded op, its backward a jitted vjp of f
  EXPECT_EQ(jf.stats().grad_calls, 1);
  EXPECT_EQ(jf.stats().eager_calls, 0);
  // to any order: the backward's own derivative (a tuple of gradients) runs eagerly, exactly
  const Fn dsum = [jf](const std::vector<Tensor>& a) -> Value { return ops::sum(grad(jf, 0)(a).tensor()); };
  const Fn dsum_eager = [](const std::vector<Tensor>& a) -> Value { return ops::sum(grad(f, 0)(a).tensor()); };
  expect_bitwise_equal(grad(dsum, {0, 1})({x, y}), grad(dsum_eager, {0, 1})({x, y}));
  // a tuple result, or a Parameter the open level differentiates, runs eagerly
  const JitFn pair = jit([](const std::vector<Tensor>& a) -> Value { return Value{ops::sum(a[0] * a[0]), a[0]}; });
  const Fn first = [pair](const std::vector<Tensor>& a) -> Value { return pair(a)[0]; };
  EXPECT_DOUBLE_EQ(grad(first)({scalar(3.0)}).tensor().item(), 6.0);
  EXPECT_EQ(pair.stats().eager_calls, 1);
  Parameter w(scalar(2.0), "w");
  const JitFn uses_w = jit([w](const std::vector<Tensor>& a) -> Value { return a[0] * w * w; });
  EXPECT_DOUBLE_EQ(grad(uses_w, nullptr, {w})({scalar(3.0)})[0].tensor().item(), 12.0);
  EXPECT_EQ(uses_w.stats().eager_calls, 1);
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

TEST(Jit, StaticArgumentsArePartOfTheSignature) {
  // a static argument's value is a constant of the graph: the function may read it while tracing
  JitOptions options;
  options.static_argnums = {1};
  const JitFn jf =
      jit([](const std::vector<Tensor>& a) -> Value { return a[0] * static_cast<double>(a[1].item()); }, options);
  EXPECT_EQ(jf({ones({2}), scalar(3.0)}).tensor().to_vector<float>(), (std::vector<float>{3, 3}));
  EXPECT_EQ(jf({ones({2}), scalar(3.0)}).tensor().to_vector<float>(), (std::vector<float>{3, 3}));
  EXPECT_EQ(jf({ones({2}), scalar(5.0)}).tensor().to_vector<float>(), (std::vector<float>{5, 5}));
  EXPECT_EQ(jf.stats().traces, 2);
  EXPECT_EQ(jf.stats().replays, 1);
  EXPECT_NE(jf.lower({ones({2}), scalar(5.0)}).find("constant"), std::string::npos);
}

TEST(Jit, RetracesWarnThenMayBeRefused) {
  const Fn f1 = [](const std::vector<Tensor>& a) -> Value { return ops::exp(a[0]); };
  JitOptions warn3;
  warn3.warn_after_traces = 3;
  const JitFn warned = jit(f1, warn3);
  testing::internal::CaptureStderr();
  warned({ones({1, 784})});
  warned({ones({2, 784})});
  const std::string quiet = testing::internal::GetCapturedStderr();
  EXPECT_EQ(quiet, "");
  testing::internal::CaptureStderr();
  warned({ones({17, 784})});
  const std::string warning = testing::internal::GetCapturedStderr();
  EXPECT_NE(warning.find("jit traced a function 3 times; this time argument 0 changed from (2, 784) float32 to "
                         "(17, 784) float32"),
            std::string::npos)
      << warning;

  JitOptions at_most2;
  at_most2.warn_after_traces = 0;
  at_most2.max_traces = 2;
  const JitFn limited = jit(f1, at_most2);
  limited({ones({1})});
  limited({ones({2})});
  limited({ones({1})});  // cached: fine
  try {
    limited({ones({3})});
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("more than max_traces = 2: argument 0 changed from (2,) float32 to (3,) "
                                         "float32"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(limited.stats().traces, 2);
}

TEST(Jit, ParameterAssignmentsAreEffectsOfEveryReplay) {
  // a whole SGD step in one graph: gradients, the update written back to the weights, the loss returned
  Parameter w(tensor({0.5, -1.0, 2.0}, {3}), "w");
  Parameter w_eager(tensor({0.5, -1.0, 2.0}, {3}), "w_eager");
  const Tensor x = randn({4, 3}, 11);
  auto make_step = [&x](Parameter p) {
    return [p, x](const std::vector<Tensor>& a) -> Value {
      const Fn loss = [p, x](const std::vector<Tensor>&) -> Value { return ops::sum(ops::tanh(ops::matmul(x, p))); };
      const Value r = value_and_grad(loss, nullptr, {p})({a[0]});
      Parameter(p).assign(p - r[1][0].tensor() * a[0]);
      // a read after the assignment sees the new value
      return Value{r[0], ops::sum(p)};
    };
  };
  const JitFn step = jit(make_step(w));
  const Fn eager = make_step(w_eager);
  const Tensor lr = scalar(0.1);
  for (int i = 0; i < 5; ++i) {
    const Value got = step({lr}), want = eager({lr});
    expect_bitwise_equal(got, want);
    expect_bitwise_equal(Value(static_cast<Tensor>(w)), Value(static_cast<Tensor>(w_eager)));
  }
  EXPECT_EQ(step.stats().traces, 1);
  EXPECT_NE(step.lower({lr}).find("parameter 'w' <- %"), std::string::npos) << step.lower({lr});
}

TEST(Jit, DonatedUpdatesAreWrittenInPlaceUnlessTheOldValueIsReadAfter) {
  // w <- w - 0.1 x, then a read of the new w: computed into w's own storage.
  Parameter w(randn({6}, 30), "w"), w_eager(w.clone(), "w");
  auto make = [](Parameter p) {
    return [p](const std::vector<Tensor>& a) -> Value {
      Parameter(p).assign(p - a[0] * 0.1);
      return ops::sum(p * p);
    };
  };
  const JitFn step = jit(make(w));
  const Fn eager = make(w_eager);
  const void* storage = w.raw_data();
  for (int i = 0; i < 3; ++i) {
    const Tensor x = randn({6}, 31 + i);
    expect_bitwise_equal(step({x}), eager({x}));
    expect_bitwise_equal(Value(static_cast<Tensor>(w)), Value(static_cast<Tensor>(w_eager)));
  }
  EXPECT_EQ(step.stats().donated_updates, 1);
  EXPECT_EQ(w.raw_data(), storage);
  // The old w read after the new one is computed: the update is copied in at the end instead.
  Parameter v(randn({6}, 40), "v"), v_eager(v.clone(), "v");
  auto make_late_read = [](Parameter p) {
    return [p](const std::vector<Tensor>& a) -> Value {
      const Tensor next = p * 2.0;
      const Tensor old_sum = ops::sum(p * a[0]);
      Parameter(p).assign(next);
      return old_sum;
    };
  };
  const JitFn late = jit(make_late_read(v));
  const Fn late_eager = make_late_read(v_eager);
  for (int i = 0; i < 3; ++i) {
    const Tensor x = randn({6}, 41 + i);
    expect_bitwise_equal(late({x}), late_eager({x}));
    expect_bitwise_equal(Value(static_cast<Tensor>(v)), Value(static_cast<Tensor>(v_eager)));
  }
  EXPECT_EQ(late.stats().donated_updates, 0) << late.lower({ones({6})});
}

TEST(Jit, AWholeTrainingStepWithItsOptimizerIsOneGraph) {
  // loss, gradients and the optimizer's update (state, step counts, learning rate read live) traced together;
  // 100 jitted steps give the parameters eager gives, to the bit, with a learning-rate change along the way
  const Tensor x = randn({16, 4}, 21);
  const Tensor labels = tensor_i32({0, 1, 2, 1, 0, 2, 2, 1, 0, 1, 2, 0, 1, 1, 0, 2}, {16});
  using MakeOptimizer = std::function<std::shared_ptr<optim::Optimizer>(std::vector<Parameter>)>;
  const std::vector<std::pair<std::string, MakeOptimizer>> optimizers = {
      {"sgd", [](std::vector<Parameter> p) { return std::make_shared<optim::SGD>(p, 0.1); }},
      {"sgd-nesterov-wd",
       [](std::vector<Parameter> p) { return std::make_shared<optim::SGD>(p, 0.05, 0.9, 0.0, true, 1e-3); }},
      {"adam-amsgrad",
       [](std::vector<Parameter> p) {
         return std::make_shared<optim::Adam>(p, 0.01, std::pair{0.9, 0.999}, 1e-8, 1e-4, true);
       }},
      {"adamw", [](std::vector<Parameter> p) { return std::make_shared<optim::AdamW>(p, 0.01); }},
  };
  for (const auto& [name, make] : optimizers) {
    SCOPED_TRACE(name);
    auto run = [&](bool jitted) {
      Parameter w(randn({4, 3}, 22), "w"), b(zeros({3}), "b");
      const std::shared_ptr<optim::Optimizer> opt = make({w, b});
      const Fn loss = [w, b](const std::vector<Tensor>& a) -> Value {
        return ops::cross_entropy(ops::matmul(a[0], w) + b, a[1]);
      };
      const Fn step = [&, w, b](const std::vector<Tensor>& a) -> Value {
        const Value r = value_and_grad(loss, nullptr, {w, b})(a);
        opt->apply_gradients(r[1]);
        return r[0];
      };
      const JitFn jstep = jit(step);
      std::vector<float> losses;
      for (int i = 0; i < 100; ++i) {
        if (i == 50) opt->set_learning_rate(opt->learning_rate() * 0.5);
        losses.push_back(static_cast<float>((jitted ? jstep({x, labels}) : step({x, labels})).tensor().item()));
      }
      if (jitted) {
        EXPECT_EQ(jstep.stats().traces, 1);
        EXPECT_GE(jstep.stats().donated_updates, 2);  // w and b computed in place (and the optimizer's state)
      }
      EXPECT_EQ(opt->step_count(), 100);
      EXPECT_LT(losses.back(), losses.front());
      return std::make_pair(w.to_vector<float>(), b.to_vector<float>());
    };
    const auto eager = run(false), traced = run(true);
    EXPECT_EQ(traced.first, eager.first);
    EXPECT_EQ(traced.second, eager.second);
  }
}

TEST(Jit, RandomnessIsDrawnAtEveryCall) {
  // random_normal from a key argument: fresh numbers per key, the numbers randn gives for that seed
  const JitFn noisy = jit([](const std::vector<Tensor>& a) -> Value {
    return a[1] + ops::random_normal(a[0], {4});
  });
  const Tensor x = zeros({4});
  const Tensor r1 = noisy({scalar(1.0, DType::Float64), x}).tensor();
  const Tensor r2 = noisy({scalar(2.0, DType::Float64), x}).tensor();
  expect_bitwise_equal(r1, randn({4}, 1));
  expect_bitwise_equal(r2, randn({4}, 2));
  EXPECT_EQ(noisy.stats().traces, 1);

  // a Dropout cell: each jitted call advances its counter and draws a new mask, as eagerly
  auto drop = std::make_shared<nn::Dropout>(0.5, 42);
  auto drop_eager = std::make_shared<nn::Dropout>(0.5, 42);
  const JitFn jitted = jit([drop](const std::vector<Tensor>& a) -> Value { return (*drop)(a[0]); });
  const Tensor ones64 = ones({64});
  Tensor previous;
  for (int i = 0; i < 3; ++i) {
    const Tensor got = jitted({ones64}).tensor();
    expect_bitwise_equal(got, (*drop_eager)(ones64));
    if (previous.defined()) {
      EXPECT_NE(got.to_vector<float>(), previous.to_vector<float>());
    }
    previous = got;
  }
  EXPECT_EQ(jitted.stats().traces, 1);
}

TEST(Jit, TheBackwardOfAnOpIsMarkedWithTheForwardOpsLocation) {
  int sin_line = 0, exp_line = 0;
  const JitFn step = jit(value_and_grad(
      [&](const std::vector<Tensor>& a) -> Value {
        Tensor s;
        {
          TraceLocation here; sin_line = __LINE__;  // NOLINT (one line: the location and the number)
          s = ops::sin(a[0]);
        }
        TraceLocation here; exp_line = __LINE__;  // NOLINT
        return ops::sum(ops::exp(s));
      },
      0));
  const std::string ir = step.lower({ones({3})});
  const std::string at_sin = "# jit_test.cpp:" + std::to_string(sin_line);
  const std::string at_exp = "# jit_test.cpp:" + std::to_string(exp_line);
  std::istringstream lines(ir);
  int cos_nodes = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("= cos(") != std::string::npos) {  // sin's bprop: dout * cos(x)
      ++cos_nodes;
      EXPECT_NE(line.find(at_sin), std::string::npos) << ir;
    }
    if (line.find("= exp(") != std::string::npos) {
      EXPECT_NE(line.find(at_exp), std::string::npos) << ir;
    }
    EXPECT_EQ(line.find("(jit)"), std::string::npos) << "a node marked with the jit call, not an op:\n" << ir;
  }
  EXPECT_EQ(cos_nodes, 1) << ir;
}

// A Cell's own bprop (the second way to define one) is marked like an op's: with where the cell was called.
TEST(Jit, TheBackwardOfACustomBpropCellIsMarkedWithWhereTheCellWasCalled) {
  struct Negated : Cell {  // forward sin, backward -dout: a neg node only its bprop makes
    Value construct(const std::vector<Tensor>& in) override { return ops::sin(in[0]); }
    bool has_bprop() const override { return true; }
    std::vector<Tensor> bprop(const std::vector<Tensor>&, const Tensor&, const Tensor& dout) override {
      return {ops::neg(dout)};
    }
  };
  Negated cell;
  int cell_line = 0;
  const JitFn step = jit(value_and_grad(
      [&](const std::vector<Tensor>& a) -> Value {
        Tensor h;
        {
          TraceLocation here; cell_line = __LINE__;  // NOLINT (one line: the location and the number)
          h = cell(a[0]);
        }
        TraceLocation here;
        return ops::sum(ops::exp(h));
      },
      0));
  const std::string ir = step.lower({ones({3})});
  const std::string at_cell = "# jit_test.cpp:" + std::to_string(cell_line);
  std::istringstream lines(ir);
  int neg_nodes = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("= neg(") == std::string::npos) continue;
    ++neg_nodes;
    EXPECT_NE(line.find(at_cell), std::string::npos) << ir;
  }
  EXPECT_EQ(neg_nodes, 1) << ir;
}

TEST(Jit, SourceLocationsMarkNodesAndErrorsAtReplay) {
  const JitFn gather = jit([](const std::vector<Tensor>& a) -> Value {
    TraceLocation here;  // the nodes below: this file and line
    return ops::gather(ops::exp(a[0]), a[1], 0);
  });
  const std::string ir = gather.lower({ones({3}), tensor_i32({0, 2}, {2})});
  EXPECT_NE(ir.find("= exp(%0) : (3,) float32  # jit_test.cpp:"), std::string::npos) << ir;
  try {
    gather({ones({3}), tensor_i32({0, 7}, {2})});
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {  // the kernel's own error and kind, with where the op was traced
    const std::string m = e.what();
    EXPECT_NE(m.find("For 'gather', index 7"), std::string::npos) << m;
    EXPECT_NE(m.find("(in the jitted function, traced at jit_test.cpp:"), std::string::npos) << m;
  }
  // without a TraceLocation, nodes are marked with where jit was called
  const int line = __LINE__ + 1;
  const JitFn plain = jit([](const std::vector<Tensor>& a) -> Value { return ops::gather(ops::exp(a[0]), a[1], 0); });
  const std::string site = "jit_test.cpp:" + std::to_string(line) + " (jit)";
  const std::string plain_ir = plain.lower({ones({3}), tensor_i32({0, 2}, {2})});
  EXPECT_NE(plain_ir.find("= exp(%0) : (3,) float32  # " + site), std::string::npos) << plain_ir;
  try {
    plain({ones({3}), tensor_i32({0, 7}, {2})});
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("traced at " + site), std::string::npos) << e.what();
  }
  // outside a trace it does nothing
  { TraceLocation idle; }
  EXPECT_FALSE(graph::tracing());
}
