// Our own declarations of the parts of HCCL's C API (libhccl.so) that bprop::dist calls. Names, argument types and
// enum values as in CANN's hccl/hccl.h and hccl/hccl_types.h (HCCL API reference, CANN 8.0); every function is
// resolved with dlsym at first use (hccl_library.h), so nothing of HCCL is needed to build.
#pragma once
#include <cstdint>

#include "ascend/acl_api.h"

namespace bprop::ascend::hccl {

enum HcclResult : int {
  HCCL_SUCCESS = 0,
  HCCL_E_PARA = 1,
  HCCL_E_PTR = 2,
  HCCL_E_MEMORY = 3,
  HCCL_E_INTERNAL = 4,
  HCCL_E_NOT_SUPPORT = 5,
  HCCL_E_NOT_FOUND = 6,
  HCCL_E_UNAVAIL = 7,
  HCCL_E_SYSCALL = 8,
  HCCL_E_TIMEOUT = 9,
  HCCL_E_RUNTIME = 15,
};

using HcclComm = void*;

enum HcclReduceOp : int { HCCL_REDUCE_SUM = 0, HCCL_REDUCE_PROD = 1, HCCL_REDUCE_MAX = 2, HCCL_REDUCE_MIN = 3 };

enum HcclDataType : int {
  HCCL_DATA_TYPE_INT8 = 0,
  HCCL_DATA_TYPE_INT16 = 1,
  HCCL_DATA_TYPE_INT32 = 2,
  HCCL_DATA_TYPE_FP16 = 3,
  HCCL_DATA_TYPE_FP32 = 4,
  HCCL_DATA_TYPE_INT64 = 5,
  HCCL_DATA_TYPE_UINT64 = 6,
  HCCL_DATA_TYPE_UINT8 = 7,
  HCCL_DATA_TYPE_UINT16 = 8,
  HCCL_DATA_TYPE_UINT32 = 9,
  HCCL_DATA_TYPE_FP64 = 10,  // Broadcast only: AllReduce takes no FP64
  HCCL_DATA_TYPE_BFP16 = 11,
};

inline constexpr uint32_t HCCL_ROOT_INFO_BYTES = 4108;
/// What HcclGetRootInfo fills on the root rank and every rank passes to HcclCommInitRootInfo.
struct HcclRootInfo {
  char internal[HCCL_ROOT_INFO_BYTES];
};

using HcclGetRootInfo_t = HcclResult (*)(HcclRootInfo* root_info);
using HcclCommInitRootInfo_t = HcclResult (*)(uint32_t n_ranks, const HcclRootInfo* root_info, uint32_t rank,
                                              HcclComm* comm);
using HcclAllReduce_t = HcclResult (*)(void* send_buf, void* recv_buf, uint64_t count, HcclDataType data_type,
                                       HcclReduceOp op, HcclComm comm, acl::aclrtStream stream);
using HcclBroadcast_t = HcclResult (*)(void* buf, uint64_t count, HcclDataType data_type, uint32_t root,
                                       HcclComm comm, acl::aclrtStream stream);
using HcclCommDestroy_t = HcclResult (*)(HcclComm comm);
using HcclGetErrorString_t = const char* (*)(HcclResult code);

}  // namespace bprop::ascend::hccl
