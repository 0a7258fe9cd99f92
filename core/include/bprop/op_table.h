// The op check table: one row per op (sample inputs, attributes, which orders are checked), run through
// gradcheck and gradgradcheck by the tests, and reported by `bprop ops`. Every registered op must have a row.
#pragma once
#include <string>
#include <vector>

#include "bprop/attrs.h"
#include "bprop/tensor.h"

namespace bprop {

/// How one sample input is made.
struct InputGen {
  Shape shape;
  double lo = -2.0, hi = 2.0;       // uniform range for floats
  bool away_from_zero = false;     // |v| in [lo, hi] with a random sign (for kinks at 0)
  DType dtype = DType::Float64;
  std::vector<double> values = {};  // fixed values (indices, labels, conditions); overrides the range
  bool omitted = false;             // an optional argument left out
};

struct OpCheckRow {
  std::string name;  // unique row name ("sum_axis1_keepdims")
  std::string op;    // registered op name
  std::vector<InputGen> inputs;
  Attrs attrs;
  bool first_order = true;   // gradcheck
  bool second_order = true;  // gradgradcheck
};

const std::vector<OpCheckRow>& op_check_table();
/// The sample inputs of a row (seeded by the row's position, so the same on every platform).
std::vector<Tensor> make_inputs(const OpCheckRow& row);

/// The float dtypes (float32, float64, float16, bfloat16) an op takes: its first row's sample run with the float
/// inputs, and a `dtype` attribute where the op has one, in each dtype; the dtypes whose run raises no DTypeError.
std::vector<DType> op_float_dtypes(const std::string& op);

}  // namespace bprop
