#include "bprop/shape.h"

#include "bprop/errors.h"

namespace bprop {

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  if (s.size() == 1) out += ",";
  return out + ")";
}

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& op, const char* arg_a,
                       const char* arg_b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw ShapeError("For '" + op + "', the shapes of '" + arg_a + "' " + shape_str(a) + " and '" + arg_b +
                       "' " + shape_str(b) + " cannot be broadcast (dimension " + std::to_string(i) + ": " +
                       std::to_string(da) + " vs " + std::to_string(db) + ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& op, const char* arg) {
  const int64_t lo = rank == 0 ? -1 : -rank, hi = rank == 0 ? 0 : rank - 1;
  if (axis < lo || axis > hi) {
    throw ShapeError("For '" + op + "', '" + arg + "' " + std::to_string(axis) + " is out of range for a tensor of rank " +
                     std::to_string(rank) + " (expected " + std::to_string(lo) + ".." + std::to_string(hi) + ")");
  }
  return axis < 0 ? axis + std::max<int64_t>(rank, 1) : axis;
}

}  // namespace bprop
