// Layout ops on the NPU that copy data into a new shape: stack (aclnnStack), tile (aclnnRepeat) and pad
// (aclnnConstantPadNd). They decline mixed dtypes and empty tensors, as the other kernels do.
#include <climits>
#include <cmath>
#include <variant>

#include "ascend/aclnn_call.h"
#include "ascend/kernels.h"
#include "bprop/device.h"

namespace bprop::ascend {
namespace {

using acl::aclTensor;

[[noreturn]] void decline(const std::string& why) { throw KernelDeclined{why}; }

void require_same_nonempty(const KernelCtx& c) {
  for (const Tensor& t : c.inputs) {
    if (t.dtype() != c.out_dtype) decline("mixed dtypes");
    if (t.numel() == 0) decline("an empty tensor");
  }
  if (c.out.numel() == 0) decline("an empty output");
}

// stack: aclnnStack over a tensor list (which owns the aclTensors made for it), the new axis normalised.
void stack(KernelCtx& c) {
  require_same_nonempty(c);
  int64_t axis = c.attrs.get_int("axis");
  if (axis < 0) axis += c.out.dim();
  AclTensorListArg list(c.inputs);
  AclTensorArg out(c.out);
  launch_aclnn(c.device, "Stack", static_cast<const acl::aclTensorList*>(list.get()), axis, out.get());
}

// tile: aclnnRepeat (torch.repeat) with the multiples padded with leading 1s to the output's rank, as NumPy's tile
// pads them (Repeat itself gives the input leading dimensions of 1 when there are more repeats than dimensions).
void tile(KernelCtx& c) {
  require_same_nonempty(c);
  const std::vector<int64_t> m = c.attrs.get_ints("multiples");
  std::vector<int64_t> reps(static_cast<size_t>(c.out.dim()) - m.size(), 1);
  reps.insert(reps.end(), m.begin(), m.end());
  AclTensorArg x(c.inputs[0]), out(c.out);
  AclIntArrayArg repeats(reps);
  launch_aclnn(c.device, "Repeat", static_cast<const aclTensor*>(x.get()),
               static_cast<const acl::aclIntArray*>(repeats.get()), out.get());
}

// pad: aclnnConstantPadNd with the op's [lo, hi] rows as (begin, end) pairs from the last dimension backwards. An
// int32 tensor takes integral values in range only (the CPU converts others its own way); bool is left to the CPU.
void pad(KernelCtx& c) {
  require_same_nonempty(c);
  const double value = c.attrs.get_float("value");
  if (c.out_dtype == DType::Bool) decline("bool padding");
  if (c.out_dtype == DType::Int32 && (value != std::trunc(value) || value < INT32_MIN || value > INT32_MAX)) {
    decline("a non-int32 padding value");
  }
  const IntMatrix& rows = std::get<IntMatrix>(c.attrs.get("paddings"));
  std::vector<int64_t> pairs;
  for (size_t d = rows.size(); d-- > 0;) pairs.insert(pairs.end(), {rows[d][0], rows[d][1]});
  AclTensorArg x(c.inputs[0]), out(c.out);
  AclIntArrayArg pads(pairs);
  AclScalarArg fill(value, c.out_dtype);
  launch_aclnn(c.device, "ConstantPadNd", static_cast<const aclTensor*>(x.get()),
               static_cast<const acl::aclIntArray*>(pads.get()), static_cast<const acl::aclScalar*>(fill.get()),
               out.get());
}

}  // namespace

std::vector<DeviceKernel> shape_kernels() {
  return {
      {"stack", "Stack", stack},
      {"tile", "Repeat", tile},
      {"pad", "ConstantPadNd", pad},
  };
}

}  // namespace bprop::ascend
