// Normalisation with batch statistics, PyTorch semantics (training mode):
//   batch_norm(x, weight?, bias?) {eps}                    each channel (axis 1) over every other axis
//   layer_norm(x, weight?, bias?) {normalized_ndim, eps}   over the last normalized_ndim axes
// y = (x - mean) / sqrt(var + eps) * weight + bias, var biased (divided by the count).
// The forward kernels are direct (two passes per channel or row, sums in double). The bprops use the closed form
//   xhat = (x - mean) * rstd,  g = dout * weight,
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),  dweight = sum(dout * xhat),  dbias = sum(dout)
// written with ops (mean and rstd recomputed from x), so they differentiate again.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;

std::string arg_desc(const InferCtx& c, size_t i) {
  return "argument '" + c.op.inputs[i].name + "' of shape " + shape_str(c.input(i).shape());
}

// Optional inputs 1 (weight) and 2 (bias) must have shape `expected` (`what` says why).
void require_affine_shape(const InferCtx& c, const Shape& expected, const std::string& what) {
  for (size_t i = 1; i <= 2; ++i) {
    if (c.has_input(i) && c.input(i).shape() != expected) {
      c.shape_error(arg_desc(c, i) + " must have shape " + shape_str(expected) + ", " + what);
    }
  }
}

Shape batch_norm_shape(const InferCtx& c) {
  const Tensor& x = c.input(0);
  if (x.dim() < 2) c.shape_error(arg_desc(c, 0) + " must have at least 2 dimensions (N, C, ...)");
  const int64_t channels = x.shape()[1];
  require_affine_shape(c, {channels}, "one entry per channel (axis 1) of " + arg_desc(c, 0));
  if (x.numel() / std::max<int64_t>(channels, 1) == 1 && channels > 0) {
    c.value_error("expected more than 1 value per channel for batch statistics, got " + arg_desc(c, 0));
  }
  return x.shape();
}

// The number of trailing axes layer_norm normalises over, validated against x.
int64_t normalized_ndim(const InferCtx& c) {
  const int64_t k = c.attrs.get_int("normalized_ndim");
  if (k < 1 || k > c.input(0).dim()) {
    c.value_error("attribute 'normalized_ndim' (" + std::to_string(k) + ") must be between 1 and the rank of " +
                  arg_desc(c, 0));
  }
  return k;
}

Shape layer_norm_shape(const InferCtx& c) {
  const Shape& xs = c.input(0).shape();
  const int64_t k = normalized_ndim(c);
  const Shape tail(xs.end() - k, xs.end());
  require_affine_shape(c, tail, "the last " + std::to_string(k) + " dimensions of " + arg_desc(c, 0));
  return xs;
}

// Optional input i converted to dtype, or undefined.
Tensor optional_as(const std::vector<Tensor>& in, size_t i, DType dtype) {
  return i < in.size() && in[i].defined() ? cpu::as_dtype(in[i], dtype) : Tensor();
}
template <typename T>
const T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

// 1 / sqrt(biased variance + eps) from the sum of squared deviations `q` of `count` values.
double inv_std(double q, int64_t count, double eps) { return 1.0 / std::sqrt(q / static_cast<double>(count) + eps); }

