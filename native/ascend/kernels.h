// The Ascend kernels of the op registry's ops.
#pragma once
#include <string>
#include <vector>

#include "bprop/registry.h"

namespace bprop::ascend {

struct DeviceKernel {
  std::string op;     // the registry's op
  std::string aclnn;  // the aclnn operator it launches (registered only when the installed CANN has it)
  KernelFn kernel;
};

std::vector<DeviceKernel> aclnn_kernels();

}  // namespace bprop::ascend
