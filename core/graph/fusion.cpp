#include "graph/fusion.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "graph/memory_plan.h"
#include "graph/passes.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/vmath.h"
#include "ops/sum_order.h"
#include "registry/half_kernels.h"

namespace bprop::graph {
namespace {

// Elements per tile: a few kilobytes per live value, so a group's scratch stays in L1/L2.
constexpr int64_t kTile = 1024;

// Small tensors get tiles of their own size (a long chain on scalars keeps thousands of values live).
int64_t tile_elements(const FusedLoop& loop) { return std::max<int64_t>(1, std::min(kTile, loop.numel)); }

// Bytes of one element of a scratch tile: a half loop's tiles are float32.
int64_t compute_size(const FusedLoop& loop) { return is_half(loop.dtype) ? 4 : static_cast<int64_t>(dtype_size(loop.dtype)); }

}  // namespace

bool reads_outside_after(const FusedLoop& loop, size_t k, int writer) { return loop.last_reader[k] > writer; }

bool fusible(const Graph& g, const GraphNode& n) {
  const ElementwiseDef& def = n.op->elementwise;
  // (a half node joins only where its eager kernel runs the same float32 function on tiles: no cpu_half)
  if (!def.compute_fn(n.dtype) || n.inputs.empty() || n.inputs.size() > 3) return false;
  if (is_half(n.dtype) && n.op->cpu_half) return false;
  if (!n.attrs.empty() && def.num_params == 0) return false;  // attributes its array functions do not take
  for (int v : n.inputs) {
    if (v < 0) return false;
    const ValueType& t = g.types[static_cast<size_t>(v)];
    if (t.dtype != n.dtype) return false;
    int64_t inner = 0;
    if (t.shape != n.shape && shape_numel(t.shape) != 1 && !cpu::repeats_in(t.shape, n.shape, &inner)) return false;
  }
  return true;
}

bool fusible_sum(const Graph& g, const GraphNode& n, const Shape& shape) {
  if ((n.op->name != "sum" && n.op->name != "mean") || n.inputs.size() != 1 || n.inputs[0] < 0) return false;
  const ValueType& in = g.types[static_cast<size_t>(n.inputs[0])];
  // every axis reduced (one element out), float32 in and out: the kernel's one-lane order (ops/sum_order.h)
  return n.dtype == DType::Float32 && in.dtype == DType::Float32 && in.shape == shape && shape_numel(n.shape) == 1 &&
         shape_numel(shape) >= 1;
}

FusedLoop build_fused_loop(const Graph& g, const std::vector<int>& group, const std::vector<bool>& needed) {
  FusedLoop loop;
  const GraphNode& first = g.nodes[static_cast<size_t>(group.front())];
  loop.dtype = first.dtype;
  loop.shape = first.shape;
  loop.numel = shape_numel(first.shape);
  const bool half = is_half(loop.dtype);
  std::unordered_map<int, int> step_of;     // value id -> step index
  std::unordered_map<int, int> outside_of;  // value id -> outside index
  std::unordered_map<int, int> last_read;   // value id -> last step reading it (within the group)
  for (size_t s = 0; s < group.size(); ++s) {
    for (int v : g.nodes[static_cast<size_t>(group[s])].inputs) last_read[v] = static_cast<int>(s);
  }
  std::vector<int> free_slots;
  std::vector<bool> slot_free;  // whether a slot is in free_slots (a chain of scalars has thousands of slots)
  for (size_t s = 0; s < group.size(); ++s) {
    const GraphNode& n = g.nodes[static_cast<size_t>(group[s])];
    if (!n.op->elementwise.compute_fn(n.dtype)) {  // a sum taken in (after the steps: its input's tile is still there)
      const FusedLoop::Step& from = loop.steps[static_cast<size_t>(step_of.at(n.inputs[0]))];
      loop.sums.push_back({from.slot >= 0 ? FusedLoop::Source{FusedLoop::Source::Slot, from.slot}
                                          : FusedLoop::Source{FusedLoop::Source::Result, from.result},
                           n.out, n.shape, n.op->name == "mean" ? static_cast<double>(loop.numel) : 1.0});
      continue;
    }
    FusedLoop::Step step{};
    step.fn = n.op->elementwise.compute_fn(n.dtype);
    step.arity = static_cast<uint8_t>(n.inputs.size());
    step.num_params = static_cast<uint8_t>(n.op->elementwise.num_params);
    step.params = static_cast<int32_t>(loop.params.size());
    if (step.num_params > 0) {
      loop.params.resize(loop.params.size() + step.num_params);
      n.op->elementwise.params(n.attrs, loop.params.data() + step.params);
    }
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
      int64_t inner = 1;
      const bool row = shape != n.shape && numel != 1 && cpu::repeats_in(shape, n.shape, &inner);  // (fusible() checked)
      const bool wide = half && shape == n.shape;  // a whole half operand, widened tile by tile
      if (added) {
        loop.outside.push_back(v);
        loop.row_length.push_back(row ? numel : 0);
        loop.row_inner.push_back(row ? inner : 0);
        loop.row_slot.push_back(row ? loop.num_slots++ : -1);  // (held for the whole loop)
        loop.wide_slot.push_back(wide ? loop.num_slots++ : -1);
        loop.last_reader.push_back(-1);
      }
      loop.last_reader[static_cast<size_t>(it->second)] = static_cast<int>(s);
      step.in[i] = {row    ? FusedLoop::Source::OutsideRow
                    : wide ? FusedLoop::Source::OutsideWide
                    : shape != n.shape ? FusedLoop::Source::OutsideScalar
                                       : FusedLoop::Source::Outside,
                    it->second};
    }
    // The output's place first, then the inputs' slots are freed (a step never writes over its operands). A half
    // loop's steps all compute into a float32 slot, a result then rounded into its buffer as well.
    step.read_in_loop = last_read.count(n.out) > 0;
    step.result = -1;
    if (needed[static_cast<size_t>(n.out)]) {
      step.slot = -1;
      step.result = static_cast<int>(loop.results.size());
      loop.results.push_back(n.out);
      loop.result_steps.push_back(static_cast<int>(s));
    }
    if (step.result < 0 || half) {
      if (free_slots.empty()) {
        free_slots.push_back(loop.num_slots++);
        slot_free.resize(static_cast<size_t>(loop.num_slots), true);
      }
      step.slot = free_slots.back();
      free_slots.pop_back();
      slot_free[static_cast<size_t>(step.slot)] = false;
    }
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const FusedLoop::Source src = step.in[i];
      if (src.kind != FusedLoop::Source::Slot || last_read[n.inputs[i]] != static_cast<int>(s)) continue;
      if (!slot_free[src.index]) {
        free_slots.push_back(static_cast<int>(src.index));
        slot_free[src.index] = true;
      }
    }
    if (step.slot >= 0 && !step.read_in_loop) {  // a half result no step reads: its slot is free after it
      free_slots.push_back(step.slot);
      slot_free[static_cast<size_t>(step.slot)] = true;
    }
    step_of[n.out] = static_cast<int>(s);
    loop.steps.push_back(step);
  }
  return loop;
}

