#include "bprop/registry.h"

#include "registry/register_all_ops.h"

namespace bprop {
namespace {

AmpClass default_amp_class(const std::string& family) {
  for (const char* f : {"unary", "binary", "activation", "reduce", "select", "embedding", "conv_pool", "linalg"}) {
    if (family == f) return AmpClass::Follow;
  }
  if (family == "norm" || family == "loss") return AmpClass::Float32;
  return AmpClass::Keep;
}

}  // namespace

std::string InferCtx::prefix() const { return "For '" + op.name + "', "; }
void InferCtx::shape_error(const std::string& what) const { throw ShapeError(prefix() + what); }
void InferCtx::dtype_error(const std::string& what) const { throw DTypeError(prefix() + what); }
void InferCtx::value_error(const std::string& what) const { throw ValueError(prefix() + what); }

void Registry::add(OpDef def) {
  if (def.name.empty()) throw ValueError("register: an op needs a name");
  if (ops_.count(def.name)) throw ValueError("register: an op named '" + def.name + "' is already registered");
  if (!def.infer_shape || !def.infer_dtype) {
    throw ValueError("register: op '" + def.name + "' needs infer_shape and infer_dtype");
  }
  if (!def.kernels[Backend::CPU.id]) {
    throw ValueError("register: op '" + def.name + "' needs a CPU kernel");
  }
  if (!def.bprop && !def.no_grad) {
    throw ValueError("register: op '" + def.name + "' needs a bprop or an explicit no_grad mark");
  }
  if (def.amp == AmpClass::Default) def.amp = default_amp_class(def.family);
  auto name = def.name;
  ops_.emplace(name, std::make_unique<OpDef>(std::move(def)));
}

const OpDef* Registry::find(const std::string& name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

const OpDef& Registry::get(const std::string& name) const {
  if (const OpDef* op = find(name)) return *op;
  throw UnknownOpError("For '" + name + "', no such op is registered");
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  out.reserve(ops_.size());
  for (const auto& [name, op] : ops_) out.push_back(name);
  return out;
}

void Registry::set_kernel(const std::string& op, Backend backend, KernelFn kernel) {
  auto it = ops_.find(op);
  if (it == ops_.end()) throw UnknownOpError("For '" + op + "', no such op is registered (set_kernel)");
  it->second->kernels[backend.id] = std::move(kernel);
}

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry();
    register_all_ops(*reg);
    return reg;
  }();
  return *r;
}

void register_primitive(const PrimitiveDef& def) {
  if (!def.forward) throw ValueError("register_primitive: '" + def.name + "' needs a forward kernel");
  if (!def.bprop) throw ValueError("register_primitive: '" + def.name + "' needs a bprop");
  OpDef op;
  op.name = def.name;
  op.family = "user";
  for (const auto& n : def.inputs) op.inputs.push_back({n});
  op.infer_shape = def.infer_shape;
  op.infer_dtype = def.infer_dtype;
  op.cpu(def.forward);
  auto user_bprop = def.bprop;
  op.bprop = [user_bprop](const BpropCtx& c) { return user_bprop(c.inputs, c.out, c.dout); };
  op.bprop_reads_out = def.bprop_reads_out;
  registry().add(std::move(op));
}

}  // namespace bprop
