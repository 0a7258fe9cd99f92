// Declarations of the part of HCCL's C API (hccl/hccl.h, hccl/hccl_types.h) that the fake libhccl.so exports
// (test-only; see ../../README.md). Written for this project from CANN's public HCCL API reference: same names,
// argument types and enum values.
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
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
} HcclResult;

typedef void* HcclComm;
typedef void* aclrtStream;

typedef enum { HCCL_REDUCE_SUM = 0, HCCL_REDUCE_PROD = 1, HCCL_REDUCE_MAX = 2, HCCL_REDUCE_MIN = 3 } HcclReduceOp;

typedef enum {
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
  HCCL_DATA_TYPE_FP64 = 10,
  HCCL_DATA_TYPE_BFP16 = 11,
  FAKE_HCCL_DATA_TYPE_RANGE_ = 255  // not HCCL's: any value up to 255 is representable (UBSan -fsanitize=enum)
} HcclDataType;

#define HCCL_ROOT_INFO_BYTES 4108
typedef struct HcclRootInfoDef {
  char internal[HCCL_ROOT_INFO_BYTES];
} HcclRootInfo;

HcclResult HcclGetRootInfo(HcclRootInfo* rootInfo);
HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank, HcclComm* comm);
HcclResult HcclAllReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType, HcclReduceOp op,
                         HcclComm comm, aclrtStream stream);
HcclResult HcclBroadcast(void* buf, uint64_t count, HcclDataType dataType, uint32_t root, HcclComm comm,
                         aclrtStream stream);
HcclResult HcclCommDestroy(HcclComm comm);
const char* HcclGetErrorString(HcclResult code);

#ifdef __cplusplus
}
#endif
