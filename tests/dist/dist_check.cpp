// The multi-process checks of bprop::dist, run under mpirun by tests/dist/run.sh (one mode per ctest test):
//   equivalence MODEL OPTIMIZER  N ranks with global batch 30 take the same 20 steps as one process
//   overlap                      bucket allreduces start, and finish, while the backward still runs
//   fault-exit | fault-throw     rank 1 dies / throws at step 5; the others must not hang
//   fault-hang                   rank 1 stops answering at step 5; the others' watchdog ends the job
//   mismatch                     rank 1 builds another model: a clear error on every rank, nothing exchanged
//   batchnorm                    moving statistics per rank by default, equal with average_state
//   loss-scale                   dynamic loss scaling: an inf on rank 1 at one step skips it on every rank
//   bench-allreduce              a 100 MB float32 allreduce: dist::allreduce against plain MPI_Allreduce
// Exit status 0 when the check holds; the failing rank's message otherwise.
// The C API only: not the deprecated C++ bindings (whose symbols live in another library).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "bprop/bprop.h"
#include "bprop/dist.h"
#include "bprop/dist/data_parallel.h"
#include "bprop/nn/init.h"
#include "kernels/cpu/parallel.h"
#include "models/models.h"
#include "models/trainer.h"
#include "synthetic.h"

using namespace bprop;
using bprop::dist_test::synthetic;

namespace {

int fail(const std::string& msg) {
  std::fprintf(stderr, "dist_check: rank %d: FAIL: %s\n", dist::rank(), msg.c_str());
  return 1;
}

models::TrainOptions options(const std::string& model, const std::string& optimizer) {
  models::TrainOptions o;
  o.model = model;
  o.batch_size = 30;
  o.optimizer = optimizer;
  o.lr = optimizer == "sgd" ? 0.05 : 1e-3;
  o.schedule = "constant";
  o.seed = 11;
  return o;
}

// 19 full global batches of 30 and a last one of 2: 20 steps; with 4 ranks the last batch leaves two ranks
// without an image, with 3 ranks one; and 30 images split 8/7/8/7 over 4 ranks, 10/10/10 over 3.
constexpr int64_t kImages = 19 * 30 + 2;

int equivalence(const std::string& model_name, const std::string& optimizer) {
  const data::Dataset train = synthetic(kImages);
  const models::Normalization norm = models::compute_normalization(train);
  // Every rank starts from different weights: the broadcast from rank 0 has to make them equal.
  nn::set_seed(100 + static_cast<uint64_t>(dist::rank()));
  auto dp_model = models::make_model(model_name);
  models::TrainOptions o = options(model_name, optimizer);
  o.data_parallel = true;
  o.bucket_mb = 0.25;  // several buckets
  models::Trainer dp(dp_model, o, norm);
  const auto r = dp.train_epoch(train, 1);
  if (dist::rank() != 0) return 0;

  // The reference: one process, batch 30, from rank 0's initial weights.
  nn::set_seed(100);
  auto ref_model = models::make_model(model_name);
  std::vector<std::vector<float>> initial;
  for (const auto& p : ref_model->trainable_params()) initial.push_back(p.to_vector<float>());
  models::Trainer ref(ref_model, options(model_name, optimizer), norm);
  const auto r1 = ref.train_epoch(train, 1);
  const auto pd = dp_model->trainable_params(), pr = ref_model->trainable_params();
  double worst = 0.0, moved = 1e30;
  for (size_t i = 0; i < pr.size(); ++i) {
    const auto a = pd[i].to_vector<float>(), b = pr[i].to_vector<float>();
    double diff = 0.0, scale = 0.0, change = 0.0;
    for (size_t k = 0; k < b.size(); ++k) {
      diff = std::max(diff, std::fabs(static_cast<double>(a[k]) - b[k]));
      scale = std::max(scale, std::fabs(static_cast<double>(b[k])));
      change = std::max(change, std::fabs(static_cast<double>(b[k]) - initial[i][k]));
    }
    worst = std::max(worst, diff / scale);
    moved = std::min(moved, change / scale);
  }
  std::printf("equivalence %s %s: %d ranks, 20 steps of global batch 30: max relative difference %.3g "
              "(smallest relative change of a parameter tensor %.3g); loss %.6f vs %.6f\n",
              model_name.c_str(), optimizer.c_str(), dist::size(), worst, moved, r.train_loss, r1.train_loss);
  if (dist::size() < 2) return fail("run it with several ranks");
  if (!(worst <= 1e-5)) return fail("the parameters differ from the one-process run by " + std::to_string(worst));
  // A check that could not fail would pass with untouched parameters: they must have moved far more than that.
  if (!(moved > 1e-3)) return fail("some parameter barely moved in 20 steps: the comparison proves nothing");
  if (std::fabs(r.train_loss - r1.train_loss) > 1e-5 * std::fabs(r1.train_loss)) {
    return fail("the reduced training loss differs from the one-process loss");
  }
  return 0;
}

int overlap() {
  const data::Dataset train = synthetic(64 * 4);
  nn::set_seed(1);
  auto model = models::make_model("cnn");
  auto opt = std::make_shared<optim::SGD>(model->trainable_params(), 0.01);
  dist::DataParallel dp(model, opt, {0.05});
  const int64_t n = 64;
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < n; ++i) idx.push_back(dist::rank() * n + i);
  const Tensor x = models::make_image_batch(train, idx, models::compute_normalization(train));
  const Tensor y = models::make_label_batch(train, idx);
  nn::CrossEntropyLoss ce;
  const Fn fn = [&](const std::vector<Tensor>& in) -> Value {
    const Tensor logits = (*model)(in[0]);
    return Value{ce(logits, in[1]), logits};
  };
  int overlapped_steps = 0;
  const int steps = 8;
  for (int step = 0; step < steps; ++step) {
    dp.step(fn, {x, y}, n, n * dist::size());
    const auto& t = dp.last_step();
    if (dist::rank() == 0 && step < 3) {
      std::printf("step %d: backward done at %.2f ms, all reduced at %.2f ms; buckets (launched / finished, ms):",
                  step, 1e3 * t.backward_end, 1e3 * t.reduced);
      for (const auto& b : t.buckets) std::printf(" %lldB %.2f/%.2f", static_cast<long long>(b.bytes), 1e3 * b.launched, 1e3 * b.finished);
      std::printf("\n");
    }
    if (t.buckets.size() < 3) return fail("expected several buckets, got " + std::to_string(t.buckets.size()));
    const auto& first = t.buckets.front();
    // The first bucket (the last layers) is launched during the backward: before it returned, and before the last
    // bucket (the first layer's gradients, final only at the very end of the walk).
    if (!(first.launched < t.buckets.back().launched && first.launched < t.backward_end)) {
      return fail("the first bucket was launched at " + std::to_string(first.launched) + " s, the backward ended at " +
                  std::to_string(t.backward_end) + " s");
    }
    if (first.finished > 0 && first.finished < t.backward_end) ++overlapped_steps;
  }
  // When a bucket completes depends on the other rank too (it must have launched it), and on a loaded machine the
  // ranks drift apart: a rank ahead of the others sees its first bucket finish only after its own backward, while
  // the one behind sees it finish during its backward. So the steps are counted over all ranks: one step in eight
  // whose first bucket was reduced before the backward ended, on any rank, proves it.
  const Tensor total = scalar(static_cast<double>(overlapped_steps), DType::Float64);
  dist::allreduce({total}, dist::ReduceOp::Sum);
  const int all_ranks = static_cast<int>(total.item());
  if (dist::rank() == 0) {
    std::printf("%d of %d steps reduced their first bucket during the backward (%d over all ranks)\n",
                overlapped_steps, steps, all_ranks);
  }
  if (all_ranks == 0) return fail("no step reduced a bucket while the backward was still running, on any rank");
  return 0;
}

