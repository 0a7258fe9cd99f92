// The typed readings of command-line options (CommandLine gives them as text), with one set of messages for
// every command, and the number formatting the commands share.
#pragma once
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace bprop::cli {

/// The options given on a command line, by name ("--epochs" -> "3").
using Flags = std::map<std::string, std::string>;

/// The integer value of `name` (>= min), or `def` when absent; std::invalid_argument when malformed.
int64_t int_flag(const Flags& f, const std::string& name, int64_t def, int64_t min);
/// The finite number value of `name`, or `def` when absent; std::invalid_argument when malformed.
double real_flag(const Flags& f, const std::string& name, double def);
std::string string_flag(const Flags& f, const std::string& name, const std::string& def);
/// The value of `name`, one of `choices`, or `def` when absent; std::invalid_argument naming the choices otherwise.
std::string choice_flag(const Flags& f, const std::string& name, const std::string& def,
                        const std::vector<std::string>& choices);
/// "a, b or c"
std::string choices_text(const std::vector<std::string>& choices);
/// "a|b|c" (as a usage line shows a choice)
std::string choices_usage(const std::vector<std::string>& choices);

/// "12.34%" for 0.1234.
std::string percent(double fraction);
/// v with `digits` decimals.
std::string fixed(double v, int digits);
/// Where the output of ranks other than 0 goes.
std::ostream& null_stream();

}  // namespace bprop::cli
