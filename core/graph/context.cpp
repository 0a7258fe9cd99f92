#include "bprop/context.h"

#include <atomic>
#include <mutex>

#include "autodiff/tape.h"
#include "bprop/device.h"
#include "bprop/errors.h"
#include "graph/trace.h"

namespace bprop {
namespace {

std::atomic<Mode> g_mode{Mode::PyNative};
std::atomic<Backend> g_device_backend{Backend::CPU};
std::atomic<int> g_device_index{0};

}  // namespace

void set_context(const Context& context) {
  const Device d = context.device;
  if (!d.is_cpu()) {
    detail::note_device_use();
    const int count = device_backend(d.backend).device_count();  // throws, saying why, when there is no backend
    if (d.index < 0 || d.index >= count) {
      throw ValueError("For 'set_context', device " + d.str() + " does not exist (" + std::to_string(count) + " " +
                       backend_name(d.backend) + " device" + (count == 1 ? "" : "s") + " found)");
    }
  }
  g_mode.store(context.mode);
  g_device_index.store(d.index);
  g_device_backend.store(d.backend);
}

Context get_context() {
  Context c;
  c.mode = g_mode.load();
  c.device = default_device();
  return c;
}

Device default_device() {
  const Backend b = g_device_backend.load(std::memory_order_relaxed);
  return b == Backend::CPU ? Device{} : Device{b, g_device_index.load(std::memory_order_relaxed)};
}

const char* mode_name(Mode mode) { return mode == Mode::Graph ? "graph" : "pynative"; }

namespace detail {
bool graph_mode_call() { return g_mode.load() == Mode::Graph && !graph::tracing() && !autodiff::recording(); }
}  // namespace detail

}  // namespace bprop