int fault(const std::string& how) {
  const data::Dataset train = synthetic(kImages);
  nn::set_seed(5);
  auto model = models::make_model("mlp");
  models::TrainOptions o = options("mlp", "sgd");
  o.data_parallel = true;
  models::Trainer trainer(model, o, models::compute_normalization(train));
  try {
    trainer.train_epoch(train, 1, [&](const models::BatchProgress& p) {
      if (dist::rank() == 1 && p.batch == 5) {
        if (how == "exit") std::_Exit(3);
        if (how == "hang") ::sleep(120);  // alive but silent: only the watchdog can end the wait
        throw ValueError("injected failure at step 5");
      }
    });
  } catch (const Error& e) {
    dist::abort(1, std::string("training failed: ") + e.what());
  }
  return fail("the training finished although rank 1 stopped");
}

int mismatch() {
  nn::set_seed(5);
  // Rank 1 has a cnn, the others an mlp.
  auto model = models::make_model(dist::rank() == 1 ? "cnn" : "mlp");
  auto opt = std::make_shared<optim::SGD>(model->trainable_params(), 0.01);
  try {
    dist::DataParallel dp(model, opt);
  } catch (const ValueError& e) {
    std::fprintf(stderr, "rank %d: %s\n", dist::rank(), e.what());
    return 0;
  }
  return fail("no error for different models");
}

