// The text pipeline and the GPT trainer: vocabulary, corpus splits, the batch definition (which
// tools/torch_gpt_reference.py reproduces), gradient accumulation, evaluation and resuming.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bprop/bprop.h"
#include "data/text.h"
#include "models/gpt_trainer.h"
#include "nn_test_util.h"

namespace {

using namespace bprop;
using nntest::expect_error;
namespace fs = std::filesystem;

std::string write_text(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / "bprop_gpt_trainer_test";
  fs::create_directories(dir);
  const fs::path p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

std::string sample_text() {
  std::string s;
  for (int i = 0; i < 400; ++i) s += "the cat sat on the mat " + std::to_string(i % 7) + "\n";
  return s;
}

TEST(GptData, VocabularyEncodesAndDecodes) {
  const data::CharVocabulary v = data::CharVocabulary::of("hello world\n");
  EXPECT_EQ(v.chars, std::string("\n dehlorw"));
  const auto ids = v.encode("low");
  EXPECT_EQ(ids, (std::vector<int32_t>{5, 6, 8}));
  EXPECT_EQ(v.decode(ids), "low");
  expect_error<data::DataError>([&] { v.encode("hex", "prompt"); }, {"'prompt'", "'x'", "offset 2", "9 characters"});
  expect_error<ValueError>([&] { v.decode({9}); }, {"9", "9 characters"});
  expect_error<ValueError>([] { data::CharVocabulary("ba"); }, {"increasing"});
}

TEST(GptData, CorpusSplitsBesideOrByTheLastTenth) {
  const std::string text = sample_text();
  const std::string one = write_text("one.txt", text);
  const data::TextCorpus c = data::load_text_corpus(one);
  EXPECT_EQ(c.train.size() + c.val.size(), text.size());
  EXPECT_NEAR(static_cast<double>(c.val.size()) / text.size(), 0.1, 0.01);
  // The cut is at a line start.
  EXPECT_EQ(c.vocab.decode({c.train.back()}), "\n");
  EXPECT_NE(c.val_path.find("last tenth"), std::string::npos);

  const std::string train = write_text("train.txt", text);
  write_text("val.txt", "the mat\n");
  const data::TextCorpus d = data::load_text_corpus(train);
  EXPECT_EQ(d.train.size(), text.size());
  EXPECT_EQ(d.vocab.decode(d.val), "the mat\n");
  expect_error<data::DataError>([] { data::load_text_corpus("/nonexistent/train.txt"); }, {"/nonexistent/train.txt"});
  const data::CharVocabulary small("\n aht");
  expect_error<data::DataError>([&] { data::load_text_corpus(train, "", &small); }, {"'e'", "offset 2", "not in the vocabulary"});
}

TEST(GptData, BatchesAreShiftedWindowsOfASeededStream) {
  std::vector<int32_t> tokens(1000);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>(i % 97);
  // The values tools/torch_gpt_reference.py checks its own implementation against.
  EXPECT_EQ(models::batch_seed(0, 0), 0xe220a8397b1dcdafull);
  EXPECT_EQ(models::batch_seed(7, 3), models::batch_seed(7, 3));
  const auto [x, y] = models::text_batch(tokens, 16, 42, 0, 4, 4);
  EXPECT_EQ(x.shape(), (Shape{4, 16}));
  const auto xv = x.to_vector<int32_t>(), yv = y.to_vector<int32_t>();
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_EQ(yv[i], (xv[i] + 1) % 97) << i;
  // A rank's slice is that part of the whole batch.
  const auto [x2, y2] = models::text_batch(tokens, 16, 42, 2, 2, 4);
  const auto x2v = x2.to_vector<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(xv.begin() + 32, xv.end()), x2v);
  expect_error<ValueError>([&] { models::text_batch(std::vector<int32_t>(16, 0), 16, 1, 0, 1, 1); }, {"16 tokens", "context 16"});
}

models::GptTrainOptions small_run() {
  models::GptTrainOptions o;
  o.model = {.vocab_size = 12, .context = 8, .layers = 1, .heads = 2, .width = 8};
  o.steps = 6;
  o.batch_size = 4;
  o.grad_accum = 2;
  o.warmup = 2;
  o.eval_batches = 2;
  o.clip = 0.0;
  o.seed = 3;
  return o;
}

TEST(GptTrainer, AccumulationAveragesTheMicroBatchGradients) {
  const models::GptTrainOptions o = small_run();
  const data::TextCorpus corpus = data::load_text_corpus(write_text("acc.txt", sample_text()));
  nn::set_seed(1);
  auto model = std::make_shared<nn::GPT>(nn::GPTConfig{.vocab_size = corpus.vocab.size(), .context = 8, .layers = 1,
                                                       .heads = 2, .width = 8});
  nn::set_seed(1);
  auto twin = std::make_shared<nn::GPT>(model->config());
  models::GptTrainOptions opts = o;
  opts.model = model->config();
  models::GptTrainer trainer(model, opts);
  const models::GptStepReport r = trainer.train_step(corpus.train);

  // By hand: the mean of the two micro-batches' gradients, AdamW at the warmup's first rate.
  optim::AdamW opt(twin->trainable_params(), opts.lr, {opts.beta1, opts.beta2}, 1e-8, opts.weight_decay);
  opt.exclude_from_weight_decay(optim::Optimizer::is_bias_or_norm);
  opt.set_learning_rate(opts.lr / 3.0);  // (t + 1) / (warmup + 1) at t = 0
  std::vector<Tensor> sum;
  double loss = 0.0;
  for (uint64_t m = 0; m < 2; ++m) {
    const auto [x, y] = models::text_batch(corpus.train, 8, models::batch_seed(3, m), 0, 2, 2);
    const Value v = value_and_grad([&](const std::vector<Tensor>& in) -> Value { return twin->loss(in[0], in[1]); },
                                   nullptr, twin->trainable_params())({x, y});
    loss += v[0].tensor().item();
    const auto g = v[1].flatten();
    if (sum.empty()) {
      sum = g;
    } else {
      for (size_t i = 0; i < g.size(); ++i) sum[i] = sum[i] + g[i];
    }
  }
  for (Tensor& g : sum) g = g * 0.5;
  opt.step(sum);
  EXPECT_NEAR(r.loss, loss / 2, 1e-6);
  const auto a = model->parameters_and_names(), b = twin->parameters_and_names();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].second.to_vector<float>(), b[i].second.to_vector<float>()) << a[i].first;
}

