// bprop::dist in one process (no launcher): the collectives are the identity, DataParallel takes the same
// steps as the one-process trainer, and a build without MPI (or HCCL without a launcher) says what it needs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "bprop/bprop.h"
#include "bprop/dist.h"
#include "bprop/dist/data_parallel.h"
#include "bprop/nn/init.h"
#include "bprop/nn/optim.h"
#include "models/models.h"
#include "models/trainer.h"

using namespace bprop;

namespace {

// A synthetic MNIST-like set: deterministic pixels and labels.
data::Dataset synthetic(int64_t count) {
  data::Dataset ds;
  ds.count = count;
  ds.rows = ds.cols = 28;
  ds.images.resize(static_cast<size_t>(count * 28 * 28));
  ds.labels.resize(static_cast<size_t>(count));
  uint64_t s = 12345;
  for (auto& p : ds.images) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    p = static_cast<uint8_t>(s >> 56);
  }
  for (int64_t i = 0; i < count; ++i) ds.labels[static_cast<size_t>(i)] = static_cast<uint8_t>((i * 7) % 10);
  return ds;
}

}  // namespace

TEST(DistLocal, OneProcessWithoutLauncher) {
  if (!dist::launcher_variable().empty()) GTEST_SKIP() << "started by an MPI launcher";
  dist::init();
  EXPECT_EQ(dist::backend_name(), "local");
  EXPECT_EQ(dist::rank(), 0);
  EXPECT_EQ(dist::size(), 1);
  EXPECT_NE(dist::describe().find("one process"), std::string::npos);
  Tensor a = tensor({1.0, 2.0, 3.0}, {3});
  dist::allreduce({a}, dist::ReduceOp::Mean);
  dist::broadcast({a}, 0);
  dist::barrier();
  EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{1.0, 2.0, 3.0}));
  EXPECT_THROW(dist::broadcast({a}, 1), ValueError);
  EXPECT_THROW(dist::allreduce({tensor_i32({1}, {1})}, dist::ReduceOp::Mean), DTypeError);
}

TEST(DistLocal, DataParallelMatchesTheOneProcessTrainer) {
  if (!dist::launcher_variable().empty()) GTEST_SKIP() << "started by an MPI launcher";
  dist::init();
  const data::Dataset train = synthetic(150);
  const models::Normalization norm = models::compute_normalization(train);
  models::TrainOptions opts;
  opts.model = "mlp";
  opts.batch_size = 32;
  opts.optimizer = "sgd";
  opts.lr = 0.05;
  opts.schedule = "constant";
  nn::set_seed(3);
  auto plain_model = models::make_model("mlp");
  nn::set_seed(3);
  auto dp_model = models::make_model("mlp");
  models::Trainer plain(plain_model, opts, norm);
  opts.data_parallel = true;
  opts.bucket_mb = 0.1;  // several buckets
  models::Trainer dp(dp_model, opts, norm);
  ASSERT_NE(dp.data_parallel(), nullptr);
  EXPECT_GT(dp.data_parallel()->bucket_count(), 1u);
  const auto r1 = plain.train_epoch(train, 1);
  const auto r2 = dp.train_epoch(train, 1);
  EXPECT_EQ(r1.train_loss, r2.train_loss);
  const auto p1 = plain_model->trainable_params(), p2 = dp_model->trainable_params();
  ASSERT_EQ(p1.size(), p2.size());
  for (size_t i = 0; i < p1.size(); ++i) {
    // One rank: weight 1, no reduction: the same arithmetic, bit for bit.
    EXPECT_EQ(p1[i].to_vector<float>(), p2[i].to_vector<float>()) << p1[i].name();
  }
  // Every bucket was started during the backward, before it returned.
  const auto& t = dp.data_parallel()->last_step();
  ASSERT_EQ(t.buckets.size(), dp.data_parallel()->bucket_count());
  for (const auto& b : t.buckets) EXPECT_LE(b.launched, t.backward_end);
}

TEST(DistLocal, MpiWithoutMpiSaysHowToGetIt) {
  if (dist::mpi_built()) GTEST_SKIP() << "this build has MPI";
  try {
    dist::init(dist::Backend::MPI);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("libopenmpi-dev"), std::string::npos) << e.what();
  }
}

TEST(DistLocal, HcclWithoutMpiOrLauncherSaysWhatItNeeds) {
  if (!dist::launcher_variable().empty()) GTEST_SKIP() << "started by an MPI launcher";
  try {
    dist::init(dist::Backend::HCCL);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    // Without MPI built: HCCL needs MPI; with it: HCCL needs mpirun's one process per NPU.
    const std::string want = dist::mpi_built() ? "started by mpirun" : "HCCL needs MPI";
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}
