// libopapi.so (fake), part 2: softmax and log-softmax, NLL loss, 2-D convolution, max and average pooling, batch
// norm — each with its backward — and layer norm (forward). Computed in double on the host from the "device" heap,
// stored in the output's dtype.
#include <algorithm>

#include "opapi_common.h"

namespace fake_ascend {
namespace {

#define FA_FLOAT_TYPES \
  { ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE }

// ---- softmax ----

void split_axis(const Shape& s, int64_t ax, int64_t* outer, int64_t* len, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  *len = s.empty() ? 1 : s[ax];
  for (int64_t i = 0; i < static_cast<int64_t>(s.size()); ++i) {
    if (i < ax) *outer *= s[i];
    if (i > ax) *inner *= s[i];
  }
}

uint64_t softmax_workspace(int64_t elements) { return 512 + static_cast<uint64_t>(elements) * 8; }

aclnnStatus softmax_forward(const char* name, bool log, const aclTensor* self, int64_t dim, aclTensor* out,
                            uint64_t* ws, aclOpExecutor** ex) {
  Op op(name, ws, ex);
  TDesc a, o;
  int64_t ax = 0;
  op.tensor(self, "self", &a, false);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, FA_FLOAT_TYPES);
  op.axis("dim", dim, a.ndim(), &ax);
  op.shape_is("out", o, a.shape);
  op.dtype_is("out", o, a.dtype);
  if (op.status()) return op.status();
  return op.finish(softmax_workspace(a.numel()), [=](uint8_t* w, uint64_t wn) {
    std::vector<double> x = load<double>(a);
    int64_t outer, len, inner;
    split_axis(a.shape, ax, &outer, &len, &inner);
    for (int64_t p = 0; p < outer; ++p) {
      for (int64_t q = 0; q < inner; ++q) {
        double* base = x.data() + p * len * inner + q;
        double mx = -INFINITY;
        for (int64_t i = 0; i < len; ++i) mx = std::max(mx, base[i * inner]);
        double sum = 0;
        for (int64_t i = 0; i < len; ++i) sum += std::exp(base[i * inner] - mx);
        for (int64_t i = 0; i < len; ++i) {
          const double v = base[i * inner] - mx;
          base[i * inner] = log ? v - std::log(sum) : std::exp(v) / sum;
        }
      }
    }
    write_scratch(w, wn, x.data(), x.size() * sizeof(double));
    store(o, x);
  });
}

aclnnStatus softmax_backward(const char* name, bool log, const aclTensor* grad_output, const aclTensor* output,
                             int64_t dim, aclTensor* grad_input, uint64_t* ws, aclOpExecutor** ex) {
  Op op(name, ws, ex);
  TDesc g, y, gi;
  int64_t ax = 0;
  op.tensor(grad_output, "gradOutput", &g, false);
  op.tensor(output, "output", &y, false);
  op.tensor(grad_input, "out", &gi, true);
  op.dtype("gradOutput", g.dtype, FA_FLOAT_TYPES);
  op.dtype_is("output", y, g.dtype);
  op.shape_is("output", y, g.shape);
  op.axis("dim", dim, g.ndim(), &ax);
  op.shape_is("out", gi, g.shape);
  op.dtype_is("out", gi, g.dtype);
  if (op.status()) return op.status();
  return op.finish(softmax_workspace(g.numel()), [=](uint8_t* w, uint64_t wn) {
    const std::vector<double> gv = load<double>(g), yv = load<double>(y);
    std::vector<double> r(gv.size());
    int64_t outer, len, inner;
    split_axis(g.shape, ax, &outer, &len, &inner);
    for (int64_t p = 0; p < outer; ++p) {
      for (int64_t q = 0; q < inner; ++q) {
        const int64_t base = p * len * inner + q;
        double sum = 0;
        for (int64_t i = 0; i < len; ++i) {
          const int64_t j = base + i * inner;
          sum += log ? gv[j] : gv[j] * yv[j];
        }
        for (int64_t i = 0; i < len; ++i) {
          const int64_t j = base + i * inner;
          r[j] = log ? gv[j] - std::exp(yv[j]) * sum : yv[j] * (gv[j] - sum);
        }
      }
    }
    write_scratch(w, wn, r.data(), r.size() * sizeof(double));
    store(gi, r);
  });
}

// ---- NLL loss ----

bool scalar_shape(const Shape& s) { return s.empty() || (s.size() == 1 && s[0] == 1); }

struct NllShape {
  int64_t n = 0, c = 0;
  bool batched = false;
};

bool nll_common(Op& op, const TDesc& x, const TDesc& t, const TDesc& w, int64_t reduction, NllShape* s) {
  op.dtype("self", x.dtype, FA_FLOAT_TYPES);
  op.dtype("target", t.dtype, {ACL_INT64, ACL_INT32});
  if (!op.check(x.ndim() == 1 || x.ndim() == 2, "self must be [N, C] or [C], not " + shape_str(x.shape))) return false;
  s->batched = x.ndim() == 2;
  s->n = s->batched ? x.shape[0] : 1;
  s->c = x.shape.back();
  if (s->batched)
    op.shape_is("target", t, Shape{s->n});
  else
    op.check(scalar_shape(t.shape), "target shape " + shape_str(t.shape) + " should be [] for a [C] self");
  if (w.present) {
    op.shape_is("weight", w, Shape{s->c});
    op.dtype_is("weight", w, x.dtype);
  }
  op.check(reduction >= 0 && reduction <= 2,
           "reduction " + std::to_string(reduction) + " is not 0 (none), 1 (mean) or 2 (sum)");
  return op.status() == ACLNN_SUCCESS;
}

// The target of row i, checked as the kernel would use it (a bad target is a device-side error on the NPU).
int64_t nll_target(const char* name, const std::vector<int64_t>& t, int64_t i, int64_t c, int64_t ignore) {
  const int64_t v = t[i];
  if (v != ignore && (v < 0 || v >= c)) {
    violation(std::string(name) + " kernel: target[" + std::to_string(i) + "] = " + std::to_string(v) +
              " is out of range [0, " + std::to_string(c) + ") and is not ignoreIndex (" + std::to_string(ignore) +
              ")");
  }
  return v;
}

// ---- convolution ----

struct ConvGeom {
  int64_t n, cin, h, w, cout, cin_g, kh, kw, sh, sw, ph, pw, dh, dw, groups, ho, wo;
};

bool conv_geometry(Op& op, const TDesc& in, const TDesc& wt, const std::vector<int64_t>& stride,
                   const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, bool transposed,
                   int64_t groups, int8_t cube, ConvGeom* g) {
  op.dtype("input", in.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  op.dtype("weight", wt.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  op.check(!transposed, "transposed convolution is not supported by the fake (transposed must be false)");
  op.cube_math_type(cube, in.dtype);
  op.check(in.ndim() == 4,
           "the fake supports 2-D convolution only: input must be 4-D (NCHW), not " + shape_str(in.shape));
  op.check(wt.ndim() == 4, "weight must be 4-D [Cout, Cin/groups, kH, kW], not " + shape_str(wt.shape));
  op.check(stride.size() == 2 && padding.size() == 2 && dilation.size() == 2,
           "stride " + shape_str(stride) + ", padding " + shape_str(padding) + " and dilation " + shape_str(dilation) +
               " must have 2 entries each");
  if (op.status()) return false;
  op.check(stride[0] > 0 && stride[1] > 0, "stride " + shape_str(stride) + " must be positive");
  op.check(dilation[0] > 0 && dilation[1] > 0, "dilation " + shape_str(dilation) + " must be positive");
  op.check(padding[0] >= 0 && padding[1] >= 0, "padding " + shape_str(padding) + " must not be negative");
  op.check(groups >= 1, "groups " + std::to_string(groups) + " must be at least 1");
  if (op.status()) return false;
  *g = ConvGeom{in.shape[0],
                in.shape[1],
                in.shape[2],
                in.shape[3],
                wt.shape[0],
                wt.shape[1],
                wt.shape[2],
                wt.shape[3],
                stride[0],
                stride[1],
                padding[0],
                padding[1],
                dilation[0],
                dilation[1],
                groups,
                0,
                0};
  op.check(g->cin % groups == 0 && g->cout % groups == 0,
           "groups " + std::to_string(groups) + " must divide the input channels " + std::to_string(g->cin) +
               " and the output channels " + std::to_string(g->cout));
  op.check(g->cin_g * groups == g->cin, "weight shape " + shape_str(wt.shape) + " does not fit input " +
                                            shape_str(in.shape) + " with groups " + std::to_string(groups) +
                                            " (weight.shape[1] must be Cin / groups)");
  g->ho = (g->h + 2 * g->ph - g->dh * (g->kh - 1) - 1) / g->sh + 1;
  g->wo = (g->w + 2 * g->pw - g->dw * (g->kw - 1) - 1) / g->sw + 1;
  op.check(g->h + 2 * g->ph - g->dh * (g->kh - 1) - 1 >= 0 && g->w + 2 * g->pw - g->dw * (g->kw - 1) - 1 >= 0,
           "the (dilated) kernel " + shape_str({g->kh, g->kw}) + " is larger than the padded input " +
               shape_str({g->h + 2 * g->ph, g->w + 2 * g->pw}));
  return op.status() == ACLNN_SUCCESS;
}

// Calls f(n, co, oh, ow, ci_full, ih, iw, x_index, w_index, y_index) for every valid tap.
template <class F>
void conv_taps(const ConvGeom& g, F&& f) {
  const int64_t cout_g = g.cout / g.groups;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t co = 0; co < g.cout; ++co) {
      const int64_t grp = co / cout_g;
      for (int64_t oh = 0; oh < g.ho; ++oh) {
        for (int64_t ow = 0; ow < g.wo; ++ow) {
          const int64_t y = ((n * g.cout + co) * g.ho + oh) * g.wo + ow;
          for (int64_t ci = 0; ci < g.cin_g; ++ci) {
            const int64_t cf = grp * g.cin_g + ci;
            for (int64_t a = 0; a < g.kh; ++a) {
              const int64_t ih = oh * g.sh - g.ph + a * g.dh;
              if (ih < 0 || ih >= g.h) continue;
              for (int64_t b = 0; b < g.kw; ++b) {
                const int64_t iw = ow * g.sw - g.pw + b * g.dw;
                if (iw < 0 || iw >= g.w) continue;
                f(((n * g.cin + cf) * g.h + ih) * g.w + iw, ((co * g.cin_g + ci) * g.kh + a) * g.kw + b, y);
              }
            }
          }
        }
      }
    }
  }
}

// ---- max pooling ----

struct PoolGeom {
  int64_t planes, h, w, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo;
};

int64_t pool_out(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
  int64_t o = (span >= 0 ? span / s : -((-span + s - 1) / s)) + 1;
  if (ceil && (o - 1) * s >= in + p) --o;
  return o;
}

// `stride_name`/`padding_name`: the arguments' names in the operator's signature (AvgPool2d: strides, paddings).
bool pool_geometry(Op& op, const TDesc& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                   const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, bool ceil, PoolGeom* g,
                   const std::string& stride_name = "stride", const std::string& padding_name = "padding") {
  op.dtype("self", x.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  op.check(x.ndim() == 3 || x.ndim() == 4, "self must be [C, H, W] or [N, C, H, W], not " + shape_str(x.shape));
  op.check(kernel.size() == 1 || kernel.size() == 2, "kernelSize " + shape_str(kernel) + " must have 1 or 2 entries");
  op.check(stride.size() <= 2, stride_name + " " + shape_str(stride) + " must have 0, 1 or 2 entries");
  op.check(padding.size() == 1 || padding.size() == 2,
           padding_name + " " + shape_str(padding) + " must have 1 or 2 entries");
  op.check(dilation.size() == 1 || dilation.size() == 2,
           "dilation " + shape_str(dilation) + " must have 1 or 2 entries");
  if (op.status()) return false;
  auto pick = [](const std::vector<int64_t>& v, size_t i) { return v.size() == 1 ? v[0] : v[i]; };
  const size_t r = x.ndim();
  g->planes = r == 4 ? x.shape[0] * x.shape[1] : x.shape[0];
  g->h = x.shape[r - 2];
  g->w = x.shape[r - 1];
  g->kh = pick(kernel, 0);
  g->kw = pick(kernel, 1);
  g->sh = stride.empty() ? g->kh : pick(stride, 0);
  g->sw = stride.empty() ? g->kw : pick(stride, 1);
  g->ph = pick(padding, 0);
  g->pw = pick(padding, 1);
  g->dh = pick(dilation, 0);
  g->dw = pick(dilation, 1);
  op.check(g->kh > 0 && g->kw > 0 && g->sh > 0 && g->sw > 0 && g->dh > 0 && g->dw > 0,
           "kernelSize, " + stride_name + " and dilation must be positive");
  op.check(g->ph >= 0 && g->pw >= 0 && g->ph <= g->kh / 2 && g->pw <= g->kw / 2,
           padding_name + " " + shape_str({g->ph, g->pw}) + " must be between 0 and half the kernel size " +
               shape_str({g->kh, g->kw}));
  if (op.status()) return false;
  g->ho = pool_out(g->h, g->kh, g->ph, g->sh, g->dh, ceil);
  g->wo = pool_out(g->w, g->kw, g->pw, g->sw, g->dw, ceil);
  op.check(g->ho >= 1 && g->wo >= 1, "the output would be empty (" + shape_str({g->ho, g->wo}) + ")");
  return op.status() == ACLNN_SUCCESS;
}

Shape pool_out_shape(const TDesc& x, const PoolGeom& g) {
  Shape s = x.shape;
  s[s.size() - 2] = g.ho;
  s[s.size() - 1] = g.wo;
  return s;
}

// ---- average pooling ----

// Calls f(plane index, output index, h0, h1, w0, w1, divisor) for every output element: the window clipped to the
// input is [h0, h1) x [w0, w1); the divisor is PyTorch's (divisorOverride, or the window with or without padding).
template <class F>
void avg_windows(const PoolGeom& g, bool count_include_pad, int64_t divisor_override, F&& f) {
  for (int64_t p = 0; p < g.planes; ++p) {
    for (int64_t oh = 0; oh < g.ho; ++oh) {
      for (int64_t ow = 0; ow < g.wo; ++ow) {
        int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
        int64_t h1 = std::min(h0 + g.kh, g.h + g.ph), w1 = std::min(w0 + g.kw, g.w + g.pw);
        const int64_t padded = (h1 - h0) * (w1 - w0);
        h0 = std::max<int64_t>(h0, 0);
        w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, g.h);
        w1 = std::min(w1, g.w);
        const int64_t divisor = divisor_override    ? divisor_override
                                : count_include_pad ? padded
                                                    : (h1 - h0) * (w1 - w0);
        f(p, (p * g.ho + oh) * g.wo + ow, h0, h1, w0, w1, static_cast<double>(divisor));
      }
    }
  }
}

// What AvgPool2d and its backward check beyond the pooling geometry (no dilation; stride empty = kernel).
bool avg_pool_checks(Op& op, const TDesc& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                     const std::vector<int64_t>& padding, bool ceil, int64_t divisor_override, int8_t cube, PoolGeom* g,
                     const char* stride_name, const char* padding_name) {
  op.cube_math_type(cube, x.dtype);
  op.check(divisor_override >= 0,
           "divisorOverride " + std::to_string(divisor_override) + " is negative (0: the pooling window)");
  op.check(x.numel() > 0, "self " + shape_str(x.shape) + " is empty (empty tensors are not supported)");
  return op.status() == ACLNN_SUCCESS &&
         pool_geometry(op, x, kernel, stride, padding, {1}, ceil, g, stride_name, padding_name);
}

// ---- batch norm ----

struct BnGeom {
  int64_t n, c, inner;  // input viewed as [n, c, inner]
};

BnGeom bn_geometry(const TDesc& x) {
  BnGeom g{x.shape[0], x.shape[1], 1};
  for (size_t i = 2; i < x.ndim(); ++i) g.inner *= x.shape[i];
  return g;
}

bool bn_channel_tensor(Op& op, const char* arg, const TDesc& t, int64_t c) {
  if (!t.present) return true;
  op.shape_is(arg, t, Shape{c});
  op.dtype_is(arg, t, ACL_FLOAT);
  return op.status() == ACLNN_SUCCESS;
}

}  // namespace
}  // namespace fake_ascend

