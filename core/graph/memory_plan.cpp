#include "graph/memory_plan.h"

#include <algorithm>
#include <map>
#include <new>

#include "bprop/pool.h"
#include "graph/executable.h"
#include "graph/fusion.h"

namespace bprop::graph {
namespace {

// For each output of `ins` (by position), the positions of its inputs whose buffer the output may take over when
// the input dies there: element i of the output is computed from element i of that input only, with nothing
// reading the input's element i afterwards. That holds for an elementwise op whose array function runs (every
// operand of the output's dtype, each whole or one element: cpu::run_elementwise, or its half tiles), and in a
// fused loop for a whole outside operand that no step after the one writing the result reads (each tile's steps
// read their operands at the tile's offset, before the next tile is written).
std::vector<std::vector<size_t>> in_place_candidates(const Graph& g, const Instruction& ins) {
  std::vector<std::vector<size_t>> out(ins.outputs.size());
  if (ins.group >= 0) {
    const FusedLoop& loop = *g.groups[static_cast<size_t>(ins.group)].loop;
    for (size_t r = 0; r < loop.results.size(); ++r) {
      const int writer = loop.result_steps[r];
      for (size_t k = 0; k < loop.outside.size(); ++k) {
        const ValueType& t = g.types[static_cast<size_t>(loop.outside[k])];
        if (loop.row_slot[k] >= 0 || t.shape != loop.shape || t.dtype != loop.dtype) continue;
        if (!reads_outside_after(loop, k, writer)) out[r].push_back(k);
      }
    }
    return out;
  }
  const GraphNode& n = g.nodes[static_cast<size_t>(ins.node)];
  // (a half call runs the float32 array function on tiles: element i still from element i; cpu_half ops excepted)
  const ElementFn fn = n.op->cpu_half ? n.op->elementwise.fn(n.dtype) : n.op->elementwise.compute_fn(n.dtype);
  if (!n.op->allocates_output || !fn || n.inputs.empty() || n.inputs.size() > 3) return out;
  for (int v : n.inputs) {
    if (v < 0) return out;
    const ValueType& t = g.types[static_cast<size_t>(v)];
    if (t.dtype != n.dtype || (t.shape != n.shape && shape_numel(t.shape) != 1)) return out;
  }
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (g.types[static_cast<size_t>(n.inputs[i])].shape == n.shape) out[0].push_back(i);
  }
  return out;
}

}  // namespace

