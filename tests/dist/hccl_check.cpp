// The multi-process checks of bprop::dist's HCCL implementation on the fake CANN and the fake libhccl.so
// (tests/fake_ascend, tests/fake_hccl), run under mpirun by tests/dist/run_hccl.sh with two fake NPUs:
//   collectives   allreduce Sum/Max/Min/Mean and broadcast of device tensors through HCCL, float64 and host
//                 tensors through MPI, every rank on its own NPU
//   mismatch      the ranks allreduce different counts: a clear error on every rank, not a hang
//   equivalence   DataParallel on the NPUs takes the same 20 steps as one process on one NPU, with no CPU fallback
// Exit status 0 when the check holds; the failing rank's message otherwise.
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ascend/backend.h"
#include "bprop/bprop.h"
#include "bprop/context.h"
#include "bprop/device.h"
#include "bprop/dist.h"
#include "bprop/dist/data_parallel.h"
#include "kernels/cpu/parallel.h"
#include "models/models.h"
#include "models/trainer.h"
#include "synthetic.h"

using namespace bprop;

namespace {

int fail(const std::string& msg) {
  std::fprintf(stderr, "hccl_check: rank %d: FAIL: %s\n", dist::rank(), msg.c_str());
  return 1;
}

// The fake runtime's name of the last task it ran ("HcclAllReduce", "aclnnMuls", ...): which path a collective took.
std::string last_fake_task() {
  const char* home = std::getenv("ASCEND_HOME_PATH");
  void* h = home ? dlopen((std::string(home) + "/lib64/libascendcl.so").c_str(), RTLD_NOW | RTLD_NOLOAD) : nullptr;
  auto fn = h ? reinterpret_cast<const char* (*)()>(dlsym(h, "fake_ascend_last_kernel")) : nullptr;
  return fn ? fn() : "(not the fake runtime)";
}

bool equal(const Tensor& t, const std::vector<double>& want) {
  const auto got = t.to_vector<double>();
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) return false;
  }
  return true;
}

std::string fallbacks() {
  std::string s;
  for (const auto& [op, n] : fallback_counts()) s += op + " x" + std::to_string(n) + " ";
  return s;
}

int collectives() {
  const int r = dist::rank();
  if (dist::size() != 2) return fail("run it with 2 ranks");
  if (dist::backend_name() != "hccl") return fail("Auto chose " + dist::backend_name() + ", not hccl");
  const Device dev = get_context().device;
  if (dev != ascend::device(r % 2)) return fail("rank " + std::to_string(r) + " runs on " + dev.str());
  if (r == 0) std::printf("%s\n", dist::describe().c_str());
  reset_fallback_counts();
  const double a = r + 1.0;
  auto dev_tensor = [&](const std::vector<double>& v, DType t = DType::Float32) { return tensor(v, {static_cast<int64_t>(v.size())}, t).to(dev); };
  Tensor sum = dev_tensor({a, -2 * a, 3.0 * r}), mx = sum.clone(), mn = sum.clone(), mean = sum.clone();
  dist::allreduce({sum});
  if (last_fake_task() != "HcclAllReduce") return fail("the float32 allreduce ran as " + last_fake_task());
  dist::allreduce({mx}, dist::ReduceOp::Max);
  dist::allreduce({mn}, dist::ReduceOp::Min);
  dist::allreduce({mean}, dist::ReduceOp::Mean);
  if (!equal(sum, {3, -6, 3}) || !equal(mx, {2, -2, 3}) || !equal(mn, {1, -4, 0}) || !equal(mean, {1.5, -3, 1.5})) {
    return fail("float32 allreduce: sum " + sum.to_string() + " max " + mx.to_string() + " min " + mn.to_string() +
                " mean " + mean.to_string());
  }
  Tensor ints = tensor_i32({r, 10}, {2}).to(dev);
  dist::allreduce({ints});
  if (!equal(ints, {1, 20})) return fail("int32 allreduce: " + ints.to_string());
  Tensor from1 = dev_tensor({10.0 * r + 1, 10.0 * r + 2}), f64 = dev_tensor({r + 0.5}, DType::Float64);
  dist::broadcast({from1}, 1);
  if (last_fake_task() != "HcclBroadcast") return fail("the broadcast ran as " + last_fake_task());
  dist::broadcast({f64}, 0);
  if (!equal(from1, {11, 12}) || !equal(f64, {0.5})) return fail("broadcast: " + from1.to_string() + f64.to_string());
  // float64: HCCL reduces none, so it travels through the host and MPI, and comes back to the device.
  Tensor d64 = dev_tensor({0.1 * (r + 1), 1e-300}, DType::Float64);
  dist::allreduce({d64});
  if (d64.device() != dev || !equal(d64, {0.1 + 0.2, 2e-300})) return fail("float64 allreduce: " + d64.to_string());
  Tensor host = tensor({a}, {1});
  dist::allreduce({host});
  if (!host.device().is_cpu() || !equal(host, {3})) return fail("host allreduce: " + host.to_string());
  for (const Tensor& t : {sum, mx, mn, mean, ints, from1}) {
    if (t.device() != dev) return fail("a result left the device");
  }
  if (!fallback_counts().empty()) return fail("CPU fallbacks: " + fallbacks());
  if (r == 0) std::printf("collectives on one fake NPU per rank: as expected, no CPU fallback\n");
  return 0;
}

