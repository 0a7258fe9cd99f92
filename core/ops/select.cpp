// Selection: where(cond, x, y) and clamp(x) {min, max}.
#include <cmath>
#include <limits>
#include <optional>

#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;

void where_kernel(KernelCtx& c) {
  const Tensor& cond = c.inputs[0];
  const Tensor x = cpu::as_dtype(c.inputs[1], c.out_dtype);
  const Tensor y = cpu::as_dtype(c.inputs[2], c.out_dtype);
  const std::vector<int64_t> st[3] = {cpu::broadcast_strides(cond.shape(), c.out_shape),
                                      cpu::broadcast_strides(x.shape(), c.out_shape),
                                      cpu::broadcast_strides(y.shape(), c.out_shape)};
  visit_dtype(c.out_dtype, [&]<typename T>() {
    const bool* pc = cond.data<bool>();
    const T *px = x.data<T>(), *py = y.data<T>();
    T* po = c.out.data<T>();
    cpu::for_each_broadcast<3>(c.out_shape, st,
                               [&](int64_t o, const int64_t* off) { po[o] = pc[off[0]] ? px[off[1]] : py[off[2]]; });
  });
}

std::optional<double> opt_float(const Attrs& a, const char* name) {
  if (a.is_null(name)) return std::nullopt;
  return a.get_float(name);
}

// clamp's bounds as numbers: an absent one is an infinity, which no value passes (and NaN stays NaN).
void clamp_params(const Attrs& a, double* p) {
  p[0] = opt_float(a, "min").value_or(-std::numeric_limits<double>::infinity());
  p[1] = opt_float(a, "max").value_or(std::numeric_limits<double>::infinity());
}

// Applied as max then min, like PyTorch (so min > max gives max everywhere); an int32 bound past int32 saturates.
OpImpl clamp_kernel() {
  return param_kernel<2>(
      [](auto v, const double* p) {
        double d = static_cast<double>(v);
        if (d < p[0]) d = p[0];
        if (d > p[1]) d = p[1];
        return std::isnan(static_cast<double>(v)) ? v : convert_element<decltype(v)>(d);
      },
      clamp_params);
}

}  // namespace

void register_select_ops(Registry& r) {
  {
    OpDef op;
    op.name = "where";
    op.family = "select";
    op.inputs = {{"cond"}, {"x"}, {"y"}};
    op.infer_shape = broadcast_shape;
    op.infer_dtype = [](const InferCtx& c) {
      if (c.input(0).dtype() != DType::Bool) {
        c.dtype_error("argument 'cond' must be bool, got " + std::string(dtype_name(c.input(0).dtype())) +
                      " of shape " + shape_str(c.input(0).shape()));
      }
      const DType d = promote_types(c.input(1).dtype(), c.input(2).dtype());
      return d;
    };
    op.cpu(where_kernel);
    // where: dx = dout where cond, dy = dout elsewhere (summed to each input's shape)
    op.bprop = [](const BpropCtx& c) {
      const Tensor zero = like(0.0, c.dout);
      return sum_to_inputs(c, {Tensor(), c.needs(1) ? ops::where(c.input(0), c.dout, zero) : Tensor(),
                               c.needs(2) ? ops::where(c.input(0), zero, c.dout) : Tensor()});
    };
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "clamp";
    op.family = "select";
    op.inputs = {{"x"}};
    op.attrs = {{"min", AttrKind::OptFloat, std::monostate{}}, {"max", AttrKind::OptFloat, std::monostate{}}};
    op.infer_shape = same_shape;
    op.infer_dtype = numeric_dtype;
    const OpImpl impl = clamp_kernel();
    op.cpu(impl.kernel);
    op.elementwise = impl.elementwise;
    // clamp: dout where min <= x <= max, 0 elsewhere (PyTorch's mask)
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
      const Tensor& x = c.input(0);
      Tensor g = c.dout;
      if (auto lo = opt_float(c.attrs, "min")) g = g * mask_as(ops::greater_equal(x, like(*lo, x)), x);
      if (auto hi = opt_float(c.attrs, "max")) g = g * mask_as(ops::less_equal(x, like(*hi, x)), x);
      return {g};
    };
    r.add(std::move(op));
  }
}

}  // namespace bprop
