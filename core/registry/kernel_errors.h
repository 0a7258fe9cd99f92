// How a kernel's allocation failures become errors, for every place that runs kernels (the dispatcher, the graph
// executor): one translation, one wording.
#pragma once
#include <new>
#include <stdexcept>
#include <string>

#include "bprop/dtype.h"
#include "bprop/errors.h"
#include "bprop/shape.h"

namespace bprop::detail {

/// Runs `kernel()`, turning what allocations inside it throw into MemoryErrors naming `op` and its output:
/// std::bad_alloc (its scratch memory) and std::length_error (a std::vector past what wasm32 can address).
template <typename F>
void translating_kernel_errors(const std::string& op, const Shape& shape, DType dtype, F&& kernel) {
  try {
    kernel();
  } catch (const std::bad_alloc&) {
    throw MemoryError("For '" + op + "', out of memory while computing the output of shape " + shape_str(shape) +
                      " " + dtype_name(dtype));
  } catch (const std::length_error&) {
    throw MemoryError("For '" + op + "', the scratch memory for the output of shape " + shape_str(shape) + " " +
                      dtype_name(dtype) + " is more than this build can address");
  }
}

}  // namespace bprop::detail
