#include "ascend/aclnn_call.h"

#include "bprop/errors.h"

namespace bprop::ascend {

acl::aclDataType acl_dtype(DType dt) {
  switch (dt) {
    case DType::Float32: return acl::ACL_FLOAT;
    case DType::Float64: return acl::ACL_DOUBLE;
    case DType::Int32: return acl::ACL_INT32;
    case DType::Bool: return acl::ACL_BOOL;
    case DType::Float16: return acl::ACL_FLOAT16;
    case DType::BFloat16: return acl::ACL_BF16;
  }
  return acl::ACL_DT_UNDEFINED;
}

namespace {
const AclFunctions& fn() { return Runtime::get().lib().fn(); }
}  // namespace

acl::aclFormat acl_format(Layout layout, size_t rank) {
  if (layout == Layout::Channels && rank == 3) return acl::ACL_FORMAT_NCL;
  if (layout == Layout::Channels && rank == 4) return acl::ACL_FORMAT_NCHW;
  if (layout == Layout::Channels && rank == 5) return acl::ACL_FORMAT_NCDHW;
  return acl::ACL_FORMAT_ND;
}

AclTensorArg::AclTensorArg(const Tensor& t, Layout layout)
    : AclTensorArg(t, std::vector<int64_t>(t.shape().begin(), t.shape().end()), row_major_strides(t.shape()), 0,
                   layout) {}

// The aclTensor describes the whole storage (its base address and its size in elements) and the view's offset in
// elements, as torch_npu passes its tensors: a view's own address (a gradient bucket's slice) need not have the
// alignment of the allocation, which the operators may assume of tensorData.
AclTensorArg::AclTensorArg(const Tensor& t, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                           int64_t offset, Layout layout) {
  const size_t element = dtype_size(t.dtype());
  const size_t byte_offset = t.impl()->offset;
  if (byte_offset % element != 0) {
    throw ValueError("Ascend: a " + std::string(dtype_name(t.dtype())) + " tensor of shape " + shape_str(t.shape()) +
                     " starts " + std::to_string(byte_offset) +
                     " bytes into its storage, not at a whole element (aclCreateTensor takes offsets in elements)");
  }
  const int64_t storage = static_cast<int64_t>(t.impl()->storage->bytes() / element);
  const int64_t first = static_cast<int64_t>(byte_offset / element) + offset;
  p_ = fn().aclCreateTensor(dims.data(), dims.size(), acl_dtype(t.dtype()), strides.data(), first,
                            acl_format(layout, dims.size()), &storage, 1, t.impl()->storage->data());
  if (!p_) {
    throw ValueError("Ascend: aclCreateTensor failed for a tensor of shape " + shape_str(t.shape()) + " " +
                     dtype_name(t.dtype()) + ": " + Runtime::get().lib().recent_error());
  }
}

AclTensorArg::~AclTensorArg() {
  if (p_) fn().aclDestroyTensor(p_);
}

AclScalarArg::AclScalarArg(double value, DType dtype) {
  void* v = nullptr;
  switch (dtype) {
    case DType::Float32: value_.f = static_cast<float>(value); v = &value_.f; break;
    case DType::Float64: value_.d = value; v = &value_.d; break;
    case DType::Int32: value_.i = static_cast<int32_t>(value); v = &value_.i; break;
    case DType::Bool: value_.b = value != 0.0; v = &value_.b; break;
    case DType::Float16:
    case DType::BFloat16:  // (a half scalar is passed as float32, which CANN casts)
      value_.f = static_cast<float>(value); v = &value_.f; dtype = DType::Float32; break;
  }
  p_ = fn().aclCreateScalar(v, acl_dtype(dtype));
  if (!p_) throw ValueError("Ascend: aclCreateScalar failed: " + Runtime::get().lib().recent_error());
}

AclScalarArg::~AclScalarArg() {
  if (p_) fn().aclDestroyScalar(p_);
}

AclIntArrayArg::AclIntArrayArg(const std::vector<int64_t>& values) {
  p_ = fn().aclCreateIntArray(values.data(), values.size());
  if (!p_) throw ValueError("Ascend: aclCreateIntArray failed: " + Runtime::get().lib().recent_error());
}

AclIntArrayArg::~AclIntArrayArg() {
  if (p_) fn().aclDestroyIntArray(p_);
}

AclBoolArrayArg::AclBoolArrayArg(const bool* values, uint64_t n) {
  p_ = fn().aclCreateBoolArray(values, n);
  if (!p_) throw ValueError("Ascend: aclCreateBoolArray failed: " + Runtime::get().lib().recent_error());
}

AclBoolArrayArg::~AclBoolArrayArg() {
  if (p_) fn().aclDestroyBoolArray(p_);
}

AclTensorListArg::AclTensorListArg(const std::vector<Tensor>& tensors) {
  std::vector<const acl::aclTensor*> items;
  try {
    for (const Tensor& t : tensors) items.push_back(AclTensorArg(t).release());
  } catch (...) {
    for (const acl::aclTensor* t : items) fn().aclDestroyTensor(t);
    throw;
  }
  p_ = fn().aclCreateTensorList(items.data(), items.size());
  if (!p_) {
    for (const acl::aclTensor* t : items) fn().aclDestroyTensor(t);
    throw ValueError("Ascend: aclCreateTensorList failed: " + Runtime::get().lib().recent_error());
  }
}

AclTensorListArg::~AclTensorListArg() {
  if (p_) fn().aclDestroyTensorList(p_);
}

namespace detail {

AclnnLaunch::AclnnLaunch(Device device, const std::string& op)
    : dev(Runtime::get().device(device.index)), pair(Runtime::get().lib().aclnn(op)), name(op) {
  dev.bind();
}

void AclnnLaunch::check(acl::aclnnStatus status, const char* phase) const {
  if (status == 0) return;
  throw ValueError("Ascend: aclnn" + name + (std::string(phase).empty() ? "" : std::string(phase)) +
                   " failed on device " + std::to_string(dev.index()) + " with " +
                   describe_error(Runtime::get().lib(), status));
}

void AclnnLaunch::run(uint64_t workspace_size, acl::aclOpExecutor* executor) {
  void* workspace = workspace_size ? dev.allocate(workspace_size) : nullptr;
  const acl::aclnnStatus status = pair.launch(workspace, workspace_size, executor, dev.stream());
  if (workspace) dev.release(workspace);  // reused only by work queued after this launch
  check(status, "");
}

}  // namespace detail
}  // namespace bprop::ascend
