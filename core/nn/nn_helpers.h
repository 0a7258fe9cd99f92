// Argument checks shared by the nn cells.
#pragma once
#include <string>
#include <vector>

#include "bprop/tensor.h"

namespace bprop::nn::detail {

/// The only input of a one-input cell; ValueError naming the cell otherwise.
inline const Tensor& one_input(const char* cell, const std::vector<Tensor>& inputs) {
  if (inputs.size() != 1 || !inputs[0].defined()) {
    throw ValueError(std::string("For '") + cell + "', expected 1 input tensor, got " + std::to_string(inputs.size()));
  }
  return inputs[0];
}

inline void check_positive(const char* cell, const char* what, int64_t v) {
  if (v <= 0) {
    throw ValueError(std::string("For '") + cell + "', " + what + " must be positive, got " + std::to_string(v));
  }
}

inline void check_float_dtype(const char* cell, DType dt) {
  if (!is_float(dt)) {
    throw DTypeError(std::string("For '") + cell + "', the parameter dtype must be float32 or float64, got " +
                     dtype_name(dt));
  }
}

}  // namespace bprop::nn::detail
