// Devices: the registered backends (the CPU built in), device names, copies between host and device, and the
// CPU-fallback counts.
#include "bprop/device.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <mutex>

#include <thread>

#include "bprop/context.h"
#include "bprop/errors.h"
#include "bprop/pool.h"
#include "graph/trace.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/onednn.h"
#include "tensor/buffer_cache.h"

namespace bprop {

// ---- the registered backends ---------------------------------------------------------------------------------

namespace {

std::string cpu_features() {
  std::string f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) f += " avx512f";
  if (__builtin_cpu_supports("avx2")) f += " avx2";
  if (__builtin_cpu_supports("fma")) f += " fma";
  if (__builtin_cpu_supports("sse4.2")) f += " sse4.2";
#elif defined(__aarch64__)
  f += " neon";
#elif defined(__wasm_simd128__)
  f += " simd128";
#endif
  return f.empty() ? " (baseline)" : f;
}

// `bprop devices`' CPU lines: threads, vector features, the GEMM library, and where bfloat16 products run (with
// this process's counts: on oneDNN, or widened to float32 without it).
std::vector<std::string> describe_cpu() {
  const cpu::HalfGemmStats half = cpu::half_gemm_stats();
  const std::string bf16_backend =
      cpu::bf16_gemm_available() ? cpu::onednn_name() : "float32 copies, oneDNN " + cpu::onednn_name();
  return {"cpu: " + std::to_string(std::thread::hardware_concurrency()) + " threads," + cpu_features() + "; GEMM on " +
              cpu::blas_name(),
          "cpu: bfloat16 GEMM on " + bf16_backend + "; this process: " + std::to_string(half.onednn) +
              " products on it, " + std::to_string(half.fallback) + " widened to float32 without it"};
}

// The CPU as a backend: host memory from the recycled buffers (tensor/buffer_cache.h), plain copies.
class CpuBackend final : public DeviceBackend {
 public:
  Backend backend() const override { return Backend::CPU; }
  bool host_memory() const override { return true; }
  int device_count() override { return 1; }
  void* allocate(int, size_t bytes) override { return detail::acquire_buffer(bytes); }
  void release(int, void* ptr, size_t bytes) noexcept override { detail::release_buffer(ptr, bytes); }
  void copy_to_host(int, void* host, const void* src, size_t bytes) override { std::memcpy(host, src, bytes); }
  void copy_from_host(int, void* dst, const void* host, size_t bytes) override { std::memcpy(dst, host, bytes); }
  void copy_on_device(int, void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void synchronize(int) override {}
};

struct BackendSlot {
  BackendRegistration registration;
  std::mutex load_mutex;
  std::atomic<DeviceBackend*> loaded{nullptr};
};

// Slots are created once and never freed (storages outlive static destructors); ids index them.
struct BackendTable {
  std::mutex mu;
  std::atomic<int> count{0};
  BackendSlot* slots[kMaxBackends] = {};
};

BackendTable& backend_table() {
  static BackendTable* table = [] {
    auto* t = new BackendTable;
    auto* cpu = new BackendSlot;
    static CpuBackend cpu_backend;
    cpu->registration.name = "cpu";
    cpu->registration.load = []() -> DeviceBackend& { return cpu_backend; };
    cpu->registration.describe = describe_cpu;
    cpu->loaded.store(&cpu_backend);
    t->slots[0] = cpu;
    t->count.store(1);
    return t;
  }();
  return *table;
}

BackendSlot& slot(Backend b) {
  BackendTable& t = backend_table();
  if (b.id >= t.count.load(std::memory_order_acquire)) {
    throw ValueError("Backend " + std::to_string(b.id) + " is not registered in this build");
  }
  return *t.slots[b.id];
}

std::string lower(std::string t) {
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return t;
}

}  // namespace

Backend register_backend(BackendRegistration registration) {
  BackendTable& t = backend_table();
  std::lock_guard<std::mutex> lock(t.mu);
  const int n = t.count.load();
  registration.name = lower(registration.name);
  for (std::string& a : registration.aliases) a = lower(a);
  for (int i = 0; i < n; ++i) {
    const BackendRegistration& r = t.slots[i]->registration;
    std::vector<std::string> names = r.aliases;
    names.push_back(r.name);
    for (const std::string& name : names) {
      if (name == registration.name ||
          std::find(registration.aliases.begin(), registration.aliases.end(), name) != registration.aliases.end()) {
        throw ValueError("register_backend: the device name '" + name + "' is taken by backend '" + r.name + "'");
      }
    }
  }
  if (n >= kMaxBackends) {
    throw ValueError("register_backend: '" + registration.name + "' would be backend " + std::to_string(n + 1) +
                     ", more than the " + std::to_string(kMaxBackends) + " one process can have");
  }
  if (!registration.load) throw ValueError("register_backend: '" + registration.name + "' has no load function");
  auto* s = new BackendSlot;
  s->registration = std::move(registration);
  t.slots[n] = s;
  t.count.store(n + 1, std::memory_order_release);
  return Backend{static_cast<uint8_t>(n)};
}

std::vector<Backend> registered_backends() {
  std::vector<Backend> out;
  const int n = backend_table().count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) out.push_back(Backend{static_cast<uint8_t>(i)});
  return out;
}

