#include "graph/fusion.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "graph/memory_plan.h"
#include "graph/passes.h"
#include "kernels/cpu/elementwise.h"

namespace bprop::graph {
namespace {

// Elements per tile: a few kilobytes per live value, so a group's scratch stays in L1/L2.
constexpr int64_t kTile = 1024;

// Small tensors get tiles of their own size (a long chain on scalars keeps thousands of values live).
int64_t tile_elements(const FusedLoop& loop) { return std::max<int64_t>(1, std::min(kTile, loop.numel)); }

// Whether `operand` broadcast to `shape` repeats its data along the leading dimensions: without its leading 1s, it
// is the trailing dimensions of `shape` (so element i of the result reads element i mod its size).
bool is_row_of(const Shape& operand, const Shape& shape) {
  size_t lead = 0;
  while (lead < operand.size() && operand[lead] == 1) ++lead;
  const size_t rank = operand.size() - lead;
  if (rank > shape.size()) return false;
  return std::equal(operand.begin() + static_cast<std::ptrdiff_t>(lead), operand.end(),
                    shape.end() - static_cast<std::ptrdiff_t>(rank));
}

}  // namespace

bool fusible(const Graph& g, const GraphNode& n) {
  if (!n.op->elementwise.fn(n.dtype) || !n.attrs.empty() || n.inputs.empty() || n.inputs.size() > 3) return false;
  for (int v : n.inputs) {
    if (v < 0) return false;
    const ValueType& t = g.types[static_cast<size_t>(v)];
    if (t.dtype != n.dtype) return false;
    if (t.shape != n.shape && shape_numel(t.shape) != 1 && !is_row_of(t.shape, n.shape)) return false;
  }
  return true;
}

FusedLoop build_fused_loop(const Graph& g, const std::vector<int>& group, const std::vector<bool>& needed) {
  FusedLoop loop;
  const GraphNode& first = g.nodes[static_cast<size_t>(group.front())];
  loop.dtype = first.dtype;
  loop.shape = first.shape;
  loop.numel = shape_numel(first.shape);
  std::unordered_map<int, int> step_of;     // value id -> step index
  std::unordered_map<int, int> outside_of;  // value id -> outside index
  std::unordered_map<int, int> last_read;   // value id -> last step reading it (within the group)
  for (size_t s = 0; s < group.size(); ++s) {
    for (int v : g.nodes[static_cast<size_t>(group[s])].inputs) last_read[v] = static_cast<int>(s);
  }
  std::vector<int> free_slots;
  for (size_t s = 0; s < group.size(); ++s) {
    const GraphNode& n = g.nodes[static_cast<size_t>(group[s])];
    FusedLoop::Step step{};
    step.fn = n.op->elementwise.fn(n.dtype);
    step.arity = static_cast<uint8_t>(n.inputs.size());
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const int v = n.inputs[i];
      if (auto it = step_of.find(v); it != step_of.end()) {
        const FusedLoop::Step& from = loop.steps[static_cast<size_t>(it->second)];
        step.in[i] = from.slot >= 0 ? FusedLoop::Source{FusedLoop::Source::Slot, from.slot}
                                    : FusedLoop::Source{FusedLoop::Source::Result, from.result};
        continue;
      }
      auto [it, added] = outside_of.emplace(v, static_cast<int>(loop.outside.size()));
      const Shape& shape = g.types[static_cast<size_t>(v)].shape;
      const int64_t numel = shape_numel(shape);
      const bool row = shape != n.shape && numel != 1;  // (fusible() let only rows through)
      if (added) {
        loop.outside.push_back(v);
        loop.row_length.push_back(row ? numel : 0);
        loop.row_slot.push_back(row ? loop.num_slots++ : -1);  // (held for the whole loop)
      }
      step.in[i] = {row ? FusedLoop::Source::OutsideRow
                        : shape != n.shape ? FusedLoop::Source::OutsideScalar : FusedLoop::Source::Outside,
                    it->second};
    }
    // The output's place first, then the inputs' slots are freed (a step never writes over its operands).
    if (needed[static_cast<size_t>(n.out)]) {
      step.slot = -1;
      step.result = static_cast<int>(loop.results.size());
      loop.results.push_back(n.out);
      loop.result_steps.push_back(static_cast<int>(s));
    } else {
      step.result = -1;
      if (free_slots.empty()) free_slots.push_back(loop.num_slots++);
      step.slot = free_slots.back();
      free_slots.pop_back();
    }
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const FusedLoop::Source src = step.in[i];
      if (src.kind != FusedLoop::Source::Slot || last_read[n.inputs[i]] != static_cast<int>(s)) continue;
      if (std::find(free_slots.begin(), free_slots.end(), src.index) == free_slots.end()) {
        free_slots.push_back(src.index);
      }
    }
    step_of[n.out] = static_cast<int>(s);
    loop.steps.push_back(step);
  }
  return loop;
}

