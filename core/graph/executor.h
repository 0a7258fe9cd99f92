// Replaying a traced graph on concrete tensors: each node's CPU kernel, called directly with the shape, dtype
// and attributes the trace recorded (no inference, no attribute parsing, no tape), or a fused group's loop; a
// value is released after the last node that reads it.
#pragma once
#include <map>
#include <mutex>

#include "graph/ir.h"

namespace bprop::graph {

/// Lays out the replay of an optimised graph (g.program and its slots, the memory plan, the donations); run()
/// needs it.
void prepare_program(Graph& g);

/// Which Parameter updates can be computed in place (g.donations): the update is the only one of its Parameter,
/// its value is not also returned, and nothing reads the Parameter (or a view of it) after the instruction that
/// computes the value; that instruction itself reads it only where it writes it (an elementwise op, or a fused
/// loop whose later steps do not read it).
void plan_donations(Graph& g);

/// The graph's result for these arguments (shaped and typed as the trace's); errors name the op.
Value run(const Graph& g, const std::vector<Tensor>& args);

/// The host constants of a graph uploaded to one device, once (not Parameters: those are read at every replay).
struct DeviceConstants {
  std::mutex mu;
  std::map<int, Tensor> uploaded;  // by slot
};

/// The graph's result on `device` (graphs for a device are optimised without CPU fusion): each node's device
/// kernel queued on the device's stream, or its CPU kernel with a host round trip, with no host synchronisation
/// between nodes otherwise. Arguments not on the device are moved there.
Value run_on_device(const Graph& g, const std::vector<Tensor>& args, Device device, DeviceConstants& constants);

/// One node's kernel on concrete inputs; `out`, when given, is where the result goes (a planned buffer).
Tensor run_node(const GraphNode& n, const std::vector<Tensor>& inputs, Tensor out = {});

}  // namespace bprop::graph
