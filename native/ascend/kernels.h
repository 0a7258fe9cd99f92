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
  std::vector<std::string> also = {};  // the other operators a composed kernel launches (needed too)
};

/// Every kernel of the backend: those of kernels.cpp, the layout copies, the indexing ops and the optimizer updates.
std::vector<DeviceKernel> aclnn_kernels();
/// The optimizer update ops, composed of elementwise operators (kernels_optim.cpp).
std::vector<DeviceKernel> optimizer_kernels();
/// stack, tile and pad (kernels_shape.cpp).
std::vector<DeviceKernel> shape_kernels();
/// slice, strided_slice and its gradient (kernels_index.cpp).
std::vector<DeviceKernel> index_kernels();
/// scaled_dot_product_attention and its gradient op on aclnnFlashAttentionScore(Grad) (kernels_attention.cpp).
std::vector<DeviceKernel> attention_kernels();

}  // namespace bprop::ascend
