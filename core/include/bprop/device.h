// Device backends: the registered set (the CPU built in, others registering themselves), what each provides to the
// core (memory, copies, a stream to order work on), and how ops reach it. Ops dispatch on their inputs' device; an op
// with no kernel for a device runs its CPU kernel with a host round trip, counted per op (fallback_counts).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bprop/attrs.h"
#include "bprop/tensor.h"

namespace bprop {

struct OpDef;

/// One device backend: the CPU (always registered, id 0) or a device such as the Ascend NPU. Methods take the
/// device index; every failure is a bprop::Error naming the device and the call. A backend implements memory,
/// copies and ordering here, registers itself with register_backend, and sets its kernels on the ops it runs
/// (Registry::set_kernel); nothing else in the core changes for it.
class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual Backend backend() const = 0;
  /// True when allocate() returns host memory the host reads directly (the CPU): its tensors are on_host().
  virtual bool host_memory() const { return false; }
  /// Devices present (0 when the runtime is there but has none).
  virtual int device_count() = 0;
  /// Device memory of at least `bytes` (from a caching allocator: no runtime allocation per op).
  virtual void* allocate(int index, size_t bytes) = 0;
  /// Gives memory back; queued work that still uses it runs first (stream order), the runtime sees it later.
  virtual void release(int index, void* ptr, size_t bytes) noexcept = 0;
  /// Host <- device; waits for the device's queued work.
  virtual void copy_to_host(int index, void* host, const void* device_ptr, size_t bytes) = 0;
  /// Host <- device without blocking the caller: `done` runs once `host` holds the bytes (or with the error).
  /// A device whose reads complete only asynchronously (a WebGPU buffer's mapAsync) implements this and makes
  /// copy_to_host a ValueError saying so; the default completes at once through copy_to_host.
  virtual void copy_to_host_async(int index, void* host, const void* device_ptr, size_t bytes,
                                  std::function<void(std::exception_ptr)> done);
  /// Device <- host; `host` may be reused as soon as this returns.
  virtual void copy_from_host(int index, void* device_ptr, const void* host, size_t bytes) = 0;
  /// Device <- device on one device, ordered after queued work.
  virtual void copy_on_device(int index, void* dst, const void* src, size_t bytes) = 0;
  /// Waits for every queued operation on the device.
  virtual void synchronize(int index) = 0;
};

/// What a backend registers: its names, how it loads, and how it describes itself and its ops (`bprop devices`,
/// `bprop ops`), so that those need no edit for a new backend.
struct BackendRegistration {
  std::string name;                  // "ascend": the device text and the kernel column
  std::vector<std::string> aliases;  // other device texts ("npu")
  /// The backend, loading its runtime on first use; a ValueError saying why when this host cannot (no library,
  /// no device). Called once per process until it succeeds.
  std::function<DeviceBackend&()> load;
  /// The lines of `bprop devices` ("ascend: 1 device (Ascend910B1), CANN 8.0", "  ascend:0"; "ascend: none
  /// (why)" when it cannot load). Never throws.
  std::function<std::vector<std::string>()> describe;
  /// How the backend runs `op` for `bprop ops` ("aclnn Add", "cpu fallback"); empty: no column for it.
  std::function<std::string(const OpDef&)> describe_op;
};

/// Adds a backend and returns its id (the CPU's registration is built in). Registering a name twice, or more than
/// kMaxBackends backends, is a ValueError. Backends register before main (a static registrar in their library).
Backend register_backend(BackendRegistration registration);
/// The registered backends, the CPU first, in registration order.
std::vector<Backend> registered_backends();
/// The registration of `b` (its name, aliases, descriptions).
const BackendRegistration& backend_registration(Backend b);

/// The backend for `b`, loading it on first use; ValueError when this host has none (the message says why, e.g.
/// which library failed to load).
DeviceBackend& device_backend(Backend b);
/// True when the backend for `b` loads (never throws).
bool device_backend_available(Backend b);

/// How many times each op ran its CPU kernel for a device tensor since the last reset (no device kernel, or the
/// device kernel declined the dtype/attributes).
std::map<std::string, int64_t> fallback_counts();
void reset_fallback_counts();

/// Thrown by a device kernel, before it queues any work, for a case it does not handle (float64 where the device
/// has none, an attribute it lacks): the dispatcher then runs the CPU kernel with a host round trip.
struct KernelDeclined {
  std::string why;
};

/// The device new ops without device inputs run on (set by set_context; CPU by default).
Device default_device();

/// `host` (a constant made for `like`) on like's device; unchanged unless like is on a device (a traced tensor's
/// constants are graph constants, on the host).
Tensor on_device_of(const Tensor& like, const Tensor& host);

/// `t`'s values on the host, given to `done` once read: a host tensor at once (itself), a device tensor when its
/// backend's copy_to_host_async completes (a copy). Failures (a traced tensor, the device's error) go to `done`
/// too, never thrown. The way to read a device whose reads only complete asynchronously (a mapped GPU buffer),
/// where cpu() / to_vector() say they cannot.
void read_async(const Tensor& t, std::function<void(Tensor host, std::exception_ptr error)> done);

/// Copies `src` (same shape, any device) into `dst`'s storage in place, converting the dtype.
void copy_into(Tensor& dst, const Tensor& src);

namespace detail {
/// False until a tensor is allocated on a device or a device becomes the context's: until then every call runs on
/// the CPU and the dispatcher skips device placement (the per-op cost of CPU-only programs).
extern std::atomic<bool> g_devices_in_use;
inline bool devices_in_use() { return g_devices_in_use.load(std::memory_order_relaxed); }
inline void note_device_use() { g_devices_in_use.store(true, std::memory_order_relaxed); }

/// Counts one CPU fallback of `op` (thread-safe).
void count_fallback(const std::string& op);

/// While alive, host tensors that ops of this thread meet go to `device` (instead of the context's device):
/// the dispatcher sets it around kernels (a composite on a device builds its constants on the host), the
/// backward around bprops (for the device of the value they differentiate). Nests.
class PreferDevice {
 public:
  explicit PreferDevice(Device device);
  ~PreferDevice();
  PreferDevice(const PreferDevice&) = delete;
  PreferDevice& operator=(const PreferDevice&) = delete;

 private:
  bool had_;
  Device saved_;
};
/// The device host tensors go to now: the innermost PreferDevice, else the context's device.
Device preferred_device();

/// One op on `device` with inputs already there (a graph replay's node): its device kernel, or the CPU kernel
/// with a host round trip; shape, dtype and attributes as inferred and normalised before. No tape. `out`, when
/// given, is the device memory the result goes to (a planned buffer of that shape and dtype).
Tensor run_on_device(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs, const Shape& shape,
                     DType dtype, Device device, Tensor out = {});
}  // namespace detail

}  // namespace bprop