const BackendRegistration& backend_registration(Backend b) { return slot(b).registration; }

const char* backend_name(Backend b) {
  const BackendTable& t = backend_table();
  return b.id < t.count.load(std::memory_order_acquire) ? t.slots[b.id]->registration.name.c_str() : "?";
}

DeviceBackend& device_backend(Backend b) {
  BackendSlot& s = slot(b);
  if (DeviceBackend* loaded = s.loaded.load(std::memory_order_acquire)) return *loaded;
  std::lock_guard<std::mutex> lock(s.load_mutex);
  if (DeviceBackend* loaded = s.loaded.load()) return *loaded;
  DeviceBackend& backend = s.registration.load();  // throws, saying why, while this host cannot
  s.loaded.store(&backend, std::memory_order_release);
  return backend;
}

bool device_backend_available(Backend b) {
  try {
    device_backend(b);
    return true;
  } catch (const Error&) {
    return false;
  }
}

void DeviceBackend::copy_to_host_async(int index, void* host, const void* device_ptr, size_t bytes,
                                       std::function<void(std::exception_ptr)> done) {
  try {
    copy_to_host(index, host, device_ptr, bytes);
  } catch (...) {
    done(std::current_exception());
    return;
  }
  done(nullptr);
}

std::string Device::str() const {
  if (is_cpu()) return "cpu";
  return std::string(backend_name(backend)) + ":" + std::to_string(index);
}

Device parse_device(const std::string& text) {
  const std::string t = lower(text);
  const size_t colon = t.find(':');
  const std::string kind = t.substr(0, colon);
  const std::string id = colon == std::string::npos ? "" : t.substr(colon + 1);
  auto bad = [&]() -> Device {
    std::string expected;
    for (const Backend b : registered_backends()) {
      const std::string name = backend_name(b);
      expected += (expected.empty() ? "'" : ", '") + name + (b == Backend::CPU ? "'" : "' or '" + name + ":N'");
    }
    throw ValueError("Unknown device '" + text + "': this build has " + expected +
                     " (N the device's index)");
  };
  for (const Backend b : registered_backends()) {
    const BackendRegistration& r = backend_registration(b);
    if (kind != r.name && std::find(r.aliases.begin(), r.aliases.end(), kind) == r.aliases.end()) continue;
    if (b == Backend::CPU) return colon == std::string::npos ? Device::cpu() : bad();
    if (colon == std::string::npos) return Device{b, 0};
    if (id.empty() || id.size() > 4 ||
        !std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isdigit(c); })) {
      return bad();
    }
    return Device{b, std::stoi(id)};
  }
  return bad();
}

