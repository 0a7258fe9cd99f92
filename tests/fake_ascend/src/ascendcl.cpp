// libascendcl.so (fake): the runtime entry points, with the counters tests read. The state is in
// libfake_ascend_core.so; libascend_hal.so (the "driver") says how many devices there are.
#include <cstdlib>
#include <string>

#include "core.h"
#include "fake_ascend/host_task.h"

extern "C" int drvGetDevNum(uint32_t* count);  // libascend_hal.so

namespace fa = fake_ascend;

extern "C" {

FA_EXPORT aclError aclInit(const char* configPath) {
  uint32_t devices = 0;
  if (drvGetDevNum(&devices) != 0) {
    const char* v = std::getenv("FAKE_ASCEND_DEVICES");
    fa::set_error(std::string("aclInit: the driver (libascend_hal.so) reports no device count: FAKE_ASCEND_DEVICES=") +
                  (v ? v : "") + " is not a number from 0 to 64");
    return ACL_ERROR_INVALID_PARAM;
  }
  return fa::rt_init(configPath, devices);
}
FA_EXPORT aclError aclFinalize(void) { return fa::rt_finalize(); }
FA_EXPORT aclError aclrtSetDevice(int32_t deviceId) { return fa::rt_set_device(deviceId); }
FA_EXPORT aclError aclrtResetDevice(int32_t deviceId) { return fa::rt_reset_device(deviceId); }
FA_EXPORT aclError aclrtGetDeviceCount(uint32_t* count) { return fa::rt_get_device_count(count); }
FA_EXPORT aclError aclrtGetDevice(int32_t* deviceId) { return fa::rt_get_device(deviceId); }
FA_EXPORT aclError aclrtCreateStream(aclrtStream* stream) { return fa::rt_create_stream(stream); }
FA_EXPORT aclError aclrtDestroyStream(aclrtStream stream) { return fa::rt_destroy_stream(stream); }
// A host task that failed while the queue ran (host_task.h) makes the synchronisation fail, as a failed device task
// does on CANN.
FA_EXPORT aclError aclrtSynchronizeStream(aclrtStream stream) {
  const aclError rc = fa::rt_synchronize_stream(stream);
  const aclError task = fake_ascend_take_task_error();
  return rc != ACL_SUCCESS ? rc : task;
}
FA_EXPORT aclError aclrtSynchronizeDevice(void) {
  const aclError rc = fa::rt_synchronize_device();
  const aclError task = fake_ascend_take_task_error();
  return rc != ACL_SUCCESS ? rc : task;
}
FA_EXPORT aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return fa::rt_malloc(devPtr, size, static_cast<int>(policy));
}
FA_EXPORT aclError aclrtFree(void* devPtr) { return fa::rt_free(devPtr); }
FA_EXPORT aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
  return fa::rt_memcpy(dst, destMax, src, count, static_cast<int>(kind), false, nullptr);
}
FA_EXPORT aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                                    aclrtStream stream) {
  return fa::rt_memcpy(dst, destMax, src, count, static_cast<int>(kind), true, stream);
}
FA_EXPORT aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
  return fa::rt_memset(devPtr, maxCount, value, count);
}
FA_EXPORT aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total) {
  return fa::rt_get_mem_info(static_cast<int>(attr), free, total);
}
FA_EXPORT aclError aclrtGetVersion(int32_t* majorVersion, int32_t* minorVersion, int32_t* patchVersion) {
  if (!majorVersion || !minorVersion || !patchVersion) {
    fa::set_error("aclrtGetVersion: majorVersion, minorVersion or patchVersion is nullptr");
    return ACL_ERROR_INVALID_PARAM;
  }
  *majorVersion = 1;  // the fake's own numbers (README.md)
  *minorVersion = 0;
  *patchVersion = 0;
  return ACL_SUCCESS;
}
FA_EXPORT const char* aclrtGetSocName(void) {
  if (!fa::rt_initialized()) {
    fa::set_error("aclrtGetSocName: aclInit has not been called");
    return nullptr;
  }
  return fa::rt_soc_name();
}
FA_EXPORT const char* aclGetRecentErrMsg(void) { return fa::rt_take_error(); }

FA_EXPORT uint64_t fake_ascend_kernel_launches(void) { return fa::counter_kernel_launches(); }
FA_EXPORT uint64_t fake_ascend_live_bytes(void) { return fa::counter_live_bytes(); }
FA_EXPORT uint64_t fake_ascend_syncs(void) { return fa::counter_syncs(); }
FA_EXPORT const char* fake_ascend_last_kernel(void) { return fa::counter_last_kernel(); }
FA_EXPORT void fake_ascend_reset_counters(void) { fa::counter_reset(); }

}  // extern "C"
