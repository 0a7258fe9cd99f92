// Memory planning: buffer lifetimes from the replay's instruction order, and one set of buffers per graph laid
// out once (best fit, largest values first within an instruction), reused by every value whose lifetime does not
// overlap. On the CPU, an elementwise op (or fused loop) whose input dies there writes its result over that input. A replay takes a set from the graph's pool (or makes one) and gives it back after: no allocation per op.
//
// Values that leave the call (results, Parameter updates, and anything a view of theirs shares memory with) are
// not planned: they get their own memory, as eagerly. Ops that return a view of an input (allocates_output false)
// extend the lifetime of the inputs' buffers to the view's last use.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "bprop/tensor.h"

namespace bprop::graph {

struct Executable;

struct MemoryPlan {
  Device device;                     // where the buffers are
  std::vector<size_t> buffer_bytes;  // capacity of each buffer
  std::vector<int> slot_buffer;      // per executor slot: its buffer, or -1 (unplanned)
  int64_t planned_bytes = 0;         // the buffers together: the most a replay holds for its intermediate values
  int64_t eager_bytes = 0;           // what running the same ops eagerly allocates, one tensor per op output
  int64_t in_place = 0;              // values computed into the buffer of an input that dies at their op

  /// Buffer sets of finished replays, ready for the next (one per replay running at the same time).
  std::mutex mu;
  std::vector<std::vector<std::shared_ptr<Storage>>> free_sets;
};

/// Plans the intermediate values of exe's program (on its device; in place on the CPU only); stores the plan in
/// exe.memory.
void plan_memory(Executable& exe);

/// The buffers of one replay: taken from the plan's pool, given back when it ends.
class ArenaLease {
 public:
  explicit ArenaLease(MemoryPlan& plan);
  ~ArenaLease();
  ArenaLease(const ArenaLease&) = delete;
  ArenaLease& operator=(const ArenaLease&) = delete;
  /// An uninitialised tensor of this shape and dtype in slot's buffer, or an empty Tensor when the slot is unplanned.
  Tensor output(int slot, const Shape& shape, DType dtype, const std::string& op);

 private:
  MemoryPlan& plan_;
  std::vector<std::shared_ptr<Storage>> buffers_;
};

}  // namespace bprop::graph
