// The one command-line parser of every `bprop` command, on CLI11: a command declares its options with their help
// text, and parse() gives what was given (as text, read with the typed readers of flags.h, whose messages are the
// same for every command) or prints the help CLI11 generates for `bprop COMMAND --help`. The device option
// (--device, or BPROP_DEVICE in the environment) is declared and applied here for every command that computes.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bprop/tensor.h"
#include "flags.h"

namespace CLI {
class App;
}

namespace bprop::cli {

class CommandLine {
 public:
  /// `command`: how it is called after `bprop` ("train", "train --model gpt"); `description`: what it does.
  CommandLine(const std::string& command, const std::string& description);
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  /// --name VALUE (or --name=VALUE); `value_name` as the help shows it ("N", "FILE").
  CommandLine& option(const std::string& name, const std::string& value_name, const std::string& help);
  /// --name without a value (`names` may add a short form: "-v,--verbose").
  CommandLine& flag(const std::string& names, const std::string& help);
  /// The arguments that are not options (FILE...).
  CommandLine& positionals(const std::string& name, const std::string& help);
  /// --device cpu|ascend[:N], else BPROP_DEVICE from the environment, else the CPU: made the context's device by
  /// parse().
  CommandLine& device_option();
  /// Text after the options in the help (exit statuses, where output goes).
  CommandLine& footer(const std::string& text);

  /// Reads the arguments after the command's name. False when the help was asked for (it has been printed to
  /// stdout); std::invalid_argument saying what is wrong for a bad command line; bprop::ValueError for an unknown
  /// device.
  bool parse(const std::vector<std::string>& args);

  /// The options given, by name ("--epochs" -> "3").
  const Flags& given() const { return given_; }
  bool has(const std::string& flag) const;
  const std::vector<std::string>& positional_values() const { return positional_values_; }
  /// The device parse() set (the CPU without --device or BPROP_DEVICE).
  Device device() const { return device_; }
  std::string help() const;

 private:
  std::unique_ptr<CLI::App> app_;
  std::map<std::string, std::string> values_;  // by option name: CLI11 writes each given value here
  std::vector<std::string> flags_;
  std::vector<std::string> positional_values_;
  std::string device_text_;
  bool has_device_ = false;
  Flags given_;
  Device device_;
};

}  // namespace bprop::cli
