// MindSpore's execution context: set_context(mode = GRAPH_MODE) makes the functions returned by grad,
// value_and_grad and vjp_fn, and Cell calls, compile themselves with jit on their first call (one graph per
// signature, as jit caches); PYNATIVE_MODE, the default, runs them eagerly op by op.
//
//   set_context({.mode = Mode::Graph});
//   GradFn g = grad(f);   // traced, optimised and replayed from its first call
#pragma once
#include <string>

#include "bprop/tensor.h"

namespace bprop {

enum class Mode { PyNative, Graph };

struct Context {
  Mode mode = Mode::PyNative;
  /// Where ops without device inputs run, and where host tensors meeting a device tensor move (MindSpore's
  /// device_target and device_id): Device::cpu(), or a device of a registered backend (parse_device("ascend:N") in
  /// native builds with an NPU).
  Device device{};
};

/// Sets the process-wide context; ValueError for a device this build or host does not have (the message says why).
void set_context(const Context& context);
Context get_context();

/// "graph" / "pynative"
const char* mode_name(Mode mode);

namespace detail {
/// True when a grad function or Cell call should run through its jit cache now: graph mode, and no trace or
/// grad level is open (inside those, it is part of the enclosing computation).
bool graph_mode_call();
}  // namespace detail

}  // namespace bprop
