// Optimizers and schedules against torch.optim (PyTorch 1.13: the parameters after three steps with the
// gradients below, float64), TrainOneStepCell, the seed's LinearRegressor example, and a small training run.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "bprop/bprop.h"
#include "nn_test_util.h"
#include "same_bits.h"

using namespace bprop;
using namespace nntest;
using bitwise::same_bits;

namespace {

struct OptCase {
  Parameter w{f64({0.5, -1.0, 0.25, 1.5, 0.0, -0.75}, {2, 3}), "w"};
  Parameter b{f64({0.1, -0.2, 0.3}, {3}), "b"};
  std::vector<Parameter> params() const { return {w, b}; }
  static std::vector<std::vector<Tensor>> grads() {
    return {{f64({0.1, -0.2, 0.3, 0.4, 0.5, -0.6}, {2, 3}), f64({1.0, -0.5, 0.25}, {3})},
            {f64({-0.3, 0.2, 0.1, 0.0, -0.4, 0.8}, {2, 3}), f64({-0.5, 0.5, 0.0}, {3})},
            {f64({0.05, 0.6, -0.2, 0.3, -0.1, 0.2}, {2, 3}), f64({0.2, 0.1, -0.3}, {3})}};
  }
  void run(optim::Optimizer& opt) const {
    for (const auto& g : grads()) opt.step(g);
  }
  void expect(const std::vector<double>& ew, const std::vector<double>& eb, double tol = 1e-12) const {
    expect_values(w, {2, 3}, ew, tol);
    expect_values(b, {3}, eb, tol);
  }
};

}  // namespace

TEST(NnOptim, SgdMatchesTorch) {
  {
    OptCase c;
    optim::SGD opt(c.params(), 0.1);
    c.run(opt);
    c.expect({0.515, -1.06, 0.23, 1.43, 0.0, -0.79}, {0.03, -0.21, 0.305});
    EXPECT_EQ(opt.step_count(), 3);
  }
  {
    OptCase c;
    optim::SGD opt(c.params(), 0.1, 0.9, 0.1, false, 0.01);
    c.run(opt);
    c.expect({0.517052006495, -1.02873641299, 0.1683817329975, 1.3567631113849998, -0.057961440499999996,
              -0.7383535232925001},
             {-0.10373015808099997, -0.15806730533800004, 0.257740748507});
    EXPECT_EQ(opt.state(0).count("momentum_buffer"), 1u);
  }
  {
    OptCase c;
    optim::SGD opt(c.params(), 0.1, 0.9, 0.0, true, 0.01);
    c.run(opt);
    c.expect({0.5333870619804999, -1.091518523961, 0.15606605951525, 1.2937989973514998, -0.04417984294999999,
              -0.7927623443157501},
             {-0.1463548957859, -0.1812770372782, 0.2688717488673});
  }
}

TEST(NnOptim, MomentumMatchesTorchSgdWithMomentum) {
  OptCase c;
  optim::Momentum opt(c.params(), 0.1, 0.9);
  c.run(opt);
  c.expect({0.5249, -1.0438, 0.1697, 1.3616, -0.0495, -0.7594}, {-0.096, -0.1695, 0.26225});
  EXPECT_EQ(opt.name(), "Momentum");
}

TEST(NnOptim, AdamAndAdamWMatchTorch) {
  {
    OptCase c;
    optim::Adam opt(c.params(), 0.01, {0.9, 0.99}, 1e-8, 0.1);
    c.run(opt);
    c.expect({0.4930550216813096, -0.9897744644731088, 0.22782107142806252, 1.4724998137468033, -0.010006700818788091,
              -0.7423803500008717},
             {0.08394002798285913, -0.19096968734098688, 0.28285947042660503});
  }
  {
    OptCase c;
    optim::Adam opt(c.params(), 0.01, {0.9, 0.999}, 1e-8, 0.0, true);
    c.run(opt);
    c.expect({0.49771688089923066, -0.9964787626010198, 0.229017109101043, 1.475325270951135, -0.010038683034709239,
              -0.7446554949080813},
             {0.0841841941207852, -0.19182432143896874, 0.2848983611864029});
  }
  {
    OptCase c;
    optim::AdamW opt(c.params(), 0.01, {0.9, 0.999}, 1e-8, 0.1);
    c.run(opt);
    c.expect({0.49623342849911967, -0.993501225284257, 0.2282965594894943, 1.470853108903914, -0.010018111784648863,
              -0.7424257990536841},
             {0.08390714739094822, -0.19124438492279, 0.2840226003388821});
  }
}