namespace {

// The steps over elements [begin, end), tile by tile, with `scratch` holding num_slots tiles.
void run_range(const FusedLoop& loop, const std::vector<const char*>& outside, const std::vector<char*>& results,
               int64_t begin, int64_t end, char* scratch) {
  const int64_t esize = static_cast<int64_t>(dtype_size(loop.dtype));
  const int64_t tile = tile_elements(loop);
  const int64_t tile_bytes = tile * esize;
  for (int64_t t0 = begin; t0 < end; t0 += tile) {
    const int64_t len = std::min(tile, end - t0);
    const int64_t off = t0 * esize;
    // Broadcast rows: this tile's stretch of the repeated row, copied out once for the steps to read.
    for (size_t k = 0; k < loop.row_slot.size(); ++k) {
      if (loop.row_slot[k] < 0) continue;
      const int64_t row = loop.row_length[k];
      char* dst = scratch + loop.row_slot[k] * tile_bytes;
      for (int64_t j = 0, pos = t0 % row; j < len; pos = 0) {
        const int64_t n = std::min(len - j, row - pos);
        std::memcpy(dst + j * esize, outside[k] + pos * esize, static_cast<size_t>(n * esize));
        j += n;
      }
    }
    for (const FusedLoop::Step& step : loop.steps) {
      ElementOperand in[3];
      for (uint8_t i = 0; i < step.arity; ++i) {
        const FusedLoop::Source src = step.in[i];
        switch (src.kind) {
          case FusedLoop::Source::Outside: in[i] = {outside[static_cast<size_t>(src.index)] + off, false}; break;
          case FusedLoop::Source::OutsideScalar: in[i] = {outside[static_cast<size_t>(src.index)], true}; break;
          case FusedLoop::Source::OutsideRow:
            in[i] = {scratch + loop.row_slot[static_cast<size_t>(src.index)] * tile_bytes, false};
            break;
          case FusedLoop::Source::Slot: in[i] = {scratch + src.index * tile_bytes, false}; break;
          case FusedLoop::Source::Result: in[i] = {results[static_cast<size_t>(src.index)] + off, false}; break;
        }
      }
      char* out = step.slot >= 0 ? scratch + step.slot * tile_bytes : results[static_cast<size_t>(step.result)] + off;
      step.fn(in, out, len);
    }
  }
}

}  // namespace

void run_fused_loop(const FusedLoop& loop, std::vector<Tensor>& env, const std::vector<int>& inputs,
                    const std::vector<int>& outputs, ArenaLease* arena) {
  std::vector<const char*> outside(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    outside[i] = static_cast<const char*>(env[static_cast<size_t>(inputs[i])].raw_data());
  }
  std::vector<char*> results(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    // (a result's slot holds a tensor already when it is a donated Parameter: the result goes there)
    Tensor t = std::move(env[static_cast<size_t>(outputs[i])]);
    if (!t.defined() && arena) t = arena->output(outputs[i], loop.shape, loop.dtype, "fused");
    if (!t.defined()) t = Tensor::empty(loop.shape, loop.dtype, Backend::CPU, "fused");
    results[i] = static_cast<char*>(t.raw_data());
    env[static_cast<size_t>(outputs[i])] = std::move(t);
  }
  const size_t scratch_bytes =
      static_cast<size_t>(loop.num_slots) * static_cast<size_t>(tile_elements(loop)) * dtype_size(loop.dtype);
  if (loop.numel <= cpu::kParallelGrain) {
    thread_local std::vector<char> scratch;
    if (scratch.size() < scratch_bytes) scratch.resize(scratch_bytes);
    run_range(loop, outside, results, 0, loop.numel, scratch.data());
    return;
  }
  cpu::parallel_for(loop.numel, cpu::kParallelGrain, [&](int64_t b, int64_t e) {
    std::vector<char> scratch(scratch_bytes);
    run_range(loop, outside, results, b, e, scratch.data());
  });
}

}  // namespace bprop::graph