namespace {

// The steps over the tile of elements [t0, t0 + len), with `scratch` holding num_slots tiles.
void run_tile(const FusedLoop& loop, const std::vector<const char*>& outside, const std::vector<char*>& results,
              int64_t t0, int64_t len, char* scratch) {
  const int64_t esize = static_cast<int64_t>(dtype_size(loop.dtype));
  const int64_t tile_bytes = tile_elements(loop) * compute_size(loop);
  const int64_t off = t0 * esize;
  const bool half = is_half(loop.dtype);
  // Repeated operands (rows, columns): this tile's stretch, copied out once for the steps to read (a half one
  // widened on the way); whole half operands: this tile, widened.
  uint16_t staging[kTile];
  for (size_t k = 0; k < loop.row_slot.size(); ++k) {
    if (loop.wide_slot[k] >= 0) {
      widen_half(loop.dtype, outside[k] + off, reinterpret_cast<float*>(scratch + loop.wide_slot[k] * tile_bytes), len);
    }
    if (loop.row_slot[k] < 0) continue;
    char* slot = scratch + loop.row_slot[k] * tile_bytes;
    if (!half) {
      cpu::copy_repeated(outside[k], loop.row_length[k], loop.row_inner[k], esize, t0, len, slot);
      continue;
    }
    cpu::copy_repeated(outside[k], loop.row_length[k], loop.row_inner[k], esize, t0, len, reinterpret_cast<char*>(staging));
    widen_half(loop.dtype, staging, reinterpret_cast<float*>(slot), len);
  }
  for (const FusedLoop::Step& step : loop.steps) {
    ElementOperand in[3 + kMaxElementParams];
    for (uint8_t k = 0; k < step.num_params; ++k) in[step.arity + k] = {&loop.params[static_cast<size_t>(step.params + k)], true};
    for (uint8_t i = 0; i < step.arity; ++i) {
      const FusedLoop::Source src = step.in[i];
      switch (src.kind) {
        case FusedLoop::Source::Outside: in[i] = {outside[static_cast<size_t>(src.index)] + off, false}; break;
        case FusedLoop::Source::OutsideScalar: in[i] = {outside[static_cast<size_t>(src.index)], true}; break;
        case FusedLoop::Source::OutsideRow:
          in[i] = {scratch + loop.row_slot[static_cast<size_t>(src.index)] * tile_bytes, false};
          break;
        case FusedLoop::Source::OutsideWide:
          in[i] = {scratch + loop.wide_slot[static_cast<size_t>(src.index)] * tile_bytes, false};
          break;
        case FusedLoop::Source::Slot: in[i] = {scratch + src.index * tile_bytes, false}; break;
        case FusedLoop::Source::Result: in[i] = {results[static_cast<size_t>(src.index)] + off, false}; break;
      }
    }
    char* out = step.slot >= 0 ? scratch + step.slot * tile_bytes : results[static_cast<size_t>(step.result)] + off;
    step.fn(in, out, len);
    if (!half) continue;
    // The op's half result, as its eager kernel rounds it: into its buffer, and as the later steps read it.
    float* values = reinterpret_cast<float*>(out);
    if (step.result < 0) {
      round_half_in_place(loop.dtype, values, len);
      continue;
    }
    char* result = results[static_cast<size_t>(step.result)] + off;
    round_half(loop.dtype, values, result, len);
    if (step.read_in_loop) widen_half(loop.dtype, result, values, len);
  }
}

// The steps over elements [begin, end), tile by tile.
void run_range(const FusedLoop& loop, const std::vector<const char*>& outside, const std::vector<char*>& results,
               int64_t begin, int64_t end, char* scratch) {
  const int64_t tile = tile_elements(loop);
  for (int64_t t0 = begin; t0 < end; t0 += tile) run_tile(loop, outside, results, t0, std::min(tile, end - t0), scratch);
}

// A loop with sums: its tiles are runs of whole leaves of the sum order (ops/sum_order.h), and after a tile's
// steps each leaf of it is added up (vm::sum, as the kernel); the leaves' results are combined in the kernel's
// order at the end. Returns the sums, in the order of loop.sums.
std::vector<float> run_with_sums(const FusedLoop& loop, const std::vector<const char*>& outside,
                                 const std::vector<char*>& results, size_t scratch_bytes) {
  const int64_t threads = cpu::num_threads();
  std::vector<int64_t> bounds{0};  // leaf k is [bounds[k], bounds[k + 1]) (an empty leaf repeats its start)
  sum_order::full(loop.numel, threads, [&](int64_t, int64_t e) {
    bounds.push_back(std::max(bounds.back(), std::min(e, loop.numel)));
    return 0.0;
  });
  const size_t leaves = bounds.size() - 1;
  // tiles: consecutive leaves, as many as fit in one (a leaf is never longer than a tile)
  std::vector<size_t> tile_first{0};
  const int64_t tile = tile_elements(loop);
  for (size_t k = 1; k < leaves; ++k) {
    if (bounds[k + 1] - bounds[tile_first.back()] > tile) tile_first.push_back(k);
  }
  tile_first.push_back(leaves);
  const int64_t tile_bytes = tile * static_cast<int64_t>(dtype_size(loop.dtype));
  std::vector<double> leaf_sums(loop.sums.size() * leaves, 0.0);
  auto run_tiles = [&](int64_t tb, int64_t te, char* scratch) {
    for (int64_t t = tb; t < te; ++t) {
      const size_t k0 = tile_first[static_cast<size_t>(t)], k1 = tile_first[static_cast<size_t>(t) + 1];
      const int64_t t0 = bounds[k0], len = bounds[k1] - t0;
      if (len == 0) continue;
      run_tile(loop, outside, results, t0, len, scratch);
      for (size_t s = 0; s < loop.sums.size(); ++s) {
        const FusedLoop::Source from = loop.sums[s].from;
        const auto* tile_values = reinterpret_cast<const float*>(
            from.kind == FusedLoop::Source::Slot ? scratch + from.index * tile_bytes
                                                 : results[from.index] + t0 * static_cast<int64_t>(sizeof(float)));
        for (size_t k = k0; k < k1; ++k) {
          leaf_sums[s * leaves + k] = cpu::vm::sum(tile_values + (bounds[k] - t0), bounds[k + 1] - bounds[k]);
        }
      }
    }
  };
  const int64_t tiles = static_cast<int64_t>(tile_first.size()) - 1;
  if (loop.numel <= cpu::kParallelGrain) {
    thread_local std::vector<char> scratch;
    if (scratch.size() < scratch_bytes) scratch.resize(scratch_bytes);
    run_tiles(0, tiles, scratch.data());
  } else {
    cpu::parallel_for(tiles, std::max<int64_t>(1, cpu::kParallelGrain / tile), [&](int64_t b, int64_t e) {
      std::vector<char> scratch(scratch_bytes);
      run_tiles(b, e, scratch.data());
    });
  }
  std::vector<float> out;
  for (size_t s = 0; s < loop.sums.size(); ++s) {
    size_t next = 0;
    const double* mine = leaf_sums.data() + s * leaves;
    const double total = sum_order::full(loop.numel, threads, [&](int64_t, int64_t) { return mine[next++]; });
    out.push_back(static_cast<float>(total / loop.sums[s].divisor));  // (as the sum and mean kernels finish)
  }
  return out;
}

}  // namespace

