// The subcommands of the `bprop` program.
#pragma once
#include <string>
#include <vector>

namespace bprop::cli {

/// `bprop check FILE...`: runs vector files; exit 0 when all pass, 1 when a case failed, 2 when a file is
/// unreadable or malformed.
int check_command(const std::vector<std::string>& args);

/// `bprop ops [--json | --markdown]`: the op coverage matrix.
int ops_command(const std::vector<std::string>& args);

}  // namespace bprop::cli
