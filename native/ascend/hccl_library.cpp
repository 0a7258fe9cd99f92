#include "ascend/hccl_library.h"

#include <dlfcn.h>

#include <mutex>

#include "ascend/acl_library.h"
#include "bprop/errors.h"

namespace bprop::ascend {
namespace {

template <typename F>
void resolve(void* handle, const char* symbol, F& out, bool required = true) {
  dlerror();
  out = reinterpret_cast<F>(dlsym(handle, symbol));
  if (!out && required) {
    const char* e = dlerror();
    throw ValueError(std::string("HCCL: libhccl.so has no function ") + symbol + " (" + (e ? e : "not found") +
                     "); this CANN is older than bprop::dist needs (8.0 or newer)");
  }
}

const char* result_name(hccl::HcclResult code) {
  switch (code) {
    case hccl::HCCL_SUCCESS: return "HCCL_SUCCESS";
    case hccl::HCCL_E_PARA: return "HCCL_E_PARA";
    case hccl::HCCL_E_PTR: return "HCCL_E_PTR";
    case hccl::HCCL_E_MEMORY: return "HCCL_E_MEMORY";
    case hccl::HCCL_E_INTERNAL: return "HCCL_E_INTERNAL";
    case hccl::HCCL_E_NOT_SUPPORT: return "HCCL_E_NOT_SUPPORT";
    case hccl::HCCL_E_NOT_FOUND: return "HCCL_E_NOT_FOUND";
    case hccl::HCCL_E_UNAVAIL: return "HCCL_E_UNAVAIL";
    case hccl::HCCL_E_SYSCALL: return "HCCL_E_SYSCALL";
    case hccl::HCCL_E_TIMEOUT: return "HCCL_E_TIMEOUT";
    case hccl::HCCL_E_RUNTIME: return "HCCL_E_RUNTIME";
  }
  return "HcclResult";
}

}  // namespace

HcclLibrary::HcclLibrary() {
  std::string errors;
  const CannLibrary lib = open_cann_library("libhccl.so", errors);
  if (!lib.handle) {
    throw ValueError("HCCL: cannot load libhccl.so (CANN's collective communication library): " +
                     cann_load_hint(errors) + ". Tried:" + errors);
  }
  path_ = lib.path;
  void* h = lib.handle;
  resolve(h, "HcclGetRootInfo", fn_.HcclGetRootInfo);
  resolve(h, "HcclCommInitRootInfo", fn_.HcclCommInitRootInfo);
  resolve(h, "HcclAllReduce", fn_.HcclAllReduce);
  resolve(h, "HcclBroadcast", fn_.HcclBroadcast);
  resolve(h, "HcclCommDestroy", fn_.HcclCommDestroy);
  resolve(h, "HcclGetErrorString", fn_.HcclGetErrorString, false);
}

HcclLibrary& HcclLibrary::get() {
  // A failed load is not remembered (as Runtime::get): a later call tries again.
  static std::mutex mutex;
  static HcclLibrary* lib = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (!lib) lib = new HcclLibrary();  // lives to the end, like the runtime
  return *lib;
}

std::string HcclLibrary::describe(hccl::HcclResult code) const {
  std::string s = std::string(result_name(code)) + " (" + std::to_string(static_cast<int>(code)) + ")";
  if (fn_.HcclGetErrorString) {
    if (const char* m = fn_.HcclGetErrorString(code)) s += std::string(": ") + m;
  }
  return s + "; HCCL's log (ASCEND_PROCESS_LOG_PATH, or ~/ascend/log) has the details";
}

}  // namespace bprop::ascend
