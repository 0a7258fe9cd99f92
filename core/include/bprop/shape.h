// Shapes, broadcasting and axis normalisation.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bprop/dtype.h"

namespace bprop {

using Shape = std::vector<int64_t>;

/// The element count of a shape already checked (checked_numel): 0 when a dimension is 0, else the product,
/// saturating at INT64_MAX instead of overflowing.
int64_t shape_numel(const Shape& s);

/// The element count of a shape a tensor of `dtype` is about to get, checked against bprop/limits.h: a rank
/// above kMaxRank or a negative dimension is a ShapeError; more than kMaxElements elements (zero dimensions
/// aside, so that strides fit too) or more than kMaxTensorBytes bytes is a MemoryError. Messages start with
/// "For 'op', the output" when `op` is given, "A tensor" otherwise.
int64_t checked_numel(const Shape& s, DType dtype, const std::string& op = {});
/// "(2, 3)"; a scalar prints as "()".
std::string shape_str(const Shape& s);
/// Row-major strides in elements.
std::vector<int64_t> row_major_strides(const Shape& s);

/// NumPy broadcasting of two shapes; throws ShapeError naming `op`, the arguments and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& op,
                       const char* arg_a = "x", const char* arg_b = "y");

/// Maps a possibly negative axis into [0, rank); throws ShapeError naming `op` when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& op, const char* arg = "axis");

}  // namespace bprop
