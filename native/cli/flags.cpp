#include "flags.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "util/whole_number.h"

namespace bprop::cli {

int64_t int_flag(const Flags& f, const std::string& name, int64_t def, int64_t min) {
  const auto it = f.find(name);
  if (it == f.end()) return def;
  const std::optional<int64_t> v = whole_number(it->second);
  if (!v) throw std::invalid_argument("option '" + name + "' needs an integer, got '" + it->second + "'");
  if (*v < min) {
    throw std::invalid_argument("option '" + name + "' must be >= " + std::to_string(min) + ", got " + it->second);
  }
  return *v;
}

double real_flag(const Flags& f, const std::string& name, double def) {
  const auto it = f.find(name);
  if (it == f.end()) return def;
  size_t used = 0;
  double v = 0.0;
  try {
    v = std::stod(it->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != it->second.size() || !std::isfinite(v)) {
    throw std::invalid_argument("option '" + name + "' needs a number, got '" + it->second + "'");
  }
  return v;
}

std::string string_flag(const Flags& f, const std::string& name, const std::string& def) {
  const auto it = f.find(name);
  return it == f.end() ? def : it->second;
}

std::string choices_text(const std::vector<std::string>& choices) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  }
  return out;
}

std::string choices_usage(const std::vector<std::string>& choices) {
  std::string out;
  for (const std::string& c : choices) out += (out.empty() ? "" : "|") + c;
  return out;
}

std::string choice_flag(const Flags& f, const std::string& name, const std::string& def,
                        const std::vector<std::string>& choices) {
  const std::string v = string_flag(f, name, def);
  for (const std::string& c : choices) {
    if (c == v) return v;
  }
  throw std::invalid_argument("option '" + name + "' must be " + choices_text(choices) + ", got '" + v + "'");
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * fraction);
  return buf;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::ostream& null_stream() {
  static std::ostream sink(nullptr);
  return sink;
}

}  // namespace bprop::cli