TEST(NnOptim, AdamBiasCorrectionCountsEachParametersOwnUpdates) {
  // torch: w has no gradient on the first step (skipped), then steps with the second and third gradients.
  OptCase c;
  optim::Adam opt(c.params(), 0.01);
  const auto g = OptCase::grads();
  c.w.set_requires_grad(false);
  opt.step(g[0]);
  c.w.set_requires_grad(true);
  opt.step(g[1]);
  opt.step(g[2]);
  c.expect({0.5153853749354791, -1.0191778104846219, 0.2436610360388489, 1.492558632115032, 0.01830597480179945,
            -0.7683059750692772},
           {0.0841841941207852, -0.19182432143896874, 0.2848950100575195});
  EXPECT_EQ(opt.update_count(0), 2);
  EXPECT_EQ(opt.step_count(), 3);
}

TEST(NnOptim, Float32AdamMatchesTorchClosely) {
  Parameter w(convert(f64({0.5, -1.0, 0.25, 1.5, 0.0, -0.75}, {2, 3}), DType::Float32), "w");
  Parameter b(convert(f64({0.1, -0.2, 0.3}, {3}), DType::Float32), "b");
  optim::Adam opt({w, b}, 0.01);
  for (const auto& g : OptCase::grads()) opt.step(g);  // float64 gradients are cast to float32
  EXPECT_EQ(w.dtype(), DType::Float32);
  EXPECT_EQ(opt.state(0).at("exp_avg").dtype(), DType::Float32);
  expect_values(w, {2, 3},
                {0.49771690368652344, -0.9964787364006042, 0.22901710867881775, 1.475321888923645, -0.01003868319094181,
                 -0.7446555495262146},
                2e-6);
  expect_values(b, {3}, {0.0841841995716095, -0.1918243169784546, 0.28489503264427185}, 2e-6);
}

TEST(NnOptim, ValidatesBeforeWritingAndSkipsFrozen) {
  OptCase c;
  optim::SGD opt(c.params(), 0.1);
  const auto before = c.w.to_vector<double>();
  expect_error<ValueError>([&] { opt.step({OptCase::grads()[0][0]}); }, {"For 'SGD'", "1 gradients for 2"});
  expect_error<ShapeError>(
      [&] {
        opt.step({OptCase::grads()[0][0], zeros({2}, DType::Float64)});
      },
      {"For 'SGD'", "parameter 'b'", "(2,)", "(3,)"});
  EXPECT_EQ(c.w.to_vector<double>(), before);  // the first parameter was not updated either
  EXPECT_EQ(opt.step_count(), 0);
  c.w.set_requires_grad(false);
  opt.step(OptCase::grads()[0]);
  EXPECT_EQ(c.w.to_vector<double>(), before);
  expect_values(c.b, {3}, {0.0, -0.15, 0.275});
  EXPECT_EQ(opt.update_count(0), 0);
  EXPECT_EQ(opt.update_count(1), 1);

  expect_error<ValueError>([&] { opt.state(2); }, {"state(2)", "2 parameters"});
  expect_error<ValueError>([] { optim::SGD({}, 0.1); }, {"empty"});
  expect_error<ValueError>([&] { optim::SGD(c.params(), -1.0); }, {"learning rate"});
  expect_error<ValueError>([&] { optim::SGD(c.params(), 0.1, 0.0, 0.0, true); }, {"nesterov"});
  expect_error<ValueError>([&] { optim::Adam(c.params(), 0.1, {0.9, 1.0}); }, {"betas"});
  expect_error<DTypeError>([] { optim::SGD({Parameter(tensor_i32({1}, {1}), "i")}, 0.1); }, {"'i'", "int32"});
}