using namespace fake_ascend;

extern "C" {

FA_EXPORT aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor* self, int64_t dim, aclTensor* out, uint64_t* ws,
                                                   aclOpExecutor** ex) {
  return softmax_forward("aclnnSoftmax", false, self, dim, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor* self, int64_t dim, aclTensor* out, uint64_t* ws,
                                                      aclOpExecutor** ex) {
  return softmax_forward("aclnnLogSoftmax", true, self, dim, out, ws, ex);
}
FA_EXPORT aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* output,
                                                           int64_t dim, aclTensor* gradInput, uint64_t* ws,
                                                           aclOpExecutor** ex) {
  return softmax_backward("aclnnSoftmaxBackward", false, gradOutput, output, dim, gradInput, ws, ex);
}
FA_EXPORT aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* output,
                                                              int64_t dim, aclTensor* out, uint64_t* ws,
                                                              aclOpExecutor** ex) {
  return softmax_backward("aclnnLogSoftmaxBackward", true, gradOutput, output, dim, out, ws, ex);
}

FA_EXPORT aclnnStatus aclnnNLLLossGetWorkspaceSize(const aclTensor* self, const aclTensor* target,
                                                   const aclTensor* weight, int64_t reduction, int64_t ignoreIndex,
                                                   aclTensor* out, aclTensor* totalWeightOut, uint64_t* ws,
                                                   aclOpExecutor** ex) {
  Op op("aclnnNLLLoss", ws, ex);
  TDesc x, t, w, o, tw;
  NllShape s;
  op.tensor(self, "self", &x, false);
  op.tensor(target, "target", &t, false);
  op.tensor(weight, "weight", &w, false, true);
  op.tensor(out, "out", &o, true);
  op.tensor(totalWeightOut, "totalWeightOut", &tw, true);
  if (op.status() || !nll_common(op, x, t, w, reduction, &s)) return op.status();
  if (reduction == 0)
    op.shape_is("out", o, s.batched ? Shape{s.n} : Shape{});
  else
    op.check(scalar_shape(o.shape), "out shape " + shape_str(o.shape) + " should be [] (reduction mean or sum)");
  op.dtype_is("out", o, x.dtype);
  op.check(scalar_shape(tw.shape), "totalWeightOut shape " + shape_str(tw.shape) + " should be []");
  op.dtype_is("totalWeightOut", tw, x.dtype);
  if (op.status()) return op.status();
  return op.finish(512 + static_cast<uint64_t>(s.n) * 8, [=](uint8_t* wsp, uint64_t wn) {
    const std::vector<double> xv = load<double>(x);
    const std::vector<int64_t> tv = load<int64_t>(t);
    const std::vector<double> wv = w.present ? load<double>(w) : std::vector<double>(s.c, 1.0);
    std::vector<double> losses(s.n, 0.0);
    double total = 0, sum = 0;
    for (int64_t i = 0; i < s.n; ++i) {
      const int64_t c = nll_target("aclnnNLLLoss", tv, i, s.c, ignoreIndex);
      if (c == ignoreIndex) continue;
      losses[i] = -wv[c] * xv[i * s.c + c];
      total += wv[c];
      sum += losses[i];
    }
    write_scratch(wsp, wn, losses.data(), losses.size() * sizeof(double));
    if (reduction == 0)
      store(o, losses);
    else
      store(o, std::vector<double>{reduction == 1 ? sum / total : sum});
    store(tw, std::vector<double>{total});
  });
}

