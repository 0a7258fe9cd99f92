#include "ascend/runtime.h"

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "bprop/errors.h"

namespace bprop::ascend {
namespace {

constexpr acl::aclError kMemoryAllocationError = 207001;  // ACL_ERROR_RT_MEMORY_ALLOCATION
// Uploads queued on a stream read host copies kept until the next synchronisation; past this much the backend
// synchronises early rather than hold more.
constexpr size_t kMaxStagedBytes = size_t{256} << 20;

std::atomic<bool> g_finalized{false};

// aclnn kernels may read up to 32 bytes past a tensor's end (CANN's memory guidance: allocate size + 32, aligned
// to 32); blocks come in 512-byte steps so the cache matches sizes well.
size_t round_block(size_t bytes) { return ((bytes + 32 + 511) / 512) * 512; }

void check_call(AclLibrary& lib, acl::aclError code, const std::string& call) {
  if (code == acl::ACL_SUCCESS) return;
  const std::string what = "Ascend: " + call + " failed with " + describe_error(lib, code);
  if (code == kMemoryAllocationError) throw MemoryError(what);
  throw ValueError(what);
}

}  // namespace

std::string describe_error(AclLibrary& lib, acl::aclError code) {
  const std::string msg = lib.recent_error();
  return "code " + std::to_string(code) + (msg.empty() ? std::string() : ": " + msg);
}

// ---- one device ----------------------------------------------------------------------------------------------

namespace {
thread_local int t_current_device = -1;  // the device this thread last set (the ACL context is per thread)
}  // namespace

DeviceState::DeviceState(AclLibrary& lib, int index) : lib_(lib), index_(index) {
  bind();
  check_call(lib_, lib_.fn().aclrtCreateStream(&stream_), "aclrtCreateStream on device " + std::to_string(index));
}

void DeviceState::bind() {
  if (t_current_device == index_) return;
  check_call(lib_, lib_.fn().aclrtSetDevice(index_), "aclrtSetDevice(" + std::to_string(index_) + ")");
  t_current_device = index_;
  std::lock_guard<std::mutex> lock(mutex_);
  ++set_device_calls_;
}

void* DeviceState::malloc_block(size_t rounded) {
  void* p = nullptr;
  acl::aclError code = lib_.fn().aclrtMalloc(&p, rounded, acl::ACL_MEM_MALLOC_HUGE_FIRST);
  if (code != acl::ACL_SUCCESS) {  // the cache may hold enough: give it back and try once more
    lib_.recent_error();           // (clears the message of the first try)
    sync_locked();
    for (auto& [size, block] : free_) {
      lib_.fn().aclrtFree(block);
      blocks_.erase(block);
      cached_ -= size;
    }
    free_.clear();
    code = lib_.fn().aclrtMalloc(&p, rounded, acl::ACL_MEM_MALLOC_HUGE_FIRST);
  }
  if (code != acl::ACL_SUCCESS) {
    throw MemoryError("Ascend: cannot allocate " + std::to_string(rounded) + " bytes on device " +
                      std::to_string(index_) + " (" + std::to_string(allocated_) + " bytes in use): aclrtMalloc " +
                      describe_error(lib_, code));
  }
  blocks_[p] = rounded;
  return p;
}

void* DeviceState::allocate(size_t bytes) {
  bind();
  const size_t rounded = round_block(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  // The smallest cached block that fits without wasting more than half of it.
  auto it = free_.lower_bound(rounded);
  void* p = nullptr;
  if (it != free_.end() && it->first <= 2 * rounded) {
    p = it->second;
    cached_ -= it->first;
    free_.erase(it);
  } else {
    p = malloc_block(rounded);
  }
  allocated_ += blocks_[p];
  return p;
}

void DeviceState::release(void* ptr) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end()) return;
  allocated_ -= it->second;
  cached_ += it->second;
  free_.emplace(it->second, ptr);
}

void DeviceState::sync_locked() {
  check_call(lib_, lib_.fn().aclrtSynchronizeStream(stream_), "aclrtSynchronizeStream on device " +
                                                                   std::to_string(index_));
  staged_.clear();
  staged_bytes_ = 0;
}

void DeviceState::synchronize() {
  bind();
  std::lock_guard<std::mutex> lock(mutex_);
  sync_locked();
}

void DeviceState::copy_to_host(void* host, const void* dev, size_t bytes) {
  if (bytes == 0) return;
  bind();
  std::lock_guard<std::mutex> lock(mutex_);
  sync_locked();  // the values are those of every queued kernel
  check_call(lib_, lib_.fn().aclrtMemcpy(host, bytes, dev, bytes, acl::ACL_MEMCPY_DEVICE_TO_HOST),
             "aclrtMemcpy(device to host, " + std::to_string(bytes) + " bytes)");
}

void DeviceState::copy_from_host(void* dev, const void* host, size_t bytes) {
  if (bytes == 0) return;
  bind();
  std::lock_guard<std::mutex> lock(mutex_);
  // Queued on the stream (the block may still be read by queued kernels of its previous owner), from a host copy
  // that lives until the stream has run it: the caller's buffer is free on return.
  staged_.emplace_back(static_cast<const unsigned char*>(host), static_cast<const unsigned char*>(host) + bytes);
  staged_bytes_ += bytes;
  check_call(lib_,
             lib_.fn().aclrtMemcpyAsync(dev, bytes, staged_.back().data(), bytes, acl::ACL_MEMCPY_HOST_TO_DEVICE,
                                        stream_),
             "aclrtMemcpyAsync(host to device, " + std::to_string(bytes) + " bytes)");
  if (staged_bytes_ > kMaxStagedBytes) sync_locked();
}

