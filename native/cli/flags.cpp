#include "flags.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "util/whole_number.h"

namespace bprop::cli {

std::map<std::string, std::string> parse_flags(const std::vector<std::string>& args,
                                               const std::vector<std::string>& known) {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i], value;
    bool has_value = false;
    if (name.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument '" + name + "'");
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    bool ok = false;
    for (const auto& k : known) ok = ok || k == name;
    if (!ok) throw std::invalid_argument("unknown option '" + name + "'");
    if (!has_value) {
      if (i + 1 >= args.size()) throw std::invalid_argument("option '" + name + "' needs a value");
      value = args[++i];
    }
    out[name] = value;
  }
  return out;
}

int64_t int_flag(const std::map<std::string, std::string>& f, const std::string& name, int64_t def, int64_t min) {
  const auto it = f.find(name);
  if (it == f.end()) return def;
  const std::optional<int64_t> v = whole_number(it->second);
  if (!v) throw std::invalid_argument("option '" + name + "' needs an integer, got '" + it->second + "'");
  if (*v < min) {
    throw std::invalid_argument("option '" + name + "' must be >= " + std::to_string(min) + ", got " + it->second);
  }
  return *v;
}

double real_flag(const std::map<std::string, std::string>& f, const std::string& name, double def) {
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

std::string string_flag(const std::map<std::string, std::string>& f, const std::string& name, const std::string& def) {
  const auto it = f.find(name);
  return it == f.end() ? def : it->second;
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