FA_EXPORT aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                           const aclTensor* target, const aclTensor* weight,
                                                           int64_t reduction, int64_t ignoreIndex,
                                                           const aclTensor* totalWeight, aclTensor* out, uint64_t* ws,
                                                           aclOpExecutor** ex) {
  Op op("aclnnNLLLossBackward", ws, ex);
  TDesc g, x, t, w, tw, o;
  NllShape s;
  op.tensor(gradOutput, "gradOutput", &g, false);
  op.tensor(self, "self", &x, false);
  op.tensor(target, "target", &t, false);
  op.tensor(weight, "weight", &w, false, true);
  op.tensor(totalWeight, "totalWeight", &tw, false);
  op.tensor(out, "out", &o, true);
  if (op.status() || !nll_common(op, x, t, w, reduction, &s)) return op.status();
  if (reduction == 0 && s.batched)
    op.shape_is("gradOutput", g, Shape{s.n});
  else
    op.check(scalar_shape(g.shape), "gradOutput shape " + shape_str(g.shape) + " should be []");
  op.dtype_is("gradOutput", g, x.dtype);
  op.check(scalar_shape(tw.shape), "totalWeight shape " + shape_str(tw.shape) + " should be []");
  op.dtype_is("totalWeight", tw, x.dtype);
  op.shape_is("out", o, x.shape);
  op.dtype_is("out", o, x.dtype);
  if (op.status()) return op.status();
  return op.finish(512 + static_cast<uint64_t>(x.numel()) * 8, [=](uint8_t* wsp, uint64_t wn) {
    const std::vector<double> gv = load<double>(g);
    const std::vector<int64_t> tv = load<int64_t>(t);
    const std::vector<double> wv = w.present ? load<double>(w) : std::vector<double>(s.c, 1.0);
    const double total = load<double>(tw)[0];
    std::vector<double> r(static_cast<size_t>(s.n * s.c), 0.0);
    for (int64_t i = 0; i < s.n; ++i) {
      const int64_t c = nll_target("aclnnNLLLossBackward", tv, i, s.c, ignoreIndex);
      if (c == ignoreIndex) continue;
      double gi = reduction == 0 ? gv[i] : gv[0];
      if (reduction == 1) gi /= total;
      r[i * s.c + c] = -wv[c] * gi;
    }
    write_scratch(wsp, wn, r.data(), r.size() * sizeof(double));
    store(o, r);
  });
}

