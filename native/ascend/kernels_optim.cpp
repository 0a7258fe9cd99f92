// The optimizer update ops (core/ops/optim_ops.cpp) on the NPU, composed of aclnn elementwise operators, so that a
// training step on an NPU never copies a parameter to the host. Each writes a new tensor (the ops allocate their
// output; the optimizer assigns it). The learning rate and the step count are 0-d float64 device tensors: the
// factors made of them (lr, lr / (1 - beta1^t), sqrt(1 - beta2^t), the first-step test) are computed on the device
// in float64 (beta^t as exp(t ln beta)) and cast to the parameter's dtype; nothing
// is read on the host. The CPU kernels compute in float64 and round once; these compute in the parameter's dtype,
// so float32 results agree to a few float32 roundings.
#include <cmath>

#include "ascend/aclnn_call.h"
#include "ascend/kernels.h"
#include "bprop/device.h"

namespace bprop::ascend {
namespace {

using acl::aclScalar;
using acl::aclTensor;

[[noreturn]] void decline(const std::string& why) { throw KernelDeclined{why}; }

// A new (uninitialised) device tensor for an intermediate result.
Tensor scratch(const KernelCtx& c, const Shape& shape, DType dtype) { return Tensor::empty(shape, dtype, c.device); }
Tensor scratch(const KernelCtx& c) { return scratch(c, c.out_shape, c.out_dtype); }
Tensor scratch_scalar(const KernelCtx& c, DType dtype) { return scratch(c, Shape{}, dtype); }

const aclTensor* in(const AclTensorArg& a) { return a.get(); }
const aclScalar* sc(const AclScalarArg& a) { return a.get(); }

// out = x + alpha y (aclnnAdd), out = x - alpha y (aclnnSub): y may be a 0-d tensor (broadcast).
void add(const KernelCtx& c, const Tensor& x, const Tensor& y, double alpha, const Tensor& out, bool subtract = false) {
  AclTensorArg xa(x), ya(y), o(out);
  AclScalarArg al(alpha, out.dtype());
  launch_aclnn(c.device, subtract ? "Sub" : "Add", in(xa), in(ya), sc(al), o.get());
}

// out = x * y (aclnnMul), out = x / y (aclnnDiv).
void mul(const KernelCtx& c, const Tensor& x, const Tensor& y, const Tensor& out, bool divide = false) {
  AclTensorArg xa(x), ya(y), o(out);
  launch_aclnn(c.device, divide ? "Div" : "Mul", in(xa), in(ya), o.get());
}

// out = x * s (aclnnMuls), out = x + s (aclnnAdds, alpha 1).
void muls(const KernelCtx& c, const Tensor& x, double s, const Tensor& out) {
  AclTensorArg xa(x), o(out);
  AclScalarArg sa(s, x.dtype());
  launch_aclnn(c.device, "Muls", in(xa), sc(sa), o.get());
}
void adds(const KernelCtx& c, const Tensor& x, double s, const Tensor& out) {
  AclTensorArg xa(x), o(out);
  AclScalarArg sa(s, x.dtype()), one(1.0, x.dtype());
  launch_aclnn(c.device, "Adds", in(xa), sc(sa), sc(one), o.get());
}

// out = f(x) for a unary aclnn operator (Sqrt, Exp).
void unary(const KernelCtx& c, const char* name, const Tensor& x, const Tensor& out) {
  AclTensorArg xa(x), o(out);
  launch_aclnn(c.device, name, in(xa), o.get());
}

// x (0-d float64) in the parameter's dtype.
Tensor to_param_dtype(const KernelCtx& c, const Tensor& x) {
  if (x.dtype() == c.out_dtype) return x;
  const Tensor out = scratch_scalar(c, c.out_dtype);
  AclTensorArg xa(x), o(out);
  launch_aclnn(c.device, "Cast", in(xa), acl_dtype(c.out_dtype), o.get());
  return out;
}

// 1 - beta^t for the 0-d float64 step t, as 1 - exp(t ln beta) in float64 (beta = 0: ln 0 = -inf, exp(-inf) = 0,
// 1). Not -expm1(t ln beta), which would be more accurate for small t ln beta: aclnnExpm1 takes no DOUBLE (ops-math
// aclnn_expm1.cpp: FLOAT, FLOAT16, BFLOAT16, INT64, BOOL), aclnnExp does (on the AI CPU). The cancellation costs
// about 1e-13 relative at beta = 0.999, t = 1, far below the float32 the factors are rounded to.
Tensor one_minus_pow(const KernelCtx& c, double beta, const Tensor& t) {
  const Tensor e = scratch_scalar(c, DType::Float64), r = scratch_scalar(c, DType::Float64);
  muls(c, t, std::log(beta), e);
  unary(c, "Exp", e, r);
  muls(c, r, -1.0, e);
  adds(c, e, 1.0, r);
  return r;
}

// The parameter-shaped inputs (`tensors` of them, from the first) of one float dtype, none empty; the 0-d scalars
// after them are float64 (the op's shape inference checked it).
void require_params(const KernelCtx& c, size_t tensors) {
  if (c.out_dtype != DType::Float32 && c.out_dtype != DType::Float64) decline("not a float parameter");
  for (size_t i = 0; i < tensors && i < c.inputs.size(); ++i) {
    const Tensor& t = c.inputs[i];
    if (!t.defined()) continue;
    if (t.dtype() != c.out_dtype) decline("mixed dtypes");
    if (t.numel() == 0) decline("an empty tensor");
  }
}

// d = g + weight_decay w (coupled decay), or g.
Tensor decayed(const KernelCtx& c, const Tensor& g, const Tensor& w, double wd, bool decoupled) {
  if (decoupled || wd == 0.0) return g;
  const Tensor d = scratch(c);
  add(c, g, w, wd, d);
  return d;
}

// sgd_buffer(buf, g, w, step): d on the first step (step <= 1), else momentum buf + (1 - dampening) d; the test is
// a select on the device (aclnnLeTensor against a filled 0-d tensor, aclnnSWhere).
void sgd_buffer(KernelCtx& c) {
  require_params(c, 3);
  const double wd = c.attrs.get_float("weight_decay"), mom = c.attrs.get_float("momentum"),
               damp = c.attrs.get_float("dampening");
  const Tensor& buf = c.inputs[0];
  const Tensor d = decayed(c, c.inputs[1], c.inputs[2], wd, false);
  Tensor scaled = d;
  if (damp != 0.0) {
    scaled = scratch(c);
    muls(c, d, 1.0 - damp, scaled);
  }
  const Tensor later = scratch(c);
  add(c, scaled, buf, mom, later);  // (1 - dampening) d + momentum buf
  const Tensor one = scratch_scalar(c, DType::Float64), first = scratch_scalar(c, DType::Bool);
  {
    AclTensorArg o(one);
    AclScalarArg v(1.0, DType::Float64);
    launch_aclnn(c.device, "InplaceFillScalar", o.get(), sc(v));
  }
  {
    AclTensorArg s(c.inputs[3]), o(one), f(first);
    launch_aclnn(c.device, "LeTensor", in(s), in(o), f.get());
  }
  AclTensorArg cond(first), a(d), b(later), out(c.out);
  launch_aclnn(c.device, "SWhere", in(cond), in(a), in(b), out.get());
}

// sgd_step(w, g, lr[, buf]): w - lr d, d = buf (or d + momentum buf with nesterov) when there is a buffer.
void sgd_step(KernelCtx& c) {
  require_params(c, 2);
  const bool has_buf = c.inputs.size() > 3 && c.inputs[3].defined();
  if (has_buf && (c.inputs[3].dtype() != c.out_dtype || c.inputs[3].numel() == 0)) decline("mixed dtypes");
  const double wd = c.attrs.get_float("weight_decay"), mom = c.attrs.get_float("momentum");
  const Tensor& w = c.inputs[0];
  Tensor d = decayed(c, c.inputs[1], w, wd, false);
  if (has_buf) {
    if (c.attrs.get_bool("nesterov")) {
      const Tensor n = scratch(c);
      add(c, d, c.inputs[3], mom, n);
      d = n;
    } else {
      d = c.inputs[3];
    }
  }
  const Tensor lr = to_param_dtype(c, c.inputs[2]);
  const Tensor step = scratch(c);
  mul(c, d, lr, step);
  add(c, w, step, 1.0, c.out, /*subtract=*/true);
}

// adam_m(m, g, w) / adam_v(v, g, w): beta s + (1 - beta) d (d^2 for v).
void adam_moment(KernelCtx& c, bool second) {
  require_params(c, 3);
  const double beta = c.attrs.get_float(second ? "beta2" : "beta1"), wd = c.attrs.get_float("weight_decay");
  Tensor d = decayed(c, c.inputs[1], c.inputs[2], wd, c.attrs.get_bool("decoupled"));
  if (second) {
    const Tensor sq = scratch(c);
    mul(c, d, d, sq);
    d = sq;
  }
  const Tensor kept = scratch(c);
  muls(c, c.inputs[0], beta, kept);
  add(c, kept, d, 1.0 - beta, c.out);
}

// adam_step(w, m, v, lr, step): w - lr / (1 - beta1^t) m / (sqrt(v) / sqrt(1 - beta2^t) + eps), w first scaled by
// 1 - lr weight_decay with decoupled (AdamW) decay.
void adam_step(KernelCtx& c) {
  require_params(c, 3);
  const double b1 = c.attrs.get_float("beta1"), b2 = c.attrs.get_float("beta2"), eps = c.attrs.get_float("eps"),
               wd = c.attrs.get_float("weight_decay");
  const Tensor &w = c.inputs[0], &m = c.inputs[1], &v = c.inputs[2], &lr = c.inputs[3], &t = c.inputs[4];
  // the float64 factors
  const Tensor step_size64 = scratch_scalar(c, DType::Float64), bc2_sqrt64 = scratch_scalar(c, DType::Float64);
  mul(c, lr, one_minus_pow(c, b1, t), step_size64, /*divide=*/true);
  unary(c, "Sqrt", one_minus_pow(c, b2, t), bc2_sqrt64);
  const Tensor step_size = to_param_dtype(c, step_size64), bc2_sqrt = to_param_dtype(c, bc2_sqrt64);
  Tensor wk = w;
  if (c.attrs.get_bool("decoupled") && wd != 0.0) {  // AdamW: p *= 1 - lr weight_decay
    const Tensor f64 = scratch_scalar(c, DType::Float64), g64 = scratch_scalar(c, DType::Float64);
    muls(c, lr, -wd, f64);
    adds(c, f64, 1.0, g64);
    wk = scratch(c);
    mul(c, w, to_param_dtype(c, g64), wk);
  }
  const Tensor root = scratch(c), scaled = scratch(c), denom = scratch(c);
  unary(c, "Sqrt", v, root);
  mul(c, root, bc2_sqrt, scaled, /*divide=*/true);
  adds(c, scaled, eps, denom);  // sqrt(v) / sqrt(1 - beta2^t) + eps
  const Tensor num = scratch(c), q = scratch(c);
  mul(c, m, step_size, num);
  mul(c, num, denom, q, /*divide=*/true);
  add(c, wk, q, 1.0, c.out, /*subtract=*/true);
}

}  // namespace

std::vector<DeviceKernel> optimizer_kernels() {
  return {
      {"sgd_buffer", "SWhere", sgd_buffer, {"Add", "Muls", "LeTensor", "InplaceFillScalar"}},
      {"sgd_step", "Sub", sgd_step, {"Add", "Mul", "Cast"}},
      {"adam_m", "Muls", [](KernelCtx& c) { adam_moment(c, false); }, {"Add"}},
      {"adam_v", "Muls", [](KernelCtx& c) { adam_moment(c, true); }, {"Mul", "Add"}},
      {"adam_step", "Exp", adam_step, {"Muls", "Adds", "Mul", "Div", "Sqrt", "Sub", "Cast"}},
  };
}

}  // namespace bprop::ascend
