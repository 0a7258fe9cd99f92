// Automatic mixed precision (bprop/amp.h): which dtype each op runs in at each level, that the casts are ops on the
// tape (float32 master gradients, the same bits as the casts written by hand), graph mode = eager, all_finite, the
// loss scalers' rules, and the loss-scaled training step that skips exactly the overflowing step.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "bprop/bprop.h"
#include "same_bits.h"

using namespace bprop;
using bitwise::same_bits;

namespace {

Tensor f32(const Shape& s, uint64_t seed) { return randn(s, seed, DType::Float32); }

TEST(Autocast, EachLevelCastsItsLists) {
  const Tensor a = f32({4, 8}, 1), b = f32({8, 3}, 2), x64 = randn({4, 8}, 3, DType::Float64);
  {
    const amp::AutocastScope scope(amp::Level::O1, DType::BFloat16);
    const Tensor y = ops::matmul(a, b);
    EXPECT_EQ(y.dtype(), DType::BFloat16);                   // white list
    EXPECT_EQ(ops::softmax(y).dtype(), DType::Float32);      // black list: half in, float32 out
    EXPECT_EQ(ops::relu(a).dtype(), DType::Float32);         // others follow their inputs at O1
    EXPECT_EQ(ops::relu(y).dtype(), DType::BFloat16);
    EXPECT_EQ(ops::add(y, f32({4, 3}, 4)).dtype(), DType::Float32);  // promotion as usual
    EXPECT_EQ(ops::matmul(x64, ops::cast(b, DType::Float64)).dtype(), DType::Float64);  // float64 is never cast
  }
  {
    const amp::AutocastScope scope(amp::Level::O2, DType::Float16);
    EXPECT_EQ(ops::relu(a).dtype(), DType::Float16);
    EXPECT_EQ(ops::add(a, a).dtype(), DType::Float16);
    EXPECT_EQ(ops::layer_norm(ops::cast(a, DType::Float16)).dtype(), DType::Float32);
    EXPECT_EQ(ops::log_softmax(a).dtype(), DType::Float32);
    EXPECT_EQ(ops::reshape(a, {32}).dtype(), DType::Float32);   // shape ops are never cast
    EXPECT_EQ(ops::greater(a, a).dtype(), DType::Bool);
  }
  {
    const amp::AutocastScope scope(amp::Level::O3, DType::BFloat16);
    EXPECT_EQ(ops::layer_norm(a).dtype(), DType::BFloat16);
    // ops without half kernels run in float32 at every level, half inputs cast up
    EXPECT_EQ(ops::prod(a).dtype(), DType::Float32);
    EXPECT_EQ(ops::mse_loss(ops::cast(a, DType::BFloat16), a).dtype(), DType::Float32);
    EXPECT_EQ(amp::current_level(), amp::Level::O3);
    {
      const amp::AutocastScope off(amp::Level::O0, DType::BFloat16);  // nested: the innermost applies
      EXPECT_EQ(ops::matmul(a, b).dtype(), DType::Float32);
    }
    EXPECT_EQ(ops::matmul(a, b).dtype(), DType::BFloat16);
  }
  EXPECT_EQ(amp::current_level(), amp::Level::O0);
  EXPECT_EQ(ops::matmul(a, b).dtype(), DType::Float32);
  EXPECT_THROW(amp::AutocastScope(amp::Level::O2, DType::Float32), DTypeError);
  EXPECT_THROW(amp::parse_level("O4"), ValueError);
  EXPECT_EQ(amp::parse_level("O2"), amp::Level::O2);
}

// The casts are ops on the tape: gradients w.r.t. float32 inputs are float32, with the bits of the same program
// written with explicit casts.
TEST(Autocast, GradientsAreTheHandWrittenCastsGradients) {
  const Tensor x = f32({5, 6}, 4), w = f32({6, 4}, 5);
  const Fn autocast = [](const std::vector<Tensor>& in) -> Value {
    const amp::AutocastScope scope(amp::Level::O2, DType::BFloat16);
    return ops::sum(ops::log_softmax(ops::tanh(ops::matmul(in[0], in[1]))));
  };
  const Fn by_hand = [](const std::vector<Tensor>& in) -> Value {
    const DType h = DType::BFloat16;
    const Tensor y = ops::tanh(ops::matmul(ops::cast(in[0], h), ops::cast(in[1], h)));
    return ops::sum(ops::log_softmax(ops::cast(y, DType::Float32)));
  };
  const Value ga = value_and_grad(autocast, GradPosition{0, 1})({x, w});
  const Value gb = value_and_grad(by_hand, GradPosition{0, 1})({x, w});
  EXPECT_EQ(ga[0].tensor().dtype(), DType::Float32);
  EXPECT_TRUE(same_bits(ga[0].tensor(), gb[0].tensor()));
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(ga[1][i].tensor().dtype(), DType::Float32);
    EXPECT_TRUE(same_bits(ga[1][i].tensor(), gb[1][i].tensor())) << i;
  }
  // Second order through the casts.
  const Fn hvp = [&autocast](const std::vector<Tensor>& in) -> Value {
    return ops::sum(grad(autocast, 0)(in).tensor() * in[0]);
  };
  const Tensor h = grad(hvp, 0)({x, w}).tensor();
  EXPECT_EQ(h.dtype(), DType::Float32);
  EXPECT_TRUE(std::isfinite(ops::sum(h).item()));
}

