// The compiled form of a graph for one device: the replay's instructions over compact slots, where arguments,
// constants, results and Parameter updates live, the memory plan and the donations. A Graph is the IR (what the
// tracer and the passes read and rewrite); an Executable is made from a finished one by compile() and only run.
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include "graph/ir.h"

namespace bprop::graph {

struct MemoryPlan;  // graph/memory_plan.h

/// One step of the replay: a node's kernel or a fused group's loop, with where its operands and result live
/// (compact slots of the executor's table: only values that exist at run time have one).
struct Instruction {
  int node = -1;   // index into Graph::nodes, or -1 for a group
  int group = -1;  // index into Graph::groups
  std::vector<int> inputs;   // slots (-1: absent optional input); for a group, its outside values
  std::vector<int> outputs;  // slots; for a group, its results
  std::vector<int> release;  // slots read for the last time here
};

struct Executable {
  std::shared_ptr<const Graph> graph;
  Device device;  // where every instruction runs (a node without a kernel there falls back through the host)
  std::vector<Instruction> program;
  int num_slots = 0;
  std::vector<int> input_slots;  // per argument
  /// Per constant: its slot and tensor. On a device, constants computed while tracing are uploaded once, at
  /// compile time; Parameters stay as they are and are read (moved to the device if need be) at every replay.
  std::vector<std::pair<int, Tensor>> constant_slots;
  std::vector<int> output_slots;  // per output
  std::vector<int> update_slots;  // per update
  std::shared_ptr<MemoryPlan> memory;  // the buffers of intermediate values, on `device`
  /// Buffer donation: (instruction, update) pairs, by instruction, whose value the instruction computes straight
  /// into the Parameter's storage instead of a buffer copied in after the nodes (CPU only: graph/donation.cpp).
  std::vector<std::pair<int, int>> donations;
};

}  // namespace bprop::graph
