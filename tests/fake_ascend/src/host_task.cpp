// libascendcl.so (fake): the host-task hook of fake_ascend/host_task.h. A host task is an executor of the fake's
// own (core.h's create_executor and launch), so it is checked, ordered and run exactly like an aclnn kernel.
#include "fake_ascend/host_task.h"

#include <string>
#include <vector>

#include "core.h"

namespace fa = fake_ascend;

namespace {
thread_local aclError t_task_error = 0;  // tasks run on the thread that synchronises
}  // namespace

extern "C" {

FA_EXPORT aclError fake_ascend_enqueue_host_task(aclrtStream stream, const char* name, const void* const* buffers,
                                                 const uint64_t* sizes, size_t count, fake_ascend_host_fn fn,
                                                 void* user, void (*release)(void*)) {
  if (!name || !fn || (count && (!buffers || !sizes))) {
    fa::set_error("fake_ascend_enqueue_host_task: name, fn, buffers or sizes is nullptr");
    return ACL_ERROR_INVALID_PARAM;
  }
  fa::ExecutorSpec spec;
  spec.op = name;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t a = reinterpret_cast<uint64_t>(buffers[i]);
    if (sizes[i] == 0) continue;
    if (!fa::find_block(a, sizes[i], nullptr)) {
      fa::set_error(std::string(name) + ": " + fa::hex(a) + " (" + std::to_string(sizes[i]) +
                    " bytes) is not inside one live aclrtMalloc block");
      return ACL_ERROR_INVALID_PARAM;
    }
    spec.ranges.push_back(fa::Range{a, a + sizes[i], true});
  }
  spec.kernel = [fn, user, release](uint8_t*, uint64_t) {
    const aclError rc = fn(user);
    if (rc != ACL_SUCCESS && t_task_error == ACL_SUCCESS) t_task_error = rc;
    if (release) release(user);
  };
  aclOpExecutor* executor = fa::create_executor(std::move(spec));
  return fa::launch(name, nullptr, 0, executor, stream);
}

FA_EXPORT int fake_ascend_device_memory(const void* ptr, uint64_t bytes, int32_t* device) {
  fa::BlockInfo b;
  if (!fa::find_block(reinterpret_cast<uint64_t>(ptr), bytes, &b)) return 0;
  if (device) *device = b.device;
  return 1;
}

FA_EXPORT void* fake_ascend_host_view(const void* device_ptr) {
  return fa::host_view(reinterpret_cast<uint64_t>(device_ptr));
}

FA_EXPORT void fake_ascend_task_error_message(const char* message) { fa::set_error(message ? message : ""); }

FA_EXPORT aclError fake_ascend_take_task_error(void) {
  const aclError rc = t_task_error;
  t_task_error = ACL_SUCCESS;
  return rc;
}

}  // extern "C"