void run_fused_loop(const FusedLoop& loop, std::vector<Tensor>& env, const std::vector<int>& inputs,
                    const std::vector<int>& outputs, ArenaLease* arena) {
  std::vector<const char*> outside(inputs.size());
  std::vector<float> wide_scalars(is_half(loop.dtype) ? inputs.size() : 0);  // a half loop's one-element operands
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = env[static_cast<size_t>(inputs[i])];
    outside[i] = static_cast<const char*>(t.raw_data());
    if (!wide_scalars.empty() && t.numel() == 1 && t.shape() != loop.shape) {
      widen_half(loop.dtype, outside[i], &wide_scalars[i], 1);
      outside[i] = reinterpret_cast<const char*>(&wide_scalars[i]);
    }
  }
  std::vector<char*> results(loop.results.size());
  for (size_t i = 0; i < loop.results.size(); ++i) {
    // (a result's slot holds a tensor already when it is a donated Parameter: the result goes there)
    Tensor t = std::move(env[static_cast<size_t>(outputs[i])]);
    if (!t.defined() && arena) t = arena->output(outputs[i], loop.shape, loop.dtype, "fused");
    if (!t.defined()) t = Tensor::empty(loop.shape, loop.dtype, Device::cpu(), "fused");
    results[i] = static_cast<char*>(t.raw_data());
    env[static_cast<size_t>(outputs[i])] = std::move(t);
  }
  const size_t scratch_bytes =
      static_cast<size_t>(loop.num_slots) * static_cast<size_t>(tile_elements(loop)) * static_cast<size_t>(compute_size(loop));
  if (!loop.sums.empty()) {
    const std::vector<float> sums = run_with_sums(loop, outside, results, scratch_bytes);
    for (size_t s = 0; s < sums.size(); ++s) {
      const int slot = outputs[loop.results.size() + s];
      const Shape& shape = loop.sums[s].shape;
      Tensor t = std::move(env[static_cast<size_t>(slot)]);
      if (!t.defined() && arena) t = arena->output(slot, shape, DType::Float32, "sum");
      if (!t.defined()) t = Tensor::empty(shape, DType::Float32, Device::cpu(), "sum");
      *static_cast<float*>(t.raw_data()) = sums[s];
      env[static_cast<size_t>(slot)] = std::move(t);
    }
    return;
  }
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
