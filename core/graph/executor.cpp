#include "graph/executor.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "bprop/device.h"
#include "graph/fusion.h"
#include "graph/memory_plan.h"
#include "registry/half_kernels.h"
#include "registry/kernel_errors.h"

namespace bprop::graph {
namespace {

// The result's structure with each tensor replaced by the next of `values`, depth first.
Value rebuild(const Value& shape, const std::vector<Tensor>& values, size_t& next) {
  if (shape.is_tensor()) return Value(values[next++]);
  std::vector<Value> items;
  for (const Value& item : shape.items()) items.push_back(rebuild(item, values, next));
  return Value(std::move(items));
}


}  // namespace

Tensor run_node(const GraphNode& n, const std::vector<Tensor>& inputs, Tensor planned) {
  Tensor out = planned;
  if (n.op->allocates_output && !out.defined()) out = Tensor::empty(n.shape, n.dtype, Device::cpu(), n.op->name);
  KernelCtx ctx{*n.op, inputs, n.attrs, n.shape, n.dtype, out};
  detail::translating_kernel_errors(n.op->name, n.shape, n.dtype,
                                    [&] { run_cpu_kernel(n.op->kernels[Backend::CPU.id], ctx); });
  // A kernel that handed back another tensor (a scalar it made, say): its value goes where the plan put it.
  if (planned.defined() && out.impl()->storage != planned.impl()->storage) {
    std::memcpy(planned.raw_data(), out.raw_data(), planned.nbytes());
    return planned;
  }
  return out;
}

void prepare_program(Graph& g) {
  std::vector<int> slot(static_cast<size_t>(g.num_values), -1);
  int next = 0;
  auto slot_for = [&](int v) {
    int& s = slot[static_cast<size_t>(v)];
    if (s < 0) s = next++;
    return s;
  };
  g.input_slots.clear();
  for (int v : g.inputs) g.input_slots.push_back(slot_for(v));
  g.constant_slots.clear();
  for (const auto& [id, t] : g.constants) g.constant_slots.emplace_back(slot_for(id), t);
  g.program.clear();
  std::vector<int> last(static_cast<size_t>(g.num_values), -1);  // instruction reading each value last
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    Instruction ins;
    if (n.group >= 0) {
      const FusedGroup& fg = g.groups[static_cast<size_t>(n.group)];
      ins.group = n.group;
      for (int v : fg.loop->outside) ins.inputs.push_back(slot_for(v));
      for (int v : fg.loop->results) ins.outputs.push_back(slot_for(v));
      for (const FusedLoop::Sum& sum : fg.loop->sums) ins.outputs.push_back(slot_for(sum.out));
      for (int v : fg.loop->outside) last[static_cast<size_t>(v)] = static_cast<int>(g.program.size());
      i = static_cast<size_t>(fg.nodes.back());
    } else {
      ins.node = static_cast<int>(i);
      for (int v : n.inputs) {
        ins.inputs.push_back(v < 0 ? -1 : slot_for(v));
        if (v >= 0) last[static_cast<size_t>(v)] = static_cast<int>(g.program.size());
      }
      ins.outputs.push_back(slot_for(n.out));
    }
    g.program.push_back(std::move(ins));
  }
  std::vector<bool> kept(static_cast<size_t>(g.num_values), false);  // outputs and arguments stay
  for (int v : g.outputs) kept[static_cast<size_t>(v)] = true;
  for (const auto& u : g.updates) kept[static_cast<size_t>(u.second)] = true;
  for (int v = 0; v < g.num_values; ++v) {
    const int at = last[static_cast<size_t>(v)];
    if (at >= 0 && !kept[static_cast<size_t>(v)]) g.program[static_cast<size_t>(at)].release.push_back(slot[static_cast<size_t>(v)]);
  }
  g.output_slots.clear();
  for (int v : g.outputs) g.output_slots.push_back(slot_for(v));
  g.update_slots.clear();
  for (const auto& u : g.updates) g.update_slots.push_back(slot_for(u.second));
  g.num_slots = next;
  g.memory = std::make_shared<MemoryPlan>();
  plan_memory(g);
  plan_donations(g);
}

namespace {
// An error of a replayed op (data-dependent: an index out of range) names where the op was traced.
[[noreturn]] void rethrow_located(const Graph& g, const Instruction& ins, const Error& e) {
  const GraphNode& n =
      g.nodes[static_cast<size_t>(ins.group >= 0 ? g.groups[static_cast<size_t>(ins.group)].nodes.front() : ins.node)];
  if (n.where.empty()) throw;
  throw_error(e.kind(), std::string(e.what()) + " (in the jitted function, traced at " + n.where + ")");
}

std::vector<Tensor> results_of(const Graph& g, const std::vector<Tensor>& env) {
  std::vector<Tensor> results;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const Tensor& t = env[static_cast<size_t>(g.output_slots[i])];
    // A result that is a captured or folded constant is the caller's own copy, as eagerly.
    results.push_back(g.constant(g.outputs[i]) ? t.clone() : t);
  }
  return results;
}
}  // namespace