// x viewed as (N, C, S): each channel normalised over its N * S values.
void batch_norm_kernel(KernelCtx& c) {
  const Tensor x = cpu::as_dtype(c.inputs[0], c.out_dtype);
  const Tensor w = optional_as(c.inputs, 1, c.out_dtype), b = optional_as(c.inputs, 2, c.out_dtype);
  const double eps = c.attrs.get_float("eps");
  const Shape& xs = x.shape();
  const int64_t n = xs[0], ch = xs[1];
  const int64_t sp = shape_numel(Shape(xs.begin() + 2, xs.end()));
  if (x.numel() == 0) return;
  visit_float(c.out_dtype, [&]<typename T>() {
    const T* px = x.data<T>();
    const T *pw = data_or_null<T>(w), *pb = data_or_null<T>(b);
    T* py = c.out.data<T>();
    cpu::parallel_for(ch, std::max<int64_t>(1, cpu::kParallelGrain / (n * sp)), [&](int64_t c0, int64_t c1) {
      for (int64_t k = c0; k < c1; ++k) {
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) {
          const T* src = px + (i * ch + k) * sp;
          for (int64_t j = 0; j < sp; ++j) sum += static_cast<double>(src[j]);
        }
        const double mean = sum / static_cast<double>(n * sp);
        double q = 0.0;
        for (int64_t i = 0; i < n; ++i) {
          const T* src = px + (i * ch + k) * sp;
          for (int64_t j = 0; j < sp; ++j) {
            const double d = static_cast<double>(src[j]) - mean;
            q += d * d;
          }
        }
        const double scale = inv_std(q, n * sp, eps) * (pw ? static_cast<double>(pw[k]) : 1.0);
        const double shift = (pb ? static_cast<double>(pb[k]) : 0.0) - mean * scale;
        for (int64_t i = 0; i < n; ++i) {
          const T* src = px + (i * ch + k) * sp;
          T* dst = py + (i * ch + k) * sp;
          for (int64_t j = 0; j < sp; ++j) dst[j] = static_cast<T>(static_cast<double>(src[j]) * scale + shift);
        }
      }
    });
  });
}

// x viewed as (rows, D): each row normalised over its D values, then weight and bias (shaped D) applied.
void layer_norm_kernel(KernelCtx& c) {
  const Tensor x = cpu::as_dtype(c.inputs[0], c.out_dtype);
  const Tensor w = optional_as(c.inputs, 1, c.out_dtype), b = optional_as(c.inputs, 2, c.out_dtype);
  const double eps = c.attrs.get_float("eps");
  const int64_t k = c.attrs.get_int("normalized_ndim");
  const Shape& xs = x.shape();
  const int64_t d = shape_numel(Shape(xs.end() - k, xs.end()));
  if (x.numel() == 0) return;
  const int64_t rows = x.numel() / d;
  visit_float(c.out_dtype, [&]<typename T>() {
    const T* px = x.data<T>();
    const T *pw = data_or_null<T>(w), *pb = data_or_null<T>(b);
    T* py = c.out.data<T>();
    cpu::parallel_for(rows, std::max<int64_t>(1, cpu::kParallelGrain / d), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* src = px + r * d;
        T* dst = py + r * d;
        double sum = 0.0;
        for (int64_t j = 0; j < d; ++j) sum += static_cast<double>(src[j]);
        const double mean = sum / static_cast<double>(d);
        double q = 0.0;
        for (int64_t j = 0; j < d; ++j) {
          const double dev = static_cast<double>(src[j]) - mean;
          q += dev * dev;
        }
        const double rstd = inv_std(q, d, eps);
        for (int64_t j = 0; j < d; ++j) {
          double v = (static_cast<double>(src[j]) - mean) * rstd;
          if (pw) v *= static_cast<double>(pw[j]);
          if (pb) v += static_cast<double>(pb[j]);
          dst[j] = static_cast<T>(v);
        }
      }
    });
  });
}

// t reshaped to `shape` (t itself when it has that shape already).
Tensor reshaped(const Tensor& t, const Shape& shape) { return t.shape() == shape ? t : ops::reshape(t, shape); }

// xhat = (x - mean) * rstd over `axes` (kept), with rstd = 1 / sqrt(biased var + eps), written with ops.
struct Normalized {
  Tensor xhat, rstd;
};
Normalized normalize(const Tensor& x, const IntList& axes, double eps) {
  const Tensor rstd = ops::rsqrt(ops::var(x, axes, true, 0) + eps);
  return {(x - ops::mean(x, axes, true)) * rstd, rstd};
}