FA_EXPORT aclnnStatus aclnnConvolutionGetWorkspaceSize(const aclTensor* input, const aclTensor* weight,
                                                       const aclTensor* bias, const aclIntArray* stride,
                                                       const aclIntArray* padding, const aclIntArray* dilation,
                                                       bool transposed, const aclIntArray* outputPadding,
                                                       const int64_t groups, aclTensor* output, int8_t cubeMathType,
                                                       uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnConvolution", ws, ex);
  TDesc x, wt, b, o;
  std::vector<int64_t> st, pad, dil, opad;
  ConvGeom g{};
  op.tensor(input, "input", &x, false);
  op.tensor(weight, "weight", &wt, false);
  op.tensor(bias, "bias", &b, false, true);
  op.int_array(stride, "stride", &st);
  op.int_array(padding, "padding", &pad);
  op.int_array(dilation, "dilation", &dil);
  op.int_array(outputPadding, "outputPadding", &opad);
  op.tensor(output, "output", &o, true);
  if (op.status() || !conv_geometry(op, x, wt, st, pad, dil, transposed, groups, cubeMathType, &g)) {
    return op.status();
  }
  // input and weight promote (CANN's type-inference rules); bias and output are of the promoted dtype
  // (ops-nn conv/convolution_forward/docs/aclnnConvolution.md: bias "数据类型与 input、weight 一致", output "与 input 与
  // weight 推导之后的数据类型保持一致"), and USE_FP16 does not take BFLOAT16 (its cubeMathType constraints)
  const aclDataType r = promote(x.dtype, wt.dtype);
  if (b.present) {
    op.shape_is("bias", b, Shape{g.cout});
    op.dtype_is("bias", b, r);
  }
  op.shape_is("output", o, Shape{g.n, g.cout, g.ho, g.wo});
  op.dtype_is("output", o, r);
  op.check(!(cubeMathType == 2 && r == ACL_BF16), "cubeMathType 2 (USE_FP16) does not support BFLOAT16 input");
  if (op.status()) return op.status();
  return op.finish(1024 + static_cast<uint64_t>(o.numel()) * 4, [=](uint8_t* wsp, uint64_t wn) {
    const std::vector<double> xv = load<double>(x), wv = load<double>(wt);
    const std::vector<double> bv = b.present ? load<double>(b) : std::vector<double>(g.cout, 0.0);
    std::vector<double> y(static_cast<size_t>(g.n * g.cout * g.ho * g.wo));
    for (size_t i = 0; i < y.size(); ++i) y[i] = bv[(i / (g.ho * g.wo)) % g.cout];
    conv_taps(g, [&](int64_t xi, int64_t wi, int64_t yi) { y[yi] += xv[xi] * wv[wi]; });
    write_scratch(wsp, wn, y.data(), y.size() * sizeof(double));
    store(o, y);
  });
}

