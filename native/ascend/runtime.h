// The Ascend runtime as the backend uses it: aclInit once, per device aclrtSetDevice and one stream, a caching
// allocator over aclrtMalloc, copies, and the order of teardown at exit (streams and memory before
// aclrtResetDevice, aclFinalize last).
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ascend/acl_library.h"

namespace bprop::ascend {

/// One NPU: its stream and its cached memory. Every operation of the backend on a device is queued on its stream,
/// so a block given back to the cache can serve the next allocation at once (stream order).
class DeviceState {
 public:
  DeviceState(AclLibrary& lib, int index);
  int index() const { return index_; }
  acl::aclrtStream stream() const { return stream_; }
  /// Makes this device current for the calling thread (the ACL context is per thread).
  void bind();
  void* allocate(size_t bytes);
  void release(void* ptr) noexcept;
  void copy_to_host(void* host, const void* dev, size_t bytes);
  void copy_from_host(void* dev, const void* host, size_t bytes);
  void copy_on_device(void* dst, const void* src, size_t bytes);
  void synchronize();
  /// Waits for the stream, then returns every cached block to the runtime.
  void empty_cache();
  /// Tears down in CANN's order: queued work, memory, stream, then aclrtResetDevice.
  void shutdown() noexcept;
  size_t cached_bytes();
  size_t allocated_bytes();

 private:
  void* malloc_block(size_t rounded);
  void sync_locked();

  AclLibrary& lib_;
  int index_;
  acl::aclrtStream stream_ = nullptr;
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;       // cached blocks by size
  std::map<void*, size_t> blocks_;          // every block from aclrtMalloc, by address
  std::vector<std::vector<unsigned char>> staged_;  // host copies that queued uploads read
  size_t staged_bytes_ = 0;
  size_t allocated_ = 0, cached_ = 0;
  int set_device_calls_ = 0;  // aclrtSetDevice counts references: each is matched by an aclrtResetDevice
};

/// The NPU product line, from aclrtGetSocName(). CANN documents operator support per line ("Atlas training series
/// products" are the first Ascend 910: Ascend910A, Ascend910ProA, Ascend910PremiumA, Ascend910B, Ascend910ProB;
/// "Atlas A2 training series" Ascend910B1..B4; "Atlas A3" Ascend910_93xx), and the lines differ in what their cube
/// unit computes.
enum class SocFamily { Ascend910, Ascend910B, Ascend910_93, Other };
SocFamily soc_family(const std::string& soc_name);

class Runtime {
 public:
  /// The runtime, loaded and initialised on first use (aclInit); ValueError saying why when that fails. A failed
  /// load is not remembered: a later call tries again (after the environment was fixed).
  static Runtime& get();
  /// True once get() has succeeded in this process.
  static bool loaded();
  AclLibrary& lib() { return *lib_; }
  int device_count() const { return device_count_; }
  /// Device `index`, set up on first use; ValueError naming the index and the count when there is no such device.
  DeviceState& device(int index);
  /// Throws bprop::Error (ValueError, or MemoryError for allocation codes) for a failing call: the call, the code
  /// and aclGetRecentErrMsg().
  void check(acl::aclError code, const std::string& call) const;
  std::string version() const;
  std::string soc_name() const;
  SocFamily soc() const { return soc_; }

 private:
  Runtime();
  void finalize() noexcept;

  std::unique_ptr<AclLibrary> lib_;
  int device_count_ = 0;
  SocFamily soc_ = SocFamily::Other;
  std::mutex mutex_;
  std::vector<std::unique_ptr<DeviceState>> devices_;
};

/// True once the runtime was torn down at exit (late releases of memory are then no-ops).
bool runtime_finalized();

/// "code 107001: <message>" for a failed call.
std::string describe_error(AclLibrary& lib, acl::aclError code);

}  // namespace bprop::ascend
