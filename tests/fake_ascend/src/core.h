// The internal interface of libfake_ascend_core.so: the state every fake library shares (the device heap, the
// streams and their queues, the executors, the registry of aclTensor/aclScalar/... objects, the recent error
// message and the counters). Not an ABI anyone else uses: the three CANN-named libraries link it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fake_ascend/fake_acl.h"

#define FA_EXPORT __attribute__((visibility("default")))

// The opaque CANN types, defined here (the users of the C API only ever see pointers).
struct aclTensor {
  uint32_t magic;
  std::vector<int64_t> view, strides, storage;
  int64_t offset;
  aclDataType dtype;
  aclFormat format;
  void* data;
};
struct aclScalar {
  uint32_t magic;
  aclDataType dtype;
  unsigned char bytes[8];
};
struct aclIntArray {
  uint32_t magic;
  std::vector<int64_t> values;
};
struct aclBoolArray {
  uint32_t magic;
  std::vector<uint8_t> values;
};
struct aclTensorList {
  uint32_t magic;
  std::vector<const aclTensor*> tensors;  // owned: aclDestroyTensorList destroys them, as in CANN
};

namespace fake_ascend {

enum class Kind { Tensor, Scalar, IntArray, BoolArray, TensorList };
FA_EXPORT const char* kind_name(Kind k);

// ---- messages ----
/// Sets the calling thread's recent error message (what aclGetRecentErrMsg returns next), and prints it when
/// FAKE_ASCEND_LOG=1.
FA_EXPORT void set_error(const std::string& message);
/// "fake-ascend: <message>" on stderr, then abort(): a protocol violation a real NPU would turn into corrupt data,
/// a hang or a device exception.
[[noreturn]] FA_EXPORT void violation(const std::string& message);
FA_EXPORT std::string hex(uint64_t address);
FA_EXPORT std::string hex(const void* address);

// ---- runtime (the bodies of libascendcl.so's functions) ----
FA_EXPORT aclError rt_init(const char* config_path, uint32_t driver_device_count);
FA_EXPORT aclError rt_finalize();
FA_EXPORT aclError rt_set_device(int32_t id);
FA_EXPORT aclError rt_reset_device(int32_t id);
FA_EXPORT aclError rt_get_device_count(uint32_t* count);
FA_EXPORT aclError rt_get_device(int32_t* id);
FA_EXPORT aclError rt_create_stream(aclrtStream* stream);
FA_EXPORT aclError rt_destroy_stream(aclrtStream stream);
FA_EXPORT aclError rt_synchronize_stream(aclrtStream stream);
FA_EXPORT aclError rt_synchronize_device();
FA_EXPORT aclError rt_malloc(void** ptr, size_t size, int policy);
FA_EXPORT aclError rt_free(void* ptr);
FA_EXPORT aclError rt_memcpy(void* dst, size_t dest_max, const void* src, size_t count, int kind, bool async,
                             aclrtStream stream);
FA_EXPORT aclError rt_memset(void* ptr, size_t max_count, int32_t value, size_t count);
FA_EXPORT aclError rt_get_mem_info(int attr, size_t* free_bytes, size_t* total_bytes);
FA_EXPORT bool rt_initialized();

/// The product line the fake plays, chosen with FAKE_ASCEND_SOC at aclInit: CANN documents operator support per
/// line, and the operator table (cann_table.h) has a column for each.
enum class SocProfile {
  AtlasA2Training,  ///< Ascend910B1..B4 (the default, Ascend910B1)
  AtlasTraining,    ///< Ascend910A, Ascend910ProA, Ascend910PremiumA, Ascend910ProB (the first Ascend 910)
};
/// The SoC of this session (valid after aclInit), as aclrtGetSocName() reports it, and its line.
FA_EXPORT const char* rt_soc_name();
FA_EXPORT SocProfile rt_soc_profile();
FA_EXPORT const char* soc_profile_name(SocProfile p);
FA_EXPORT const char* rt_take_error();

FA_EXPORT uint64_t counter_kernel_launches();
FA_EXPORT uint64_t counter_live_bytes();
FA_EXPORT uint64_t counter_syncs();
FA_EXPORT const char* counter_last_kernel();
FA_EXPORT void counter_reset();

// ---- objects of libnnopbase.so ----
FA_EXPORT void register_object(Kind kind, const void* object);
/// Forgets a destroyed object: a violation when it is unknown (never created, or destroyed already), when an
/// executor that was not launched yet still refers to it, or when it belongs to an aclTensorList other than `owner`
/// (the list destroys it).
FA_EXPORT void unregister_object(Kind kind, const void* object, const char* function, const void* owner = nullptr);
/// `owner` (an aclTensorList) takes `members` (live aclTensors): a violation when one already belongs to a list or
/// appears twice, since destroying the lists would destroy it twice.
FA_EXPORT void adopt_objects(const void* owner, const std::vector<const void*>& members, const char* function);
FA_EXPORT bool object_live(Kind kind, const void* object);

// ---- device memory ----
/// A byte range of device memory a queued task reads or writes.
struct Range {
  uint64_t begin, end;
  bool write;
};
/// The live aclrtMalloc block holding [address, address + length), if one does.
struct BlockInfo {
  uint64_t begin = 0, size = 0;
  int device = -1;
};
FA_EXPORT bool find_block(uint64_t address, uint64_t length, BlockInfo* block);
/// The live block containing `address` (any length), for messages.
FA_EXPORT bool block_containing(uint64_t address, BlockInfo* block);
/// The address at which the fake itself reads and writes the device byte at `device_address`.
FA_EXPORT uint8_t* host_view(uint64_t device_address);

// ---- executors (libopapi.so) ----
using Kernel = std::function<void(uint8_t* workspace, uint64_t workspace_size)>;
struct ExecutorSpec {
  const char* op = nullptr;  // "aclnnAdd": a string literal
  uint64_t workspace = 0;
  std::vector<const void*> refs;  // the aclTensor/aclScalar/... objects it was created from
  std::vector<Range> ranges;      // device memory it reads and writes
  Kernel kernel;
};
FA_EXPORT aclOpExecutor* create_executor(ExecutorSpec&& spec);
/// The body of every aclnnXxx(workspace, workspaceSize, executor, stream).
FA_EXPORT aclnnStatus launch(const char* op, void* workspace, uint64_t workspace_size, aclOpExecutor* executor,
                             aclrtStream stream);

}  // namespace fake_ascend