void plan_memory(Executable& exe) {
  const Graph& g = *exe.graph;
  MemoryPlan& plan = *exe.memory;
  plan.device = exe.device;
  // (a device kernel is not known to allow its result over an operand it reads: in place is the CPU's)
  const bool in_place = exe.device.is_cpu();
  const size_t slots = static_cast<size_t>(exe.num_slots);
  std::vector<int64_t> bytes(slots, 0);
  std::vector<bool> allocated(slots, false);            // an allocating op's output, or a fused loop's result
  std::vector<std::vector<int>> roots(slots);            // the planned-or-not buffers a slot's value may share
  for (size_t s = 0; s < slots; ++s) roots[s] = {static_cast<int>(s)};
  auto value_bytes = [&](const Shape& shape, DType dt) {
    return shape_numel(shape) * static_cast<int64_t>(dtype_size(dt));
  };
  for (const Instruction& ins : exe.program) {
    if (ins.group >= 0) {
      const FusedLoop& loop = *g.groups[static_cast<size_t>(ins.group)].loop;
      for (size_t k = 0; k < ins.outputs.size(); ++k) {  // its results, then its sums
        const size_t s = static_cast<size_t>(ins.outputs[k]);
        allocated[s] = true;
        bytes[s] = k < loop.results.size() ? value_bytes(loop.shape, loop.dtype)
                                           : value_bytes(loop.sums[k - loop.results.size()].shape, DType::Float32);
      }
      continue;
    }
    const GraphNode& n = g.nodes[static_cast<size_t>(ins.node)];
    const size_t out = static_cast<size_t>(ins.outputs[0]);
    if (n.op->allocates_output) {
      allocated[out] = true;
      bytes[out] = value_bytes(n.shape, n.dtype);
    } else {  // a view, or a composite's result: it may share any input's memory
      roots[out].clear();
      for (int s : ins.inputs) {
        if (s >= 0) roots[out].insert(roots[out].end(), roots[static_cast<size_t>(s)].begin(), roots[static_cast<size_t>(s)].end());
      }
    }
  }
  std::vector<bool> escapes(slots, false);
  auto escape = [&](int s) {
    for (int r : roots[static_cast<size_t>(s)]) escapes[static_cast<size_t>(r)] = true;
  };
  for (int s : exe.output_slots) escape(s);
  for (int s : exe.update_slots) escape(s);
  // The last instruction that may read each buffer (through any value sharing it).
  std::vector<int> last(slots, -1);
  for (size_t i = 0; i < exe.program.size(); ++i) {
    for (int s : exe.program[i].inputs) {
      if (s < 0) continue;
      for (int r : roots[static_cast<size_t>(s)]) last[static_cast<size_t>(r)] = static_cast<int>(i);
    }
  }
  plan.slot_buffer.assign(slots, -1);
  plan.buffer_bytes.clear();
  plan.eager_bytes = 0;
  plan.in_place = 0;
  std::multimap<size_t, int> free_buffers;  // capacity -> buffer
  std::vector<std::vector<int>> frees_after(exe.program.size());
  for (size_t i = 0; i < exe.program.size(); ++i) {
    const Instruction& ins = exe.program[i];
    const std::vector<std::vector<size_t>> candidates =
        in_place ? in_place_candidates(g, ins) : std::vector<std::vector<size_t>>(ins.outputs.size());
    std::vector<size_t> outs(ins.outputs.size());
    for (size_t k = 0; k < outs.size(); ++k) outs[k] = k;
    // largest first, so that big values take the big free buffers
    std::sort(outs.begin(), outs.end(), [&](size_t a, size_t b) {
      return bytes[static_cast<size_t>(ins.outputs[a])] > bytes[static_cast<size_t>(ins.outputs[b])];
    });
    for (size_t k : outs) {
      const size_t su = static_cast<size_t>(ins.outputs[k]);
      if (!allocated[su]) continue;
      plan.eager_bytes += bytes[su];
      if (escapes[su]) continue;
      const size_t need = static_cast<size_t>(std::max<int64_t>(bytes[su], 1));
      // In place: the buffer of an input read for the last time here (not a view: its own buffer, whole).
      int b = -1;
      for (size_t c : candidates[k]) {
        const int in = ins.inputs[c];
        const int held = plan.slot_buffer[static_cast<size_t>(in)];
        if (held < 0 || last[static_cast<size_t>(in)] != static_cast<int>(i) || roots[static_cast<size_t>(in)].size() != 1 ||
            roots[static_cast<size_t>(in)][0] != in) {
          continue;
        }
        std::vector<int>& frees = frees_after[i];
        const auto f = std::find(frees.begin(), frees.end(), held);
        if (f == frees.end()) continue;  // taken by another output already
        frees.erase(f);
        b = held;
        ++plan.in_place;
        break;
      }
      if (b < 0) {
        auto it = free_buffers.lower_bound(need);  // best fit: the smallest free buffer that holds it
        if (it != free_buffers.end()) {
          b = it->second;
          free_buffers.erase(it);
        } else {
          b = static_cast<int>(plan.buffer_bytes.size());
          plan.buffer_bytes.push_back(need);
        }
      }
      plan.slot_buffer[su] = b;
      // free once the last reader has run (a value nobody reads: right after this instruction)
      const int until = std::max(last[su], static_cast<int>(i));
      frees_after[static_cast<size_t>(until)].push_back(b);
    }
    for (int b : frees_after[i]) free_buffers.emplace(plan.buffer_bytes[static_cast<size_t>(b)], b);
  }
  plan.planned_bytes = 0;
  for (size_t b : plan.buffer_bytes) plan.planned_bytes += static_cast<int64_t>(b);
}

ArenaLease::ArenaLease(MemoryPlan& plan) : plan_(plan) {
  std::lock_guard<std::mutex> lock(plan_.mu);
  if (!plan_.free_sets.empty()) {
    buffers_ = std::move(plan_.free_sets.back());
    plan_.free_sets.pop_back();
  } else {
    buffers_.resize(plan_.buffer_bytes.size());
  }
}

ArenaLease::~ArenaLease() {
  std::lock_guard<std::mutex> lock(plan_.mu);
  plan_.free_sets.push_back(std::move(buffers_));
}

Tensor ArenaLease::output(int slot, const Shape& shape, DType dtype, const std::string& op) {
  const int b = plan_.slot_buffer[static_cast<size_t>(slot)];
  if (b < 0) return Tensor();
  std::shared_ptr<Storage>& buf = buffers_[static_cast<size_t>(b)];
  if (!buf) {
    try {
      buf = Storage::make(plan_.buffer_bytes[static_cast<size_t>(b)], plan_.device);
    } catch (const std::bad_alloc&) {
      throw MemoryError("For '" + op + "', cannot allocate the graph's buffer of " +
                        std::to_string(plan_.buffer_bytes[static_cast<size_t>(b)]) + " bytes (out of memory)");
    }
  }
  auto impl = pool::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->dtype = dtype;
  impl->numel = shape_numel(shape);
  impl->storage = buf;
  return Tensor(std::move(impl));
}

}  // namespace bprop::graph
