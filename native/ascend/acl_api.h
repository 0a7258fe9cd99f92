// Our own declarations of the parts of CANN's C API the Ascend backend calls (no CANN header or library is needed
// to build). Values as in CANN's acl/acl_base.h, acl/acl_rt.h and aclnn/acl_meta.h; every function is resolved
// with dlsym at first use (acl_library.h), so the build carries the backend whether or not CANN is installed.
#pragma once
#include <cstddef>
#include <cstdint>

namespace bprop::ascend::acl {

using aclError = int;
using aclnnStatus = int;
using aclrtStream = void*;
struct aclTensor;
struct aclScalar;
struct aclIntArray;
struct aclBoolArray;
struct aclTensorList;
struct aclOpExecutor;

inline constexpr aclError ACL_SUCCESS = 0;

enum aclDataType : int {
  ACL_DT_UNDEFINED = -1,
  ACL_FLOAT = 0,
  ACL_FLOAT16 = 1,
  ACL_INT8 = 2,
  ACL_INT32 = 3,
  ACL_UINT8 = 4,
  ACL_INT16 = 6,
  ACL_UINT16 = 7,
  ACL_UINT32 = 8,
  ACL_INT64 = 9,
  ACL_UINT64 = 10,
  ACL_DOUBLE = 11,
  ACL_BOOL = 12,
  ACL_BF16 = 27,
};

enum aclFormat : int {
  ACL_FORMAT_UNDEFINED = -1,
  ACL_FORMAT_NCHW = 0,
  ACL_FORMAT_NHWC = 1,
  ACL_FORMAT_ND = 2,
  ACL_FORMAT_NCDHW = 30,
  ACL_FORMAT_NCL = 47,
};

enum aclrtMemcpyKind : int {
  ACL_MEMCPY_HOST_TO_HOST = 0,
  ACL_MEMCPY_HOST_TO_DEVICE = 1,
  ACL_MEMCPY_DEVICE_TO_HOST = 2,
  ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
};

enum aclrtMemMallocPolicy : int {
  ACL_MEM_MALLOC_HUGE_FIRST = 0,
  ACL_MEM_MALLOC_HUGE_ONLY = 1,
  ACL_MEM_MALLOC_NORMAL_ONLY = 2,
};

enum aclrtMemAttr : int { ACL_DDR_MEM = 0, ACL_HBM_MEM = 1 };

/// aclnnMatmul / aclnnConvolution's cubeMathType.
enum CubeMathType : int8_t { KEEP_DTYPE = 0, ALLOW_FP32_DOWN_PRECISION = 1, USE_FP16 = 2, USE_HF32 = 3 };

// ---- libascendcl.so: the runtime ----
using aclInit_t = aclError (*)(const char* config_path);
using aclFinalize_t = aclError (*)();
using aclrtSetDevice_t = aclError (*)(int32_t device_id);
using aclrtResetDevice_t = aclError (*)(int32_t device_id);
using aclrtGetDeviceCount_t = aclError (*)(uint32_t* count);
using aclrtCreateStream_t = aclError (*)(aclrtStream* stream);
using aclrtDestroyStream_t = aclError (*)(aclrtStream stream);
using aclrtSynchronizeStream_t = aclError (*)(aclrtStream stream);
using aclrtMalloc_t = aclError (*)(void** dev_ptr, size_t size, aclrtMemMallocPolicy policy);
using aclrtFree_t = aclError (*)(void* dev_ptr);
using aclrtMemcpy_t = aclError (*)(void* dst, size_t dest_max, const void* src, size_t count, aclrtMemcpyKind kind);
using aclrtMemcpyAsync_t = aclError (*)(void* dst, size_t dest_max, const void* src, size_t count,
                                        aclrtMemcpyKind kind, aclrtStream stream);
using aclrtGetMemInfo_t = aclError (*)(aclrtMemAttr attr, size_t* free, size_t* total);
using aclrtGetVersion_t = aclError (*)(int32_t* major, int32_t* minor, int32_t* patch);
using aclrtGetSocName_t = const char* (*)();
using aclGetRecentErrMsg_t = const char* (*)();

// ---- libnnopbase.so: operator arguments ----
using aclCreateTensor_t = aclTensor* (*)(const int64_t* view_dims, uint64_t view_dims_num, aclDataType data_type,
                                         const int64_t* stride, int64_t offset, aclFormat format,
                                         const int64_t* storage_dims, uint64_t storage_dims_num, void* tensor_data);
using aclDestroyTensor_t = aclnnStatus (*)(const aclTensor* tensor);
using aclCreateScalar_t = aclScalar* (*)(void* value, aclDataType data_type);
using aclDestroyScalar_t = aclnnStatus (*)(const aclScalar* scalar);
using aclCreateIntArray_t = aclIntArray* (*)(const int64_t* value, uint64_t size);
using aclDestroyIntArray_t = aclnnStatus (*)(const aclIntArray* array);
using aclCreateBoolArray_t = aclBoolArray* (*)(const bool* value, uint64_t size);
using aclDestroyBoolArray_t = aclnnStatus (*)(const aclBoolArray* array);
/// A tensor list owns its tensors: aclDestroyTensorList destroys them too.
using aclCreateTensorList_t = aclTensorList* (*)(const aclTensor* const* value, uint64_t size);
using aclDestroyTensorList_t = aclnnStatus (*)(const aclTensorList* array);

// ---- libopapi.so: every operator is a pair, aclnnXxxGetWorkspaceSize(args..., &size, &executor) then
// aclnnXxx(workspace, size, executor, stream); the second has one signature for all. ----
using aclnnLaunch_t = aclnnStatus (*)(void* workspace, uint64_t workspace_size, aclOpExecutor* executor,
                                      aclrtStream stream);

}  // namespace bprop::ascend::acl
