#include "bprop/context.h"

#include <atomic>
#include <mutex>

#include "autodiff/tape.h"
#include "bprop/errors.h"
#include "graph/trace.h"

namespace bprop {
namespace {

std::atomic<Mode> g_mode{Mode::PyNative};

}  // namespace

void set_context(const Context& context) {
  if (context.device_target != "CPU") {
    throw ValueError("For 'set_context', device_target '" + context.device_target +
                     "' is not available in this build (it has: CPU)");
  }
  g_mode.store(context.mode);
}

Context get_context() {
  Context c;
  c.mode = g_mode.load();
  return c;
}

const char* mode_name(Mode mode) { return mode == Mode::Graph ? "graph" : "pynative"; }

namespace detail {
bool graph_mode_call() { return g_mode.load() == Mode::Graph && !graph::tracing() && !autodiff::recording(); }
}  // namespace detail

}  // namespace bprop
