#include "kernels/cpu/elementwise.h"

namespace bprop::cpu {

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  const std::vector<int64_t> in_st = row_major_strides(in);
  const size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[lead + i] = in[i] == 1 ? 0 : in_st[i];
  return st;
}

}  // namespace bprop::cpu
