// bprop train --model gpt and bprop generate: the character-level GPT on a text corpus (models/gpt_trainer.h).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "bprop/context.h"
#include "bprop/device.h"
#include "bprop/dist.h"
#include "bprop/nn/checkpoint.h"
#include "bprop/nn/init.h"
#include "command_line.h"
#include "commands.h"
#include "train_setup.h"
#include "kernels/cpu/parallel.h"
#include "models/gpt_trainer.h"
#include "models/models.h"
#include "models/trainer.h"

namespace bprop::cli {
namespace {

// The command line of `bprop train --model gpt`.
void declare_train_options(CommandLine& cl) {
  cl.option("--model", "gpt", "gpt (bprop train --help: the classifiers)")
      .option("--data", "text:FILE", std::string("the training text; default text:") + data::kDefaultTextCorpus +
                                         " (scripts/make-text-corpus.mjs builds it from the Debian package fortunes)")
      .option("--val-data", "FILE", "the validation text; default val.txt beside a train.txt, else the file's last tenth")
      .option("--context", "N", "characters per window (the model's context); default 128")
      .option("--layers", "N", "transformer blocks; default 4")
      .option("--heads", "N", "attention heads; default 4")
      .option("--width", "N", "the model's width, a multiple of --heads; default 128")
      .option("--dropout", "P", "in [0, 1); default 0")
      .flag("--untied", "a separate output projection (lm_head) instead of the token embedding's transpose")
      .option("--steps", "N", "optimizer steps; default 2000")
      .option("--batch-size", "B", "sequences per step; default 16")
      .option("--grad-accum", "N", "micro-batches per step (batch-size / grad-accum sequences each); default 1")
      .option("--lr", "LR", "peak learning rate; default 0.001")
      .option("--min-lr", "LR", "the rate the cosine ends at; default lr / 10")
      .option("--warmup", "N", "linear warmup steps; default 100")
      .option("--weight-decay", "W", "AdamW's, not on biases and norms; default 0.1")
      .option("--clip", "C", "global gradient-norm clipping, 0 for none; default 1")
      .option("--eval-interval", "N", "steps between validations; default 250")
      .option("--eval-batches", "N", "batches per validation; default 20")
      .option("--seed", "S", "seeds the initial weights and the batches; default 0")
      .option("--out", "FILE", "the checkpoint (weights, optimizer state, step, vocabulary); default gpt.safetensors")
      .option("--stop-at", "N", "stop after step N and save (the schedule still spans --steps): a run to resume "
                                "later; 0 saves the initial weights untrained")
      .option("--resume", "FILE", "go on from a checkpoint of this command (the model, vocabulary and training "
                                  "options are the checkpoint's unless given again): 100 steps + resume + 100 steps "
                                  "= 200 steps, bit for bit")
      .option("--threads", "N", "CPU threads of the kernels; default all cores")
      .flag("--jit", "each step (micro-batches, clipping, update) as one traced graph")
      .flag("--data-parallel", "every rank of an MPI job (mpirun -np 2 bprop train --model gpt --data-parallel) "
                               "takes its share of each micro-batch; gradients are summed over the ranks; rank 0 "
                               "prints and saves")
      .option("--amp", choices_usage(models::amp_level_names()),
              "mixed precision (docs/mixed-precision.md): the forward under autocast at this level in --amp-dtype "
              "(float16 scales the loss dynamically and skips overflowing steps); weights and optimizer state stay "
              "float32. Default O0")
      .option("--amp-dtype", choices_usage(models::amp_dtype_names()), "default bfloat16")
      .option("--sample-tokens", "N", "characters generated at the end (temperature 0.8, top-k 20); default 200, "
                                      "0 for none")
      .device_option()
      .footer("Random windows of --context characters, AdamW (betas 0.9, 0.99), linear warmup then cosine decay per\n"
              "step (docs/transformers.md). Progress (step, loss, tokens/s, ETA) goes to stderr; validations and\n"
              "samples to stdout. Exit status: 0 done, 2 bad arguments or data, 1 training failed.");
}

// The command line of `bprop generate`.
void declare_generate_options(CommandLine& cl) {
  cl.option("--checkpoint", "FILE", "a checkpoint of bprop train --model gpt (required)")
      .option("--prompt", "TEXT", "default a newline (every character must be in the checkpoint's vocabulary)")
      .option("--tokens", "N", "characters to generate; default 500")
      .option("--temperature", "T", "logits / T before sampling, 0 for the most likely character; default 0.8")
      .option("--top-k", "K", "sample among the K most likely characters, 0 for all; default 20")
      .option("--seed", "S", "default 0: the same text for the same seed")
      .device_option()
      .footer("Exit status: 0 done, 2 bad arguments or a checkpoint that is not a GPT's.");
}

std::string duration(double seconds) {
  const auto s = static_cast<int64_t>(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60), (long long)(s % 60));
  else std::snprintf(buf, sizeof buf, "%lld:%02lld", (long long)(s / 60), (long long)(s % 60));
  return buf;
}

std::string scientific(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}

// The \r-updated line of the run on stderr: at most 10 times a second on a terminal, every 10 seconds otherwise.
class StepBar {
 public:
  explicit StepBar(int64_t first_step) : tty_(isatty(STDERR_FILENO) != 0), first_(first_step) {}