TEST(NnOptim, SchedulesMatchTorch) {
  OptCase c;
  optim::SGD opt(c.params(), 0.5);
  optim::StepLR step(opt, 2, 0.5);
  const std::vector<double> expected_step = {0.5, 0.5, 0.25, 0.25, 0.125, 0.125, 0.0625};
  EXPECT_DOUBLE_EQ(step.get_last_lr(), expected_step[0]);
  for (size_t e = 1; e < expected_step.size(); ++e) {
    step.step();
    EXPECT_DOUBLE_EQ(step.get_last_lr(), expected_step[e]) << "epoch " << e;
    EXPECT_DOUBLE_EQ(opt.learning_rate(), expected_step[e]);
  }
  optim::SGD opt2(c.params(), 0.1);
  optim::CosineAnnealingLR cos(opt2, 5, 0.001);
  const std::vector<double> expected_cos = {
      0.1,   0.0905463412215599,   0.06579634122155989, 0.035203658778440096, 0.010453658778440105,
      0.001, 0.010453658778440102, 0.03520365877844012, 0.06579634122155993};
  EXPECT_DOUBLE_EQ(cos.get_last_lr(), 0.1);
  for (size_t e = 1; e < expected_cos.size(); ++e) {
    cos.step();
    EXPECT_NEAR(opt2.learning_rate(), expected_cos[e], 1e-15) << "epoch " << e;
  }
  expect_error<ValueError>([&] { optim::StepLR(opt, 0); }, {"step_size"});
  expect_error<ValueError>([&] { optim::CosineAnnealingLR(opt, 0); }, {"T_max"});
}

TEST(NnOptim, AdamWLeavesBiasesAndNormsUndecayedWhenExcluded) {
  // zero gradients: only the decoupled decay moves a parameter, p *= 1 - lr * weight_decay
  OptCase c;
  optim::AdamW opt(c.params(), 0.1, {0.9, 0.999}, 1e-8, 0.5);
  opt.exclude_from_weight_decay(optim::Optimizer::is_bias_or_norm);
  EXPECT_EQ(opt.weight_decay(0), 0.5);
  EXPECT_EQ(opt.weight_decay(1), 0.0);
  opt.step({zeros({2, 3}, DType::Float64), zeros({3}, DType::Float64)});
  c.expect({0.5 * 0.95, -1.0 * 0.95, 0.25 * 0.95, 1.5 * 0.95, 0.0, -0.75 * 0.95}, {0.1, -0.2, 0.3}, 1e-15);
}

TEST(NnOptim, WarmupCosineWarmsUpLinearlyThenDecaysToItsFloor) {
  // nanoGPT's get_lr with learning_rate 1, warmup_iters 4, lr_decay_iters 12, min_lr 0.1, worked by hand
  OptCase c;
  optim::AdamW opt(c.params(), 1.0);
  optim::WarmupCosineLR sched(opt, 4, 12, 0.1);
  const double pi = 3.14159265358979323846;
  const std::vector<double> want = {0.2, 0.4, 0.6, 0.8, 1.0, 0.1 + 0.9 * (1 + std::cos(pi / 8)) / 2,
                                    0.1 + 0.9 * (1 + std::cos(pi / 4)) / 2, 0.1 + 0.9 * (1 + std::cos(3 * pi / 8)) / 2,
                                    0.55, 0.1 + 0.9 * (1 + std::cos(5 * pi / 8)) / 2};
  EXPECT_DOUBLE_EQ(opt.learning_rate(), want[0]);
  for (size_t t = 1; t < want.size(); ++t) {
    sched.step();
    EXPECT_NEAR(opt.learning_rate(), want[t], 1e-15) << "step " << t;
  }
  EXPECT_NEAR(sched.lr_at(12), 0.1, 1e-15);
  EXPECT_EQ(sched.lr_at(100), 0.1);
  expect_error<ValueError>([&] { optim::WarmupCosineLR(opt, 5, 5); }, {"WarmupCosineLR", "warmup_steps 5"});
  expect_error<ValueError>([&] { optim::WarmupCosineLR(opt, -1, 5); }, {"WarmupCosineLR"});
}