// The largest difference between ranks of any element of the model's batch-norm moving statistics.
double state_spread(const Cell& model) {
  double spread = 0.0;
  for (const auto& [name, p] : model.parameters_and_names()) {
    if (p.requires_grad()) continue;
    const Tensor hi = p.clone(), lo = p.clone();
    dist::allreduce({hi}, dist::ReduceOp::Max);
    dist::allreduce({lo}, dist::ReduceOp::Min);
    const auto a = hi.to_vector<double>(), b = lo.to_vector<double>();
    for (size_t k = 0; k < a.size(); ++k) spread = std::max(spread, a[k] - b[k]);
  }
  return spread;
}

// Batch-norm statistics stay per rank by default, and are equal on every rank with average_state.
int batchnorm() {
  const data::Dataset train = synthetic(64 * 4);
  const models::Normalization norm = models::compute_normalization(train);
  double spread[2];
  for (int avg = 0; avg < 2; ++avg) {
    nn::set_seed(2);
    auto model = std::make_shared<SequentialCell>(std::initializer_list<std::shared_ptr<Cell>>{
        std::make_shared<nn::Conv2d>(1, 4, 3), std::make_shared<nn::BatchNorm2d>(4), std::make_shared<nn::ReLU>(),
        std::make_shared<nn::Flatten>(), std::make_shared<nn::Dense>(4 * 28 * 28, 10)});
    auto opt = std::make_shared<optim::SGD>(model->trainable_params(), 0.01);
    dist::DataParallelOptions o;
    o.average_state = avg == 1;
    dist::DataParallel dp(model, opt, o);
    nn::CrossEntropyLoss ce;
    const Fn fn = [&](const std::vector<Tensor>& in) -> Value {
      const Tensor logits = (*model)(in[0]);
      return Value{ce(logits, in[1]), logits};
    };
    for (int step = 0; step < 3; ++step) {
      std::vector<int64_t> idx;
      for (int64_t i = 0; i < 16; ++i) idx.push_back((dist::rank() * 16 + i + step * 64) % train.count);
      dp.step(fn, {models::make_image_batch(train, idx, norm), models::make_label_batch(train, idx)}, 16,
              16 * dist::size());
    }
    spread[avg] = state_spread(*model);
  }
  if (dist::rank() == 0) {
    std::printf("batch-norm moving statistics, largest difference between ranks: per rank %.3g, averaged %.3g\n",
                spread[0], spread[1]);
  }
  if (!(spread[0] > 1e-4)) return fail("the ranks' statistics should differ by default (each sees other images)");
  if (spread[1] != 0.0) return fail("average_state left the ranks' statistics different");
  return 0;
}

