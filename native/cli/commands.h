// The subcommands of the `bprop` program.
#pragma once
#include <string>
#include <vector>

#include "bprop/tensor.h"

namespace bprop::cli {

/// `bprop check FILE...`: runs vector files; exit 0 when all pass, 1 when a case failed, 2 when a file is
/// unreadable or malformed.
int check_command(const std::vector<std::string>& args);

/// `bprop ops [--json | --markdown]`: the op coverage matrix.
int ops_command(const std::vector<std::string>& args);

/// `bprop train [--model mlp|cnn] [--data DIR] ...`: trains a classifier on IDX files and saves a checkpoint;
/// exit 0 when done, 2 on bad arguments or data files, 1 when training failed.
int train_command(const std::vector<std::string>& args);

/// `bprop train --model gpt [--data text:FILE] ...`: trains the character-level GPT and saves a resumable
/// checkpoint; exit 0 when done, 2 on bad arguments or data, 1 when training failed.
int train_gpt_command(const std::vector<std::string>& args);

/// `bprop generate --checkpoint FILE [--prompt TEXT] ...`: text from a GPT checkpoint; exit 0, or 2 on bad
/// arguments or a checkpoint that is not a GPT's.
int generate_command(const std::vector<std::string>& args);

/// `bprop eval --checkpoint FILE [--model mlp|cnn] [--data DIR]`: test loss and accuracy of a checkpoint;
/// exit 0 when done, 2 on bad arguments, data files or a checkpoint that does not fit the model.
int eval_command(const std::vector<std::string>& args);

/// `bprop devices`: the CPU and the Ascend NPUs found (or why none); exit 0.
int devices_command(const std::vector<std::string>& args);

}  // namespace bprop::cli