TEST(NnOptim, ClipByGlobalNormScalesEveryGradientByOneFactor) {
  // global norm of (3, 4) and (12) is 13
  const std::vector<Tensor> grads = {f64({3.0, 4.0}, {2}), Tensor(), f64({12.0}, {1})};
  Tensor norm;
  const std::vector<Tensor> clipped = optim::clip_by_global_norm(grads, 1.0, &norm);
  EXPECT_DOUBLE_EQ(norm.item(), 13.0);
  ASSERT_EQ(clipped.size(), 3u);
  EXPECT_FALSE(clipped[1].defined());
  expect_values(clipped[0], {2}, {3.0 / 13, 4.0 / 13}, 1e-15);
  expect_values(clipped[2], {1}, {12.0 / 13}, 1e-15);
  // under the limit: unchanged, bit for bit (the factor is exactly 1)
  const std::vector<Tensor> kept = optim::clip_by_global_norm(grads, 20.0);
  EXPECT_EQ(kept[0].to_vector<double>(), grads[0].to_vector<double>());
  // half gradients: squares summed in float32 (300^2 overflows no float32, 65504 is float16's largest)
  const Tensor h = ops::cast(f64({300.0, 400.0}, {2}), DType::Float16);
  Tensor hn;
  const std::vector<Tensor> hc = optim::clip_by_global_norm({h}, 5.0, &hn);
  EXPECT_EQ(hn.dtype(), DType::Float32);
  EXPECT_FLOAT_EQ(hn.item(), 500.0f);
  EXPECT_EQ(hc[0].dtype(), DType::Float16);
  expect_values(ops::cast(hc[0], DType::Float64), {2}, {3.0, 4.0}, 1e-3);
  // jitted: the same values, traced into the graph
  const JitFn j = jit([](const std::vector<Tensor>& a) -> Value {
    return Value::tuple(optim::clip_by_global_norm({a[0], a[1]}, 1.0));
  });
  const Value r = j({grads[0], grads[2]});
  EXPECT_EQ(r[0].tensor().to_vector<double>(), clipped[0].to_vector<double>());
  expect_error<ValueError>([&] { optim::clip_by_global_norm(grads, 0.0); }, {"clip_by_global_norm", "clip_norm"});
  expect_error<DTypeError>([&] { optim::clip_by_global_norm({tensor_i32({1}, {1})}, 1.0); }, {"clip_by_global_norm"});
}

// ---- TrainOneStepCell ---------------------------------------------------------------------------------

TEST(NnTrain, TrainOneStepCellIsValueAndGradPlusUpdate) {
  auto make = [] {
    return std::make_shared<nn::Dense>(3, 2,
                                       nn::DenseOptions{.weight_init = f64({0.1, -0.2, 0.3, 0.4, 0.5, -0.6}, {2, 3}),
                                                        .bias_init = f64({0.05, -0.05}, {2}),
                                                        .dtype = DType::Float64});
  };
  const Tensor x = f64({1.0, 2.0, -1.0, 0.5, -0.5, 2.0}, {2, 3});
  const Tensor y = f64({0.5, -0.5, 1.0, 0.0}, {2, 2});

  // Reference: value_and_grad by hand, then p - lr * g.
  auto ref = make();
  nn::WithLossCell ref_loss(ref, std::make_shared<nn::MSELoss>());
  const Fn f = [&](const std::vector<Tensor>& in) -> Value { return ref_loss(in); };
  const Value vg = value_and_grad(f, nullptr, ref_loss.trainable_params())({x, y});

  auto net = make();
  auto with_loss = std::make_shared<nn::WithLossCell>(net, std::make_shared<nn::MSELoss>());
  auto opt = std::make_shared<optim::SGD>(with_loss->trainable_params(), 0.1);
  nn::TrainOneStepCell train(with_loss, opt);
  const Tensor loss = train.step({x, y});
  EXPECT_DOUBLE_EQ(loss.item(), vg[0].tensor().item());
  const auto w0 = ref->weight.to_vector<double>(), gw = vg[1][0].tensor().to_vector<double>();
  const auto w1 = net->weight.to_vector<double>();
  for (size_t i = 0; i < w0.size(); ++i) EXPECT_NEAR(w1[i], w0[i] - 0.1 * gw[i], 1e-15);
  const auto b0 = ref->bias.to_vector<double>(), gb = vg[1][1].tensor().to_vector<double>();
  const auto b1 = net->bias.to_vector<double>();
  for (size_t i = 0; i < b0.size(); ++i) EXPECT_NEAR(b1[i], b0[i] - 0.1 * gb[i], 1e-15);
  // Training lowers the loss.
  for (int i = 0; i < 50; ++i) train.step({x, y});
  EXPECT_LT(train.step({x, y}).item(), loss.item() * 0.5);
  EXPECT_EQ(train.parameters_and_names()[0].first, "network.backbone.weight");
  expect_error<ValueError>([&] { with_loss->construct({x}); }, {"For 'WithLossCell'"});
}

