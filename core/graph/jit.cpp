#include "bprop/jit.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <tuple>

#include "autodiff/tape.h"
#include "bprop/device.h"
#include "graph/executor.h"
#include "graph/memory_plan.h"
#include "graph/passes.h"
#include "graph/split.h"
#include "graph/trace.h"

namespace bprop {

namespace {

// What a trace depends on: per argument its shape and dtype, and for a static argument its value (the bytes); and
// the device asked for. Compared as values, built without formatting anything (a call's only cost before the
// replay).
struct JitKey {
  struct Arg {
    Shape shape;
    DType dtype;
    bool is_static = false;
    std::string bytes;  // a static argument's elements
    // (std::tie: the libc++ of the WebAssembly toolchain has no operator<=> for vectors and strings)
    bool operator<(const Arg& o) const {
      return std::tie(shape, dtype, is_static, bytes) < std::tie(o.shape, o.dtype, o.is_static, o.bytes);
    }
  };
  std::vector<Arg> args;
  int backend = 0, index = 0;
  bool operator<(const JitKey& o) const {
    return std::tie(args, backend, index) < std::tie(o.args, o.backend, o.index);
  }
};

}  // namespace

struct JitFn::State {
  std::mutex mu;
  std::map<JitKey, std::shared_ptr<const graph::Executable>> cache;
  std::vector<std::string> last_signature;  // per argument, of the most recent trace
  std::map<JitKey, std::shared_ptr<JitFn>> backward;  // per signature: the jitted vjp (grad(jit(f)))
  // per signature and device: f's forward and backward traced together and split at the cotangent (grad(jit(f))),
  // or null where that trace failed
  std::map<JitKey, std::shared_ptr<const graph::SplitGraphs>> split;
  JitStats stats;
};

namespace {

bool on_a_device(const Tensor& t) { return t.defined() && t.on_device(); }

bool is_static(const JitOptions& o, size_t i) {
  return std::find(o.static_argnums.begin(), o.static_argnums.end(), static_cast<int>(i)) != o.static_argnums.end();
}

JitKey key_of(const std::vector<Tensor>& args, const JitOptions& o, Device device) {
  JitKey key;
  key.args.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const Tensor& t = args[i];
    if (!t.defined()) throw ValueError("For 'jit', argument " + std::to_string(i) + " is an undefined tensor");
    JitKey::Arg& a = key.args[i];
    a.shape = t.shape();
    a.dtype = t.dtype();
    if (is_static(o, i)) {
      a.is_static = true;
      const Tensor host = t.on_host() ? t : t.to(Device::cpu());
      a.bytes.assign(static_cast<const char*>(host.raw_data()), static_cast<size_t>(host.nbytes()));
    }
  }
  key.backend = device.backend.id;
  key.index = device.index;
  return key;
}

// Per argument: "(2, 3) float32", and for a static argument its value too (for messages: built when tracing).
std::vector<std::string> signature(const std::vector<Tensor>& args, const JitOptions& o) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < args.size(); ++i) {
    const Tensor& t = args[i];
    std::string s = shape_str(t.shape()) + " " + dtype_name(t.dtype());
    if (is_static(o, i)) s += " = " + t.to_string();
    parts.push_back(std::move(s));
  }
  return parts;
}

// "argument 0 changed from (32, 784) float32 to (17, 784) float32" (what makes a new trace, for the warning).
std::string what_changed(const std::vector<std::string>& before, const std::vector<std::string>& now) {
  if (before.size() != now.size()) {
    return "the number of arguments changed from " + std::to_string(before.size()) + " to " +
           std::to_string(now.size());
  }
  std::string out;
  for (size_t i = 0; i < now.size(); ++i) {
    if (before[i] == now[i]) continue;
    out += (out.empty() ? "" : "; ") + ("argument " + std::to_string(i) + " changed from " + before[i] + " to " + now[i]);
  }
  return out;
}

}  // namespace

JitFn::JitFn(Fn fn, JitOptions options, std::string where)
    : fn_(std::move(fn)), options_(std::move(options)), where_(std::move(where)), state_(std::make_shared<State>()) {}