// Dynamic loss scaling under DataParallel: rank 1's loss is infinite at step kOverflowStep (as a float16 overflow
// would make it), so its gradients are not finite. Every rank must skip that step and halve the scale, and after 8
// steps hold the parameters, scale and counter of one process that runs the same steps with the same injection.
int loss_scale() {
  constexpr int kSteps = 8, kOverflowStep = 3, kBatch = 24;
  const data::Dataset train = synthetic(kSteps * kBatch);
  const models::Normalization norm = models::compute_normalization(train);
  const auto batch = [&](int step, int64_t first, int64_t count) {
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < count; ++i) idx.push_back(step * kBatch + first + i);
    return std::vector<Tensor>{models::make_image_batch(train, idx, norm), models::make_label_batch(train, idx)};
  };
  const Tensor inf = scalar(std::numeric_limits<double>::infinity());
  nn::CrossEntropyLoss ce;
  // A window of 2 so that the scale also grows within the run: 1024, 1024, 2048, 1024 (skipped), 1024, 2048, ...
  const auto make_scaler = [] { return std::make_shared<amp::DynamicLossScaler>(1024.0, 2.0, 2); };

  nn::set_seed(7);
  auto model = models::make_model("mlp");
  auto opt = std::make_shared<optim::Adam>(model->trainable_params(), 1e-3);
  dist::DataParallel dp(model, opt);
  auto scaler = make_scaler();
  dp.set_loss_scaler(scaler);
  const int64_t local = kBatch / dist::size();
  int skipped = 0;
  std::vector<double> scales;
  for (int step = 0; step < kSteps; ++step) {
    const bool poison = dist::rank() == 1 && step == kOverflowStep;
    const Fn fn = [&](const std::vector<Tensor>& in) -> Value {
      const Tensor loss = ce((*model)(in[0]), in[1]);
      return Value{poison ? loss * inf : loss, loss};
    };
    scales.push_back(scaler->current_scale());
    dp.step(fn, batch(step, dist::rank() * local, local), local, local * dist::size());
    if (dp.last_step_overflowed() != (step == kOverflowStep)) {
      return fail("step " + std::to_string(step) + (dp.last_step_overflowed() ? " was skipped" : " was not skipped"));
    }
    skipped += dp.last_step_overflowed();
  }
  if (dist::rank() != 0) return 0;

  // The reference: one process, the whole batch, the same scaled step (TrainOneStepWithLossScaleCell's arithmetic).
  nn::set_seed(7);
  auto ref_model = models::make_model("mlp");
  optim::Adam ref_opt(ref_model->trainable_params(), 1e-3);
  auto ref_scaler = make_scaler();
  const auto params = ref_model->trainable_params();
  for (int step = 0; step < kSteps; ++step) {
    const Fn fn = [&](const std::vector<Tensor>& in) -> Value {
      const Tensor loss = ce((*ref_model)(in[0]), in[1]);
      // The global mean loss is infinite when one rank's share is.
      return Value(ref_scaler->scale(step == kOverflowStep ? loss * inf : loss));
    };
    const Value vg = value_and_grad(fn, nullptr, params)(batch(step, 0, local * dist::size()));
    const nn::UnscaledGradients g = nn::unscale_and_check(*ref_scaler, vg[1].flatten());
    ref_opt.step(g.grads, g.finite);
    ref_scaler->adjust(g.finite);
  }
  double worst = 0.0;
  const auto pd = model->trainable_params();
  for (size_t i = 0; i < params.size(); ++i) {
    const auto a = pd[i].to_vector<float>(), b = params[i].to_vector<float>();
    for (size_t k = 0; k < b.size(); ++k) worst = std::max(worst, std::fabs(static_cast<double>(a[k]) - b[k]));
  }
  std::printf("loss-scale: %d ranks, %d steps, step %d overflowed on rank 1: skipped %d step(s); scales", dist::size(),
              kSteps, kOverflowStep, skipped);
  for (double s : scales) std::printf(" %g", s);
  std::printf(" -> %g (one process %g); max difference of the parameters %.3g\n", scaler->current_scale(),
              ref_scaler->current_scale(), worst);
  if (dist::size() < 2) return fail("run it with several ranks");
  const std::vector<double> expected{1024, 1024, 2048, 2048, 1024, 1024, 2048, 2048};
  if (scales != expected) return fail("the scales are not the dynamic scaler's sequence");
  if (scaler->current_scale() != ref_scaler->current_scale() ||
      scaler->counter().item() != ref_scaler->counter().item()) {
    return fail("the scaler's state differs from the one-process run");
  }
  if (!(worst <= 1e-5)) return fail("the parameters differ from the one-process run by " + std::to_string(worst));
  return 0;
}

int bench_allreduce() {
  const int64_t n = 100 * 1000 * 1000 / 4;
  Tensor a = ones({n});
  std::vector<float> b(static_cast<size_t>(n), 1.0f);
  std::vector<double> t_dist, t_mpi;
  for (int rep = 0; rep < 7; ++rep) {
    dist::barrier();
    auto t0 = std::chrono::steady_clock::now();
    dist::allreduce({a}, dist::ReduceOp::Sum);
    t_dist.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = std::chrono::steady_clock::now();
    MPI_Allreduce(MPI_IN_PLACE, b.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    t_mpi.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t_dist.begin(), t_dist.end());
  std::sort(t_mpi.begin(), t_mpi.end());
  const double md = t_dist[t_dist.size() / 2], mm = t_mpi[t_mpi.size() / 2];
  if (dist::rank() == 0) {
    std::printf("allreduce of 100 MB float32 over %d ranks: bprop::dist %.1f ms, MPI_Allreduce %.1f ms (ratio %.2f), "
                "medians of 7\n", dist::size(), 1e3 * md, 1e3 * mm, md / mm);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  cpu::set_num_threads(1);
  dist::init();
  int rc = 2;
  try {
    if (mode == "equivalence" && argc == 4) rc = equivalence(argv[2], argv[3]);
    else if (mode == "overlap") rc = overlap();
    else if (mode.rfind("fault-", 0) == 0) rc = fault(mode.substr(6));
    else if (mode == "mismatch") rc = mismatch();
    else if (mode == "batchnorm") rc = batchnorm();
    else if (mode == "loss-scale") rc = loss_scale();
    else if (mode == "bench-allreduce") rc = bench_allreduce();
    else std::fprintf(stderr, "usage: dist_check equivalence mlp|cnn sgd|adam | overlap | fault-exit | fault-throw | fault-hang | mismatch | batchnorm | loss-scale | bench-allreduce\n");
  } catch (const Error& e) {
    dist::abort(1, e.what());
  }
  if (rc != 0 && dist::size() > 1) dist::abort(rc, "check failed");
  dist::finalize();
  return rc;
}