// A network returning (loss, prediction): TrainOneStepCell with has_aux differentiates the loss only and returns
// both, computed before the update; the parameters move exactly as without the auxiliary output.
namespace {
class LossAndPrediction : public Cell {
 public:
  explicit LossAndPrediction(std::shared_ptr<nn::WithLossCell> with_loss)
      : with_loss_(register_cell("with_loss", std::move(with_loss))) {}
  Value construct(const std::vector<Tensor>& in) override {
    return Value{(*with_loss_)(in), (*with_loss_->backbone())({in[0]})};
  }

 private:
  std::shared_ptr<nn::WithLossCell> with_loss_;
};
}  // namespace

TEST(NnTrain, TrainOneStepCellWithAuxReturnsItAndTrainsTheSame) {
  auto make = [] {
    auto dense = std::make_shared<nn::Dense>(3, 2,
                                             nn::DenseOptions{.weight_init = f64({0.1, -0.2, 0.3, 0.4, 0.5, -0.6}, {2, 3}),
                                                              .bias_init = f64({0.05, -0.05}, {2}),
                                                              .dtype = DType::Float64});
    return std::make_shared<nn::WithLossCell>(dense, std::make_shared<nn::MSELoss>());
  };
  const Tensor x = f64({1.0, 2.0, -1.0, 0.5, -0.5, 2.0}, {2, 3});
  const Tensor y = f64({0.5, -0.5, 1.0, 0.0}, {2, 2});
  auto plain_net = make();
  nn::TrainOneStepCell plain(plain_net, std::make_shared<optim::SGD>(plain_net->trainable_params(), 0.1));
  auto aux_net = std::make_shared<LossAndPrediction>(make());
  nn::TrainOneStepCell with_aux(aux_net, std::make_shared<optim::SGD>(aux_net->trainable_params(), 0.1),
                                /*has_aux=*/true);
  for (int i = 0; i < 3; ++i) {
    const Tensor before = (*plain_net->backbone())(x);  // the prediction before this step's update
    const Tensor loss = plain.step({x, y});
    const Value r = with_aux({x, y});
    ASSERT_EQ(r.size(), 2u);
    EXPECT_TRUE(same_bits(r[0].tensor(), loss));
    EXPECT_TRUE(same_bits(r[1].tensor(), before));
  }
  EXPECT_TRUE(same_bits(plain_net->trainable_params()[0], aux_net->trainable_params()[0]));
  EXPECT_TRUE(same_bits(plain_net->trainable_params()[1], aux_net->trainable_params()[1]));
  // The network's result must fit the cell's promise.
  const auto sgd = [](const Cell& c) { return std::make_shared<optim::SGD>(c.trainable_params(), 0.1); };
  expect_error<ValueError>([&] { nn::TrainOneStepCell(plain_net, sgd(*plain_net), true)({x, y}); },
                           {"For 'TrainOneStepCell', with has_aux the network must return (loss, aux...), got one tensor"});
  expect_error<ValueError>([&] { nn::TrainOneStepCell(aux_net, sgd(*aux_net))({x, y}); },
                           {"For 'TrainOneStepCell', the network must return the loss, got a tuple of 2"});
}

// ---- the seed's LinearRegressor example ---------------------------------------------------------------

namespace {
// MindSpore's example: a Cell holding Parameters w (5, 3) and b (3,), z = x @ w + b.
struct LinearRegressor : Cell {
  Parameter w{randn({5, 3}, 7, DType::Float64), "w"};
  Parameter b{randn({3}, 8, DType::Float64), "b"};
  LinearRegressor() {
    register_parameter("w", w);
    register_parameter("b", b);
  }
  Value construct(const std::vector<Tensor>& in) override { return ops::matmul(in[0], w) + b; }
};
}  // namespace