TEST(GptTrainer, ResumesBitForBitAndEvaluatesTheSameBatches) {
  const data::TextCorpus corpus = data::load_text_corpus(write_text("resume.txt", sample_text()));
  models::GptTrainOptions opts = small_run();
  opts.model.vocab_size = corpus.vocab.size();
  opts.clip = 0.5;
  auto make = [&] {
    nn::set_seed(2);
    return std::make_shared<nn::GPT>(opts.model);
  };
  auto whole_model = make();
  models::GptTrainer whole(whole_model, opts);
  std::vector<double> evals;
  whole.fit(corpus, 0, {}, [&](int64_t, const models::GptEval& e) { evals.push_back(e.loss); });
  ASSERT_EQ(evals.size(), 1u);  // eval_interval 250 > steps: only after the last
  EXPECT_EQ(whole.evaluate(corpus.val).loss, evals[0]);
  EXPECT_NEAR(whole.evaluate(corpus.val).perplexity, std::exp(evals[0]), 1e-9);

  auto first_model = make();
  models::GptTrainer first(first_model, opts);
  first.fit(corpus, 3);
  EXPECT_EQ(first.step(), 3);
  const std::string path = write_text("resume.safetensors", "");
  first.save(path, corpus.vocab);
  const Checkpoint ck = load_checkpoint(path);
  EXPECT_EQ(models::gpt_config_from_metadata(ck.metadata, path).width, 8);
  EXPECT_EQ(models::gpt_vocabulary_from_metadata(ck.metadata, path).chars, corpus.vocab.chars);

  auto resumed_model = make();
  models::GptTrainer resumed(resumed_model, opts);
  resumed.resume(ck, path);
  resumed.fit(corpus);
  EXPECT_EQ(resumed.step(), 6);
  const auto a = whole_model->parameters_and_names(), b = resumed_model->parameters_and_names();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].second.to_vector<float>(), b[i].second.to_vector<float>()) << a[i].first;
  EXPECT_EQ(resumed.optimizer().learning_rate(), whole.optimizer().learning_rate());

  opts.steps = 2;
  opts.warmup = 1;
  models::GptTrainer shorter(make(), opts);
  expect_error<ValueError>([&] { shorter.resume(ck, path); }, {"step 3", "2 steps"});
  expect_error<ValueError>([&] { models::gpt_config_from_metadata({{"format", "bprop-golden"}}, "x"); },
                           {"'x'", "not a GPT checkpoint"});
}

