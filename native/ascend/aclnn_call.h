// Calling an aclnn operator: its arguments as CANN objects (destroyed after the launch, which CANN allows), the
// two-phase call (workspace size, then the launch on the device's stream with a workspace from the caching
// allocator), and every failing status reported with the operator, the code and aclGetRecentErrMsg().
#pragma once
#include <string>
#include <vector>

#include "ascend/runtime.h"
#include "bprop/tensor.h"

namespace bprop::ascend {

/// The ACL dtype of a bprop dtype.
acl::aclDataType acl_dtype(DType dt);

/// How a tensor argument's layout is named to CANN (the aclFormat of aclCreateTensor). CANN's operators check it
/// per argument: the elementwise, reduction and layout operators take ND at any rank, while the convolution,
/// pooling and batch-norm operators want a channel layout's name for their feature maps (aclnnAvgPool2d: NCL for
/// a 3-D one, NCHW for a 4-D one) and refuse ND there with 161002. Each kernel says which its operator documents (the table in docs/ascend.md).
enum class Layout {
  ND,        ///< ACL_FORMAT_ND at every rank
  Channels,  ///< NCL for 3-D, NCHW for 4-D, NCDHW for 5-D, ND for the other ranks (torch_npu's base formats)
};

/// The aclFormat of a `rank`-D tensor argument laid out as `layout`.
acl::aclFormat acl_format(Layout layout, size_t rank);

/// Owners of CANN argument objects.
class AclTensorArg {
 public:
  /// `t` (contiguous, on the device) as an aclTensor of its shape.
  explicit AclTensorArg(const Tensor& t, Layout layout = Layout::ND);
  /// A strided view of `t`'s elements (a transposed operand, a slice): `dims`, `strides` and the first element's
  /// `offset` in elements from `t`'s first (non-negative strides: aclnn takes no negative ones).
  AclTensorArg(const Tensor& t, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
               int64_t offset = 0, Layout layout = Layout::ND);
  ~AclTensorArg();
  AclTensorArg(const AclTensorArg&) = delete;
  AclTensorArg& operator=(const AclTensorArg&) = delete;
  acl::aclTensor* get() const { return p_; }
  /// Hands the aclTensor over (to a tensor list, which destroys it).
  acl::aclTensor* release() {
    acl::aclTensor* p = p_;
    p_ = nullptr;
    return p;
  }

 private:
  acl::aclTensor* p_ = nullptr;
};

class AclScalarArg {
 public:
  AclScalarArg(double value, DType dtype);
  ~AclScalarArg();
  AclScalarArg(const AclScalarArg&) = delete;
  AclScalarArg& operator=(const AclScalarArg&) = delete;
  acl::aclScalar* get() const { return p_; }

 private:
  union {
    float f;
    double d;
    int32_t i;
    bool b;
  } value_{};
  acl::aclScalar* p_ = nullptr;
};

class AclIntArrayArg {
 public:
  explicit AclIntArrayArg(const std::vector<int64_t>& values);
  ~AclIntArrayArg();
  AclIntArrayArg(const AclIntArrayArg&) = delete;
  AclIntArrayArg& operator=(const AclIntArrayArg&) = delete;
  acl::aclIntArray* get() const { return p_; }

 private:
  acl::aclIntArray* p_ = nullptr;
};

class AclBoolArrayArg {
 public:
  AclBoolArrayArg(const bool* values, uint64_t n);
  ~AclBoolArrayArg();
  AclBoolArrayArg(const AclBoolArrayArg&) = delete;
  AclBoolArrayArg& operator=(const AclBoolArrayArg&) = delete;
  acl::aclBoolArray* get() const { return p_; }

 private:
  acl::aclBoolArray* p_ = nullptr;
};

/// A list of tensors (aclnnCat's): the list owns the aclTensors made for it and destroys them with itself.
class AclTensorListArg {
 public:
  explicit AclTensorListArg(const std::vector<Tensor>& tensors);
  ~AclTensorListArg();
  AclTensorListArg(const AclTensorListArg&) = delete;
  AclTensorListArg& operator=(const AclTensorListArg&) = delete;
  acl::aclTensorList* get() const { return p_; }

 private:
  acl::aclTensorList* p_ = nullptr;
};

/// Launches aclnn<name> on `device`'s stream: `args` are the operator's arguments before (workspaceSize,
/// executor). The workspace goes back to the cache right after the launch (stream order keeps it valid).
template <typename... Args>
void launch_aclnn(Device device, const std::string& name, Args... args);

namespace detail {
/// The shared part: the pair for `name`, the status check, the workspace and the launch.
struct AclnnLaunch {
  DeviceState& dev;
  AclnnPair pair;
  std::string name;
  AclnnLaunch(Device device, const std::string& name);
  void check(acl::aclnnStatus status, const char* phase) const;
  void run(uint64_t workspace_size, acl::aclOpExecutor* executor);
};
}  // namespace detail

template <typename... Args>
void launch_aclnn(Device device, const std::string& name, Args... args) {
  detail::AclnnLaunch call(device, name);
  using GetWorkspaceSize = acl::aclnnStatus (*)(Args..., uint64_t*, acl::aclOpExecutor**);
  uint64_t workspace_size = 0;
  acl::aclOpExecutor* executor = nullptr;
  call.check(reinterpret_cast<GetWorkspaceSize>(call.pair.get_workspace_size)(args..., &workspace_size, &executor),
             "GetWorkspaceSize");
  call.run(workspace_size, executor);
}

}  // namespace bprop::ascend
