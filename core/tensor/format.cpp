#include "tensor/format.h"

#include <cstdio>
#include <cstdlib>

namespace bprop {

std::string format_g(double v, int precision) {
  char buf[40];
  const int n = std::snprintf(buf, sizeof buf, "%.*g", precision, v);
  return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
}

std::string format_number(double v) {
  for (int precision = 1; precision < 17; ++precision) {
    std::string s = format_g(v, precision);
    if (std::strtod(s.c_str(), nullptr) == v) return s;
  }
  return format_g(v, 17);
}

}  // namespace bprop
