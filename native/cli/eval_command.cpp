// bprop eval: the test loss and accuracy of a checkpoint saved by `bprop train`.
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "bprop/nn/checkpoint.h"
#include "command_line.h"
#include "commands.h"
#include "data/idx.h"
#include "kernels/cpu/parallel.h"
#include "models/models.h"
#include "models/trainer.h"

namespace bprop::cli {
namespace {

struct EvalArgs {
  std::string checkpoint, model, data = data::kDefaultDataDir;
  int64_t batch_size = 256, limit = -1, threads = 0;
};

void declare_options(CommandLine& cl) {
  cl.option("--checkpoint", "FILE", "the safetensors file of bprop train (required)")
      .option("--model", "mlp|cnn", "default: the model named in the checkpoint's metadata")
      .option("--data", "DIR", std::string("the data directory; default ") + data::kDefaultDataDir)
      .option("--batch-size", "B", "images per forward pass; default 256")
      .option("--limit", "N", "evaluate on the first N test images only")
      .option("--threads", "N", "CPU threads of the kernels; default all cores")
      .device_option()
      .footer("The test set is DIR's t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, gzip-compressed (.gz) or not.\n"
              "Exit status: 0 done, 2 bad arguments, data files or a checkpoint that does not fit the model.");
}

EvalArgs read_args(const Flags& f) {
  EvalArgs out;
  out.checkpoint = string_flag(f, "--checkpoint", "");
  if (out.checkpoint.empty()) throw std::invalid_argument("option '--checkpoint FILE' is required");
  if (f.count("--model")) out.model = choice_flag(f, "--model", "", models::model_names());
  out.data = string_flag(f, "--data", out.data);
  out.batch_size = int_flag(f, "--batch-size", out.batch_size, 1);
  out.limit = int_flag(f, "--limit", out.limit, 1);
  out.threads = int_flag(f, "--threads", out.threads, 1);
  return out;
}

}  // namespace

int eval_command(const std::vector<std::string>& given) {
  CommandLine cl("eval", "Loads a checkpoint saved by bprop train into its model and prints the loss and accuracy "
                         "on the test set.");
  declare_options(cl);
  EvalArgs a;
  try {
    if (!cl.parse(given)) return 0;
    a = read_args(cl.given());
  } catch (const std::invalid_argument& e) {
    std::cerr << "bprop eval: " << e.what() << " (see bprop eval --help)\n";
    return 2;
  }
  if (a.threads > 0) cpu::set_num_threads(static_cast<int>(a.threads));

  // The checkpoint first: a bad file is reported before the data set is read.
  Checkpoint ckpt;
  std::shared_ptr<SequentialCell> model;
  models::Normalization norm;
  try {
    ckpt = load_checkpoint(a.checkpoint);
    const auto it = ckpt.metadata.find("model");
    if (a.model.empty()) {
      if (it == ckpt.metadata.end()) {
        std::cerr << "bprop eval: checkpoint '" << a.checkpoint
                  << "' does not name its model in its metadata; give --model mlp or --model cnn\n";
        return 2;
      }
      a.model = it->second;
    } else if (it != ckpt.metadata.end() && it->second != a.model) {
      std::cerr << "bprop eval: checkpoint '" << a.checkpoint << "' holds a '" << it->second
                << "' model, not '" << a.model << "'\n";
      return 2;
    }
    norm = models::normalization_from_metadata(ckpt.metadata, a.checkpoint);
    if (ckpt.metadata.count("input_mean") == 0 || ckpt.metadata.count("input_std") == 0) {
      std::cerr << "bprop eval: note: checkpoint '" << a.checkpoint
                << "' has no input_mean / input_std metadata; pixels are scaled to [0, 1] only\n";
    }
  } catch (const Error& e) {
    std::cerr << "bprop eval: " << e.what() << "\n";
    return 2;
  }

  data::Dataset test;
  try {
    test = data::load_split(a.data, "test", a.limit);
  } catch (const data::DataError& e) {
    std::cerr << "bprop eval: " << e.what() << "\n";
    return 2;
  }
  if (test.count == 0) {
    std::cerr << "bprop eval: the test set in '" << a.data << "' holds no images\n";
    return 2;
  }

  try {
    model = models::make_model(a.model, test.rows, test.cols);
    load_param_into_net(*model, ckpt, /*strict=*/true, a.checkpoint);
  } catch (const Error& e) {
    std::cerr << "bprop eval: checkpoint '" << a.checkpoint << "' does not fit the " << a.model << " model for "
              << test.rows << "x" << test.cols << " images: " << e.what() << "\n";
    return 2;
  }

  const models::EvalResult r = models::evaluate(*model, test, norm, a.batch_size);
  char loss[32], secs[32];
  std::snprintf(loss, sizeof loss, "%.4f", r.loss);
  std::snprintf(secs, sizeof secs, "%.1f", r.seconds);
  std::cout << "model " << a.model << ", checkpoint " << a.checkpoint << ": test loss " << loss << "  accuracy "
            << percent(r.accuracy) << " (" << r.count << " images, " << secs << " s)" << std::endl;
  return 0;
}

}  // namespace bprop::cli