int mismatch() {
  Tensor t = tensor({1, 2, 3, 4, 5}, {5}).to(get_context().device);
  if (dist::rank() == 1) t = tensor({1, 2, 3, 4}, {4}).to(get_context().device);
  try {
    dist::allreduce({t});
  } catch (const ValueError& e) {
    std::fprintf(stderr, "rank %d: %s\n", dist::rank(), e.what());
    return 0;
  }
  return fail("no error for different counts");
}

constexpr int64_t kImages = 19 * 30 + 2;  // 20 steps of global batch 30, the last of 2

models::TrainOptions options() {
  models::TrainOptions o;
  o.model = "mlp";
  o.batch_size = 30;
  o.optimizer = "sgd";
  o.lr = 0.05;
  o.schedule = "constant";
  o.seed = 11;
  return o;
}

int equivalence() {
  const data::Dataset train = dist_test::synthetic(kImages);
  const models::Normalization norm = models::compute_normalization(train);
  // Every rank starts from different weights: the broadcast from rank 0 has to make them equal.
  nn::set_seed(100 + static_cast<uint64_t>(dist::rank()));
  auto dp_model = models::make_model("mlp");
  models::TrainOptions o = options();
  o.data_parallel = true;
  o.bucket_mb = 0.05;  // several buckets
  reset_fallback_counts();
  models::Trainer dp(dp_model, o, norm);
  const auto r = dp.train_epoch(train, 1);
  const std::string dp_fallbacks = fallbacks();
  for (const auto& p : dp_model->trainable_params()) {
    if (p.device() != get_context().device) return fail("parameter '" + p.name() + "' is on " + p.device().str());
  }
  if (!dp_fallbacks.empty()) return fail("CPU fallbacks during data parallel training: " + dp_fallbacks);
  if (dist::rank() != 0) return 0;

  // The reference: one process on this NPU, batch 30, from rank 0's initial weights.
  nn::set_seed(100);
  auto ref_model = models::make_model("mlp");
  std::vector<std::vector<float>> initial;
  for (const auto& p : ref_model->trainable_params()) initial.push_back(p.to_vector<float>());
  models::Trainer ref(ref_model, options(), norm);
  const auto r1 = ref.train_epoch(train, 1);
  const auto pd = dp_model->trainable_params(), pr = ref_model->trainable_params();
  double worst = 0.0, moved = 1e30;
  for (size_t i = 0; i < pr.size(); ++i) {
    const auto x = pd[i].to_vector<float>(), y = pr[i].to_vector<float>();
    double diff = 0.0, scale = 0.0, change = 0.0;
    for (size_t k = 0; k < y.size(); ++k) {
      diff = std::max(diff, std::fabs(static_cast<double>(x[k]) - y[k]));
      scale = std::max(scale, std::fabs(static_cast<double>(y[k])));
      change = std::max(change, std::fabs(static_cast<double>(y[k]) - initial[i][k]));
    }
    worst = std::max(worst, diff / scale);
    moved = std::min(moved, change / scale);
  }
  std::printf("HCCL equivalence mlp sgd on %s: %d ranks, 20 steps of global batch 30: max relative difference %.3g "
              "(smallest relative change %.3g); loss %.6f vs %.6f; no CPU fallback\n",
              get_context().device.str().c_str(), dist::size(), worst, moved, r.train_loss, r1.train_loss);
  if (!(worst <= 1e-5)) return fail("the parameters differ from the one-process run by " + std::to_string(worst));
  if (!(moved > 1e-3)) return fail("some parameter barely moved in 20 steps: the comparison proves nothing");
  if (std::fabs(r.train_loss - r1.train_loss) > 1e-5 * std::fabs(r1.train_loss)) {
    return fail("the reduced training loss differs from the one-process loss");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  cpu::set_num_threads(1);
  // As `bprop train --device ascend --data-parallel`: an NPU context, then Auto picks HCCL under mpirun.
  set_context({.device = ascend::device(0)});
  dist::init();
  int rc = 2;
  try {
    if (mode == "collectives") rc = collectives();
    else if (mode == "mismatch") rc = mismatch();
    else if (mode == "equivalence") rc = equivalence();
    else std::fprintf(stderr, "usage: hccl_check collectives | mismatch | equivalence\n");
  } catch (const Error& e) {
    dist::abort(1, e.what());
  }
  if (rc != 0 && dist::size() > 1) dist::abort(rc, "check failed");
  dist::finalize();
  return rc;
}
