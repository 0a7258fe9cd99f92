// The embind layer of the execution context (bprop/context.h): bp.setContext / bp.getContext, whether a grad
// function called now should run through its jit cache (graph mode, outside any trace and grad level), and whether
// a jit trace is open. Errors follow guard.h's convention.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>

#include "bprop/context.h"
#include "bprop/device.h"
#include "graph/trace.h"
#include "guard.h"

using emscripten::val;

namespace bprop::js_context {
namespace {

using js::guarded;

Mode parse_mode(const std::string& mode) {
  if (mode == "graph") return Mode::Graph;
  if (mode == "pynative") return Mode::PyNative;
  throw ValueError("For 'setContext', mode must be 'graph' or 'pynative', got '" + mode + "'");
}

// mode / device: the new value, or an empty string to keep the current one.
val set_context_call(std::string mode, std::string device) {
  return guarded([&] {
    Context c = get_context();
    if (!mode.empty()) c.mode = parse_mode(mode);
    if (!device.empty()) c.device = parse_device(device);
    set_context(c);
    return val(true);
  });
}

val get_context_call() {
  return guarded([] {
    const Context c = get_context();
    val out = val::object();
    out.set("mode", std::string(mode_name(c.mode)));
    out.set("device", c.device.str());
    return out;
  });
}

bool graph_mode_call() { return detail::graph_mode_call(); }
bool tracing() { return graph::tracing(); }

}  // namespace
}  // namespace bprop::js_context

EMSCRIPTEN_BINDINGS(bprop_context) {
  using namespace emscripten;
  namespace js = bprop::js_context;
  function("setContext", &js::set_context_call);
  function("getContext", &js::get_context_call);
  function("graphModeCall", &js::graph_mode_call);
  function("tracing", &js::tracing);
}
