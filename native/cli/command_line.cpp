#include "command_line.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <stdexcept>

#include "bprop/context.h"
#include "bprop/device.h"

namespace bprop::cli {
namespace {

constexpr size_t kHelpWidth = 110;  // columns of the help text
constexpr size_t kNameColumn = 26;  // where the options' descriptions start

// `text` broken at spaces into lines of at most `width` characters (a longer word stands alone).
std::string wrapped(const std::string& text, size_t width) {
  std::string out, line;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return out + line;
}

// CLI11's help with the descriptions wrapped to the terminal-friendly width (CLI11 2.1 does not wrap).
class WrappingFormatter : public CLI::Formatter {
 public:
  WrappingFormatter() { column_width(kNameColumn); }
  std::string make_option_desc(const CLI::Option* opt) const override {
    return wrapped(opt->get_description(), kHelpWidth - kNameColumn);
  }
  std::string make_description(const CLI::App* app) const override {
    return wrapped(app->get_description(), kHelpWidth) + "\n";
  }
};

}  // namespace

CommandLine::CommandLine(const std::string& command, const std::string& description)
    : app_(std::make_unique<CLI::App>(description, "bprop " + command)) {
  app_->set_help_flag("-h,--help", "print this help and exit");
  app_->formatter(std::make_shared<WrappingFormatter>());
}

CommandLine::~CommandLine() = default;

CommandLine& CommandLine::option(const std::string& name, const std::string& value_name, const std::string& help) {
  // (given twice, the last one counts: a script's defaults can be overridden by appending)
  app_->add_option(name, values_[name], help)
      ->type_name(value_name)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  return *this;
}

CommandLine& CommandLine::flag(const std::string& names, const std::string& help) {
  app_->add_flag(names, help);
  flags_.push_back(names);
  return *this;
}

CommandLine& CommandLine::positionals(const std::string& name, const std::string& help) {
  app_->add_option(name, positional_values_, help)->type_name("");
  return *this;
}

CommandLine& CommandLine::device_option() {
  has_device_ = true;
  app_->add_option("--device", device_text_,
                   "where ops run: cpu, or a device of this build such as ascend or ascend:N; default the "
                   "environment's BPROP_DEVICE, else cpu")
      ->type_name("DEVICE")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->envname("BPROP_DEVICE");
  return *this;
}

CommandLine& CommandLine::footer(const std::string& text) {
  app_->footer(text);
  return *this;
}

bool CommandLine::parse(const std::vector<std::string>& args) {
  try {
    app_->parse(std::vector<std::string>(args.rbegin(), args.rend()));  // (CLI11 reads the list from its end)
  } catch (const CLI::CallForHelp&) {
    std::cout << app_->help();
    return false;
  } catch (const CLI::ExtrasError&) {
    // (in our words, naming the first one: "unknown option '--bogus'")
    for (const std::string& a : app_->remaining()) {
      if (a.rfind("-", 0) == 0) throw std::invalid_argument("unknown option '" + a + "'");
    }
    throw std::invalid_argument("unexpected argument '" + app_->remaining().front() + "'");
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(e.what());
  }
  given_.clear();
  for (const auto& [name, value] : values_) {
    if (app_->get_option(name)->count() > 0) given_[name] = value;
  }
  for (const std::string& names : flags_) {
    const CLI::Option* o = app_->get_option(names.substr(names.rfind(',') + 1));
    if (o->count() > 0) given_[o->get_name()] = "true";
  }
  if (has_device_ && !device_text_.empty()) {
    device_ = parse_device(device_text_);
    Context ctx = get_context();
    ctx.device = device_;
    set_context(ctx);
  }
  return true;
}

bool CommandLine::has(const std::string& flag) const { return given_.count(flag) > 0; }

std::string CommandLine::help() const { return app_->help(); }

}  // namespace bprop::cli