  void update(const models::GptStepReport& r, int64_t steps, int64_t tokens_per_step) {
    const auto now = std::chrono::steady_clock::now();
    const bool last = r.step == steps;
    if (!last && r.step > first_ + 1 && std::chrono::duration<double>(now - last_).count() < (tty_ ? 0.1 : 10.0)) return;
    last_ = now;
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(kWidth * r.step / std::max<int64_t>(1, steps));
    std::string bar(static_cast<size_t>(filled), '=');
    if (filled < kWidth) bar += '>';
    bar.resize(kWidth, ' ');
    const double done = static_cast<double>(r.step - first_);
    const double rate = done / std::max(r.seconds, 1e-9);  // steps per second
    std::string line = "step " + std::to_string(r.step) + "/" + std::to_string(steps) + " [" + bar + "]  loss " +
                       fixed(r.loss, 4) + "  " + fixed(rate * static_cast<double>(tokens_per_step), 0) + " tok/s  lr " +
                       scientific(r.lr) + "  ETA " + duration(static_cast<double>(steps - r.step) / std::max(rate, 1e-9));
    const size_t width = line.size();
    if (width < width_) line += std::string(width_ - width, ' ');
    width_ = width;
    std::cerr << (tty_ ? "\r" : "") << line << (tty_ && !last ? "" : "\n") << std::flush;
  }
  /// Ends the current line before other output.
  void interrupt() {
    if (tty_ && width_) std::cerr << "\n";
    width_ = 0;
  }

