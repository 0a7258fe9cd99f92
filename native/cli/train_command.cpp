// bprop train: trains the mlp or cnn classifier on an MNIST-style data set (Fashion-MNIST by default), with a
// progress bar per epoch on stderr, a test evaluation after each epoch on stdout, and a checkpoint at the end.
#include <unistd.h>

#include <chrono>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <map>
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
#include "data/idx.h"
#include "kernels/cpu/parallel.h"
#include "models/models.h"
#include "models/trainer.h"

namespace bprop::cli {
namespace {

// The command line of `bprop train` for the classifiers.
void declare_options(CommandLine& cl) {
  cl.option("--model", "mlp|cnn", "mlp (784-256-128-10, ReLU) or cnn (two conv + max-pool blocks, dense head); "
                                  "default mlp. --model gpt: bprop train --model gpt --help")
      .option("--data", "DIR", std::string("the data directory; default ") + data::kDefaultDataDir +
                                   " (Debian package dataset-fashion-mnist)")
      .option("--epochs", "N", "passes over the training set, counted from the first (with --resume too); default 5")
      .option("--batch-size", "B", "images per step; default 64")
      .option("--lr", "LR", "learning rate (of the first epoch with --schedule cosine); default 0.001")
      .option("--optimizer", choices_usage(models::optimizer_names()), "default adam")
      .option("--momentum", "M", "SGD momentum, in [0, 1); default 0.9")
      .option("--schedule", choices_usage(models::schedule_names()),
              "cosine (the rate of epoch e is lr * (1 + cos(pi * (e - 1) / epochs)) / 2) or constant; default cosine")
      .option("--seed", "S", "seeds the initial weights and the per-epoch shuffle; default 0")
      .option("--out", "FILE", "the checkpoint file; default <model>.safetensors")
      .option("--limit", "N", "train on the first N training images only")
      .option("--test-limit", "N", "evaluate on the first N test images only")
      .option("--threads", "N", "CPU threads of the kernels; default all cores (with --data-parallel: the cores "
                                "divided by the ranks on this host)")
      .flag("--data-parallel", "train on every rank of an MPI job (mpirun -np 4 bprop train --data-parallel ...): "
                               "each rank takes its share of every batch of --batch-size images, gradients are "
                               "averaged over the ranks, rank 0 prints and saves (docs/distributed.md); with "
                               "--device ascend through HCCL, each rank on one NPU")
      .option("--bucket-mb", "MB", "MiB of gradients per allreduce with --data-parallel; default 25")
      .option("--resume", "FILE", "go on from a checkpoint of bprop train (weights, optimizer state, loss scale) "
                                  "from the epoch after its last; every rank reads the file")
      .flag("--jit", "graph mode: each training step (loss, gradients, update) traced once into one graph and "
                     "replayed (docs/jit.md); the same results as without it")
      .option("--amp", choices_usage(models::amp_level_names()),
              "mixed precision (docs/mixed-precision.md): O1 runs matmul and conv2d in --amp-dtype, O2 every op but "
              "norms, softmax, reductions and losses, O3 every op; weights stay float32. Default O0")
      .option("--amp-dtype", choices_usage(models::amp_dtype_names()), "default bfloat16")
      .option("--loss-scale", "auto|dynamic|none|S",
              "auto (default: dynamic for float16, none for bfloat16), dynamic (from 65536, halved on an overflow, "
              "which skips the step, doubled after 1000 good steps), none, or a fixed scale")
      .device_option()
      .footer("The data are the IDX files train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte\n"
              "and t10k-labels-idx1-ubyte, gzip-compressed (.gz) or not. Inputs are scaled to [0, 1] and standardised\n"
              "with the training set's pixel mean and std (kept in the checkpoint's metadata with the model name,\n"
              "epochs and test accuracy). Progress goes to stderr, results to stdout.\n"
              "Exit status: 0 done, 2 bad arguments or data files, 1 training failed.");
}

// The \r-updated progress line of one epoch on stderr: redrawn at most 10 times a second on a terminal,
// every 10 seconds otherwise (logs), and always on the last batch.
class ProgressBar {
 public:
  ProgressBar() : tty_(isatty(STDERR_FILENO) != 0) {}

  void update(const models::BatchProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    const double since = std::chrono::duration<double>(now - last_).count();
    const bool last = p.batch == p.batches;
    if (!last && p.batch > 1 && since < (tty_ ? 0.1 : 10.0)) return;
    last_ = now;
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(kWidth * p.batch / std::max<int64_t>(1, p.batches));
    std::string bar(static_cast<size_t>(filled), '=');
    if (filled < kWidth) bar += '>';
    bar.resize(kWidth, ' ');
    std::string line = "epoch " + std::to_string(p.epoch) + "/" + std::to_string(p.epochs) + " [" + bar + "] " +
                       std::to_string(p.batch) + "/" + std::to_string(p.batches) + "  loss " + fixed(p.loss, 4) +
                       "  acc " + percent(p.accuracy) + "  " + fixed(p.images_per_second, 0) + " img/s  " +
                       fixed(p.seconds, 1) + " s";
    const size_t width = line.size();
    if (width < width_) line += std::string(width_ - width, ' ');
    width_ = width;
    std::cerr << (tty_ ? "\r" : "") << line << (tty_ && !last ? "" : "\n") << std::flush;
  }

