// Fake-only hook of libascendcl.so for other fake libraries (the fake libhccl.so, tests/fake_hccl/): work they
// queue on a stream runs with the stream's kernels, in stream order, at synchronisation; and a check that a
// pointer lies in device memory. Not CANN's API: a real collective library reaches the device through driver
// interfaces no user code sees.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "fake_ascend/fake_acl.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Runs on the synchronising thread, inside the fake's lock: it must not call back into the fake's runtime.
/// Returns 0, or an aclError that the synchronisation which ran it returns (after setting the recent error
/// message with fake_ascend_task_error_message).
typedef aclError (*fake_ascend_host_fn)(void* user);

/// Queues fn(user) on `stream` (nullptr: the current device's default stream) as a task named `name` (a string
/// that outlives the process's use of it) that reads and writes the device memory [buffers[i], buffers[i] +
/// sizes[i]). Each range must lie in one live aclrtMalloc block of the stream's device. `release(user)` runs after
/// fn (or never, when the task never runs). Returns 0, or the code of a launch that fails (with the message).
aclError fake_ascend_enqueue_host_task(aclrtStream stream, const char* name, const void* const* buffers,
                                       const uint64_t* sizes, size_t count, fake_ascend_host_fn fn, void* user,
                                       void (*release)(void* user));

/// 1 when [ptr, ptr + bytes) lies inside one live aclrtMalloc block (its device in *device), else 0.
int fake_ascend_device_memory(const void* ptr, uint64_t bytes, int32_t* device);

/// Where a host task reads and writes the device byte at `device_ptr` (device memory itself is PROT_NONE).
void* fake_ascend_host_view(const void* device_ptr);

/// Sets the calling thread's recent error message (aclGetRecentErrMsg), from a failing host task.
void fake_ascend_task_error_message(const char* message);

/// The first code a host task returned on this thread since the last call, and 0 again (libascendcl.so's
/// synchronisations return it).
aclError fake_ascend_take_task_error(void);

#ifdef __cplusplus
}
#endif