void DeviceState::copy_on_device(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  bind();
  std::lock_guard<std::mutex> lock(mutex_);
  check_call(lib_, lib_.fn().aclrtMemcpyAsync(dst, bytes, src, bytes, acl::ACL_MEMCPY_DEVICE_TO_DEVICE, stream_),
             "aclrtMemcpyAsync(device to device, " + std::to_string(bytes) + " bytes)");
}

void DeviceState::empty_cache() {
  bind();
  std::lock_guard<std::mutex> lock(mutex_);
  sync_locked();
  for (auto& [size, block] : free_) {
    lib_.fn().aclrtFree(block);
    blocks_.erase(block);
  }
  free_.clear();
  cached_ = 0;
}

void DeviceState::shutdown() noexcept {
  if (t_current_device != index_ && lib_.fn().aclrtSetDevice(index_) == acl::ACL_SUCCESS) {
    t_current_device = index_;
    std::lock_guard<std::mutex> lock(mutex_);
    ++set_device_calls_;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  lib_.fn().aclrtSynchronizeStream(stream_);
  staged_.clear();
  // Tensors still alive at exit (statics) are freed here; their storages' later release finds the runtime gone.
  for (auto& [block, size] : blocks_) lib_.fn().aclrtFree(block);
  blocks_.clear();
  free_.clear();
  lib_.fn().aclrtDestroyStream(stream_);
  for (; set_device_calls_ > 0; --set_device_calls_) lib_.fn().aclrtResetDevice(index_);
  t_current_device = -1;
}

size_t DeviceState::cached_bytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_;
}

size_t DeviceState::allocated_bytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocated_;
}

// ---- the runtime -----------------------------------------------------------------------------------------------

namespace {
std::mutex g_runtime_mutex;
Runtime* g_runtime = nullptr;
}  // namespace

Runtime::Runtime() : lib_(std::make_unique<AclLibrary>()) {
  const acl::aclError init = lib_->fn().aclInit(nullptr);
  constexpr acl::aclError kRepeatInitialize = 100002;  // ACL_ERROR_REPEAT_INITIALIZE: someone else did it
  if (init != acl::ACL_SUCCESS && init != kRepeatInitialize) {
    throw ValueError("Ascend: aclInit failed with " + describe_error(*lib_, init) +
                     " (is the NPU driver installed and the device visible to this user? `npu-smi info` shows it)");
  }
  uint32_t count = 0;
  check_call(*lib_, lib_->fn().aclrtGetDeviceCount(&count), "aclrtGetDeviceCount");
  device_count_ = static_cast<int>(count);
  devices_.resize(count);
  soc_ = soc_family(soc_name());  // (valid after aclInit)
}

Runtime& Runtime::get() {
  std::lock_guard<std::mutex> lock(g_runtime_mutex);
  if (!g_runtime) {
    g_runtime = new Runtime();  // lives to the end: storages may be released during static destruction
    std::atexit([] { g_runtime->finalize(); });
  }
  return *g_runtime;
}

bool Runtime::loaded() {
  std::lock_guard<std::mutex> lock(g_runtime_mutex);
  return g_runtime != nullptr && !g_finalized.load();
}

DeviceState& Runtime::device(int index) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (g_finalized.load()) throw ValueError("Ascend: the runtime was finalized (the process is exiting)");
  if (index < 0 || index >= device_count_) {
    throw ValueError("Ascend: there is no device " + std::to_string(index) + " (" + std::to_string(device_count_) +
                     " found)");
  }
  auto& slot = devices_[static_cast<size_t>(index)];
  if (!slot) slot = std::make_unique<DeviceState>(*lib_, index);
  return *slot;
}

void Runtime::check(acl::aclError code, const std::string& call) const { check_call(*lib_, code, call); }

void Runtime::finalize() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  g_finalized.store(true);
  for (auto& d : devices_) {
    if (d) d->shutdown();
  }
  lib_->fn().aclFinalize();
}

std::string Runtime::version() const {
  std::string v = lib_->toolkit_version();
  if (lib_->fn().aclrtGetVersion) {
    int32_t major = 0, minor = 0, patch = 0;
    if (lib_->fn().aclrtGetVersion(&major, &minor, &patch) == acl::ACL_SUCCESS) {
      v += (v.empty() ? "" : ", ") + std::string("runtime ") + std::to_string(major) + "." + std::to_string(minor) +
           "." + std::to_string(patch);
    }
  }
  return v.empty() ? "unknown" : v;
}

std::string Runtime::soc_name() const {
  const char* s = lib_->fn().aclrtGetSocName ? lib_->fn().aclrtGetSocName() : nullptr;
  return s ? s : "unknown";
}

// The names torch_npu knows: Ascend910A, Ascend910ProA, Ascend910PremiumA, Ascend910B (sic: a 30-core first
// Ascend 910, not the A2 line) and Ascend910ProB; Ascend910B1, B2, B2C, B3, B4, B4-1; Ascend910_9391, 9392, ...
SocFamily soc_family(const std::string& name) {
  const std::string a2 = "Ascend910B";
  if (name.rfind("Ascend910_93", 0) == 0) return SocFamily::Ascend910_93;
  if (name.rfind(a2, 0) == 0 && name.size() > a2.size() && std::isdigit(static_cast<unsigned char>(name[a2.size()]))) {
    return SocFamily::Ascend910B;
  }
  if (name.rfind("Ascend910", 0) == 0) return SocFamily::Ascend910;
  return SocFamily::Other;
}

bool runtime_finalized() { return g_finalized.load(); }

}  // namespace bprop::ascend