std::shared_ptr<SequentialCell> small_net(uint64_t seed) {
  nn::set_seed(seed);
  auto net = std::make_shared<SequentialCell>();
  net->append(std::make_shared<nn::Dense>(6, 16));
  net->append(std::make_shared<nn::LayerNorm>(Shape{16}));
  net->append(std::make_shared<nn::ReLU>());
  net->append(std::make_shared<nn::Dense>(16, 3));
  return net;
}

TEST(AutoMixedPrecision, KeepsMasterWeightsAndCastsTheOutput) {
  auto net = small_net(7);
  const auto same = amp::auto_mixed_precision(net, amp::Level::O2, DType::BFloat16);
  EXPECT_EQ(same.get(), net.get());
  const Tensor x = f32({4, 6}, 8);
  const Tensor y = (*net)(x);
  EXPECT_EQ(y.dtype(), DType::Float32);
  for (const Parameter& p : net->trainable_params()) EXPECT_EQ(p.dtype(), DType::Float32) << p.name();
  const std::vector<Parameter> params = net->trainable_params();
  Cell& cell = *net;
  const Fn loss = [&cell](const std::vector<Tensor>& in) -> Value { return ops::sum(ops::square(cell(in[0]))); };
  const Value g = value_and_grad(loss, nullptr, params)({x});
  for (const Tensor& t : g[1].flatten()) EXPECT_EQ(t.dtype(), DType::Float32);
  // bfloat16 really ran: the output differs from float32's, by a bfloat16-sized amount.
  net->set_mixed_precision(amp::Level::O0, DType::BFloat16);
  const Tensor y32 = (*net)(x);
  const double diff = ops::amax(ops::abs(y - y32)).item(), size = ops::amax(ops::abs(y32)).item();
  EXPECT_GT(diff, 0.0);
  EXPECT_LT(diff, 0.1 * size);
  EXPECT_THROW(amp::auto_mixed_precision(net, amp::Level::O2, DType::Float64), DTypeError);
}

TEST(AutoMixedPrecision, GraphModeGivesEagerBits) {
  for (amp::Level level : {amp::Level::O1, amp::Level::O2, amp::Level::O3}) {
    auto net = small_net(9);
    amp::auto_mixed_precision(net, level, DType::Float16);
    const Tensor x = f32({4, 6}, 10);
    const Tensor eager = (*net)(x);
    set_context({.mode = Mode::Graph});
    const Tensor graph = (*net)(x);
    set_context({.mode = Mode::PyNative});
    EXPECT_TRUE(same_bits(eager, graph)) << amp::level_name(level);
  }
}

TEST(AllFinite, EveryDtypeAndEveryKindOfNonFinite) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    const Tensor ok = tensor({1.0, -2.0, 0.5, 0.0}, {4}, dt);
    EXPECT_TRUE(amp::all_finite({ok, ok}).item() != 0.0) << dtype_name(dt);
    for (double bad : {inf, -inf, nan}) {
      const Tensor t = tensor({1.0, bad, 0.5, 0.0}, {2, 2}, dt);
      EXPECT_TRUE(amp::all_finite({ok, t}).item() == 0.0) << dtype_name(dt) << " " << bad;
    }
  }
  // float16 overflows to inf where float32 does not
  EXPECT_TRUE(amp::all_finite({ops::cast(scalar(70000.0), DType::Float16)}).item() == 0.0);
  EXPECT_TRUE(amp::all_finite({}).item() != 0.0);
  EXPECT_TRUE(amp::all_finite({full({3}, 1.0, DType::Int32)}).item() != 0.0);
  EXPECT_EQ(amp::all_finite({f32({2}, 1)}).dtype(), DType::Bool);
}

