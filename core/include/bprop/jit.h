// Graph mode: jit(fn) traces fn once per signature (argument shapes and dtypes) into a graph holding every op
// it runs, the backward ops of any grad / value_and_grad / vjp inside it included (they come from the same
// bprops), and replays that graph on later calls without per-op inference, attribute parsing or taping.
//
//   Fn step = jit(value_and_grad(loss, 0));
//   Value r = step({x});                  // traced on the first call with this shape, replayed after
//   std::string ir = step.lower({x});     // the graph as text
//
// Inside a traced function, tensors are abstract (a shape and a dtype): reading a value (item, to_vector) is an
// error that says so. Parameters stay live inputs (an optimizer's in-place update is seen by the next call), and
// Parameter::assign inside is an effect of every replay (so an optimizer step inside is part of the graph); other
// tensors the function captures are constants. randn / rand (host seeds) are refused: ops::random_normal from a
// key tensor draws anew at every call. Under an open grad level (grad(jit(f))) the jitted call is one recorded op whose backward is a jitted
// vjp of fn; where that cannot be exact (fn returns a tuple, takes int arguments, or reads a Parameter the level
// differentiates) fn runs eagerly instead.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bprop/grad.h"

namespace bprop {

namespace graph {
struct Executable;
struct SplitGraphs;
struct ValueType;
}

struct JitOptions {
  bool optimize = true;  // dead code, common subexpressions, constant folding, algebraic simplification
  bool fuse = true;      // elementwise chains as one loop
  /// Arguments whose values, not only shapes and dtypes, are part of the signature: they are constants in the
  /// graph (so the function may read them, e.g. a step count), and a new value traces again.
  std::vector<int> static_argnums;
  /// From this many traces of one function on, each new trace writes a warning to stderr saying which argument
  /// changed and how (0: never).
  int64_t warn_after_traces = 8;
  /// More traces than this is a ValueError instead (0: no limit).
  int64_t max_traces = 0;
};

/// What one optimisation pass did: nodes before and after (for fusion: kernels run per call after).
struct JitPassRecord {
  std::string pass;
  int64_t before = 0, after = 0;
};

struct JitStats {
  int64_t traces = 0;       // signatures traced so far
  int64_t replays = 0;      // calls answered from the cache
  int64_t eager_calls = 0;  // calls run eagerly under an open grad level (see grad_calls)
  /// Calls under an open grad level run as the forward graph, recorded as one op whose backward is a jitted
  /// vjp of the function (grad(jit(f))).
  int64_t grad_calls = 0;
  // Of the most recent graph:
  int64_t nodes_traced = 0;   // nodes as traced
  int64_t nodes = 0;          // nodes after the passes
  int64_t fused_groups = 0;   // elementwise groups run as one loop each
  int64_t kernels = 0;        // kernel calls per replay (a fused group is one)
  double compile_seconds = 0; // tracing and optimising it
  int64_t planned_bytes = 0;  // the buffers a replay uses for intermediate values (reused across calls)
  int64_t eager_bytes = 0;    // what the same ops allocate eagerly, one tensor per op output
  int64_t in_place = 0;       // values computed into the buffer of an elementwise input that dies at their op
  int64_t donated_updates = 0;  // Parameter updates computed straight into the Parameter (the others are copied in)
  std::vector<JitPassRecord> passes;
};

class JitFn {
 public:
  /// `where`: the source location of nodes traced outside any TraceLocation (none when empty).
  explicit JitFn(Fn fn, JitOptions options = {}, std::string where = {});
  Value operator()(const std::vector<Tensor>& args) const;
  /// The graph for these arguments' signature, as text (traced now if it was not).
  std::string lower(const std::vector<Tensor>& args) const;
  /// The same graph as JSON (format "bprop-jit-graph/1", docs/graph.md: nodes, fused groups, updates), for viewers.
  std::string export_graph(const std::vector<Tensor>& args) const;
  JitStats stats() const;
  /// As an Fn (jit(f) where a function is expected).
  operator Fn() const;

 private:
  struct State;
  /// The program for these arguments' signature (its graph and the device it runs on), traced, optimised and
  /// compiled on first use; for a device (not the CPU) a program of its own, without the CPU's fused loops. A CPU
  /// call of a function that reads Parameters on a device compiles for that device (once) and runs there.
  std::shared_ptr<const graph::Executable> compiled(const std::vector<Tensor>& args, Device device = {}) const;
  /// Under an open grad level: the graph as one recorded op (its backward a jitted vjp of the function), when the
  /// function allows it (no effects, no static arguments, a float tensor result); false otherwise.
  bool differentiable_call(const std::vector<Tensor>& args, Device device, Value& result) const;
  /// Runs the graph for these arguments on `device` (traced on first use); no tape.
  Value replay(const std::vector<Tensor>& args, Device device) const;
  /// The function's forward and backward for these arguments, traced together and split at the cotangent (cached;
  /// null when that trace fails). `out` is the type of the function's result.
  std::shared_ptr<const graph::SplitGraphs> split_graphs(const std::vector<Tensor>& args, Device device,
                                                         const graph::ValueType& out) const;
  /// The arguments that are not static (those a graph takes).
  std::vector<Tensor> dynamic_args(const std::vector<Tensor>& args) const;
  /// The device a call runs on: its first argument on a device, else the context's device (CPU by default).
  Device target_device(const std::vector<Tensor>& args) const;
  Fn fn_;
  JitOptions options_;
  std::string where_;
  std::shared_ptr<State> state_;
};

/// While it lives, the nodes a trace records are marked with this source location (shown by lower(), and named by
/// errors at replay): `TraceLocation here;` at the top of a traced C++ function, or a block of it. Nothing outside
/// a trace. (The JavaScript API marks every op with its caller's stack frame by itself.)
class TraceLocation {
 public:
  // (the builtins std::source_location is made of: Emscripten 3.1's libc++ has no <source_location>)
  explicit TraceLocation(const char* file = __builtin_FILE(), int line = __builtin_LINE(),
                         const char* function = __builtin_FUNCTION());
  ~TraceLocation();
  TraceLocation(const TraceLocation&) = delete;
  TraceLocation& operator=(const TraceLocation&) = delete;

 private:
  std::string saved_;
  bool active_;
};

/// Where a function was given to jit (its caller's file and line, by default argument).
struct JitSite {
  // (the builtins std::source_location is made of: Emscripten 3.1's libc++ has no <source_location>)
  JitSite(const char* file = __builtin_FILE(), int line = __builtin_LINE()) : file(file), line(line) {}  // NOLINT
  const char* file;
  int line;
};

/// fn traced into a graph on first call per signature, optimised, and replayed after. The nodes fn's trace
/// records outside any TraceLocation are marked with where jit was called ("train.cpp:42 (jit)").
JitFn jit(Fn fn, JitOptions options = {}, JitSite site = {});

}  // namespace bprop
