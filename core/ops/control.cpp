// Graph control: stop_gradient, identity, cast.
#include <cstring>

#include "bprop/half.h"
#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;

// A new tensor over the input's storage: no copy.
void alias_kernel(KernelCtx& c) { c.out = c.inputs[0].detach(); }

// Casts between float32 and a half dtype in one pass (the casts mixed precision puts around every white-list op);
// the others decline and take the widened path.
bool cast_half_kernel(KernelCtx& c) {
  const DType from = c.inputs[0].dtype(), to = c.out_dtype;
  const Tensor& x = c.inputs[0];
  const int64_t n = c.out.numel();
  if (from == to) {
    std::memcpy(c.out.raw_data(), x.raw_data(), c.out.nbytes());
  } else if (from == DType::Float32 && to == DType::BFloat16) {
    float_to_bfloat16(x.data<float>(), c.out.data<BFloat16>(), n);
  } else if (from == DType::Float32 && to == DType::Float16) {
    float_to_half(x.data<float>(), c.out.data<Half>(), n);
  } else if (from == DType::BFloat16 && to == DType::Float32) {
    bfloat16_to_float(x.data<BFloat16>(), c.out.data<float>(), n);
  } else if (from == DType::Float16 && to == DType::Float32) {
    half_to_float(x.data<Half>(), c.out.data<float>(), n);
  } else {
    return false;
  }
  return true;
}

// An op whose output is its input (the same storage); they differ in what the gradient does.
OpDef alias_def(const char* name) {
  OpDef op;
  op.name = name;
  op.family = "control";
  op.inputs = {{"x"}};
  op.infer_shape = same_shape;
  op.infer_dtype = same_dtype;
  op.allocates_output = false;
  op.cpu(alias_kernel);
  return op;
}

}  // namespace

void register_control_ops(Registry& r) {
  {
    OpDef op = alias_def("stop_gradient");
    op.no_grad = true;  // the output starts a new history: no gradient flows back through it
    r.add(std::move(op));
  }
  {
    OpDef op = alias_def("identity");
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> { return {c.dout}; };  // dx = dout
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "cast";
    op.family = "control";
    op.inputs = {{"x"}};
    op.attrs = {{"dtype", AttrKind::DType, std::monostate{}, true}};
    op.infer_shape = same_shape;
    op.infer_dtype = [](const InferCtx& c) { return c.attrs.get_dtype("dtype"); };
    op.cpu([](KernelCtx& c) {
      const Tensor v = convert(c.inputs[0], c.out_dtype);
      std::memcpy(c.out.raw_data(), v.raw_data(), c.out.nbytes());
    });
    op.cpu_half = cast_half_kernel;
    // cast float -> float: dx = dout cast back; casts to int32/bool produce no gradient (never recorded)
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> { return {ops::cast(c.dout, c.input(0).dtype())}; };
    op.bprop_reads_out = false;
    r.add(std::move(op));
  }
}

}  // namespace bprop
