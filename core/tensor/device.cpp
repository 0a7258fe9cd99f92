// Devices: names, the backends behind them, copies between host and device, and the CPU-fallback counts.
#include "bprop/device.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <mutex>

#include "bprop/context.h"
#include "bprop/errors.h"
#include "bprop/pool.h"

#ifdef BPROP_WITH_ASCEND
namespace bprop::ascend {
DeviceBackend& load_backend();  // native/ascend/backend.cpp
}
#endif

namespace bprop {

std::string Device::str() const {
  if (backend == Backend::CPU || backend == Backend::Graph) return backend_name(backend);
  return std::string(backend_name(backend)) + ":" + std::to_string(index);
}

Device parse_device(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const size_t colon = t.find(':');
  const std::string kind = t.substr(0, colon);
  const std::string id = colon == std::string::npos ? "" : t.substr(colon + 1);
  auto bad = [&]() -> Device {
    throw ValueError("Unknown device '" + text + "': expected 'cpu', 'ascend' or 'ascend:N' (N the NPU's index)");
  };
  if (kind == "cpu") return colon == std::string::npos ? Device::cpu() : bad();
  if (kind != "ascend" && kind != "npu") return bad();
  if (colon == std::string::npos) return Device::ascend(0);
  if (id.empty() || id.size() > 4 || !std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return bad();
  }
  return Device::ascend(std::stoi(id));
}

DeviceBackend& device_backend(Backend b) {
#ifdef BPROP_WITH_ASCEND
  if (b == Backend::Ascend) return ascend::load_backend();
#endif
  if (b == Backend::Ascend) {
    throw ValueError("The Ascend backend is not part of this build (it is in the native build for Linux)");
  }
  throw ValueError(std::string("Backend '") + backend_name(b) + "' has no device memory");
}

bool device_backend_available(Backend b) {
  try {
    device_backend(b);
    return true;
  } catch (const Error&) {
    return false;
  }
}

void Tensor::refuse_host_access() const {
  throw ValueError("A tensor of shape " + shape_str(shape()) + " " + dtype_name(dtype()) + " lives on " +
                   device().str() + ": its elements are not in host memory (read them with cpu() or to_vector())");
}

// ---- copies ------------------------------------------------------------------------------------------------

Tensor Tensor::to(Device target) const {
  const Device from = device();
  if (from == target) return *this;
  if (from.backend == Backend::Graph || target.backend == Backend::Graph) {
    throw ValueError("to(" + target.str() + "): a traced tensor has no values to move (move it outside the jitted "
                     "function)");
  }
  Tensor out = empty(shape(), dtype(), target);
  if (from.is_cpu()) {
    device_backend(target.backend).copy_from_host(target.index, out.raw_data(), raw_data(), nbytes());
  } else if (target.is_cpu()) {
    device_backend(from.backend).copy_to_host(from.index, out.raw_data(), raw_data(), nbytes());
  } else {  // between two devices: through the host
    return cpu().to(target);
  }
  return out;
}

Tensor on_device_of(const Tensor& like, const Tensor& host) {
  const Backend b = like.backend();
  return b == Backend::CPU || b == Backend::Graph ? host : host.to(like.device());
}

void copy_into(Tensor& dst, const Tensor& src) {
  if (src.shape() != dst.shape()) {
    throw ShapeError("copy_into: cannot copy a tensor of shape " + shape_str(src.shape()) + " into one of shape " +
                     shape_str(dst.shape()));
  }
  const Tensor v = convert(src, dst.dtype()).to(dst.device());
  if (v.raw_data() == dst.raw_data() || dst.nbytes() == 0) return;
  if (dst.backend() == Backend::CPU) {
    std::memcpy(dst.raw_data(), v.raw_data(), dst.nbytes());
  } else {
    device_backend(dst.backend()).copy_on_device(dst.device().index, dst.raw_data(), v.raw_data(), dst.nbytes());
  }
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