 private:
  bool tty_;
  int64_t first_;
  size_t width_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

std::string quoted_sample(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '\n' ? std::string("\n  ") : std::string(1, c);
  return "  " + out;
}

}  // namespace

int train_gpt_command(const std::vector<std::string>& given) {
  CommandLine cl("train --model gpt", "Trains a character-level GPT on a text file, with a validation loss every "
                                      "--eval-interval steps and a checkpoint that resumes exactly.");
  declare_train_options(cl);
  models::GptTrainOptions opts;
  bool untied = false;
  std::string data_path, val_path, out_path, resume_path;
  int64_t threads = 0, sample_tokens = 200, stop_at = 0;
  Checkpoint resumed;
  try {
    if (!cl.parse(given)) return 0;
    opts.data_parallel = cl.has("--data-parallel");
    opts.jit = cl.has("--jit");
    untied = cl.has("--untied");
    Flags f = cl.given();
    resume_path = string_flag(f, "--resume", "");
    if (!resume_path.empty()) {
      // The checkpoint's model and training options are the defaults of a resumed run.
      resumed = load_checkpoint(resume_path);
      const nn::GPTConfig c = models::gpt_config_from_metadata(resumed.metadata, resume_path);
      for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
               {"--context", std::to_string(c.context)}, {"--layers", std::to_string(c.layers)},
               {"--heads", std::to_string(c.heads)}, {"--width", std::to_string(c.width)},
               {"--dropout", resumed.metadata.at("gpt_dropout")}}) {
        if (f.count(flag) && f.at(flag) != value) {
          throw std::invalid_argument("option '" + flag + "' differs from the resumed checkpoint's " + value);
        }
        f[flag] = value;
      }
      untied = !c.tie_weights;
      for (const char* key : {"steps", "batch_size", "grad_accum", "lr", "min_lr", "warmup", "weight_decay", "clip",
                              "eval_interval", "eval_batches", "seed", "amp", "amp_dtype"}) {
        std::string flag = std::string("--") + key;
        std::replace(flag.begin() + 2, flag.end(), '_', '-');
        const auto it = resumed.metadata.find(key);
        if (!f.count(flag) && it != resumed.metadata.end()) f[flag] = it->second;
      }
    }
    choice_flag(f, "--model", "gpt", {"gpt"});
    const std::string data = string_flag(f, "--data", std::string("text:") + data::kDefaultTextCorpus);
    if (data.rfind("text:", 0) != 0 || data.size() == 5) {
      throw std::invalid_argument("option '--data' must be text:FILE for the gpt model, got '" + data + "'");
    }
    data_path = data.substr(5);
    val_path = string_flag(f, "--val-data", "");
    opts.model.context = int_flag(f, "--context", 128, 1);
    opts.model.layers = int_flag(f, "--layers", 4, 1);
    opts.model.heads = int_flag(f, "--heads", 4, 1);
    opts.model.width = int_flag(f, "--width", 128, 1);
    if (opts.model.width % opts.model.heads != 0) {
      throw std::invalid_argument("option '--width' (" + std::to_string(opts.model.width) +
                                  ") must be a multiple of --heads (" + std::to_string(opts.model.heads) + ")");
    }
    opts.model.dropout = real_flag(f, "--dropout", 0.0);
    if (opts.model.dropout < 0.0 || opts.model.dropout >= 1.0) throw std::invalid_argument("option '--dropout' must be in [0, 1)");
    opts.model.tie_weights = !untied;
    opts.steps = int_flag(f, "--steps", 2000, 1);
    opts.batch_size = int_flag(f, "--batch-size", 16, 1);
    opts.grad_accum = int_flag(f, "--grad-accum", 1, 1);
    opts.lr = real_flag(f, "--lr", 1e-3);
    if (!(opts.lr > 0.0)) throw std::invalid_argument("option '--lr' must be positive");
    opts.min_lr = real_flag(f, "--min-lr", opts.lr / 10.0);
    if (opts.min_lr < 0.0) throw std::invalid_argument("option '--min-lr' must be >= 0");
    opts.warmup = int_flag(f, "--warmup", 100, 0);
    opts.weight_decay = real_flag(f, "--weight-decay", 0.1);
    opts.clip = real_flag(f, "--clip", 1.0);
    if (opts.weight_decay < 0.0 || opts.clip < 0.0) throw std::invalid_argument("options '--weight-decay' and '--clip' must be >= 0");
    opts.eval_interval = int_flag(f, "--eval-interval", 250, 1);
    opts.eval_batches = int_flag(f, "--eval-batches", 20, 1);
    opts.seed = static_cast<uint64_t>(int_flag(f, "--seed", 0, 0));
    out_path = string_flag(f, "--out", "gpt.safetensors");
    threads = int_flag(f, "--threads", 0, 1);
    sample_tokens = int_flag(f, "--sample-tokens", 200, 0);
    opts.amp = choice_flag(f, "--amp", "O0", models::amp_level_names());
    opts.amp_dtype = choice_flag(f, "--amp-dtype", "bfloat16", models::amp_dtype_names());
    if (cl.has("--amp-dtype") && opts.amp == "O0") throw std::invalid_argument("option '--amp-dtype' needs --amp");
    stop_at = int_flag(f, "--stop-at", opts.steps, 0);
    if (stop_at > opts.steps) throw std::invalid_argument("option '--stop-at' must be at most --steps");
  } catch (const std::invalid_argument& e) {
    std::cerr << "bprop train: " << e.what() << " (see bprop train --model gpt --help)\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "bprop train: " << e.what() << "\n";
    return 2;
  }
  if (!checkpoint_directory_exists(out_path)) return 2;
  if (opts.data_parallel) {
    if (!start_data_parallel(&threads)) return 2;
  }
  const bool root = !opts.data_parallel || dist::rank() == 0;
  const bool multi = opts.data_parallel && dist::size() > 1;
  auto fail = [&](int code, const std::string& msg) -> int {
    if (multi) dist::abort(code, "bprop train: " + msg);
    std::cerr << "bprop train: " << msg << "\n";
    if (opts.data_parallel) dist::finalize();
    return code;
  };
  if (threads > 0) cpu::set_num_threads(static_cast<int>(threads));

  data::TextCorpus corpus;
  std::optional<data::CharVocabulary> vocab;
  try {
    if (!resume_path.empty()) vocab = models::gpt_vocabulary_from_metadata(resumed.metadata, resume_path);
    corpus = data::load_text_corpus(data_path, val_path, vocab ? &*vocab : nullptr);
  } catch (const data::DataError& e) {
    return fail(2, e.what());
  } catch (const Error& e) {
    return fail(2, e.what());
  }
  opts.model.vocab_size = corpus.vocab.size();
  nn::set_seed(opts.seed);
  std::ostream& out = root ? std::cout : null_stream();
  std::shared_ptr<nn::GPT> model;
  std::unique_ptr<models::GptTrainer> trainer;
  try {
    model = std::make_shared<nn::GPT>(opts.model);
    trainer = std::make_unique<models::GptTrainer>(model, opts);
    if (!resume_path.empty()) trainer->resume(resumed, resume_path);
  } catch (const Error& e) {
    return fail(2, e.what());
  }
  const auto& c = opts.model;
  out << "data: " << corpus.train.size() << " training characters (" << corpus.train_path << "), " << corpus.val.size()
      << " validation (" << corpus.val_path << "), vocabulary " << corpus.vocab.size() << "\n"
      << "model: gpt, " << c.layers << " layers, " << c.heads << " heads, width " << c.width << ", context " << c.context
      << (c.tie_weights ? ", tied embeddings" : ", untied") << ", " << models::parameter_count(*model) << " parameters\n"
      << "training: " << opts.steps << " steps" << (trainer->step() ? " from step " + std::to_string(trainer->step()) : "")
      << ", batch " << opts.batch_size << (opts.grad_accum > 1 ? " in " + std::to_string(opts.grad_accum) + " micro-batches" : "")
      << ", AdamW lr " << opts.lr << " -> " << opts.min_lr << " (warmup " << opts.warmup << "), weight decay "
      << opts.weight_decay << ", clip " << opts.clip << ", seed " << opts.seed << ", " << cpu::num_threads()
      << " threads" << (default_device().is_cpu() ? "" : ", on " + default_device().str())
      << (multi ? " per rank, " + std::to_string(dist::size()) + " ranks" : "") << (opts.jit ? ", jit" : "")
      << (opts.amp == "O0" ? "" : ", mixed precision " + opts.amp + " in " + opts.amp_dtype) << std::endl;

  StepBar bar(trainer->step());
  std::optional<models::GptEval> last_eval;
  try {
    const auto on_step = [&](const models::GptStepReport& r) {
      if (root) bar.update(r, opts.steps, opts.batch_size * c.context);
    };
    const auto on_eval = [&](int64_t step, const models::GptEval& e) {
      last_eval = e;
      if (root) bar.interrupt();
      out << "step " << step << "/" << opts.steps << "  val loss " << fixed(e.loss, 4) << "  perplexity "
          << fixed(e.perplexity, 3) << std::endl;
    };
    if (stop_at > trainer->step()) trainer->fit(corpus, stop_at, on_step, on_eval);  // --stop-at 0: untrained
    if (root) {
      CheckpointMetadata extra = {{"train_data", corpus.train_path}};
      if (last_eval) extra["val_loss"] = fixed(last_eval->loss, 6);
      trainer->save(out_path, corpus.vocab, extra);
    }
  } catch (const Error& e) {
    if (root) std::cerr << "\n";
    return fail(1, e.what());
  }
  out << "saved " << out_path << " (step " << trainer->step()
      << (last_eval ? ", val loss " + fixed(last_eval->loss, 4) : std::string(", untrained")) << ")" << std::endl;
  if (root && sample_tokens > 0) {
    const std::vector<int32_t> ids = model->generate(corpus.vocab.encode("\n"), {.tokens = sample_tokens,
                                                                                 .temperature = 0.8,
                                                                                 .top_k = 20,
                                                                                 .seed = opts.seed});
    out << "sample:\n" << quoted_sample(corpus.vocab.decode(ids)) << std::endl;
  }
  if (opts.data_parallel) dist::finalize();
  return 0;
}

