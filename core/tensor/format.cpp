#include "tensor/format.h"

#include <cstdio>

namespace bprop {

std::string format_g(double v, int precision) {
  char buf[40];
  const int n = std::snprintf(buf, sizeof buf, "%.*g", precision, v);
  return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
}

}  // namespace bprop