FA_EXPORT aclnnStatus aclnnConvolutionBackwardGetWorkspaceSize(
    const aclTensor* gradOutput, const aclTensor* input, const aclTensor* weight, const aclIntArray* biasSizes,
    const aclIntArray* stride, const aclIntArray* padding, const aclIntArray* dilation, bool transposed,
    const aclIntArray* outputPadding, int groups, const aclBoolArray* outputMask, int8_t cubeMathType,
    aclTensor* gradInput, aclTensor* gradWeight, aclTensor* gradBias, uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnConvolutionBackward", ws, ex);
  TDesc go, x, wt, gi, gw, gb;
  std::vector<int64_t> bsz, st, pad, dil, opad;
  std::vector<bool> mask;
  ConvGeom g{};
  op.tensor(gradOutput, "gradOutput", &go, false);
  op.tensor(input, "input", &x, false);
  op.tensor(weight, "weight", &wt, false);
  op.int_array(biasSizes, "biasSizes", &bsz, true);
  op.int_array(stride, "stride", &st);
  op.int_array(padding, "padding", &pad);
  op.int_array(dilation, "dilation", &dil);
  op.int_array(outputPadding, "outputPadding", &opad);
  op.bool_array(outputMask, "outputMask", &mask);
  if (op.status() ||
      !op.check(mask.size() == 3, "outputMask must have 3 entries, not " + std::to_string(mask.size()))) {
    return op.status();
  }
  if (mask[0]) op.tensor(gradInput, "gradInput", &gi, true);
  if (mask[1]) op.tensor(gradWeight, "gradWeight", &gw, true);
  if (mask[2]) op.tensor(gradBias, "gradBias", &gb, true);
  if (op.status() || !conv_geometry(op, x, wt, st, pad, dil, transposed, groups, cubeMathType, &g)) {
    return op.status();
  }
  op.dtype("gradOutput", go.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  op.shape_is("gradOutput", go, Shape{g.n, g.cout, g.ho, g.wo});
  op.dtype_is("gradOutput", go, x.dtype);
  if (mask[0]) {
    op.shape_is("gradInput", gi, x.shape);
    op.dtype_is("gradInput", gi, go.dtype);
  }
  if (mask[1]) {
    op.shape_is("gradWeight", gw, wt.shape);
    op.dtype_is("gradWeight", gw, go.dtype);
  }
  if (mask[2]) {
    op.shape_is("gradBias", gb, Shape{g.cout});
    op.dtype_is("gradBias", gb, go.dtype);
    op.check(biasSizes == nullptr || bsz == Shape{g.cout},
             "biasSizes " + shape_str(bsz) + " should be " + shape_str({g.cout}));
  }
  if (op.status()) return op.status();
  const uint64_t wsize = 1024 + static_cast<uint64_t>(x.numel() + wt.numel()) * 4;
  return op.finish(wsize, [=](uint8_t* wsp, uint64_t wn) {
    const std::vector<double> gov = load<double>(go), xv = load<double>(x), wv = load<double>(wt);
    std::vector<double> dx(mask[0] ? xv.size() : 0, 0.0), dw(mask[1] ? wv.size() : 0, 0.0);
    conv_taps(g, [&](int64_t xi, int64_t wi, int64_t yi) {
      if (mask[0]) dx[xi] += gov[yi] * wv[wi];
      if (mask[1]) dw[wi] += gov[yi] * xv[xi];
    });
    write_scratch(wsp, wn, dx.data(), dx.size() * sizeof(double));
    if (mask[0]) store(gi, dx);
    if (mask[1]) store(gw, dw);
    if (mask[2]) {
      std::vector<double> db(static_cast<size_t>(g.cout), 0.0);
      for (size_t i = 0; i < gov.size(); ++i) db[(i / (g.ho * g.wo)) % g.cout] += gov[i];
      store(gb, db);
    }
  });
}

FA_EXPORT aclnnStatus aclnnMaxPool2dWithIndicesGetWorkspaceSize(const aclTensor* self, const aclIntArray* kernelSize,
                                                                const aclIntArray* stride, const aclIntArray* padding,
                                                                const aclIntArray* dilation, bool ceilMode,
                                                                aclTensor* out, aclTensor* indices, uint64_t* ws,
                                                                aclOpExecutor** ex) {
  Op op("aclnnMaxPool2dWithIndices", ws, ex);
  TDesc x, o, ind;
  std::vector<int64_t> k, st, pad, dil;
  PoolGeom g{};
  op.tensor(self, "self", &x, false);
  op.int_array(kernelSize, "kernelSize", &k);
  op.int_array(stride, "stride", &st);
  op.int_array(padding, "padding", &pad);
  op.int_array(dilation, "dilation", &dil);
  op.tensor(out, "out", &o, true);
  op.tensor(indices, "indices", &ind, true);
  if (op.status() || !pool_geometry(op, x, k, st, pad, dil, ceilMode, &g)) return op.status();
  const Shape os = pool_out_shape(x, g);
  op.shape_is("out", o, os);
  op.dtype_is("out", o, x.dtype);
  op.shape_is("indices", ind, os);
  op.dtype("indices", ind.dtype, {ACL_INT32, ACL_INT64});
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) {
    const std::vector<double> xv = load<double>(x);
    std::vector<double> y(static_cast<size_t>(g.planes * g.ho * g.wo));
    std::vector<int64_t> iv(y.size());
    for (int64_t p = 0; p < g.planes; ++p) {
      const double* plane = xv.data() + p * g.h * g.w;
      for (int64_t oh = 0; oh < g.ho; ++oh) {
        for (int64_t ow = 0; ow < g.wo; ++ow) {
          double best = -INFINITY;
          int64_t arg = -1;
          for (int64_t a = 0; a < g.kh; ++a) {
            const int64_t ih = oh * g.sh - g.ph + a * g.dh;
            if (ih < 0 || ih >= g.h) continue;
            for (int64_t b = 0; b < g.kw; ++b) {
              const int64_t iw = ow * g.sw - g.pw + b * g.dw;
              if (iw < 0 || iw >= g.w) continue;
              const double v = plane[ih * g.w + iw];
              if (arg < 0 || v > best || (std::isnan(v) && !std::isnan(best))) {  // NaN wins, as in PyTorch
                best = v;
                arg = ih * g.w + iw;
              }
            }
          }
          const size_t j = static_cast<size_t>((p * g.ho + oh) * g.wo + ow);
          y[j] = best;
          iv[j] = arg;
        }
      }
    }
    store(o, y);
    store(ind, iv);
  });
}