std::shared_ptr<const graph::Executable> JitFn::compiled(const std::vector<Tensor>& args, Device device) const {
  const JitKey key = key_of(args, options_, device);
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (auto it = state_->cache.find(key); it != state_->cache.end()) {
      ++state_->stats.replays;
      return it->second;
    }
  }
  const std::vector<std::string> parts = signature(args, options_);
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    const int64_t traces = state_->stats.traces + 1;
    if (options_.max_traces > 0 && traces > options_.max_traces) {
      throw ValueError("For 'jit', the function would be traced a " + std::to_string(traces) +
                       "th time, more than max_traces = " + std::to_string(options_.max_traces) + ": " +
                       what_changed(state_->last_signature, parts) +
                       " (give arguments fixed shapes, or raise the limit)");
    }
    if (options_.warn_after_traces > 0 && traces >= options_.warn_after_traces && !state_->last_signature.empty()) {
      std::fprintf(stderr, "bprop: warning: jit traced a function %lld times; this time %s\n",
                   static_cast<long long>(traces), what_changed(state_->last_signature, parts).c_str());
    }
  }
  const auto start = std::chrono::steady_clock::now();
  std::shared_ptr<graph::Graph> g;
  {
    graph::Tracer tracer;
    tracer.set_location(where_);
    std::vector<Tensor> abstract;
    for (size_t i = 0; i < args.size(); ++i) {
      // a static argument is a constant of the graph (its value is part of the signature)
      abstract.push_back(is_static(options_, i) ? args[i] : tracer.add_input(args[i].shape(), args[i].dtype()));
    }
    g = tracer.finish(fn_(abstract));
  }
  const int64_t traced = static_cast<int64_t>(g->nodes.size());
  for (const auto& [id, t] : g->constants) {
    if (!on_a_device(t)) continue;
    g->device_constants = true;
    // Host arguments and Parameters on a device: the graph runs on the device (compiled for it, once).
    if (device.is_cpu()) device = t.device();
  }
  // (CPU fusion: the fused loops are host code)
  graph::OptimizeOptions optimize;
  optimize.passes = options_.optimize;
  optimize.fusion = options_.fuse && device.is_cpu();
  graph::optimize(*g, optimize);
  std::shared_ptr<const graph::Executable> exe = graph::compile(g, device);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::lock_guard<std::mutex> lock(state_->mu);
  JitStats& st = state_->stats;
  ++st.traces;
  st.nodes_traced = traced;
  st.nodes = static_cast<int64_t>(g->nodes.size());
  st.fused_groups = static_cast<int64_t>(g->groups.size());
  st.kernels = st.fused_groups;
  for (const graph::GraphNode& n : g->nodes) st.kernels += n.group < 0 ? 1 : 0;
  st.compile_seconds = seconds;
  st.planned_bytes = exe->memory->planned_bytes;
  st.eager_bytes = exe->memory->eager_bytes;
  st.donated_updates = static_cast<int64_t>(exe->donations.size());
  st.in_place = exe->memory->in_place;
  st.passes.clear();
  for (const graph::PassRecord& p : g->passes) st.passes.push_back({p.pass, p.before, p.after});
  state_->last_signature = parts;
  return state_->cache.emplace(key, std::move(exe)).first->second;
}

Device JitFn::target_device(const std::vector<Tensor>& args) const {
  for (const Tensor& a : args) {
    if (on_a_device(a)) return a.device();
  }
  return default_device();
}

Value JitFn::operator()(const std::vector<Tensor>& args) const {
  // Inside another trace the function is simply part of it; under an open grad level (grad(jit(f))) its graph runs
  // as one recorded op whose backward is a jitted vjp of f, or else (effects, a Parameter a level differentiates)
  // it runs eagerly so that the level records it.
  // (Any open level, not only one that differentiates an argument: a Parameter the function reads may be one.)
  if (graph::tracing()) return fn_(args);
  const Device device = target_device(args);
  if (autodiff::recording()) {
    Value result;
    if (differentiable_call(args, device, result)) return result;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      ++state_->stats.eager_calls;
    }
    return fn_(args);
  }
  return replay(args, device);
}

Value JitFn::replay(const std::vector<Tensor>& args, Device device) const {
  const auto exe = compiled(args, device);  // (on the device of its Parameters, for host arguments)
  // (static arguments are constants of the graph: only the others are passed)
  return graph::run(*exe, options_.static_argnums.empty() ? args : dynamic_args(args));
}

std::shared_ptr<const graph::SplitGraphs> JitFn::split_graphs(const std::vector<Tensor>& args, Device device,
                                                              const graph::ValueType& out) const {
  const JitKey key = key_of(args, options_, device);
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (auto it = state_->split.find(key); it != state_->split.end()) return it->second;
  }
  std::shared_ptr<const graph::SplitGraphs> split;
  try {
    autodiff::SuspendRecording paused;  // the trace must not reach the open levels' tapes
    std::shared_ptr<graph::Graph> joint;
    {
      graph::Tracer tracer;
      tracer.set_location(where_);
      std::vector<Tensor> abstract;
      for (const Tensor& a : args) abstract.push_back(tracer.add_input(a.shape(), a.dtype()));
      const Tensor dout = tracer.add_input(out.shape, out.dtype);
      const auto [value, grads] = bprop::vjp(fn_, abstract, dout);
      std::vector<Value> results{Value(value)};
      for (const Tensor& t : grads) results.emplace_back(t);
      joint = tracer.finish(Value(std::move(results)));
    }
    if (joint->updates.empty()) {
      graph::OptimizeOptions optimize;
      optimize.passes = options_.optimize;
      optimize.fusion = false;
      graph::optimize(*joint, optimize);
      split = std::make_shared<const graph::SplitGraphs>(
          graph::split_at_cotangent(*joint, device, options_.fuse));
    }
  } catch (const Error&) {
    // (the backward then traces the vjp on its own, and reports the problem if it has one)
  }
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->split.emplace(key, split).first->second;
}