TEST(NnTrain, LinearRegressorWithBceWithLogitsLoss) {
  LinearRegressor net;
  nn::BCEWithLogitsLoss loss_fn;
  const Tensor x = f64({0.5, -1.0, 2.0, 0.3, 1.2}, {5});
  const Tensor y = f64({0.0, 1.0, 1.0}, {3});
  const Fn forward = [&](const std::vector<Tensor>& in) -> Value { return loss_fn(net(in[0]), in[1]); };
  const Value vg = value_and_grad(forward, nullptr, net.trainable_params())({x, y});

  // By hand: z_j = sum_i x_i w_ij + b_j; loss = mean_j softplus(z_j) - y_j z_j; dz_j = (sigmoid(z_j) - y_j) / 3;
  // dw_ij = x_i dz_j; db_j = dz_j.
  const auto xv = x.to_vector<double>(), yv = y.to_vector<double>();
  const auto wv = net.w.to_vector<double>(), bv = net.b.to_vector<double>();
  double loss = 0.0;
  std::vector<double> dz(3);
  for (int j = 0; j < 3; ++j) {
    double z = bv[j];
    for (int i = 0; i < 5; ++i) z += xv[i] * wv[i * 3 + j];
    loss += (std::log1p(std::exp(z)) - yv[j] * z) / 3.0;
    dz[j] = (1.0 / (1.0 + std::exp(-z)) - yv[j]) / 3.0;
  }
  EXPECT_NEAR(vg[0].tensor().item(), loss, 1e-12);
  ASSERT_EQ(vg[1].size(), 2u);
  std::vector<double> dw;
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 3; ++j) dw.push_back(xv[i] * dz[j]);
  }
  expect_values(vg[1][0].tensor(), {5, 3}, dw);
  expect_values(vg[1][1].tensor(), {3}, dz);
}

// ---- a small training run -----------------------------------------------------------------------------

namespace {
// Two interleaved spirals, seeded: n points per class, labels 0/1.
std::pair<Tensor, Tensor> spirals(int n, uint64_t seed) {
  Random rng(seed);
  std::vector<double> xs;
  std::vector<int32_t> ys;
  for (int c = 0; c < 2; ++c) {
    for (int i = 0; i < n; ++i) {
      const double t = 0.25 + 2.75 * i / n;             // radius and angle grow together
      const double a = t * 4.0 + c * 3.14159265358979;  // about 1.75 turns
      xs.push_back(t * std::cos(a) + 0.05 * rng.normal());
      xs.push_back(t * std::sin(a) + 0.05 * rng.normal());
      ys.push_back(c);
    }
  }
  return {tensor(xs, {2 * static_cast<int64_t>(n), 2}), tensor_i32(ys, {2 * static_cast<int64_t>(n)})};
}

double accuracy(Cell& net, const Tensor& x, const Tensor& y) {
  const auto pred = ops::argmax(net(x), 1).to_vector<int32_t>();
  const auto truth = y.to_vector<int32_t>();
  int ok = 0;
  for (size_t i = 0; i < pred.size(); ++i) ok += pred[i] == truth[i];
  return static_cast<double>(ok) / static_cast<double>(pred.size());
}

// Dense-ReLU-Dense trained full-batch; returns (first loss, last loss).
std::pair<double, double> train_mlp(const std::string& which, int steps, std::shared_ptr<SequentialCell>* out) {
  nn::set_seed(3);
  auto mlp = std::make_shared<SequentialCell>(std::vector<std::shared_ptr<Cell>>{
      std::make_shared<nn::Dense>(2, 64, nn::DenseOptions{.activation = "relu"}), std::make_shared<nn::Dense>(64, 2)});
  auto with_loss = std::make_shared<nn::WithLossCell>(mlp, std::make_shared<nn::CrossEntropyLoss>());
  std::shared_ptr<optim::Optimizer> opt;
  if (which == "adam")
    opt = std::make_shared<optim::Adam>(mlp->trainable_params(), 0.02);
  else
    opt = std::make_shared<optim::SGD>(mlp->trainable_params(), 0.2, 0.9);
  nn::TrainOneStepCell train(with_loss, opt);
  const auto [x, y] = spirals(100, 11);
  const double first = train.step({x, y}).item();
  double last = first;
  for (int i = 1; i < steps; ++i) last = train.step({x, y}).item();
  *out = mlp;
  return {first, last};
}
}  // namespace

TEST(NnTrain, MlpLearnsSpiralsWithAdam) {
  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<SequentialCell> mlp;
  const auto [first, last] = train_mlp("adam", 400, &mlp);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GT(first, 0.6);
  EXPECT_LT(last, 0.15) << "first loss " << first;
  const auto [x, y] = spirals(100, 11);
  EXPECT_GE(accuracy(*mlp, x, y), 0.97);
  EXPECT_LT(seconds, 2.0);
}