FA_EXPORT aclnnStatus aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(
    const aclTensor* gradOutput, const aclTensor* self, const aclTensor* indices, const aclIntArray* kernelSize,
    const aclIntArray* stride, const aclIntArray* padding, const aclIntArray* dilation, bool ceilMode,
    aclTensor* gradInput, uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnMaxPool2dWithIndicesBackward", ws, ex);
  TDesc go, x, ind, gi;
  std::vector<int64_t> k, st, pad, dil;
  PoolGeom g{};
  op.tensor(gradOutput, "gradOutput", &go, false);
  op.tensor(self, "self", &x, false);
  op.tensor(indices, "indices", &ind, false);
  op.int_array(kernelSize, "kernelSize", &k);
  op.int_array(stride, "stride", &st);
  op.int_array(padding, "padding", &pad);
  op.int_array(dilation, "dilation", &dil);
  op.tensor(gradInput, "gradInput", &gi, true);
  if (op.status() || !pool_geometry(op, x, k, st, pad, dil, ceilMode, &g)) return op.status();
  const Shape os = pool_out_shape(x, g);
  op.dtype("gradOutput", go.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  op.shape_is("gradOutput", go, os);
  op.shape_is("indices", ind, os);
  op.dtype("indices", ind.dtype, {ACL_INT32, ACL_INT64});
  op.shape_is("gradInput", gi, x.shape);
  op.dtype_is("gradInput", gi, go.dtype);
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) {
    const std::vector<double> gv = load<double>(go);
    const std::vector<int64_t> iv = load<int64_t>(ind);
    std::vector<double> r(static_cast<size_t>(g.planes * g.h * g.w), 0.0);
    const int64_t per = g.ho * g.wo;
    for (size_t j = 0; j < gv.size(); ++j) {
      const int64_t p = static_cast<int64_t>(j) / per, idx = iv[j];
      if (idx < 0 || idx >= g.h * g.w) {
        violation("aclnnMaxPool2dWithIndicesBackward kernel: indices element " + std::to_string(j) + " = " +
                  std::to_string(idx) + " is outside the " + std::to_string(g.h) + "x" + std::to_string(g.w) +
                  " input plane");
      }
      r[p * g.h * g.w + idx] += gv[j];
    }
    store(gi, r);
  });
}

FA_EXPORT aclnnStatus aclnnBatchNormGetWorkspaceSize(const aclTensor* input, const aclTensor* weight,
                                                     const aclTensor* bias, aclTensor* runningMean,
                                                     aclTensor* runningVar, bool training, double momentum, double eps,
                                                     aclTensor* output, aclTensor* saveMean, aclTensor* saveInvstd,
                                                     uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnBatchNorm", ws, ex);
  TDesc x, w, b, rm, rv, o, sm, si;
  op.tensor(input, "input", &x, false);
  op.tensor(weight, "weight", &w, false, true);
  op.tensor(bias, "bias", &b, false, true);
  // the running statistics are read in evaluation (required then) and updated in training (optional then)
  op.tensor(runningMean, "runningMean", &rm, training, training);
  op.tensor(runningVar, "runningVar", &rv, training, training);
  op.tensor(output, "output", &o, true);
  op.tensor(saveMean, "saveMean", &sm, true, !training);
  op.tensor(saveInvstd, "saveInvstd", &si, true, !training);
  op.dtype("input", x.dtype, {ACL_FLOAT});
  if (op.status() ||
      !op.check(x.ndim() >= 2, "input must have at least 2 dimensions [N, C, ...], not " + shape_str(x.shape))) {
    return op.status();
  }
  const BnGeom g = bn_geometry(x);
  for (auto [name, t] : {std::pair<const char*, const TDesc*>{"weight", &w},
                         {"bias", &b},
                         {"runningMean", &rm},
                         {"runningVar", &rv},
                         {"saveMean", &sm},
                         {"saveInvstd", &si}}) {
    bn_channel_tensor(op, name, *t, g.c);
  }
  op.shape_is("output", o, x.shape);
  op.dtype_is("output", o, ACL_FLOAT);
  op.check(!training || g.n * g.inner > 1,
           "training needs more than one value per channel (input " + shape_str(x.shape) + ")");
  if (op.status()) return op.status();
  return op.finish(1024 + static_cast<uint64_t>(g.c) * 16, [=](uint8_t* wsp, uint64_t wn) {
    const std::vector<double> xv = load<double>(x);
    const std::vector<double> wv = w.present ? load<double>(w) : std::vector<double>(g.c, 1.0);
    const std::vector<double> bv = b.present ? load<double>(b) : std::vector<double>(g.c, 0.0);
    std::vector<double> mean(g.c), invstd(g.c), y(xv.size());
    std::vector<double> rmv = rm.present ? load<double>(rm) : std::vector<double>();
    std::vector<double> rvv = rv.present ? load<double>(rv) : std::vector<double>();
    const double count = static_cast<double>(g.n * g.inner);
    for (int64_t c = 0; c < g.c; ++c) {
      if (training) {
        double s = 0, ss = 0;
        for (int64_t n = 0; n < g.n; ++n) {
          for (int64_t i = 0; i < g.inner; ++i) s += xv[(n * g.c + c) * g.inner + i];
        }
        const double mu = s / count;
        for (int64_t n = 0; n < g.n; ++n) {
          for (int64_t i = 0; i < g.inner; ++i) {
            const double d = xv[(n * g.c + c) * g.inner + i] - mu;
            ss += d * d;
          }
        }
        const double var = ss / count;
        mean[c] = mu;
        invstd[c] = 1.0 / std::sqrt(var + eps);
        if (rm.present) rmv[c] = (1 - momentum) * rmv[c] + momentum * mu;
        if (rv.present) rvv[c] = (1 - momentum) * rvv[c] + momentum * var * count / (count - 1);
      } else {
        mean[c] = rmv[c];
        invstd[c] = 1.0 / std::sqrt(rvv[c] + eps);
      }
      for (int64_t n = 0; n < g.n; ++n) {
        for (int64_t i = 0; i < g.inner; ++i) {
          const int64_t j = (n * g.c + c) * g.inner + i;
          y[j] = (xv[j] - mean[c]) * invstd[c] * wv[c] + bv[c];
        }
      }
    }
    write_scratch(wsp, wn, mean.data(), mean.size() * sizeof(double));
    store(o, y);
    if (sm.present) store(sm, mean);
    if (si.present) store(si, invstd);
    if (training && rm.present) store(rm, rmv);
    if (training && rv.present) store(rv, rvv);
  });
}

