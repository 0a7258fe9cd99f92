// Command-line flags and number formatting shared by the subcommands.
#pragma once
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace bprop::cli {

/// --flag VALUE or --flag=VALUE, for the flags in `known`; std::invalid_argument for anything else.
std::map<std::string, std::string> parse_flags(const std::vector<std::string>& args,
                                               const std::vector<std::string>& known);
/// The integer value of `name` (>= min), or `def` when absent; std::invalid_argument when malformed.
int64_t int_flag(const std::map<std::string, std::string>& f, const std::string& name, int64_t def, int64_t min);
/// The finite number value of `name`, or `def` when absent; std::invalid_argument when malformed.
double real_flag(const std::map<std::string, std::string>& f, const std::string& name, double def);
std::string string_flag(const std::map<std::string, std::string>& f, const std::string& name, const std::string& def);

/// "12.34%" for 0.1234.
std::string percent(double fraction);
/// v with `digits` decimals.
std::string fixed(double v, int digits);
/// Where the output of ranks other than 0 goes.
std::ostream& null_stream();

}  // namespace bprop::cli