TEST(GptTrainer, OptionsAreChecked) {
  models::GptTrainOptions o = small_run();
  o.grad_accum = 3;
  expect_error<ValueError>([&] { models::GptTrainer(std::make_shared<nn::GPT>(o.model), o); },
                           {"batch_size 4", "grad_accum 3"});
}

}  // namespace

namespace {

TEST(GptTrainer, MixedPrecisionTrainsAndResumesWithTheLossScale) {
  const data::TextCorpus corpus = data::load_text_corpus(write_text("amp.txt", sample_text()));
  models::GptTrainOptions opts = small_run();
  opts.model.vocab_size = corpus.vocab.size();
  opts.clip = 1.0;
  auto run = [&](const std::string& amp, const std::string& dtype, int64_t stop, const Checkpoint* from) {
    models::GptTrainOptions o = opts;
    o.amp = amp;
    o.amp_dtype = dtype;
    nn::set_seed(5);
    auto t = std::make_unique<models::GptTrainer>(std::make_shared<nn::GPT>(o.model), o);
    if (from) t->resume(*from, "amp.safetensors");
    t->fit(corpus, stop);
    return t;
  };
  const auto f32 = run("O0", "bfloat16", 0, nullptr);
  EXPECT_FALSE(f32->loss_scaler());
  for (const std::string dtype : {"bfloat16", "float16"}) {
    SCOPED_TRACE(dtype);
    const auto whole = run("O2", dtype, 0, nullptr);
    EXPECT_EQ(static_cast<bool>(whole->loss_scaler()), dtype == "float16");
    const double a = whole->evaluate(corpus.val).loss, b = f32->evaluate(corpus.val).loss;
    EXPECT_NEAR(a, b, 0.02 * b);  // half forward, float32 weights: close to the float32 run
    const auto first = run("O2", dtype, 3, nullptr);
    const std::string path = write_text("amp-" + dtype + ".safetensors", "");
    first->save(path, corpus.vocab);
    const Checkpoint ck = load_checkpoint(path);
    EXPECT_EQ(ck.metadata.at("amp"), "O2");
    if (dtype == "float16") {
      EXPECT_TRUE(ck.metadata.count("loss_scale"));
    }
    const auto resumed = run("O2", dtype, 0, &ck);
    const auto x = whole->model().parameters_and_names(), y = resumed->model().parameters_and_names();
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x[i].second.to_vector<float>(), y[i].second.to_vector<float>()) << x[i].first;
    if (dtype == "float16") {
      EXPECT_EQ(resumed->loss_scaler()->state(), whole->loss_scaler()->state());
    }
  }
  models::GptTrainOptions bad = opts;
  bad.amp_dtype = "float32";
  expect_error<ValueError>([&] { models::GptTrainer(std::make_shared<nn::GPT>(bad.model), bad); }, {"amp_dtype", "float32"});
}

}  // namespace
