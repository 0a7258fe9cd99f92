// Indexing ops on the NPU. slice and strided_slice copy a strided view of the input (an aclTensor with the slice's
// offset and strides: no gather) into the output with aclnnInplaceCopy; strided_slice_grad zeroes its output
// (aclnnInplaceZero) and copies dout into the view of it. Negative steps are left to the CPU (aclnn tensors have no
// negative strides), as are empty tensors.
#include <algorithm>

#include "ascend/aclnn_call.h"
#include "ascend/kernels.h"
#include "bprop/device.h"

namespace bprop::ascend {
namespace {

using acl::aclTensor;

[[noreturn]] void decline(const std::string& why) { throw KernelDeclined{why}; }

// A view of a row-major tensor of `shape`: per axis the first index, the step and the count.
struct View {
  std::vector<int64_t> dims, strides;
  int64_t offset = 0;
};

View view_of(const Shape& shape, const std::vector<int64_t>& start, const std::vector<int64_t>& step,
             const std::vector<int64_t>& count) {
  const std::vector<int64_t> rm = row_major_strides(shape);
  View v;
  for (size_t i = 0; i < shape.size(); ++i) {
    v.offset += start[i] * rm[i];
    v.dims.push_back(count[i]);
    v.strides.push_back(count[i] > 1 ? step[i] * rm[i] : rm[i]);  // (a single element's stride does not matter)
  }
  return v;
}

// x[b:e:s] per axis, as Python's slice.indices, for steps > 0 (the op's own rule: begin and end clamped, negative
// ones counted from the end); axes past the lists are taken whole. Declines a negative step.
View strided_view(const KernelCtx& c, const Shape& shape) {
  const std::vector<int64_t> begin = c.attrs.get_ints("begin"), end = c.attrs.get_ints("end"),
                             steps = c.attrs.get_ints("strides");
  std::vector<int64_t> start(shape.size(), 0), step(shape.size(), 1), count(shape.begin(), shape.end());
  for (size_t i = 0; i < begin.size() && i < shape.size(); ++i) {
    const int64_t n = shape[i], s = steps[i];
    if (s <= 0) decline("a negative step");
    const auto clamp = [n](int64_t v) { return v < 0 ? std::max<int64_t>(v + n, 0) : std::min(v, n); };
    const int64_t b = clamp(begin[i]), e = clamp(end[i]);
    count[i] = e > b ? (e - b - 1) / s + 1 : 0;
    start[i] = count[i] > 0 ? b : 0;
    step[i] = s;
  }
  return view_of(shape, start, step, count);
}

// out = the view of `x` (aclnnInplaceCopy(selfRef = out, src = view)).
void copy_from_view(const KernelCtx& c, const Tensor& x, const View& v) {
  if (x.numel() == 0 || c.out.numel() == 0) decline("an empty tensor");
  AclTensorArg src(x, v.dims, v.strides, v.offset), out(c.out);
  launch_aclnn(c.device, "InplaceCopy", out.get(), static_cast<const aclTensor*>(src.get()));
}

// slice(x, begin, size): size -1 takes the rest of the axis.
void slice(KernelCtx& c) {
  const Tensor& x = c.inputs[0];
  const std::vector<int64_t> begin = c.attrs.get_ints("begin");
  copy_from_view(c, x, view_of(x.shape(), begin, std::vector<int64_t>(begin.size(), 1),
                               std::vector<int64_t>(c.out_shape.begin(), c.out_shape.end())));
}

void strided_slice(KernelCtx& c) { copy_from_view(c, c.inputs[0], strided_view(c, c.inputs[0].shape())); }

// strided_slice_grad(dout): zeros of the input's shape with dout at the sliced positions.
void strided_slice_grad(KernelCtx& c) {
  const Tensor& dout = c.inputs[0];
  if (dout.numel() == 0 || c.out.numel() == 0) decline("an empty tensor");
  const View v = strided_view(c, c.out_shape);
  {
    AclTensorArg out(c.out);
    launch_aclnn(c.device, "InplaceZero", out.get());
  }
  AclTensorArg target(c.out, v.dims, v.strides, v.offset), src(dout);
  launch_aclnn(c.device, "InplaceCopy", target.get(), static_cast<const aclTensor*>(src.get()));
}

}  // namespace

std::vector<DeviceKernel> index_kernels() {
  return {
      {"slice", "InplaceCopy", slice},
      {"strided_slice", "InplaceCopy", strided_slice},
      {"strided_slice_grad", "InplaceCopy", strided_slice_grad, {"InplaceZero"}},
  };
}

}  // namespace bprop::ascend