std::vector<Tensor> JitFn::dynamic_args(const std::vector<Tensor>& args) const {
  std::vector<Tensor> dynamic;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!is_static(options_, i)) dynamic.push_back(args[i]);
  }
  return dynamic;
}

bool JitFn::differentiable_call(const std::vector<Tensor>& args, Device device, Value& result) const {
  if (!options_.static_argnums.empty()) return false;
  for (const Tensor& a : args) {
    if (!a.defined() || !is_float(a.dtype())) return false;
  }
  std::shared_ptr<const graph::Graph> g;
  {
    autodiff::SuspendRecording paused;  // the trace must not reach the open levels' tapes
    g = compiled(args, device)->graph;
  }
  if (!g->output_template.is_tensor() || !is_float(g->types[static_cast<size_t>(g->outputs[0])].dtype)) return false;
  // A Parameter the open levels differentiate would get no gradient through the custom op: run eagerly.
  for (const auto& [id, t] : g->constants) {
    if (t.impl()->is_parameter && !t.impl()->trace.empty()) return false;
  }
  if (!g->updates.empty()) return false;  // effects belong to one run of the function, not to its derivative
  const JitKey key = key_of(args, options_, Device::cpu());
  std::shared_ptr<JitFn> backward;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    std::shared_ptr<JitFn>& slot = state_->backward[key];
    if (!slot) {
      const Fn f = fn_;
      slot = std::make_shared<JitFn>([f](const std::vector<Tensor>& a) -> Value {
        const std::vector<Tensor> inputs(a.begin(), a.end() - 1);
        std::vector<Value> grads;
        for (const Tensor& t : bprop::vjp(f, inputs, a.back()).second) grads.emplace_back(t);
        return Value(std::move(grads));
      });
    }
    backward = slot;
    ++state_->stats.grad_calls;
  }
  // The forward and the backward traced together and split at the cotangent: the forward part runs now and keeps
  // the values the backward part reads (its residuals), which a first-order backward then runs from. A backward
  // that is itself differentiated (higher orders) needs the residuals' dependence on the inputs: it runs the
  // jitted vjp of f, which traces the forward again. Both replay on the arguments' device.
  std::shared_ptr<const graph::SplitGraphs> split;
  if (!(device.is_cpu() && g->device_constants)) {
    split = split_graphs(args, device, g->types[static_cast<size_t>(g->outputs[0])]);
  }
  const JitFn self = *this;
  auto residuals = std::make_shared<std::vector<Tensor>>();
  result = Value(autodiff::apply_custom(
      "jit", args,
      [self, device, split, residuals](const std::vector<Tensor>& in) {
        if (!split) return self.replay(in, device).tensor();
        std::vector<Tensor> outs = graph::run(*split->forward, in).flatten();
        residuals->assign(outs.begin() + 1, outs.end());
        return outs[0];
      },
      [self, device, split, residuals, backward](const std::vector<Tensor>& in, const Tensor&, const Tensor& dout) {
        std::vector<Tensor> with_dout = in;
        with_dout.push_back(dout);
        if (split && !autodiff::recording()) {
          with_dout.insert(with_dout.end(), residuals->begin(), residuals->end());
          return graph::run(*split->backward, with_dout).flatten();
        }
        return (*backward)(with_dout).flatten();
      }));
  return true;
}

std::string JitFn::lower(const std::vector<Tensor>& args) const { return compiled(args)->graph->to_text(); }
std::string JitFn::export_graph(const std::vector<Tensor>& args) const { return compiled(args)->graph->to_json(); }

JitStats JitFn::stats() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->stats;
}

JitFn::operator Fn() const {
  JitFn self = *this;
  return [self](const std::vector<Tensor>& args) { return self(args); };
}

namespace {
// "train.cpp:42 (what)": the file's name without its directories.
std::string site_text(const std::string& path, int line, const char* what) {
  return path.substr(path.find_last_of('/') + 1) + ":" + std::to_string(line) + " (" + what + ")";
}
}  // namespace

JitFn jit(Fn fn, JitOptions options, JitSite site) {
  return JitFn(std::move(fn), std::move(options), site.file ? site_text(site.file, site.line, "jit") : std::string());
}

TraceLocation::TraceLocation(const char* file, int line, const char* function) : active_(graph::tracing()) {
  if (!active_) return;
  saved_ = graph::current_tracer()->location();
  graph::current_tracer()->set_location(site_text(file, line, function));
}

TraceLocation::~TraceLocation() {
  if (active_ && graph::tracing()) graph::current_tracer()->set_location(std::move(saved_));
}

}  // namespace bprop
