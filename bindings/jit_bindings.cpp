// The embind layer of graph mode: jitted JavaScript functions as ids into a table (as tensors are handles), their
// calls, lowered and exported graphs and stats, and the source locations a trace records. Errors follow
// guard.h's convention.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <optional>
#include <string>
#include <vector>

#include "bprop/bprop.h"
#include "convert.h"
#include "guard.h"
#include "handles.h"

using emscripten::val;

namespace bprop::js {
namespace {

// ---- graph mode (jit) ---------------------------------------------------------------------------------

/// Jitted functions cross to JavaScript as integer ids into this table, as tensors do (handles.h). Id 0 is
/// never given out. Each id is owned by one JavaScript function and released once (dispose, or the
/// FinalizationRegistry); releasing it frees the cached graphs and the JavaScript callback they were traced from.
class JitTable {
 public:
  uint32_t add(JitFn f) {
    if (free_.empty()) {
      slots_.emplace_back(std::move(f));
      return static_cast<uint32_t>(slots_.size());
    }
    const uint32_t id = free_.back();
    free_.pop_back();
    slots_[id - 1].emplace(std::move(f));
    return id;
  }
  /// A copy of the function of `id` (a call may add to the table, so no reference into it is kept).
  JitFn get(uint32_t id) const {
    if (id == 0 || id > slots_.size() || !slots_[id - 1].has_value()) {
      throw ValueError("For 'jit', the jitted function has been disposed");
    }
    return *slots_[id - 1];
  }
  void release(uint32_t id) {
    if (id == 0 || id > slots_.size() || !slots_[id - 1].has_value()) return;
    // Moved out first: destroying it may run JavaScript (the callback's handle), which may use the table.
    std::optional<JitFn> gone = std::move(slots_[id - 1]);
    slots_[id - 1].reset();
    free_.push_back(id);
  }
  size_t live() const { return slots_.size() - free_.size(); }

 private:
  std::vector<std::optional<JitFn>> slots_;
  std::vector<uint32_t> free_;
};

JitTable& jits() {
  static JitTable table;
  return table;
}

/// JitOptions from {optimize, fuse, staticArgnums, warnAfterTraces, maxTraces} (checked by the wrapper; an
/// absent field keeps the default).
JitOptions to_jit_options(const val& o) {
  JitOptions opts;
  if (o.isNull() || o.isUndefined()) return opts;
  if (!o["optimize"].isUndefined()) opts.optimize = o["optimize"].as<bool>();
  if (!o["fuse"].isUndefined()) opts.fuse = o["fuse"].as<bool>();
  if (!o["staticArgnums"].isUndefined()) {
    const val list = o["staticArgnums"];
    const int n = list["length"].as<int>();
    for (int i = 0; i < n; ++i) {
      opts.static_argnums.push_back(static_cast<int>(whole_number(list[i].as<double>(), "jit", "staticArgnums")));
    }
  }
  if (!o["warnAfterTraces"].isUndefined()) {
    opts.warn_after_traces = whole_number(o["warnAfterTraces"].as<double>(), "jit", "warnAfterTraces");
  }
  if (!o["maxTraces"].isUndefined()) opts.max_traces = whole_number(o["maxTraces"].as<double>(), "jit", "maxTraces");
  return opts;
}

/// A jitted function of a JavaScript function (called with an array of tensor handles, as grad's are).
/// Marks the nodes traced from now on with a JavaScript source location (web/index.js calls it, while a jitted
/// function is being traced, with the stack frame of the code calling an op). Nothing outside a trace.
void set_trace_location(std::string where) {
  if (graph::tracing()) graph::current_tracer()->set_location(std::move(where));
}

val jit_create(val fn, val options) {
  // (no C++ site: bp.jit marks every op with its JavaScript caller)
  return guarded([&] { return val(jits().add(bprop::jit(js_fn(fn), to_jit_options(options), {nullptr, 0}))); });
}

/// One whole call: traced on a new signature, replayed otherwise (eagerly under an open grad level); the result
/// as new handles, nested as the function's result.
val jit_call(uint32_t id, val args) {
  return guarded([&] {
    const JitFn f = jits().get(id);
    return from_value(f(to_tensors(args)));
  });
}

val jit_lower(uint32_t id, val args) {
  return guarded([&] {
    const JitFn f = jits().get(id);
    return val(f.lower(to_tensors(args)));
  });
}

val jit_export_graph(uint32_t id, val args) {
  return guarded([&] {
    const JitFn f = jits().get(id);
    return val(f.export_graph(to_tensors(args)));
  });
}

val jit_stats(uint32_t id) {
  return guarded([&] {
    const JitStats s = jits().get(id).stats();
    val out = val::object();
    out.set("traces", static_cast<double>(s.traces));
    out.set("replays", static_cast<double>(s.replays));
    out.set("eagerCalls", static_cast<double>(s.eager_calls));
    out.set("gradCalls", static_cast<double>(s.grad_calls));
    out.set("nodesTraced", static_cast<double>(s.nodes_traced));
    out.set("nodes", static_cast<double>(s.nodes));
    out.set("fusedGroups", static_cast<double>(s.fused_groups));
    out.set("kernels", static_cast<double>(s.kernels));
    out.set("compileSeconds", s.compile_seconds);
    out.set("plannedBytes", static_cast<double>(s.planned_bytes));
    out.set("eagerBytes", static_cast<double>(s.eager_bytes));
    out.set("donatedUpdates", static_cast<double>(s.donated_updates));
    out.set("inPlace", static_cast<double>(s.in_place));
    val passes = val::array();
    for (size_t i = 0; i < s.passes.size(); ++i) {
      val p = val::object();
      p.set("pass", s.passes[i].pass);
      p.set("before", static_cast<double>(s.passes[i].before));
      p.set("after", static_cast<double>(s.passes[i].after));
      passes.set(i, p);
    }
    out.set("passes", passes);
    return out;
  });
}

val jit_release(uint32_t id) {
  return guarded([&] {
    jits().release(id);
    return val(true);
  });
}

/// Jitted functions not yet released (for the memory tests).
val jit_live() { return val(static_cast<double>(jits().live())); }

}  // namespace
}  // namespace bprop::js

EMSCRIPTEN_BINDINGS(bprop_jit) {
  using namespace emscripten;
  namespace js = bprop::js;
  function("jitCreate", &js::jit_create);
  function("setTraceLocation", &js::set_trace_location);
  function("jitCall", &js::jit_call);
  function("jitLower", &js::jit_lower);
  function("jitExportGraph", &js::jit_export_graph);
  function("jitStats", &js::jit_stats);
  function("jitRelease", &js::jit_release);
  function("jitLive", &js::jit_live);
}