TEST(LossScaler, DynamicScaleFollowsMindSporesRule) {
  amp::DynamicLossScaler s(8.0, 2.0, 3);
  const Tensor yes = full({}, 1.0, DType::Bool), no = full({}, 0.0, DType::Bool);
  const std::vector<std::pair<bool, double>> steps = {
      {true, 8}, {true, 8}, {true, 16},  // three finite steps in a row: x2
      {false, 8},                        // overflow: /2, the count restarts
      {true, 8}, {true, 8}, {false, 4}, {false, 2}, {false, 1}, {false, 1},  // never below 1
      {true, 1}, {true, 1}, {true, 2}};
  for (size_t k = 0; k < steps.size(); ++k) {
    s.adjust(steps[k].first ? yes : no);
    EXPECT_EQ(s.current_scale(), steps[k].second) << "after step " << k + 1;
  }
  // Growth that would overflow float32 keeps the scale.
  amp::DynamicLossScaler big(std::ldexp(1.0, 127), 2.0, 1);
  big.adjust(yes);
  EXPECT_EQ(big.current_scale(), std::ldexp(1.0, 127));
  amp::DynamicLossScaler defaults;
  EXPECT_EQ(defaults.current_scale(), 65536.0);
  EXPECT_EQ(defaults.scale_window(), 1000);
  EXPECT_EQ(defaults.scale_factor(), 2.0);
  amp::StaticLossScaler fixed(1024.0);
  fixed.adjust(no);
  EXPECT_EQ(fixed.current_scale(), 1024.0);
  EXPECT_EQ(fixed.scale(scalar(3.0)).item(), 3072.0);
  EXPECT_EQ(fixed.unscale({scalar(3072.0)})[0].item(), 3.0);
  EXPECT_THROW(amp::StaticLossScaler(0.5), ValueError);
  EXPECT_THROW(amp::DynamicLossScaler(1024.0, 1.0), ValueError);
  EXPECT_THROW(amp::DynamicLossScaler(1024.0, 2.0, 0), ValueError);
}

TEST(GatedOptimizer, AFalseFlagChangesNothing) {
  const Parameter w(f32({3, 2}, 11), "w");
  optim::Adam opt({w}, 0.1);
  const Tensor g = f32({3, 2}, 12);
  opt.step({g});
  const Tensor before = w.clone();
  opt.step({g}, full({}, 0.0, DType::Bool));
  EXPECT_TRUE(same_bits(w, before));
  EXPECT_EQ(opt.step_count(), 1);
  opt.step({g}, full({}, 1.0, DType::Bool));
  EXPECT_FALSE(same_bits(w, before));
  EXPECT_EQ(opt.step_count(), 2);
  EXPECT_THROW(opt.step({g}, scalar(1.0)), ValueError);                   // not a bool flag
  EXPECT_THROW(opt.step({f32({2}, 1)}, full({}, 0.0, DType::Bool)), ShapeError);  // checked even when skipped
}

// A network whose loss is multiplied by its second input: an inf there overflows that step's gradients.
class ScaledLossNet : public Cell {
 public:
  explicit ScaledLossNet(uint64_t seed) : net_(register_cell("net", small_net(seed))) {}
  Value construct(const std::vector<Tensor>& in) override {
    return ops::mean(ops::square((*net_)(in[0]))) * in[1];
  }

 private:
  std::shared_ptr<SequentialCell> net_;
};

struct ScaledRun {
  std::vector<Tensor> params;
  std::vector<bool> overflow;
  std::vector<double> scales;
};

// Six steps of TrainOneStepWithLossScaleCell with AdamW and a dynamic scaler (window 2); step `bad` (from 0) gets
// an inf loss factor.
ScaledRun run_scaled(bool graph_mode, int bad) {
  auto net = std::make_shared<ScaledLossNet>(21);
  amp::auto_mixed_precision(net, amp::Level::O2, DType::Float16);
  auto opt = std::make_shared<optim::AdamW>(net->trainable_params(), 1e-2);
  auto scaler = std::make_shared<amp::DynamicLossScaler>(1024.0, 2.0, 2);
  nn::TrainOneStepWithLossScaleCell step(net, opt, scaler);
  if (graph_mode) set_context({.mode = Mode::Graph});
  ScaledRun r;
  for (int k = 0; k < 6; ++k) {
    const Tensor x = f32({8, 6}, 100 + static_cast<uint64_t>(k));
    const double factor = k == bad ? std::numeric_limits<double>::infinity() : 1.0;
    const Value out = step({x, scalar(factor)});
    r.overflow.push_back(out[1].tensor().item() != 0.0);
    r.scales.push_back(out[2].tensor().item());
  }
  set_context({.mode = Mode::PyNative});
  for (const Parameter& p : net->trainable_params()) r.params.push_back(p.clone());
  return r;
}

