// Optimizer updates as ops (MindSpore's ApplyMomentum / Adam primitives): each computes one new state or parameter
// value from the old ones, elementwise in float64 and stored in the parameter's dtype, so that an optimizer's step
// is a composition of ops (core/nn/optim.cpp) that a jitted training step traces like any other, and that eager
// runs with the same arithmetic. The learning rate and the step count are 0-d float64 tensors (live state of the
// optimizer), the other hyperparameters attributes.
//
//   sgd_buffer(buf, g, w, step)   momentum buffer: d on the first step, else momentum buf + (1 - dampening) d
//   sgd_step(w, g, lr[, buf])     w - lr d, d = buf (or d + momentum buf with nesterov) when there is a buffer
//   adam_m(m, g, w)               beta1 m + (1 - beta1) d
//   adam_v(v, g, w)               beta2 v + (1 - beta2) d^2
//   adam_step(w, m, v, lr, step)  w - lr / (1 - beta1^t) m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
//   all_finite([xs...])           a 0-d bool: no element of any x is inf or nan (mixed precision's overflow check)
// where d = g + weight_decay w (Adam's coupled decay and SGD's), or g with AdamW's decoupled decay, which scales w
// by 1 - lr weight_decay in adam_step instead.
#include <cmath>

#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;

double scalar_of(const Tensor& t) { return t.data<double>()[0]; }

// Inputs 0.. of the parameter's dtype and shape, scalars (lr, step) 0-d float64.
OpDef optim_def(const char* name, std::vector<InputSpec> inputs, std::vector<size_t> same_as_param,
                std::vector<size_t> scalars, std::vector<AttrSpec> attrs, KernelFn kernel) {
  OpDef op;
  op.name = name;
  op.family = "optimizer";
  op.inputs = std::move(inputs);
  op.attrs = std::move(attrs);
  op.infer_shape = [same_as_param, scalars](const InferCtx& c) {
    const Tensor& w = c.input(0);
    for (size_t i : same_as_param) {
      if (!c.has_input(i)) continue;
      if (c.input(i).shape() != w.shape()) {
        c.shape_error("'" + c.op.inputs[i].name + "' has shape " + shape_str(c.input(i).shape()) + " but '" +
                      c.op.inputs[0].name + "' has shape " + shape_str(w.shape()));
      }
      if (c.input(i).dtype() != w.dtype()) {
        c.dtype_error("'" + c.op.inputs[i].name + "' is " + dtype_name(c.input(i).dtype()) + " but '" +
                      c.op.inputs[0].name + "' is " + dtype_name(w.dtype()));
      }
    }
    for (size_t i : scalars) {
      if (c.input(i).dim() != 0 || c.input(i).dtype() != DType::Float64) {
        c.value_error("'" + c.op.inputs[i].name + "' must be a 0-d float64 tensor, got " +
                      shape_str(c.input(i).shape()) + " " + dtype_name(c.input(i).dtype()));
      }
    }
    return w.shape();
  };
  op.infer_dtype = [](const InferCtx& c) {
    if (!is_float(c.input(0).dtype())) c.dtype_error(std::string("expected float tensors, got ") + dtype_name(c.input(0).dtype()));
    return c.input(0).dtype();
  };
  op.cpu(std::move(kernel));
  op.no_grad = true;
  return op;
}

// d = g (+ weight_decay w unless decoupled or zero), as the host loops always computed it
template <typename T>
double decayed(T g, T w, double wd, bool decoupled) {
  double d = static_cast<double>(g);
  if (!decoupled && wd != 0.0) d += wd * static_cast<double>(w);
  return d;
}

// True when no element of x is inf or nan. Half dtypes are read as bits (an all-ones exponent), with no widening.
bool tensor_finite(const Tensor& x) {
  const int64_t n = x.numel();
  auto bits_finite = [n](const uint16_t* p, uint16_t exponent) {
    uint16_t any = 0;
    for (int64_t k = 0; k < n; ++k) any |= static_cast<uint16_t>(((p[k] & exponent) == exponent) ? 1 : 0);
    return any == 0;
  };
  switch (x.dtype()) {
    case DType::Float16:
      return bits_finite(static_cast<const uint16_t*>(x.raw_data()), 0x7C00);
    case DType::BFloat16:
      return bits_finite(static_cast<const uint16_t*>(x.raw_data()), 0x7F80);
    case DType::Float32:
    case DType::Float64:
      return visit_float(x.dtype(), [&]<typename T>() {
        const T* p = x.data<T>();
        bool ok = true;  // (x - x is 0 for finite x, nan otherwise: one branch-free pass)
        for (int64_t k = 0; k < n; ++k) ok &= (p[k] - p[k]) == T(0);
        return ok;
      });
    default:
      return true;  // integers and bools are always finite
  }
}

void all_finite_kernel(KernelCtx& c) {
  bool ok = true;
  for (const Tensor& x : c.inputs) ok = ok && tensor_finite(x);
  c.out.data<bool>()[0] = ok;
}

}  // namespace