TEST(NnTrain, MlpLearnsSpiralsWithSgdMomentum) {
  std::shared_ptr<SequentialCell> mlp;
  const auto [first, last] = train_mlp("sgd", 400, &mlp);
  EXPECT_LT(last, 0.4) << "first loss " << first;
  const auto [x, y] = spirals(100, 11);
  EXPECT_GE(accuracy(*mlp, x, y), 0.88);
}

TEST(NnOptim, StateDictResumesBitForBit) {
  // Six steps in one go against three, the state through checkpoint bytes into a fresh optimizer, three more.
  auto make = [](const std::vector<Parameter>& ps, const std::string& kind) -> std::unique_ptr<optim::Optimizer> {
    if (kind == "sgd") return std::make_unique<optim::SGD>(ps, 0.1, 0.9, 0.0, true, 0.01);
    if (kind == "amsgrad") return std::make_unique<optim::Adam>(ps, 0.05, std::pair{0.8, 0.9}, 1e-8, 0.0, true);
    return std::make_unique<optim::AdamW>(ps, 0.05);
  };
  for (const std::string kind : {"sgd", "amsgrad", "adamw"}) {
    SCOPED_TRACE(kind);
    const auto grads = OptCase::grads();
    OptCase whole;
    auto a = make(whole.params(), kind);
    a->exclude_from_weight_decay(optim::Optimizer::is_bias_or_norm);
    optim::WarmupCosineLR sa(*a, 2, 6);
    for (int s = 0; s < 6; ++s) {
      a->step(grads[static_cast<size_t>(s % 3)]);
      sa.step();
    }

    OptCase first;
    auto b = make(first.params(), kind);
    b->exclude_from_weight_decay(optim::Optimizer::is_bias_or_norm);
    optim::WarmupCosineLR sb(*b, 2, 6);
    for (int s = 0; s < 3; ++s) {
      b->step(grads[static_cast<size_t>(s)]);
      sb.step();
    }
    NamedTensors saved = b->state_dict();
    saved.emplace_back("w", first.w.detach());
    saved.emplace_back("b", first.b.detach());
    const Checkpoint ck = load_checkpoint_bytes(save_checkpoint_bytes(saved));

    OptCase resumed;
    resumed.w.assign(*ck.find("w"));
    resumed.b.assign(*ck.find("b"));
    auto c = make(resumed.params(), kind);
    c->exclude_from_weight_decay(optim::Optimizer::is_bias_or_norm);
    optim::WarmupCosineLR sc(*c, 2, 6);
    c->load_state_dict(ck.tensors, "optimizer.", "resume.safetensors");
    sc.set_last_epoch(3);
    EXPECT_EQ(c->step_count(), 3);
    EXPECT_EQ(c->learning_rate(), b->learning_rate());
    for (int s = 3; s < 6; ++s) {
      c->step(grads[static_cast<size_t>(s % 3)]);
      sc.step();
    }
    EXPECT_EQ(resumed.w.to_vector<double>(), whole.w.to_vector<double>());
    EXPECT_EQ(resumed.b.to_vector<double>(), whole.b.to_vector<double>());
    EXPECT_EQ(c->state(0).size(), a->state(0).size());
  }
}

TEST(NnOptim, LoadStateDictRefusesAnotherOptimizersState) {
  OptCase c;
  optim::Adam adam(c.params(), 0.1);
  adam.step(OptCase::grads()[0]);
  const NamedTensors st = adam.state_dict();
  OptCase d;
  optim::SGD sgd(d.params(), 0.1, 0.9);
  expect_error<ValueError>([&] { sgd.load_state_dict(st, "optimizer.", "adam.safetensors"); },
                           {"SGD", "adam.safetensors", "optimizer.0.exp_avg", "another optimizer"});
  OptCase e;
  optim::Adam wrong({e.b}, 0.1);
  expect_error<ValueError>([&] { wrong.load_state_dict(st); }, {"optimizer.0.exp_avg", "(2, 3)", "'b'", "(3,)"});
  NamedTensors partial(st.begin() + 1, st.end());
  optim::Adam fresh(e.params(), 0.1);
  expect_error<ValueError>([&] { fresh.load_state_dict(partial); }, {"optimizer.steps"});
  EXPECT_EQ(fresh.step_count(), 0);
  EXPECT_TRUE(fresh.state(0).empty());
}