TEST(TrainOneStepWithLossScaleCell, AnInjectedOverflowSkipsExactlyThatStep) {
  const ScaledRun eager = run_scaled(false, 3);
  EXPECT_EQ(eager.overflow, (std::vector<bool>{false, false, false, true, false, false}));
  // window 2: x2 after steps 2 (index 1); the overflow at index 3 halves; then two finite steps grow it again
  EXPECT_EQ(eager.scales, (std::vector<double>{1024, 1024, 2048, 2048, 1024, 1024}));
  const ScaledRun jitted = run_scaled(true, 3);
  EXPECT_EQ(jitted.overflow, eager.overflow);
  EXPECT_EQ(jitted.scales, eager.scales);
  EXPECT_TRUE(same_bits(jitted.params, eager.params));
  // Skipping is not a no-op run: without the overflow the parameters end elsewhere.
  const ScaledRun clean = run_scaled(false, -1);
  EXPECT_FALSE(same_bits(clean.params, eager.params));
  for (const Tensor& p : eager.params) EXPECT_TRUE(amp::all_finite({p}).item() != 0.0);
}

// With has_aux the network returns (loss, aux...) and the cell (loss, overflow, scale, aux...); the parameters move
// as with the loss alone.
class ScaledLossAndInput : public Cell {
 public:
  explicit ScaledLossAndInput(uint64_t seed) : net_(register_cell("net", std::make_shared<ScaledLossNet>(seed))) {}
  Value construct(const std::vector<Tensor>& in) override { return Value{(*net_)(in).tensor(), in[0] * 2.0}; }

 private:
  std::shared_ptr<ScaledLossNet> net_;
};

TEST(TrainOneStepWithLossScaleCell, WithAuxReturnsItAfterTheScaleAndTrainsTheSame) {
  auto plain_net = std::make_shared<ScaledLossNet>(23);
  auto aux_net = std::make_shared<ScaledLossAndInput>(23);
  nn::TrainOneStepWithLossScaleCell plain(plain_net, std::make_shared<optim::Adam>(plain_net->trainable_params(), 1e-2),
                                          std::make_shared<amp::StaticLossScaler>(64.0));
  nn::TrainOneStepWithLossScaleCell with_aux(aux_net, std::make_shared<optim::Adam>(aux_net->trainable_params(), 1e-2),
                                             std::make_shared<amp::StaticLossScaler>(64.0), /*has_aux=*/true);
  const Tensor x = f32({8, 6}, 9);
  for (int k = 0; k < 2; ++k) {
    const Value a = plain({x, scalar(1.0)});
    const Value b = with_aux({x, scalar(1.0)});
    ASSERT_EQ(b.size(), 4u);
    EXPECT_TRUE(same_bits(b[0].tensor(), a[0].tensor()));
    EXPECT_EQ(b[1].tensor().item(), 0.0);
    EXPECT_EQ(b[2].tensor().item(), 64.0);
    EXPECT_TRUE(same_bits(b[3].tensor(), x * 2.0));
  }
  std::vector<Tensor> pa, pb;
  for (const Parameter& p : plain_net->trainable_params()) pa.push_back(p.clone());
  for (const Parameter& p : aux_net->trainable_params()) pb.push_back(p.clone());
  EXPECT_TRUE(same_bits(pa, pb));
}

TEST(TrainOneStepWithLossScaleCell, SkippedStepLeavesParametersAndOptimizerUntouched) {
  auto net = std::make_shared<ScaledLossNet>(22);
  auto opt = std::make_shared<optim::Adam>(net->trainable_params(), 1e-2);
  auto scaler = std::make_shared<amp::StaticLossScaler>(128.0);
  nn::TrainOneStepWithLossScaleCell step(net, opt, scaler);
  const Tensor x = f32({8, 6}, 5);
  step({x, scalar(1.0)});
  std::vector<Tensor> before;
  for (const Parameter& p : net->trainable_params()) before.push_back(p.clone());
  const Value out = step({x, scalar(std::numeric_limits<double>::quiet_NaN())});
  EXPECT_TRUE(out[1].tensor().item() != 0.0);
  std::vector<Tensor> after;
  for (const Parameter& p : net->trainable_params()) after.push_back(p.clone());
  EXPECT_TRUE(same_bits(before, after));
  EXPECT_EQ(opt->step_count(), 1);
  EXPECT_EQ(out[2].tensor().item(), 128.0);
}

}  // namespace