Value run_on_device(const Graph& g, const std::vector<Tensor>& args, Device device, DeviceConstants& constants) {
  std::vector<Tensor> env(static_cast<size_t>(g.num_slots));
  for (size_t i = 0; i < g.input_slots.size(); ++i) env[static_cast<size_t>(g.input_slots[i])] = args[i].to(device);
  {
    std::lock_guard<std::mutex> lock(constants.mu);
    for (const auto& [s, t] : g.constant_slots) {
      if (t.device() == device) {
        env[static_cast<size_t>(s)] = t;
      } else if (t.impl()->is_parameter) {  // live: its value now
        env[static_cast<size_t>(s)] = t.to(device);
      } else {
        Tensor& up = constants.uploaded[s];
        if (!up.defined()) up = t.to(device);
        env[static_cast<size_t>(s)] = up;
      }
    }
  }
  std::vector<Tensor> in;
  for (const Instruction& ins : g.program) {
    if (ins.group >= 0) throw ValueError("For 'jit', a graph with CPU-fused loops cannot run on " + device.str());
    const GraphNode& n = g.nodes[static_cast<size_t>(ins.node)];
    in.clear();
    for (int s : ins.inputs) in.push_back(s < 0 ? Tensor() : env[static_cast<size_t>(s)]);
    try {
      env[static_cast<size_t>(ins.outputs[0])] = detail::run_on_device(*n.op, in, n.attrs, n.shape, n.dtype, device);
    } catch (const Error& e) {
      rethrow_located(g, ins, e);
    }
    for (int s : ins.release) env[static_cast<size_t>(s)] = Tensor();
  }
  for (size_t i = 0; i < g.updates.size(); ++i) {
    Tensor param = g.updates[i].first;
    copy_into(param, env[static_cast<size_t>(g.update_slots[i])]);
  }
  size_t next = 0;
  return rebuild(g.output_template, results_of(g, env), next);
}

Value run(const Graph& g, const std::vector<Tensor>& args) {
  std::vector<Tensor> env(static_cast<size_t>(g.num_slots));
  for (size_t i = 0; i < g.input_slots.size(); ++i) env[static_cast<size_t>(g.input_slots[i])] = args[i];
  for (const auto& [s, t] : g.constant_slots) env[static_cast<size_t>(s)] = t;
  ArenaLease arena(*g.memory);
  // Donated updates are computed into the Parameter itself: its tensor waits in the value's slot (an argument
  // sharing the Parameter's storage would see it change early, so such a call copies as usual).
  auto donation = g.donations.begin();
  const bool donate = !g.donations.empty() && std::none_of(args.begin(), args.end(), [&](const Tensor& a) {
    return std::any_of(g.updates.begin(), g.updates.end(),
                       [&](const auto& u) { return a.impl()->storage == u.first.impl()->storage; });
  });
  std::vector<Tensor> in;
  for (size_t at = 0; at < g.program.size(); ++at) {
    const Instruction& ins = g.program[at];
    for (; donation != g.donations.end() && donation->first == static_cast<int>(at); ++donation) {
      if (donate) env[static_cast<size_t>(g.update_slots[static_cast<size_t>(donation->second)])] = g.updates[static_cast<size_t>(donation->second)].first;
    }
    try {
    if (ins.group >= 0) {
      const FusedLoop& loop = *g.groups[static_cast<size_t>(ins.group)].loop;
      detail::translating_kernel_errors("fused", loop.shape, loop.dtype,
                                        [&] { run_fused_loop(loop, env, ins.inputs, ins.outputs, &arena); });
    } else {
      const GraphNode& n = g.nodes[static_cast<size_t>(ins.node)];
      in.clear();
      for (int s : ins.inputs) in.push_back(s < 0 ? Tensor() : env[static_cast<size_t>(s)]);
      const int out = ins.outputs[0];
      Tensor planned = std::move(env[static_cast<size_t>(out)]);  // (a donated Parameter, or nothing)
      if (!planned.defined() && n.op->allocates_output) planned = arena.output(out, n.shape, n.dtype, n.op->name);
      env[static_cast<size_t>(out)] = run_node(n, in, std::move(planned));
    }
    } catch (const Error& e) {
      rethrow_located(g, ins, e);
    }
    for (int s : ins.release) env[static_cast<size_t>(s)] = Tensor();
  }
  // Parameter updates land after every node has read the old values, as eagerly the function's assignments
  // land after the reads before them (reads after an assignment were traced to the new value).
  for (size_t i = 0; i < g.updates.size(); ++i) {
    Tensor param = g.updates[i].first;
    const Tensor& v = env[static_cast<size_t>(g.update_slots[i])];
    if (v.impl()->storage != param.impl()->storage) std::memcpy(param.raw_data(), v.raw_data(), param.nbytes());
  }
  size_t next = 0;
  return rebuild(g.output_template, results_of(g, env), next);
}

}  // namespace bprop::graph
