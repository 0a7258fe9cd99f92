// Compiling a finished graph for a device and replaying it on concrete tensors. One loop serves every device: a
// node runs its kernel for the executable's device (on the CPU directly, with the shape, dtype and attributes the
// trace recorded: no inference, no attribute parsing, no tape; on a device queued on its stream, or through the
// host where it has no kernel), or a fused group's loop on the CPU; intermediate values live in the memory plan's
// buffers on that device, and a value is released after the last instruction that reads it.
#pragma once
#include <memory>

#include "graph/executable.h"

namespace bprop::graph {

/// The program that runs `g` (optimised; fused only for the CPU) on `device`: slots, the memory plan, the
/// donations, and on a device its traced constants uploaded. A graph with CPU-fused loops for another device is a
/// ValueError.
std::shared_ptr<const Executable> compile(std::shared_ptr<const Graph> g, Device device = Device::cpu());

/// The graph's result for these arguments (shaped and typed as the trace's); errors name the op and where it was
/// traced. Arguments not on the executable's device are moved there.
Value run(const Executable& exe, const std::vector<Tensor>& args);

/// Which Parameter updates can be computed in place (exe.donations): the update is the only one of its Parameter,
/// its value is not also returned, and nothing reads the Parameter (or a view of it) after the instruction that
/// computes the value; that instruction itself reads it only where it writes it (an elementwise op, or a fused
/// loop whose later steps do not read it).
void plan_donations(Executable& exe);

/// One node's CPU kernel on concrete inputs; `out`, when given, is where the result goes (a planned buffer).
Tensor run_node(const GraphNode& n, const std::vector<Tensor>& inputs, Tensor out = {});

}  // namespace bprop::graph