void Tensor::refuse_host_access() const {
  if (is_abstract()) graph::throw_no_value("data()");
  throw ValueError("A tensor of shape " + shape_str(shape()) + " " + dtype_name(dtype()) + " lives on " +
                   device().str() + ": its elements are not in host memory (read them with cpu() or to_vector())");
}

// ---- copies ------------------------------------------------------------------------------------------------

Tensor Tensor::to(Device target) const {
  if (is_abstract()) {
    throw ValueError("to(" + target.str() + "): a traced tensor has no values to move (move it outside the jitted "
                     "function)");
  }
  const Device from = device();
  if (from == target) return *this;
  Tensor out = empty(shape(), dtype(), target);
  if (on_host()) {
    device_backend(target.backend).copy_from_host(target.index, out.raw_data(), raw_data(), nbytes());
  } else if (out.on_host()) {
    device_backend(from.backend).copy_to_host(from.index, out.raw_data(), raw_data(), nbytes());
  } else {  // between two devices: through the host
    return cpu().to(target);
  }
  return out;
}

void read_async(const Tensor& t, std::function<void(Tensor host, std::exception_ptr error)> done) {
  Tensor host;
  try {
    if (t.is_abstract()) graph::throw_no_value("a read (read_async)");
    if (t.on_host()) {
      host = t;
    } else {
      host = Tensor::empty(t.shape(), t.dtype(), Device::cpu());
      const Device from = t.device();
      // The source's storage and the destination stay alive until the copy completes.
      device_backend(from.backend)
          .copy_to_host_async(from.index, host.raw_data(), t.raw_data(), t.nbytes(),
                              [t, host, done](std::exception_ptr error) { done(error ? Tensor() : host, error); });
      return;
    }
  } catch (...) {
    done(Tensor(), std::current_exception());
    return;
  }
  done(host, nullptr);
}

Tensor on_device_of(const Tensor& like, const Tensor& host) {
  return like.on_device() ? host.to(like.device()) : host;
}

void copy_into(Tensor& dst, const Tensor& src) {
  if (src.shape() != dst.shape()) {
    throw ShapeError("copy_into: cannot copy a tensor of shape " + shape_str(src.shape()) + " into one of shape " +
                     shape_str(dst.shape()));
  }
  const Tensor v = convert(src, dst.dtype()).to(dst.device());
  if (v.raw_data() == dst.raw_data() || dst.nbytes() == 0) return;
  device_backend(dst.backend()).copy_on_device(dst.device().index, dst.raw_data(), v.raw_data(), dst.nbytes());
}

// ---- CPU fallbacks -----------------------------------------------------------------------------------------

namespace {
std::mutex g_fallback_mutex;
std::map<std::string, int64_t>& fallbacks() {
  static std::map<std::string, int64_t> counts;
  return counts;
}
}  // namespace

std::map<std::string, int64_t> fallback_counts() {
  std::lock_guard<std::mutex> lock(g_fallback_mutex);
  return fallbacks();
}

void reset_fallback_counts() {
  std::lock_guard<std::mutex> lock(g_fallback_mutex);
  fallbacks().clear();
}

namespace detail {
std::atomic<bool> g_devices_in_use{false};

void count_fallback(const std::string& op) {
  std::lock_guard<std::mutex> lock(g_fallback_mutex);
  ++fallbacks()[op];
}

namespace {
thread_local bool t_has_preference = false;
thread_local Device t_preference{};
}  // namespace

PreferDevice::PreferDevice(Device device) : had_(t_has_preference), saved_(t_preference) {
  t_has_preference = true;
  t_preference = device;
}

PreferDevice::~PreferDevice() {
  t_has_preference = had_;
  t_preference = saved_;
}

Device preferred_device() { return t_has_preference ? t_preference : default_device(); }
}  // namespace detail

}  // namespace bprop
