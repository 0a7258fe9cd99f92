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

std::shared_ptr<const Executable> compile(std::shared_ptr<const Graph> graph, Device device) {
  const Graph& g = *graph;
  if (!device.is_cpu() && !g.groups.empty()) {
    throw ValueError("For 'jit', a graph with CPU-fused loops cannot run on " + device.str());
  }
  auto exe = std::make_shared<Executable>();
  exe->graph = std::move(graph);
  exe->device = device;
  std::vector<int> slot(static_cast<size_t>(g.num_values), -1);
  int next = 0;
  auto slot_for = [&](int v) {
    int& s = slot[static_cast<size_t>(v)];
    if (s < 0) s = next++;
    return s;
  };
  for (int v : g.inputs) exe->input_slots.push_back(slot_for(v));
  for (const auto& [id, t] : g.constants) {
    const bool upload = t.device() != device && !t.impl()->is_parameter;  // (a Parameter is read live)
    exe->constant_slots.emplace_back(slot_for(id), upload ? t.to(device) : t);
  }
  std::vector<Instruction>& program = exe->program;
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
      for (int v : fg.loop->outside) last[static_cast<size_t>(v)] = static_cast<int>(program.size());
      i = static_cast<size_t>(fg.nodes.back());
    } else {
      ins.node = static_cast<int>(i);
      for (int v : n.inputs) {
        ins.inputs.push_back(v < 0 ? -1 : slot_for(v));
        if (v >= 0) last[static_cast<size_t>(v)] = static_cast<int>(program.size());
      }
      ins.outputs.push_back(slot_for(n.out));
    }
    program.push_back(std::move(ins));
  }
  std::vector<bool> kept(static_cast<size_t>(g.num_values), false);  // outputs and arguments stay
  for (int v : g.outputs) kept[static_cast<size_t>(v)] = true;
  for (const auto& u : g.updates) kept[static_cast<size_t>(u.second)] = true;
  for (int v = 0; v < g.num_values; ++v) {
    const int at = last[static_cast<size_t>(v)];
    if (at >= 0 && !kept[static_cast<size_t>(v)]) program[static_cast<size_t>(at)].release.push_back(slot[static_cast<size_t>(v)]);
  }
  for (int v : g.outputs) exe->output_slots.push_back(slot_for(v));
  for (const auto& u : g.updates) exe->update_slots.push_back(slot_for(u.second));
  exe->num_slots = next;
  exe->memory = std::make_shared<MemoryPlan>();
  plan_memory(*exe);
  // (a device kernel is not known to allow its result over a Parameter it reads: donations are the CPU's)
  if (device.is_cpu()) plan_donations(*exe);
  return exe;
}

namespace {
// An error of a replayed op (data-dependent: an index out of range) names where the op was traced.
[[noreturn]] void rethrow_located(const Graph& g, const Instruction& ins, const Error& e) {
  const GraphNode& n =
      g.nodes[static_cast<size_t>(ins.group >= 0 ? g.groups[static_cast<size_t>(ins.group)].nodes.front() : ins.node)];
  if (n.where.empty()) throw;
  throw_error(e.kind(), std::string(e.what()) + " (in the jitted function, traced at " + n.where + ")");
}

std::vector<Tensor> results_of(const Executable& exe, const std::vector<Tensor>& env) {
  const Graph& g = *exe.graph;
  std::vector<Tensor> results;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const Tensor& t = env[static_cast<size_t>(exe.output_slots[i])];
    // A result that is a captured or folded constant is the caller's own copy, as eagerly.
    results.push_back(g.constant(g.outputs[i]) ? t.clone() : t);
  }
  return results;
}
}  // namespace

Value run(const Executable& exe, const std::vector<Tensor>& args) {
  const Graph& g = *exe.graph;
  const Device device = exe.device;
  const bool on_cpu = device.is_cpu();
  std::vector<Tensor> env(static_cast<size_t>(exe.num_slots));
  for (size_t i = 0; i < exe.input_slots.size(); ++i) {
    env[static_cast<size_t>(exe.input_slots[i])] = on_cpu ? args[i] : args[i].to(device);
  }
  for (const auto& [s, t] : exe.constant_slots) {
    env[static_cast<size_t>(s)] = on_cpu ? t : t.to(device);  // (a Parameter elsewhere: its value now)
  }
  ArenaLease arena(*exe.memory);
  // Donated updates are computed into the Parameter itself: its tensor waits in the value's slot (an argument
  // sharing the Parameter's storage would see it change early, so such a call copies as usual).
  auto donation = exe.donations.begin();
  const bool donate = !exe.donations.empty() && std::none_of(args.begin(), args.end(), [&](const Tensor& a) {
    return std::any_of(g.updates.begin(), g.updates.end(),
                       [&](const auto& u) { return a.impl()->storage == u.first.impl()->storage; });
  });
  std::vector<Tensor> in;
  for (size_t at = 0; at < exe.program.size(); ++at) {
    const Instruction& ins = exe.program[at];
    for (; donation != exe.donations.end() && donation->first == static_cast<int>(at); ++donation) {
      const size_t u = static_cast<size_t>(donation->second);
      if (donate) env[static_cast<size_t>(exe.update_slots[u])] = g.updates[u].first;
    }
    try {
      if (ins.group >= 0) {  // (only on the CPU: compile refuses fused loops elsewhere)
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
        env[static_cast<size_t>(out)] =
            on_cpu ? run_node(n, in, std::move(planned))
                   : detail::run_on_device(*n.op, in, n.attrs, n.shape, n.dtype, device, std::move(planned));
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
    const Tensor& v = env[static_cast<size_t>(exe.update_slots[i])];
    if (v.impl()->storage == param.impl()->storage) continue;  // (donated)
    if (on_cpu && param.on_host()) std::memcpy(param.raw_data(), v.raw_data(), param.nbytes());
    else copy_into(param, v);
  }
  size_t next = 0;
  return rebuild(g.output_template, results_of(exe, env), next);
}

}  // namespace bprop::graph