void register_optimizer_ops(Registry& r) {
  {
    OpDef op;
    op.name = "all_finite";
    op.family = "optimizer";
    op.variadic = true;
    op.inputs = {{"xs"}};
    op.infer_shape = [](const InferCtx&) { return Shape{}; };
    op.infer_dtype = bool_dtype;
    op.cpu(all_finite_kernel);
    op.cpu_half = [](KernelCtx& c) {  // reads the half bits itself
      all_finite_kernel(c);
      return true;
    };
    op.no_grad = true;
    r.add(std::move(op));
  }
  r.add(optim_def(
      "sgd_buffer", {{"buf"}, {"g"}, {"w"}, {"step"}}, {1, 2}, {3},
      {{"weight_decay", AttrKind::Float, 0.0}, {"momentum", AttrKind::Float, 0.0}, {"dampening", AttrKind::Float, 0.0}},
      [](KernelCtx& c) {
        const double wd = c.attrs.get_float("weight_decay"), mom = c.attrs.get_float("momentum"),
                     damp = c.attrs.get_float("dampening");
        const bool first = scalar_of(c.inputs[3]) <= 1.0;
        visit_float(c.out_dtype, [&]<typename T>() {
          const T *b = c.inputs[0].data<T>(), *g = c.inputs[1].data<T>(), *w = c.inputs[2].data<T>();
          T* out = c.out.data<T>();
          for (int64_t k = 0; k < c.out.numel(); ++k) {
            const double d = decayed(g[k], w[k], wd, false);
            out[k] = static_cast<T>(first ? d : mom * static_cast<double>(b[k]) + (1.0 - damp) * d);
          }
        });
      }));
  r.add(optim_def(
      "sgd_step", {{"w"}, {"g"}, {"lr"}, {"buf", true}}, {1, 3}, {2},
      {{"weight_decay", AttrKind::Float, 0.0}, {"momentum", AttrKind::Float, 0.0}, {"nesterov", AttrKind::Bool, false}},
      [](KernelCtx& c) {
        const double wd = c.attrs.get_float("weight_decay"), mom = c.attrs.get_float("momentum");
        const bool nesterov = c.attrs.get_bool("nesterov");
        const double lr = scalar_of(c.inputs[2]);
        const bool has_buf = c.inputs.size() > 3 && c.inputs[3].defined();
        visit_float(c.out_dtype, [&]<typename T>() {
          const T *w = c.inputs[0].data<T>(), *g = c.inputs[1].data<T>();
          const T* b = has_buf ? c.inputs[3].data<T>() : nullptr;
          T* out = c.out.data<T>();
          const int64_t n = c.out.numel();
          if (!b && wd == 0.0) {  // plain SGD: a branch-free loop the compiler vectorises
            for (int64_t k = 0; k < n; ++k) out[k] = static_cast<T>(static_cast<double>(w[k]) - lr * static_cast<double>(g[k]));
            return;
          }
          for (int64_t k = 0; k < n; ++k) {
            double d = decayed(g[k], w[k], wd, false);
            if (b) d = nesterov ? d + mom * static_cast<double>(b[k]) : static_cast<double>(b[k]);
            out[k] = static_cast<T>(static_cast<double>(w[k]) - lr * d);
          }
        });
      }));
  for (const bool second : {false, true}) {
    const char* name = second ? "adam_v" : "adam_m";
    r.add(optim_def(
        name, {{second ? "v" : "m"}, {"g"}, {"w"}}, {1, 2}, {},
        {{second ? "beta2" : "beta1", AttrKind::Float, second ? 0.999 : 0.9},
         {"weight_decay", AttrKind::Float, 0.0},
         {"decoupled", AttrKind::Bool, false}},
        [second](KernelCtx& c) {
          const double beta = c.attrs.get_float(second ? "beta2" : "beta1"), wd = c.attrs.get_float("weight_decay");
          const bool decoupled = c.attrs.get_bool("decoupled");
          visit_float(c.out_dtype, [&]<typename T>() {
            const T *s = c.inputs[0].data<T>(), *g = c.inputs[1].data<T>(), *w = c.inputs[2].data<T>();
            T* out = c.out.data<T>();
            for (int64_t k = 0; k < c.out.numel(); ++k) {
              const double d = decayed(g[k], w[k], wd, decoupled);
              out[k] = static_cast<T>(static_cast<double>(s[k]) * beta + (1.0 - beta) * (second ? d * d : d));
            }
          });
        }));
  }
  r.add(optim_def(
      "adam_step", {{"w"}, {"m"}, {"v"}, {"lr"}, {"step"}}, {1, 2}, {3, 4},
      {{"beta1", AttrKind::Float, 0.9}, {"beta2", AttrKind::Float, 0.999}, {"eps", AttrKind::Float, 1e-8},
       {"weight_decay", AttrKind::Float, 0.0}, {"decoupled", AttrKind::Bool, false}},
      [](KernelCtx& c) {
        const double b1 = c.attrs.get_float("beta1"), b2 = c.attrs.get_float("beta2"), eps = c.attrs.get_float("eps"),
                     wd = c.attrs.get_float("weight_decay");
        const bool decoupled = c.attrs.get_bool("decoupled");
        const double lr = scalar_of(c.inputs[3]), t = scalar_of(c.inputs[4]);
        const double step_size = lr / (1.0 - std::pow(b1, t));  // lr / bias_correction1
        const double bc2_sqrt = std::sqrt(1.0 - std::pow(b2, t));
        visit_float(c.out_dtype, [&]<typename T>() {
          const T *w = c.inputs[0].data<T>(), *m = c.inputs[1].data<T>(), *v = c.inputs[2].data<T>();
          T* out = c.out.data<T>();
          for (int64_t k = 0; k < c.out.numel(); ++k) {
            double wk = static_cast<double>(w[k]);
            if (decoupled) wk *= 1.0 - lr * wd;  // AdamW: p *= 1 - lr * weight_decay
            const double denom = std::sqrt(static_cast<double>(v[k])) / bc2_sqrt + eps;  // sqrt(v / bc2) + eps
            out[k] = static_cast<T>(wk - step_size * static_cast<double>(m[k]) / denom);
          }
        });
      }));
}

}  // namespace bprop