int generate_command(const std::vector<std::string>& given) {
  CommandLine cl("generate", "Continues the prompt with a GPT checkpoint of bprop train --model gpt.");
  declare_generate_options(cl);
  std::string path, prompt;
  nn::GenerateOptions g;
  try {
    if (!cl.parse(given)) return 0;
    const Flags& f = cl.given();
    path = string_flag(f, "--checkpoint", "");
    if (path.empty()) throw std::invalid_argument("option '--checkpoint FILE' is required");
    prompt = string_flag(f, "--prompt", "\n");
    if (prompt.empty()) throw std::invalid_argument("option '--prompt' needs at least one character");
    g.tokens = int_flag(f, "--tokens", 500, 0);
    g.temperature = real_flag(f, "--temperature", 0.8);
    if (g.temperature < 0.0) throw std::invalid_argument("option '--temperature' must be >= 0");
    g.top_k = int_flag(f, "--top-k", 20, 0);
    g.seed = static_cast<uint64_t>(int_flag(f, "--seed", 0, 0));
  } catch (const std::invalid_argument& e) {
    std::cerr << "bprop generate: " << e.what() << " (see bprop generate --help)\n";
    return 2;
  }
  try {
    const Checkpoint ck = load_checkpoint(path);
    const nn::GPTConfig config = models::gpt_config_from_metadata(ck.metadata, path);
    const data::CharVocabulary vocab = models::gpt_vocabulary_from_metadata(ck.metadata, path);
    nn::GPT model(config);
    load_param_into_net(model, ck, true, path);  // (its optimizer state is left out)
    const std::vector<int32_t> ids = model.generate(vocab.encode(prompt, "--prompt"), g);
    std::cout << prompt << vocab.decode(ids) << std::endl;
  } catch (const data::DataError& e) {
    std::cerr << "bprop generate: " << e.what() << "\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "bprop generate: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace bprop::cli
