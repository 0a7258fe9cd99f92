// bprop's GPT training against PyTorch's (tests/data/transformer/gpt_reference_curve.json, written by
// tools/torch_gpt_reference.py from bprop's initial weights and batches): 300 AdamW steps in float32, the validation
// losses within 1% at every evaluation, and the training losses along the way.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bprop/bprop.h"
#include "data/text.h"
#include "models/gpt_trainer.h"

namespace {

using namespace bprop;

TEST(GptReference, ThreeHundredStepsFollowPyTorchsCurve) {
  std::ifstream in(std::string(BPROP_SOURCE_DIR) + "/tests/data/transformer/gpt_reference_curve.json");
  ASSERT_TRUE(in) << "no reference curve";
  const nlohmann::json ref = nlohmann::json::parse(in);
  const auto& c = ref.at("config");
  const data::TextCorpus corpus =
      data::load_text_corpus(std::string(BPROP_SOURCE_DIR) + "/" + c.at("text").get<std::string>());

  models::GptTrainOptions o;
  o.model = {.vocab_size = corpus.vocab.size(),
             .context = c.at("context"),
             .layers = c.at("layers"),
             .heads = c.at("heads"),
             .width = c.at("width")};
  o.steps = c.at("steps");
  o.batch_size = c.at("batch_size");
  o.grad_accum = c.at("grad_accum");
  o.lr = c.at("lr");
  o.min_lr = c.at("min_lr");
  o.warmup = c.at("warmup");
  o.weight_decay = c.at("weight_decay");
  o.clip = c.at("clip");
  o.eval_interval = c.at("eval_interval");
  o.eval_batches = c.at("eval_batches");
  o.seed = c.at("seed");
  nn::set_seed(o.seed);  // as bprop train: the initial weights the reference loaded
  models::GptTrainer trainer(std::make_shared<nn::GPT>(o.model), o);

  // BPROP_GPT_REFERENCE_STEPS=N compares the first N steps of the same schedule only: the aarch64 run under
  // qemu (scripts/test-aarch64.sh) sets it, where the whole curve would take minutes.
  const char* steps_env = std::getenv("BPROP_GPT_REFERENCE_STEPS");
  const int64_t stop_at = steps_env ? std::min<int64_t>(std::atoll(steps_env), o.steps) : o.steps;
  ASSERT_GT(stop_at, 0) << "BPROP_GPT_REFERENCE_STEPS=" << steps_env;
  std::vector<double> train_ref;
  for (const auto& v : ref.at("train_loss")) {
    if (static_cast<int64_t>(train_ref.size()) < stop_at) train_ref.push_back(v);
  }
  nlohmann::json evals_ref = nlohmann::json::array();
  for (const auto& e : ref.at("evals")) {
    if (e.at("step").get<int64_t>() <= stop_at) evals_ref.push_back(e);
  }
  std::vector<double> train;
  std::vector<std::pair<int64_t, double>> evals;
  trainer.fit(
      corpus, stop_at, [&](const models::GptStepReport& r) { train.push_back(r.loss); },
      [&](int64_t step, const models::GptEval& e) { evals.emplace_back(step, e.loss); });
  ASSERT_EQ(evals.size(), evals_ref.size());
  double worst = 0.0;
  for (size_t i = 0; i < evals.size(); ++i) {
    const auto& want = evals_ref[i];
    EXPECT_EQ(evals[i].first, want.at("step").get<int64_t>());
    const double w = want.at("val_loss"), rel = std::abs(evals[i].second - w) / w;
    worst = std::max(worst, rel);
    EXPECT_LT(rel, 0.01) << "step " << evals[i].first << ": bprop " << evals[i].second << ", PyTorch " << w;
  }
  ASSERT_EQ(train.size(), train_ref.size());
  for (size_t i = 0; i < train.size(); ++i) {
    const double w = train_ref[i];
    EXPECT_LT(std::abs(train[i] - w) / w, 0.01) << "training loss of step " << i + 1;
  }
  // The curve must have gone somewhere: a uniform guess over the vocabulary is log(96) = 4.56.
  if (stop_at == o.steps) {
    EXPECT_LT(evals.back().second, 2.8);
  }
  std::printf("validation losses within %.2e (relative) of PyTorch's at every evaluation\n", worst);
}

}  // namespace
