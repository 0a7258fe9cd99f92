// bprop: the native command-line program.
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"

namespace {

const char* kHelp =
    "usage: bprop <command> [arguments]\n"
    "\n"
    "commands:\n"
    "  check FILE...           run gradient test vector files (format bprop-vectors/1, see docs/vectors.md):\n"
    "                          one line per failing case with its worst element, then 'N passed, N failed'.\n"
    "                          Exit status 0 when every case passed, 1 when a case failed, 2 when a file is\n"
    "                          unreadable or malformed (its readable cases still run). --jit runs every case\n"
    "                          through bprop::jit (traced into graphs, then replayed).\n"
    "  check --outcomes FILE...\n"
    "                          run each case without its expectations and print how it ended, one JSON object\n"
    "                          per line ({\"file\", \"case\", \"outcome\", ...}; used by the fuzzer,\n"
    "                          docs/fuzzing.md). Exit status 0 when it finished.\n"
    "  ops [--json|--markdown] the op coverage matrix: every registered op, its family, its kernels per\n"
    "                          backend, bprop or no grad, and whether the gradcheck op table checks it at\n"
    "                          first and second order (plain text, JSON, or the markdown of docs/ops.md);\n"
    "                          the JSON also gives each op's inputs and attribute schema.\n"
    "  train [--model mlp|cnn] [--data DIR] [--epochs N] [--batch-size B] [--lr LR] [--optimizer sgd|adam]\n"
    "        [--seed S] [--out FILE] [--limit N] [--threads N] [--data-parallel] [--resume FILE]\n"
    "                          trains a classifier on Fashion-MNIST IDX files (gzip'd or not; default DIR\n"
    "                          /usr/share/datasets/fashion-mnist): a progress bar per epoch, the test loss and\n"
    "                          accuracy after each, a safetensors checkpoint at the end (bprop train --help).\n"
    "                          Data parallel over MPI: mpirun -np 4 bprop train --data-parallel ...\n"
    "                          (HCCL with --device ascend: mpirun -np 8 bprop train --data-parallel --device ascend)\n"
    "  train --model gpt [--data text:FILE] [--context N] [--layers N] [--heads N] [--width N] [--steps N]\n"
    "        [--batch-size B] [--grad-accum N] [--clip C] [--warmup N] [--resume FILE] [--data-parallel]\n"
    "                          trains a character-level GPT on a text file (default: the fortunes corpus of\n"
    "                          scripts/make-text-corpus.mjs) with a validation loss per evaluation and a\n"
    "                          checkpoint that resumes exactly (bprop train --model gpt --help).\n"
    "  generate --checkpoint FILE [--prompt TEXT] [--tokens N] [--temperature T] [--top-k K] [--seed S]\n"
    "                          text from a GPT checkpoint.\n"
    "  eval --checkpoint FILE [--model mlp|cnn] [--data DIR]\n"
    "                          the test loss and accuracy of a checkpoint saved by train.\n"
    "  devices                 the CPU (threads, features, BLAS) and the Ascend NPUs found, with the CANN\n"
    "                          version, or why there are none.\n"
    "  check, train, generate and eval take --device cpu|ascend[:N] (or BPROP_DEVICE in the environment):\n"
    "                          where ops run.\n"
    "  help, --help, -h        this text.\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kHelp;
    return 2;
  }
  const std::string cmd = args.front();
  args.erase(args.begin());
  try {
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
      std::cout << kHelp;
      return 0;
    }
    if (cmd == "check") return bprop::cli::check_command(args);
    if (cmd == "ops") return bprop::cli::ops_command(args);
    if (cmd == "train") return bprop::cli::train_command(args);
    if (cmd == "eval") return bprop::cli::eval_command(args);
    if (cmd == "generate") return bprop::cli::generate_command(args);
    if (cmd == "devices") return bprop::cli::devices_command(args);
  } catch (const std::exception& e) {
    std::cerr << "bprop " << cmd << ": " << e.what() << "\n";
    return 2;
  }
  std::cerr << "bprop: unknown command '" << cmd << "'\n\n" << kHelp;
  return 2;
}