// batch_norm: statistics over every axis but 1 (n values per channel); the weight is constant over them, so
//   dx = w rstd (dout - sum(dout) / n - xhat sum(dout xhat) / n),  dw = sum(dout xhat),  db = sum(dout)
std::vector<Tensor> batch_norm_bprop(const BpropCtx& c) {
  const Tensor& x = c.input(0);
  const Tensor w = c.inputs.size() > 1 ? c.input(1) : Tensor();
  const Tensor b = c.inputs.size() > 2 ? c.input(2) : Tensor();
  const Tensor& dout = c.dout;
  const bool need_w = c.needs(1) && w.defined(), need_b = c.needs(2) && b.defined();
  IntList axes;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i != 1) axes.push_back(i);
  }
  Shape view(static_cast<size_t>(x.dim()), 1);  // a per-channel tensor broadcast against x: (1, C, 1, ...)
  view[1] = x.shape()[1];
  const double inv_n = 1.0 / static_cast<double>(x.numel() / std::max<int64_t>(view[1], 1));
  std::vector<Tensor> grads(c.inputs.size());
  Normalized nz;
  Tensor sum_dx_hat, sum_d;  // (1, C, 1, ...)
  if (c.needs(0) || need_w) {
    nz = normalize(x, axes, c.attrs.get_float("eps"));
    sum_dx_hat = ops::sum(dout * nz.xhat, axes, true);
  }
  if (c.needs(0) || need_b) sum_d = ops::sum(dout, axes, true);
  if (c.needs(0)) {
    const Tensor scale = w.defined() ? nz.rstd * reshaped(w, view) : nz.rstd;
    grads[0] = scale * ((dout - sum_d * inv_n) - nz.xhat * (sum_dx_hat * inv_n));
  }
  if (need_w) grads[1] = reshaped(sum_dx_hat, w.shape());
  if (need_b) grads[2] = reshaped(sum_d, b.shape());
  return grads;
}

// layer_norm: statistics over the last k axes; weight and bias shaped x.shape[-k:] vary over them, so
//   g = dout w,  dx = rstd (g - mean(g) - xhat mean(g xhat)),  dw = sum(dout xhat),  db = sum(dout) over the rest
std::vector<Tensor> layer_norm_bprop(const BpropCtx& c) {
  const Tensor& x = c.input(0);
  const Tensor w = c.inputs.size() > 1 ? c.input(1) : Tensor();
  const Tensor b = c.inputs.size() > 2 ? c.input(2) : Tensor();
  const Tensor& dout = c.dout;
  const bool need_w = c.needs(1) && w.defined(), need_b = c.needs(2) && b.defined();
  const int64_t k = c.attrs.get_int("normalized_ndim");
  IntList axes;
  for (int64_t i = x.dim() - k; i < x.dim(); ++i) axes.push_back(i);
  const Shape tail(x.shape().end() - k, x.shape().end());
  std::vector<Tensor> grads(c.inputs.size());
  if (c.needs(0) || need_w) {
    const Normalized nz = normalize(x, axes, c.attrs.get_float("eps"));
    if (c.needs(0)) {
      const Tensor g = w.defined() ? dout * w : dout;
      grads[0] = nz.rstd * (g - ops::mean(g, axes, true) - nz.xhat * ops::mean(g * nz.xhat, axes, true));
    }
    if (need_w) grads[1] = ops::sum_to(dout * nz.xhat, tail);
  }
  if (need_b) grads[2] = ops::sum_to(dout, tail);
  return grads;
}

}  // namespace

void register_norm_ops(Registry& r) {
  {
    OpDef op;
    op.name = "batch_norm";
    op.family = "norm";
    op.inputs = {{"x"}, {"weight", true}, {"bias", true}};
    op.attrs = {{"eps", AttrKind::Float, 1e-5}};
    op.infer_shape = batch_norm_shape;
    op.infer_dtype = float_inputs_dtype;
    op.cpu(batch_norm_kernel);
    // dx = rstd (g - mean(g) - xhat mean(g xhat)), g = dout w; dw = sum(dout xhat); db = sum(dout) over N, H, W
    op.bprop = batch_norm_bprop;
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "layer_norm";
    op.family = "norm";
    op.inputs = {{"x"}, {"weight", true}, {"bias", true}};
    op.attrs = {{"normalized_ndim", AttrKind::Int, int64_t{1}}, {"eps", AttrKind::Float, 1e-5}};
    op.infer_shape = layer_norm_shape;
    op.infer_dtype = float_inputs_dtype;
    op.cpu(layer_norm_kernel);
    // dx = rstd (g - mean(g) - xhat mean(g xhat)) over the last k axes, g = dout w; dw = sum(dout xhat); db = sum(dout)
    op.bprop = layer_norm_bprop;
    r.add(std::move(op));
  }
}

}  // namespace bprop
