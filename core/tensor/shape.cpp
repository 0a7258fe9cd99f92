#include "bprop/shape.h"

#include "bprop/errors.h"
#include "bprop/limits.h"

namespace bprop {

int64_t shape_numel(const Shape& s) {
  // A zero anywhere makes the count 0, however large the other dimensions (a kernel's intermediate shape can pair
  // an empty dimension with a huge repeat count): it must not read as the saturated count of a huge tensor.
  for (int64_t d : s) {
    if (d == 0) return 0;
  }
  int64_t n = 1;
  for (int64_t d : s) {
    const auto next = mul_checked(n, d);
    if (!next) return INT64_MAX;
    n = *next;
  }
  return n;
}

namespace {
std::string subject(const std::string& op) { return op.empty() ? "A tensor" : "For '" + op + "', the output"; }
}  // namespace

int64_t checked_numel(const Shape& s, DType dtype, const std::string& op) {
  if (static_cast<int64_t>(s.size()) > kMaxRank) {
    throw ShapeError(subject(op) + " would have rank " + std::to_string(s.size()) + ", more than the limit of " +
                     std::to_string(kMaxRank));
  }
  int64_t nonzero = 1;  // the product of the non-zero dimensions: the largest stride times its dimension
  bool overflow = false, empty = false;
  for (int64_t d : s) {
    if (d < 0) {
      throw ShapeError(subject(op) + " would have the negative dimension " + std::to_string(d) + " in shape " +
                       shape_str(s));
    }
    if (d == 0) {
      empty = true;
    } else if (!overflow) {
      const auto next = mul_checked(nonzero, d);
      overflow = !next;
      if (next) nonzero = *next;
    }
  }
  if (overflow || nonzero > kMaxElements) {
    throw MemoryError(subject(op) + " of shape " + shape_str(s) + " " + dtype_name(dtype) + " would span " +
                      (overflow ? std::string("more than 2^63") : std::to_string(nonzero)) +
                      " elements" + (empty ? " (zero dimensions aside)" : "") + ", more than the limit of " +
                      std::to_string(kMaxElements) + " in this build");
  }
  const int64_t numel = empty ? 0 : nonzero;
  const int64_t bytes = numel * static_cast<int64_t>(dtype_size(dtype));  // < 2^49: kMaxElements * 8
  if (bytes > kMaxTensorBytes) {
    throw MemoryError(subject(op) + " of shape " + shape_str(s) + " " + dtype_name(dtype) + " would need " +
                      std::to_string(bytes) + " bytes, more than the limit of " + std::to_string(kMaxTensorBytes) +
                      " bytes per tensor in this build");
  }
  return numel;
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