// LayerNorm over the trailing dimensions `normalizedShape` of input: out = (x - mean) rstd weight + bias with the
// biased variance, rstd = 1 / sqrt(var + eps); weight and bias (optional) have the shape normalizedShape; meanOut and
// rstdOut (optional) have input's shape with the normalised dimensions 1.
FA_EXPORT aclnnStatus aclnnLayerNormGetWorkspaceSize(const aclTensor* input, const aclIntArray* normalizedShape,
                                                     const aclTensor* weightOptional, const aclTensor* biasOptional,
                                                     double eps, aclTensor* out, aclTensor* meanOutOptional,
                                                     aclTensor* rstdOutOptional, uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnLayerNorm", ws, ex);
  TDesc x, w, b, o, m, r;
  std::vector<int64_t> norm;
  op.tensor(input, "input", &x, false);
  op.int_array(normalizedShape, "normalizedShape", &norm);
  op.tensor(weightOptional, "weightOptional", &w, false, true);
  op.tensor(biasOptional, "biasOptional", &b, false, true);
  op.tensor(out, "out", &o, true);
  op.tensor(meanOutOptional, "meanOutOptional", &m, true, true);
  op.tensor(rstdOutOptional, "rstdOutOptional", &r, true, true);
  op.dtype("input", x.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  if (op.status()) return op.status();
  const size_t k = norm.size(), rank = x.ndim();
  if (!op.check(k >= 1 && k <= rank && Shape(x.shape.end() - k, x.shape.end()) == norm,
                "normalizedShape " + shape_str(norm) + " is not the trailing dimensions of input " +
                    shape_str(x.shape))) {
    return op.status();
  }
  Shape stat = x.shape;
  for (size_t i = rank - k; i < rank; ++i) stat[i] = 1;
  if (w.present) op.shape_is("weightOptional", w, norm);
  if (b.present) op.shape_is("biasOptional", b, norm);
  if (w.present) op.dtype_is("weightOptional", w, x.dtype);
  if (b.present) op.dtype_is("biasOptional", b, x.dtype);
  op.shape_is("out", o, x.shape);
  op.dtype_is("out", o, x.dtype);
  if (m.present) op.shape_is("meanOutOptional", m, stat);
  if (r.present) op.shape_is("rstdOutOptional", r, stat);
  if (op.status()) return op.status();
  const int64_t d = numel_of(norm), rows = d ? x.numel() / d : 0;
  return op.finish(0, [=](uint8_t*, uint64_t) {
    const std::vector<double> xv = load<double>(x);
    const std::vector<double> wv = w.present ? load<double>(w) : std::vector<double>(d, 1.0);
    const std::vector<double> bv = b.present ? load<double>(b) : std::vector<double>(d, 0.0);
    std::vector<double> y(xv.size()), mean(rows), rstd(rows);
    for (int64_t row = 0; row < rows; ++row) {
      double s = 0, ss = 0;
      for (int64_t j = 0; j < d; ++j) s += xv[row * d + j];
      mean[row] = s / d;
      for (int64_t j = 0; j < d; ++j) ss += (xv[row * d + j] - mean[row]) * (xv[row * d + j] - mean[row]);
      rstd[row] = 1.0 / std::sqrt(ss / d + eps);
      for (int64_t j = 0; j < d; ++j) y[row * d + j] = (xv[row * d + j] - mean[row]) * rstd[row] * wv[j] + bv[j];
    }
    store(o, y);
    if (m.present) store(m, mean);
    if (r.present) store(r, rstd);
  });
}

FA_EXPORT aclnnStatus aclnnBatchNormBackwardGetWorkspaceSize(const aclTensor* gradOut, const aclTensor* input,
                                                             const aclTensor* weight, const aclTensor* runningMean,
                                                             const aclTensor* runningVar, const aclTensor* saveMean,
                                                             const aclTensor* saveInvstd, bool training, double eps,
                                                             const aclBoolArray* outputMask, aclTensor* gradInput,
                                                             aclTensor* gradWeight, aclTensor* gradBias, uint64_t* ws,
                                                             aclOpExecutor** ex) {
  Op op("aclnnBatchNormBackward", ws, ex);
  TDesc go, x, w, rm, rv, sm, si, gi, gw, gb;
  std::vector<bool> mask;
  op.tensor(gradOut, "gradOut", &go, false);
  op.tensor(input, "input", &x, false);
  op.tensor(weight, "weight", &w, false, true);
  op.tensor(runningMean, "runningMean", &rm, false, training);
  op.tensor(runningVar, "runningVar", &rv, false, training);
  op.tensor(saveMean, "saveMean", &sm, false, !training);
  op.tensor(saveInvstd, "saveInvstd", &si, false, !training);
  op.bool_array(outputMask, "outputMask", &mask);
  if (op.status() ||
      !op.check(mask.size() == 3, "outputMask must have 3 entries, not " + std::to_string(mask.size()))) {
    return op.status();
  }
  if (mask[0]) op.tensor(gradInput, "gradInput", &gi, true);
  if (mask[1]) op.tensor(gradWeight, "gradWeight", &gw, true);
  if (mask[2]) op.tensor(gradBias, "gradBias", &gb, true);
  op.dtype("gradOut", go.dtype, {ACL_FLOAT});
  op.dtype("input", x.dtype, {ACL_FLOAT});
  if (op.status() ||
      !op.check(x.ndim() >= 2, "input must have at least 2 dimensions [N, C, ...], not " + shape_str(x.shape))) {
    return op.status();
  }
  const BnGeom g = bn_geometry(x);
  op.shape_is("gradOut", go, x.shape);
  for (auto [name, t] : {std::pair<const char*, const TDesc*>{"weight", &w},
                         {"runningMean", &rm},
                         {"runningVar", &rv},
                         {"saveMean", &sm},
                         {"saveInvstd", &si},
                         {"gradWeight", &gw},
                         {"gradBias", &gb}}) {
    bn_channel_tensor(op, name, *t, g.c);
  }
  if (mask[0]) {
    op.shape_is("gradInput", gi, x.shape);
    op.dtype_is("gradInput", gi, ACL_FLOAT);
  }
  if (op.status()) return op.status();
  return op.finish(1024 + static_cast<uint64_t>(g.c) * 16, [=](uint8_t* wsp, uint64_t wn) {
    const std::vector<double> gv = load<double>(go), xv = load<double>(x);
    const std::vector<double> wv = w.present ? load<double>(w) : std::vector<double>(g.c, 1.0);
    std::vector<double> mean(g.c), invstd(g.c);
    if (training) {
      mean = load<double>(sm);
      invstd = load<double>(si);
    } else {
      mean = load<double>(rm);
      const std::vector<double> var = load<double>(rv);
      for (int64_t c = 0; c < g.c; ++c) invstd[c] = 1.0 / std::sqrt(var[c] + eps);
    }
    std::vector<double> dx(xv.size()), dw(g.c), db(g.c);
    const double count = static_cast<double>(g.n * g.inner);
    for (int64_t c = 0; c < g.c; ++c) {
      double sg = 0, sgx = 0;
      for (int64_t n = 0; n < g.n; ++n) {
        for (int64_t i = 0; i < g.inner; ++i) {
          const int64_t j = (n * g.c + c) * g.inner + i;
          sg += gv[j];
          sgx += gv[j] * (xv[j] - mean[c]);
        }
      }
      db[c] = sg;
      dw[c] = sgx * invstd[c];
      for (int64_t n = 0; n < g.n; ++n) {
        for (int64_t i = 0; i < g.inner; ++i) {
          const int64_t j = (n * g.c + c) * g.inner + i;
          if (training) {
            const double xhat = (xv[j] - mean[c]) * invstd[c];
            dx[j] = wv[c] * invstd[c] * (gv[j] - sg / count - xhat * sgx * invstd[c] / count);
          } else {
            dx[j] = gv[j] * wv[c] * invstd[c];
          }
        }
      }
    }
    write_scratch(wsp, wn, dw.data(), dw.size() * sizeof(double));
    if (mask[0]) store(gi, dx);
    if (mask[1]) store(gw, dw);
    if (mask[2]) store(gb, db);
  });
}

FA_EXPORT aclnnStatus aclnnAvgPool2dGetWorkspaceSize(const aclTensor* self, const aclIntArray* kernelSize,
                                                     const aclIntArray* strides, const aclIntArray* paddings,
                                                     bool ceilMode, bool countIncludePad, int64_t divisorOverride,
                                                     int8_t cubeMathType, aclTensor* out, uint64_t* ws,
                                                     aclOpExecutor** ex) {
  Op op("aclnnAvgPool2d", ws, ex);
  TDesc x, o;
  std::vector<int64_t> k, st, pad;
  PoolGeom g{};
  op.tensor(self, "self", &x, false);
  op.int_array(kernelSize, "kernelSize", &k);
  op.int_array(strides, "strides", &st);
  op.int_array(paddings, "paddings", &pad);
  op.tensor(out, "out", &o, true);
  if (op.status() ||
      !avg_pool_checks(op, x, k, st, pad, ceilMode, divisorOverride, cubeMathType, &g, "strides", "paddings")) {
    return op.status();
  }
  op.shape_is("out", o, pool_out_shape(x, g));
  op.dtype_is("out", o, x.dtype);
  if (op.status()) return op.status();
  const bool include_pad = countIncludePad, fp16 = cubeMathType == 2;
  const int64_t divisor = divisorOverride;
  return op.finish(0, [=](uint8_t*, uint64_t) {
    std::vector<float> xv = load<float>(x);
    if (fp16) {
      for (float& v : xv) v = round_to_half(v);
    }
    std::vector<double> y(static_cast<size_t>(g.planes * g.ho * g.wo));
    avg_windows(g, include_pad, divisor,
                [&](int64_t p, int64_t j, int64_t h0, int64_t h1, int64_t w0, int64_t w1, double div) {
                  double sum = 0;
                  for (int64_t ih = h0; ih < h1; ++ih) {
                    for (int64_t iw = w0; iw < w1; ++iw) sum += xv[(p * g.h + ih) * g.w + iw];
                  }
                  y[j] = sum / div;
                });
    store(o, y);
  });
}

FA_EXPORT aclnnStatus aclnnAvgPool2dBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                             const aclIntArray* kernelSize, const aclIntArray* stride,
                                                             const aclIntArray* padding, bool ceilMode,
                                                             bool countIncludePad, int64_t divisorOverride,
                                                             int8_t cubeMathType, aclTensor* gradInput, uint64_t* ws,
                                                             aclOpExecutor** ex) {
  Op op("aclnnAvgPool2dBackward", ws, ex);
  TDesc go, x, gi;
  std::vector<int64_t> k, st, pad;
  PoolGeom g{};
  op.tensor(gradOutput, "gradOutput", &go, false);
  op.tensor(self, "self", &x, false);
  op.int_array(kernelSize, "kernelSize", &k);
  op.int_array(stride, "stride", &st);
  op.int_array(padding, "padding", &pad);
  op.tensor(gradInput, "gradInput", &gi, true);
  op.dtype("gradOutput", go.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  if (op.status() ||
      !avg_pool_checks(op, x, k, st, pad, ceilMode, divisorOverride, cubeMathType, &g, "stride", "padding")) {
    return op.status();
  }
  op.shape_is("gradOutput", go, pool_out_shape(x, g));
  op.shape_is("gradInput", gi, x.shape);
  op.dtype_is("gradInput", gi, go.dtype);
  if (op.status()) return op.status();
  const bool include_pad = countIncludePad, fp16 = cubeMathType == 2;
  const int64_t divisor = divisorOverride;
  return op.finish(0, [=](uint8_t*, uint64_t) {
    std::vector<float> gv = load<float>(go);
    if (fp16) {
      for (float& v : gv) v = round_to_half(v);
    }
    std::vector<double> r(static_cast<size_t>(g.planes * g.h * g.w), 0.0);
    avg_windows(g, include_pad, divisor,
                [&](int64_t p, int64_t j, int64_t h0, int64_t h1, int64_t w0, int64_t w1, double div) {
                  for (int64_t ih = h0; ih < h1; ++ih) {
                    for (int64_t iw = w0; iw < w1; ++iw) r[(p * g.h + ih) * g.w + iw] += gv[j] / div;
                  }
                });
    store(gi, r);
  });
}

FAKE_ACLNN_LAUNCH_FN(Softmax)
FAKE_ACLNN_LAUNCH_FN(SoftmaxBackward)
FAKE_ACLNN_LAUNCH_FN(LogSoftmax)
FAKE_ACLNN_LAUNCH_FN(LogSoftmaxBackward)
FAKE_ACLNN_LAUNCH_FN(NLLLoss)
FAKE_ACLNN_LAUNCH_FN(NLLLossBackward)
FAKE_ACLNN_LAUNCH_FN(Convolution)
FAKE_ACLNN_LAUNCH_FN(ConvolutionBackward)
FAKE_ACLNN_LAUNCH_FN(MaxPool2dWithIndices)
FAKE_ACLNN_LAUNCH_FN(MaxPool2dWithIndicesBackward)
FAKE_ACLNN_LAUNCH_FN(BatchNorm)
FAKE_ACLNN_LAUNCH_FN(BatchNormBackward)
FAKE_ACLNN_LAUNCH_FN(LayerNorm)
FAKE_ACLNN_LAUNCH_FN(AvgPool2d)
FAKE_ACLNN_LAUNCH_FN(AvgPool2dBackward)

}  // extern "C"
