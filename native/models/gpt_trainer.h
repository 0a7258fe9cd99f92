// Training the character-level GPT (bprop/nn/transformer.h) on a text corpus, nanoGPT's recipe: random windows of
// the training tokens, AdamW with no weight decay on biases and norms, linear warmup then cosine decay per step,
// gradient accumulation over micro-batches, clipping by the global norm, periodic validation loss, and
// checkpoints that resume bit for bit (weights, optimizer state and schedule; the batches are a function of the
// seed and the step, so nothing else is needed).
//
// The batches are defined so that any program can draw them: micro-batch m of step s (from 0) uses
// bprop::Random(batch_seed(seed, s * grad_accum + m)) and sample b starts at next_u64() % (tokens - context).
// tools/torch_gpt_reference.py draws the same ones in Python.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bprop/amp.h"
#include "bprop/nn/checkpoint.h"
#include "bprop/nn/optim.h"
#include "bprop/nn/transformer.h"
#include "data/text.h"

namespace bprop::models {

struct GptTrainOptions {
  nn::GPTConfig model;  // vocab_size is the corpus's
  int64_t steps = 2000;
  /// Sequences per optimizer step (over every micro-batch and rank).
  int64_t batch_size = 16;
  /// Micro-batches per step (each batch_size / grad_accum sequences; the gradients are averaged).
  int64_t grad_accum = 1;
  double lr = 1e-3;
  /// The rate the cosine decays to; negative: lr / 10.
  double min_lr = -1.0;
  int64_t warmup = 100;
  double weight_decay = 0.1;
  double beta1 = 0.9, beta2 = 0.99;
  /// Global-norm clipping (0: off).
  double clip = 1.0;
  /// Validation every eval_interval steps (and after the last), on eval_batches fixed batches of batch_size.
  int64_t eval_interval = 250;
  int64_t eval_batches = 20;
  uint64_t seed = 0;
  /// Each step (micro-batches, clipping and the update) as one jitted graph.
  bool jit = false;
  /// Over the ranks of bprop::dist: each takes its share of every batch; gradients are summed.
  bool data_parallel = false;
  /// Mixed precision (bprop/amp.h): the forward under an autocast scope of this level ("O0" off, "O1".."O3") in
  /// amp_dtype ("bfloat16" or "float16"); weights, gradients and the loss stay float32. float16 scales the loss
  /// dynamically (amp::DynamicLossScaler) and skips the steps whose gradients overflow.
  std::string amp = "O0";
  std::string amp_dtype = "bfloat16";
};

/// The seed of batch `index` (a SplitMix64 step from the run's seed).
uint64_t batch_seed(uint64_t seed, uint64_t index);

/// Windows of `context` + 1 tokens: inputs (n, context) and targets shifted by one, int32, for the samples
/// [first, first + n) of the batch drawn by Random(seed_of_batch).
std::pair<Tensor, Tensor> text_batch(const std::vector<int32_t>& tokens, int64_t context, uint64_t seed_of_batch,
                                     int64_t first, int64_t n, int64_t batch_size);

struct GptEval {
  double loss = 0.0;
  double perplexity = 0.0;
};

struct GptStepReport {
  int64_t step = 0;  // from 1
  double loss = 0.0;
  double lr = 0.0;
  double grad_norm = 0.0;  // before clipping (0 without clipping)
  bool skipped = false;    // the loss scaler skipped the update (float16 gradients overflowed)
  double loss_scale = 0.0; // with a loss scaler: the scale after the step
  double tokens_per_second = 0.0;
  double seconds = 0.0;  // since fit() started
};

class GptTrainer {
 public:
  GptTrainer(std::shared_ptr<nn::GPT> model, GptTrainOptions options);

  /// Trains from step() to `stop_at` (options.steps when 0; the schedule spans options.steps either way): on_step
  /// after each step, on_eval after each validation (every eval_interval steps, and after the last).
  void fit(const data::TextCorpus& corpus, int64_t stop_at = 0,
           const std::function<void(const GptStepReport&)>& on_step = {},
           const std::function<void(int64_t step, const GptEval&)>& on_eval = {});
  /// One optimizer step (the step count advances); returns the mean loss of its micro-batches.
  GptStepReport train_step(const std::vector<int32_t>& tokens);
  /// Mean loss (and perplexity) of the model in eval mode on options.eval_batches fixed batches of `tokens`
  /// (the same every call); over the ranks with data_parallel.
  GptEval evaluate(const std::vector<int32_t>& tokens);

  /// Steps taken.
  int64_t step() const { return step_; }
  nn::GPT& model() { return *model_; }
  optim::Optimizer& optimizer() { return *optimizer_; }
  const GptTrainOptions& options() const { return opts_; }
  /// The loss scaler (null unless float16 mixed precision).
  const std::shared_ptr<amp::LossScaler>& loss_scaler() const { return scaler_; }

  /// The model, the optimizer state ("optimizer.*") and the metadata of a resumable checkpoint.
  void save(const std::string& path, const data::CharVocabulary& vocab, const CheckpointMetadata& extra = {}) const;
  /// Restores weights, optimizer state, step and loss scale from a checkpoint save() wrote (each rank reads it).
  void resume(const Checkpoint& checkpoint, const std::string& source);

 private:
  std::shared_ptr<nn::GPT> model_;
  GptTrainOptions opts_;
  std::shared_ptr<optim::AdamW> optimizer_;
  std::unique_ptr<optim::WarmupCosineLR> schedule_;
  std::shared_ptr<amp::LossScaler> scaler_;
  Fn step_fn_;
  int64_t step_ = 0;
  int rank_ = 0, world_ = 1;
};

/// The model configuration a GPT checkpoint records ("gpt_vocab_size", "gpt_context", ...), and its vocabulary.
CheckpointMetadata gpt_metadata(const nn::GPTConfig& config, const data::CharVocabulary& vocab);
/// Rebuilds both from checkpoint metadata; ValueError naming `source` when it is not a GPT checkpoint.
nn::GPTConfig gpt_config_from_metadata(const CheckpointMetadata& meta, const std::string& source);
data::CharVocabulary gpt_vocabulary_from_metadata(const CheckpointMetadata& meta, const std::string& source);

}  // namespace bprop::models