 private:
  bool tty_;
  size_t width_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace

int train_command(const std::vector<std::string>& given) {
  for (size_t i = 0; i < given.size(); ++i) {
    if (given[i] == "--model=gpt" || (given[i] == "--model" && i + 1 < given.size() && given[i + 1] == "gpt")) {
      return train_gpt_command(given);
    }
  }
  CommandLine cl("train", "Trains a classifier on Fashion-MNIST (or another MNIST-style data set), evaluates it on the "
                          "test set after every epoch and saves a safetensors checkpoint.");
  declare_options(cl);
  models::TrainOptions opts;
  std::string data_dir, out_path, resume_path;
  int64_t limit = -1, test_limit = -1, threads = 0;
  try {
    if (!cl.parse(given)) return 0;
    const Flags& f = cl.given();
    opts.data_parallel = cl.has("--data-parallel");
    opts.jit = cl.has("--jit");
    if (opts.jit && opts.data_parallel) {
      throw std::invalid_argument("options '--jit' and '--data-parallel' cannot be combined yet (the gradient "
                                  "buckets are reduced from the eager backward)");
    }
    opts.model = choice_flag(f, "--model", "mlp", models::model_names());
    data_dir = string_flag(f, "--data", data::kDefaultDataDir);
    opts.epochs = int_flag(f, "--epochs", 5, 1);
    opts.batch_size = int_flag(f, "--batch-size", 64, 1);
    opts.lr = real_flag(f, "--lr", 1e-3);
    if (!(opts.lr > 0.0)) throw std::invalid_argument("option '--lr' must be positive, got " + f.at("--lr"));
    opts.optimizer = choice_flag(f, "--optimizer", "adam", models::optimizer_names());
    opts.momentum = real_flag(f, "--momentum", 0.9);
    if (opts.momentum < 0.0 || opts.momentum >= 1.0) {
      throw std::invalid_argument("option '--momentum' must be in [0, 1), got " + f.at("--momentum"));
    }
    opts.schedule = choice_flag(f, "--schedule", "cosine", models::schedule_names());
    opts.seed = static_cast<uint64_t>(int_flag(f, "--seed", 0, 0));
    out_path = string_flag(f, "--out", opts.model + ".safetensors");
    if (out_path.empty()) throw std::invalid_argument("option '--out' needs a file name");
    limit = int_flag(f, "--limit", -1, 1);
    test_limit = int_flag(f, "--test-limit", -1, 1);
    threads = int_flag(f, "--threads", 0, 1);
    opts.bucket_mb = real_flag(f, "--bucket-mb", 25.0);
    if (!(opts.bucket_mb > 0.0)) throw std::invalid_argument("option '--bucket-mb' must be positive");
    if (f.count("--bucket-mb") && !opts.data_parallel) {
      throw std::invalid_argument("option '--bucket-mb' needs --data-parallel");
    }
    resume_path = string_flag(f, "--resume", "");
    opts.amp = choice_flag(f, "--amp", "O0", models::amp_level_names());
    opts.amp_dtype = choice_flag(f, "--amp-dtype", "bfloat16", models::amp_dtype_names());
    opts.loss_scale = string_flag(f, "--loss-scale", "auto");
    if (opts.loss_scale != "auto" && opts.loss_scale != "dynamic" && opts.loss_scale != "none") {
      const double scale = real_flag(f, "--loss-scale", 0.0);
      if (!(scale >= 1.0)) {
        throw std::invalid_argument("option '--loss-scale' must be auto, dynamic, none or a number >= 1, got " +
                                    opts.loss_scale);
      }
    }
    for (const char* flag : {"--amp-dtype", "--loss-scale"}) {
      if (f.count(flag) && opts.amp == "O0") throw std::invalid_argument(std::string("option '") + flag + "' needs --amp");
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "bprop train: " << e.what() << " (see bprop train --help)\n";
    return 2;
  }

  // Fail before training when the checkpoint cannot be written where asked.
  if (!checkpoint_directory_exists(out_path)) return 2;
  if (opts.data_parallel) {
    if (!start_data_parallel(&threads)) return 2;
    if (dist::rank() == 0) std::cerr << "bprop train: data parallel on " << dist::describe() << std::endl;
  } else if (const char* n = std::getenv("OMPI_COMM_WORLD_SIZE"); n && std::atoi(n) > 1) {
    std::cerr << "bprop train: warning: started as one of " << n << " MPI processes without --data-parallel: "
              << "each trains alone and writes the same checkpoint" << std::endl;
  }
  const bool root = !opts.data_parallel || dist::rank() == 0;
  const bool multi = opts.data_parallel && dist::size() > 1;
  // With several ranks a failure on one must stop them all (the others would wait in a collective).
  auto fail = [&](int code, const std::string& msg) -> int {
    if (multi) dist::abort(code, "bprop train: " + msg);
    std::cerr << "bprop train: " << msg << "\n";
    if (opts.data_parallel) dist::finalize();
    return code;
  };
  if (threads > 0) cpu::set_num_threads(static_cast<int>(threads));

  data::Dataset train, test;
  try {
    train = data::load_split(data_dir, "train", limit);
    test = data::load_split(data_dir, "test", test_limit);
  } catch (const data::DataError& e) {
    return fail(2, e.what());
  }
  if (train.count == 0 || test.count == 0) {
    return fail(2, std::string("the ") + (train.count == 0 ? "training" : "test") + " set in '" + data_dir +
                       "' holds no images");
  }

  const models::Normalization norm = models::compute_normalization(train);
  nn::set_seed(opts.seed);
  std::shared_ptr<SequentialCell> model;
  Checkpoint resumed;  // (every rank reads it, as each needs the optimizer state)
  try {
    model = models::make_model(opts.model, train.rows, train.cols);
    if (!resume_path.empty()) {
      resumed = load_checkpoint(resume_path);
      load_param_into_net(*model, resumed, true, resume_path);
    }
  } catch (const Error& e) {
    return fail(2, e.what());
  }
  std::ostream& out = root ? std::cout : null_stream();
  out << "data: " << train.count << " training images (" << train.images_path << "), " << test.count
            << " test images, " << train.rows << "x" << train.cols << ", normalised with mean " << fixed(norm.mean, 4)
            << " std " << fixed(norm.std, 4) << "\n"
            << "model: " << models::describe_model(opts.model, *model) << "\n"
            << "training: " << opts.epochs << " epochs, batch size " << opts.batch_size << ", " << opts.optimizer
            << " lr " << opts.lr << (opts.optimizer == "sgd" ? " momentum " + fixed(opts.momentum, 2) : "") << " ("
            << opts.schedule << " schedule)"
            << ", seed " << opts.seed << ", " << cpu::num_threads() << " threads"
            << (default_device().is_cpu() ? "" : ", on " + default_device().str())
            << (multi ? " per rank, " + std::to_string(dist::size()) + " ranks" : "")
            << (opts.amp == "O0" ? "" : ", mixed precision " + opts.amp + " in " + opts.amp_dtype) << std::endl;

  ProgressBar bar;
  std::vector<models::EpochResult> history;
  std::unique_ptr<models::Trainer> trainer;
  try {
    // Data parallel: checks that every rank holds the same model, then sends rank 0's weights to all.
    trainer = std::make_unique<models::Trainer>(model, opts, norm);
    if (!resume_path.empty()) {
      try {
        trainer->resume(resumed, resume_path);
      } catch (const ValueError& e) {
        return fail(2, e.what());
      }
      out << "resumed from " << resume_path << " after epoch " << trainer->first_epoch() - 1 << std::endl;
    }
    trainer->sync_parameters();  // (rank 0's weights and loss scale)
    history = trainer->fit(
        train, test,
        [&bar, root](const models::BatchProgress& p) {
          if (root) bar.update(p);
        },
        [&opts, &out](const models::EpochResult& r) {
          out << "epoch " << r.epoch << "/" << opts.epochs << "  train loss " << fixed(r.train_loss, 4)
                    << " acc " << percent(r.train_accuracy) << "  test loss " << fixed(r.test.loss, 4) << " acc "
                    << percent(r.test.accuracy) << "  " << fixed(r.seconds, 1) << " s  "
                    << fixed(r.images_per_second, 0) << " img/s  lr " << r.lr << " (eval " << fixed(r.test.seconds, 1)
                    << " s)";
          if (r.loss_scale > 0) {
            out << "  loss scale " << r.loss_scale << ", " << r.skipped_steps << " step"
                << (r.skipped_steps == 1 ? "" : "s") << " skipped";
          }
          out << std::endl;
        });
  } catch (const Error& e) {
    if (root) std::cerr << "\n";
    return fail(1, e.what());
  }

  try {
    if (root) trainer->save(out_path, train.count, history);
  } catch (const Error& e) {
    return fail(1, e.what());
  }
  if (opts.data_parallel) dist::finalize();
  out << "saved " << out_path << " (model " << opts.model << ", " << opts.epochs << " epochs, test accuracy "
            << percent(history.back().test.accuracy) << ")" << std::endl;
  return 0;
}

}  // namespace bprop::cli
