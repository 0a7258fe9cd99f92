// Convolution, PyTorch semantics: conv2d, and the linear ops its gradients are written with, each differentiable
// again:
//   conv2d_input_grad(dout, w)   the transposed convolution (col2im of w^T dout): d conv2d / d x
//   conv2d_weight_grad(x, dout)  dout im2col(x)^T summed over the batch:           d conv2d / d w
// conv2d runs as im2col + one GEMM (cpu::gemm: OpenBLAS when large) per image and group, images split over the
// threads; the gradients pass their transposed operands to the GEMM as flags. In bfloat16 the same kernels run
// their GEMMs on oneDNN (bfloat16 operands, float32 sums) and round each output once.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/blas.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/im2col.h"
#include "kernels/cpu/loop_hints.h"
#include "kernels/cpu/onednn.h"
#include "ops/conv_pool_common.h"

namespace bprop {
namespace {

using namespace opdef;
using namespace conv_pool;

using cpu::kGemmGrain;  // multiply-adds below which work runs on one thread
using cpu::Trans;
// conv2d_weight_grad sums the batch in this many fixed blocks (at most), each with its own partial sum, so
// the result does not depend on the number of threads.
constexpr int64_t kWeightGradBlocks = 16;

// ---- convolution geometry ----

// size + 2 * padding, and the extent (size - 1) * dilation + 1 of a dilated kernel; nothing on int64 overflow.
std::optional<int64_t> dilated_extent(int64_t size, int64_t dilation) {
  const auto span = mul_checked(size - 1, dilation);
  return span ? add_checked(*span, 1) : std::nullopt;
}

struct ConvDims {
  int64_t n = 0, c = 0, h = 0, w = 0;     // x: (N, C, H, W)
  int64_t o = 0, cg = 0, kh = 0, kw = 0;  // w: (O, C / groups, kH, kW)
  int64_t groups = 1;
  cpu::ConvGeom geom;  // one group of one image

  int64_t og() const { return o / groups; }
  Shape x_shape() const { return {n, c, h, w}; }
  Shape w_shape() const { return {o, cg, kh, kw}; }
  Shape y_shape() const { return {n, o, geom.oh, geom.ow}; }
};

// Validates a convolution of an input of shape xs by a weight of shape ws under c's stride, padding,
// dilation and groups; x_desc / w_desc say where the shapes came from.
ConvDims conv_dims(const InferCtx& c, const Shape& xs, const Shape& ws, const std::string& x_desc,
                   const std::string& w_desc) {
  if (xs.size() != 4) c.shape_error(x_desc + " must be 4-D (N, C, H, W)");
  if (ws.size() != 4) c.shape_error(w_desc + " must be 4-D (out_channels, in_channels / groups, kH, kW)");
  const auto stride = pair_attr(c.attrs, "stride");
  const auto padding = pair_attr(c.attrs, "padding");
  const auto dilation = pair_attr(c.attrs, "dilation");
  const int64_t groups = c.attrs.get_int("groups");
  require_at_least(c, "stride", stride, 1, "positive");
  require_at_least(c, "padding", padding, 0, "non-negative");
  require_at_least(c, "dilation", dilation, 1, "positive");
  if (groups < 1) c.value_error("attribute 'groups' must be positive, got " + std::to_string(groups));
  ConvDims d;
  d.n = xs[0], d.c = xs[1], d.h = xs[2], d.w = xs[3];
  d.o = ws[0], d.cg = ws[1], d.kh = ws[2], d.kw = ws[3];
  d.groups = groups;
  if (d.c % groups != 0) {
    c.value_error("attribute 'groups' (" + std::to_string(groups) + ") must divide the " + std::to_string(d.c) +
                  " input channels of " + x_desc);
  }
  if (d.o % groups != 0) {
    c.value_error("attribute 'groups' (" + std::to_string(groups) + ") must divide the " + std::to_string(d.o) +
                  " output channels of " + w_desc);
  }
  if (d.c / groups != d.cg) {  // d.cg * groups != d.c, without overflowing
    c.shape_error(x_desc + " has " + std::to_string(d.c) + " input channels but " + w_desc + " with groups " +
                  std::to_string(groups) + " expects " + std::to_string(d.cg * groups) +
                  " (w.shape[1] * groups)");
  }
  if (d.kh < 1 || d.kw < 1) c.shape_error(w_desc + " has an empty kernel");
  const int64_t ekh = checked(c, dilated_extent(d.kh, dilation.first), "the kernel height with 'dilation'");
  const int64_t ekw = checked(c, dilated_extent(d.kw, dilation.second), "the kernel width with 'dilation'");
  const int64_t hp = checked(c, padded_extent(d.h, padding.first), "the input height with 'padding'");
  const int64_t wp = checked(c, padded_extent(d.w, padding.second), "the input width with 'padding'");
  if (hp < ekh || wp < ekw) {
    c.shape_error("the kernel of " + w_desc + " with dilation " + pair_str(dilation.first, dilation.second) +
                  " spans " + pair_str(ekh, ekw) + ", more than the padded input " + pair_str(hp, wp) + " of " +
                  x_desc + " with padding " + pair_str(padding.first, padding.second));
  }
  cpu::ConvGeom& g = d.geom;
  g.channels = d.cg;
  g.h = d.h, g.w = d.w, g.kh = d.kh, g.kw = d.kw;
  g.sh = stride.first, g.sw = stride.second;
  g.ph = padding.first, g.pw = padding.second;
  g.dh = dilation.first, g.dw = dilation.second;
  g.oh = (hp - ekh) / g.sh + 1;
  g.ow = (wp - ekw) / g.sw + 1;
  // The kernels' im2col buffer holds (C/groups kH kW) x (oH oW) elements: it obeys the tensor limits too. The
  // rows are the weight's (C/groups, kH, kW), within the limits already; the columns are counted here.
  const auto cols = mul_checked(g.oh, g.ow);
  const auto col = cols ? mul_checked(g.rows(), *cols) : std::nullopt;
  if (!col || *col > kMaxElements) {
    throw MemoryError(c.prefix() + "the im2col buffer of " + std::to_string(g.rows()) + " x (" + std::to_string(g.oh) +
                      " x " + std::to_string(g.ow) + ") elements for " + x_desc + " and " + w_desc +
                      " is more than the limit of " + std::to_string(kMaxElements) + " elements in this build");
  }
  return d;
}

// conv2d(x, w, bias?)
ConvDims conv2d_dims(const InferCtx& c) {
  const ConvDims d = conv_dims(c, c.input(0).shape(), c.input(1).shape(), arg_desc(c, 0), arg_desc(c, 1));
  if (c.has_input(2) && c.input(2).shape() != Shape{d.o}) {
    c.shape_error(arg_desc(c, 2) + " must have one entry per output channel of " + arg_desc(c, 1) + ", " +
                  shape_str({d.o}));
  }
  return d;
}

// The output of `what` must be the shape of argument `i` (the cotangent of a gradient op).

// conv2d_input_grad(dout, w) {x_shape, ...}
ConvDims input_grad_dims(const InferCtx& c) {
  const Shape xs = shape_attr(c, "x_shape", 4, 4);
  const std::string x_desc = "attribute 'x_shape' " + ints_str(IntList(xs.begin(), xs.end()));
  const ConvDims d = conv_dims(c, xs, c.input(1).shape(), x_desc, arg_desc(c, 1));
  require_dout(c, 0, d.y_shape(), "the convolution of " + x_desc + " by " + arg_desc(c, 1));
  return d;
}

// conv2d_weight_grad(x, dout) {w_shape, ...}
ConvDims weight_grad_dims(const InferCtx& c) {
  const Shape ws = shape_attr(c, "w_shape", 4, 4);
  const std::string w_desc = "attribute 'w_shape' " + ints_str(IntList(ws.begin(), ws.end()));
  const ConvDims d = conv_dims(c, c.input(0).shape(), ws, arg_desc(c, 0), w_desc);
  require_dout(c, 1, d.y_shape(), "the convolution of " + arg_desc(c, 0) + " by " + w_desc);
  return d;
}

// ---- convolution kernels (x, w, y row-major; one unit of work = one group of one image) ----

// The GEMMs of the convolution kernels, by element type: In the operands (x, w, dout), Acc what the products sum
// into. Float types sum in themselves; bfloat16 sums in float32 on oneDNN (its half fast path), and a kernel
// rounds each result into bfloat16 once, after the bias or the col2im / batch sums.
template <typename T>
struct StoredConvGemm {
  using In = T;
  using Acc = T;
  static constexpr int64_t kGrain = kGemmGrain;
  template <Trans TA, Trans TB>
  static void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c,
                   int64_t ldc) {
    cpu::gemm<TA, TB>(m, n, k, a, lda, b, ldb, beta, c, ldc);
  }
};

struct Bf16ConvGemm {
  using In = BFloat16;
  using Acc = float;
  static constexpr int64_t kGrain = kGemmGrain;
  template <Trans TA, Trans TB>
  static void gemm(int64_t m, int64_t n, int64_t k, const BFloat16* a, int64_t lda, const BFloat16* b, int64_t ldb,
                   float beta, float* c, int64_t ldc) {
    cpu::bf16_gemm(TA == Trans::Yes, TB == Trans::Yes, m, n, k, a, lda, b, ldb, beta, c, ldc);
  }
};

// Acc -> In, n values: a copy when they are the same type, else each rounded once.
template <typename G>
void store(const typename G::Acc* from, typename G::In* to, int64_t n) {
  if constexpr (std::is_same_v<typename G::Acc, typename G::In>) {
    if (from != to) std::copy(from, from + n, to);
  } else {
    float_to_bfloat16(from, to, n);
  }
}

// A buffer for Acc values that are rounded into an In output: none (the output itself) when the types agree.
template <typename G>
typename G::Acc* acc_buffer(std::vector<typename G::Acc>& buf, typename G::In* out, int64_t n) {
  if constexpr (std::is_same_v<typename G::Acc, typename G::In>) {
    return out;
  } else {
    buf.resize(static_cast<size_t>(n));
    return buf.data();
  }
}

template <typename G>
void conv2d_forward(const typename G::In* x, const typename G::In* w, const typename G::Acc* bias,
                    typename G::In* y, const ConvDims& d) {
  using In = typename G::In;
  using Acc = typename G::Acc;
  const cpu::ConvGeom& g = d.geom;
  const int64_t k = g.rows(), l = g.cols(), og = d.og();
  const int64_t cost = std::max<int64_t>(1, work_of({og, k, l}));
  cpu::parallel_for(d.n * d.groups, std::max<int64_t>(1, G::kGrain / cost), [&](int64_t u0, int64_t u1) {
    std::vector<In> col(static_cast<size_t>(g.pointwise() ? 0 : k * l));
    std::vector<Acc> acc;
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / d.groups, gi = u % d.groups;
      const In* xg = x + (n * d.c + gi * d.cg) * d.h * d.w;
      In* yg = y + (n * d.o + gi * og) * l;
      Acc* ya = acc_buffer<G>(acc, yg, og * l);
      const In* src = xg;
      if (!g.pointwise() && k > 0) {
        cpu::im2col(xg, col.data(), g);
        src = col.data();
      }
      // y_g (og, l) = w_g (og, k) col (k, l)
      G::template gemm<Trans::No, Trans::No>(og, l, k, w + gi * og * k, k, src, l, Acc(0), ya, l);
      if (bias) {
        for (int64_t r = 0; r < og; ++r) {
          const Acc b = bias[gi * og + r];
          Acc* row = ya + r * l;
          for (int64_t i = 0; i < l; ++i) row[i] += b;
        }
      }
      store<G>(ya, yg, og * l);
    }
  });
}

// dx = col2im(w_g^T dout_g) per image and group.
template <typename G>
void conv2d_input_grad_impl(const typename G::In* dy, const typename G::In* w, typename G::In* dx,
                            const ConvDims& d) {
  using Acc = typename G::Acc;
  const cpu::ConvGeom& g = d.geom;
  const int64_t k = g.rows(), l = g.cols(), og = d.og(), image = d.cg * d.h * d.w;
  const int64_t cost = std::max<int64_t>(1, work_of({og, k, l}));
  cpu::parallel_for(d.n * d.groups, std::max<int64_t>(1, G::kGrain / cost), [&](int64_t u0, int64_t u1) {
    std::vector<Acc> col(static_cast<size_t>(g.pointwise() ? 0 : k * l));
    std::vector<Acc> acc;
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / d.groups, gi = u % d.groups;
      auto* dxg = dx + (n * d.c + gi * d.cg) * d.h * d.w;
      Acc* dxa = acc_buffer<G>(acc, dxg, image);
      if (og == 0 || l == 0) {
        std::fill(dxa, dxa + image, Acc(0));
        store<G>(dxa, dxg, image);
        continue;
      }
      // col (k, l) = w_g^T (k, og) dout_g (og, l), straight into dx when the columns are the image
      Acc* dst = g.pointwise() ? dxa : col.data();
      G::template gemm<Trans::Yes, Trans::No>(k, l, og, w + gi * og * k, k, dy + (n * d.o + gi * og) * l, l, Acc(0),
                                              dst, l);
      if (!g.pointwise()) {
        std::fill(dxa, dxa + image, Acc(0));
        cpu::col2im(col.data(), dxa, g);
      }
      store<G>(dxa, dxg, image);
    }
  });
}

// dw_g = sum over images of dout_g im2col(x_g)^T.
template <typename G>
void conv2d_weight_grad_impl(const typename G::In* x, const typename G::In* dy, typename G::In* dw,
                             const ConvDims& d) {
  using In = typename G::In;
  using Acc = typename G::Acc;
  const cpu::ConvGeom& g = d.geom;
  const int64_t k = g.rows(), l = g.cols(), og = d.og(), size = d.o * k;
  std::vector<Acc> total;
  Acc* sum = acc_buffer<G>(total, dw, size);
  std::fill(sum, sum + size, Acc(0));
  if (d.n == 0 || size == 0 || l == 0) {
    store<G>(sum, dw, size);
    return;
  }
  const int64_t blocks = std::min(d.n, kWeightGradBlocks);
  std::vector<Acc> partial(static_cast<size_t>((blocks - 1) * size), Acc(0));  // block 0 sums into `sum`
  const int64_t block_cost = std::max<int64_t>(1, work_of({d.n / blocks, d.o, k, l}));
  cpu::parallel_for(blocks, std::max<int64_t>(1, G::kGrain / block_cost), [&](int64_t b0, int64_t b1) {
    std::vector<In> col(static_cast<size_t>(g.pointwise() ? 0 : k * l));
    for (int64_t b = b0; b < b1; ++b) {
      Acc* acc = b == 0 ? sum : partial.data() + (b - 1) * size;
      for (int64_t n = b * d.n / blocks; n < (b + 1) * d.n / blocks; ++n) {
        for (int64_t gi = 0; gi < d.groups; ++gi) {
          const In* src = x + (n * d.c + gi * d.cg) * d.h * d.w;
          if (!g.pointwise()) {
            cpu::im2col(src, col.data(), g);
            src = col.data();
          }
          // acc_g (og, k) += dout_g (og, l) col^T (l, k)
          G::template gemm<Trans::No, Trans::Yes>(og, k, l, dy + (n * d.o + gi * og) * l, l, src, l, Acc(1),
                                                  acc + gi * og * k, k);
        }
      }
    }
  });
  for (int64_t b = 1; b < blocks; ++b) {
    const Acc* p = partial.data() + (b - 1) * size;
    for (int64_t i = 0; i < size; ++i) sum[i] += p[i];
  }
  store<G>(sum, dw, size);
}

void conv2d_kernel(KernelCtx& c) {
  const ConvDims d = conv2d_dims(InferCtx{c.op, c.inputs, c.attrs});
  const Tensor x = cpu::as_dtype(c.inputs[0], c.out_dtype);
  const Tensor w = cpu::as_dtype(c.inputs[1], c.out_dtype);
  const bool has_bias = c.inputs.size() > 2 && c.inputs[2].defined();
  const Tensor b = has_bias ? cpu::as_dtype(c.inputs[2], c.out_dtype) : Tensor();
  if (c.out.numel() == 0) return;
  visit_float(c.out_dtype, [&]<typename T>() {
    conv2d_forward<StoredConvGemm<T>>(x.data<T>(), w.data<T>(), has_bias ? b.data<T>() : nullptr, c.out.data<T>(),
                                      d);
  });
}

void conv2d_input_grad_kernel(KernelCtx& c) {
  const ConvDims d = input_grad_dims(InferCtx{c.op, c.inputs, c.attrs});
  const Tensor dy = cpu::as_dtype(c.inputs[0], c.out_dtype);
  const Tensor w = cpu::as_dtype(c.inputs[1], c.out_dtype);
  if (c.out.numel() == 0) return;
  visit_float(c.out_dtype, [&]<typename T>() {
    conv2d_input_grad_impl<StoredConvGemm<T>>(dy.data<T>(), w.data<T>(), c.out.data<T>(), d);
  });
}

void conv2d_weight_grad_kernel(KernelCtx& c) {
  const ConvDims d = weight_grad_dims(InferCtx{c.op, c.inputs, c.attrs});
  const Tensor x = cpu::as_dtype(c.inputs[0], c.out_dtype);
  const Tensor dy = cpu::as_dtype(c.inputs[1], c.out_dtype);
  if (c.out.numel() == 0) return;
  visit_float(c.out_dtype, [&]<typename T>() {
    conv2d_weight_grad_impl<StoredConvGemm<T>>(x.data<T>(), dy.data<T>(), c.out.data<T>(), d);
  });
}

// ---- the bfloat16 fast path (OpDef::cpu_half): every tensor bfloat16, the GEMMs on oneDNN ----
// (Native only: the WebAssembly build has no oneDNN, and the code would only add to its download.)
#if !defined(__EMSCRIPTEN__)

// Multiply-adds per GEMM below which a call stays on the widened path (oneDNN's fixed cost per call; as matmul's).
constexpr int64_t kBf16ConvMinMacs = int64_t{1} << 13;

// True when the call can take the fast path: every operand and the output bfloat16, GEMMs large enough, oneDNN
// loaded (else its products are counted as widened). Allocates the output.
bool conv_bf16_ready(KernelCtx& c, const ConvDims& d) {
  if (c.out_dtype != DType::BFloat16) return false;
  for (const Tensor& t : c.inputs) {
    if (t.defined() && t.dtype() != DType::BFloat16) return false;
  }
  if (work_of({d.og(), d.geom.rows(), d.geom.cols()}) < kBf16ConvMinMacs) return false;
  const auto products = static_cast<uint64_t>(d.n * d.groups);
  if (!cpu::bf16_gemm_available()) {
    cpu::note_half_gemm_fallback(products);
    return false;
  }
  if (!c.out.defined()) c.out = Tensor::empty(c.out_shape, c.out_dtype, Device::cpu(), c.op.name);
  cpu::note_half_gemm_onednn(products);
  return true;
}

bool conv2d_half_kernel(KernelCtx& c) {
  const ConvDims d = conv2d_dims(InferCtx{c.op, c.inputs, c.attrs});
  if (!conv_bf16_ready(c, d)) return false;
  std::vector<float> bias;  // added in float32, before the one rounding
  if (c.inputs.size() > 2 && c.inputs[2].defined()) {
    bias.resize(static_cast<size_t>(d.o));
    bfloat16_to_float(c.inputs[2].data<BFloat16>(), bias.data(), d.o);
  }
  conv2d_forward<Bf16ConvGemm>(c.inputs[0].data<BFloat16>(), c.inputs[1].data<BFloat16>(),
                               bias.empty() ? nullptr : bias.data(), c.out.data<BFloat16>(), d);
  return true;
}

bool conv2d_input_grad_half_kernel(KernelCtx& c) {
  const ConvDims d = input_grad_dims(InferCtx{c.op, c.inputs, c.attrs});
  if (!conv_bf16_ready(c, d)) return false;
  conv2d_input_grad_impl<Bf16ConvGemm>(c.inputs[0].data<BFloat16>(), c.inputs[1].data<BFloat16>(),
                                       c.out.data<BFloat16>(), d);
  return true;
}

bool conv2d_weight_grad_half_kernel(KernelCtx& c) {
  const ConvDims d = weight_grad_dims(InferCtx{c.op, c.inputs, c.attrs});
  if (!conv_bf16_ready(c, d)) return false;
  conv2d_weight_grad_impl<Bf16ConvGemm>(c.inputs[0].data<BFloat16>(), c.inputs[1].data<BFloat16>(),
                                        c.out.data<BFloat16>(), d);
  return true;
}

#endif  // !__EMSCRIPTEN__

// ---- convolution ops, typed (the bprops are written with these) ----

Attrs conv_attrs(const Attrs& a) {
  return {{"stride", a.get("stride")}, {"padding", a.get("padding")}, {"dilation", a.get("dilation")},
          {"groups", a.get("groups")}};
}

Tensor conv2d_op(const Tensor& x, const Tensor& w, const Attrs& a) {
  static const OpDef& op = registry().get("conv2d");
  return call_op(op, {x, w}, conv_attrs(a));
}

Tensor conv2d_input_grad(const Tensor& dout, const Tensor& w, const Shape& x_shape, const Attrs& a) {
  static const OpDef& op = registry().get("conv2d_input_grad");
  Attrs attrs = conv_attrs(a);
  attrs.set("x_shape", IntList(x_shape.begin(), x_shape.end()));
  return call_op(op, {dout, w}, attrs);
}

Tensor conv2d_weight_grad(const Tensor& x, const Tensor& dout, const Shape& w_shape, const Attrs& a) {
  static const OpDef& op = registry().get("conv2d_weight_grad");
  Attrs attrs = conv_attrs(a);
  attrs.set("w_shape", IntList(w_shape.begin(), w_shape.end()));
  return call_op(op, {x, dout}, attrs);
}

std::vector<AttrSpec> conv_attr_specs() {
  return {{"stride", AttrKind::IntPair, IntList{1, 1}},
          {"padding", AttrKind::IntPair, IntList{0, 0}},
          {"dilation", AttrKind::IntPair, IntList{1, 1}},
          {"groups", AttrKind::Int, int64_t{1}}};
}

}  // namespace

void register_conv_ops(Registry& r) {
  {
    OpDef op = conv_pool_def("conv2d", {{"x"}, {"w"}, {"bias", true}}, conv_attr_specs());
    op.infer_shape = [](const InferCtx& c) { return conv2d_dims(c).y_shape(); };
    op.cpu(conv2d_kernel);
#if !defined(__EMSCRIPTEN__)
    op.cpu_half = conv2d_half_kernel;
#endif
    // conv2d: dx = conv2d_input_grad(dout, w), dw = conv2d_weight_grad(x, dout), dbias = sum(dout, {0, 2, 3})
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
      const Tensor &x = c.input(0), &w = c.input(1);
      std::vector<Tensor> g(c.inputs.size());
      if (c.needs(0)) g[0] = conv2d_input_grad(c.dout, w, x.shape(), c.attrs);
      if (c.needs(1)) g[1] = conv2d_weight_grad(x, c.dout, w.shape(), c.attrs);
      // (the contiguous spatial axes first: one pass of row sums, then a small (N, O) sum; measured 3x faster
      // than one reduction over {0, 2, 3}; in a half dtype one reduction, which accumulates in float32 and rounds
      // once, where two would round the partial sums)
      if (c.needs(2) && c.input(2).defined()) {
        g[2] = is_half(c.dout.dtype()) ? ops::sum(c.dout, IntList{0, 2, 3})
                                       : ops::sum(ops::sum(c.dout, IntList{2, 3}), IntList{0});
      }
      return g;
    };
    op.amp = AmpClass::Half;  // mixed precision's white list
    r.add(std::move(op));
  }
  {
    std::vector<AttrSpec> attrs = conv_attr_specs();
    attrs.insert(attrs.begin(), {"x_shape", AttrKind::IntList, std::monostate{}, true});
    OpDef op = conv_pool_def("conv2d_input_grad", {{"dout"}, {"w"}}, std::move(attrs));
    op.infer_shape = [](const InferCtx& c) { return input_grad_dims(c).x_shape(); };
    op.cpu(conv2d_input_grad_kernel);
#if !defined(__EMSCRIPTEN__)
    op.cpu_half = conv2d_input_grad_half_kernel;
#endif
    // Bilinear, the adjoint of conv2d in x:
    //   <input_grad(dout, w), g> = <conv2d(g, w), dout> = <w, weight_grad(g, dout)>,
    // so d dout = conv2d(g, w), d w = conv2d_weight_grad(g, dout)
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
      const Tensor &dy = c.input(0), &w = c.input(1);
      return {c.needs(0) ? conv2d_op(c.dout, w, c.attrs) : Tensor(),
              c.needs(1) ? conv2d_weight_grad(c.dout, dy, w.shape(), c.attrs) : Tensor()};
    };
    r.add(std::move(op));
  }
  {
    std::vector<AttrSpec> attrs = conv_attr_specs();
    attrs.insert(attrs.begin(), {"w_shape", AttrKind::IntList, std::monostate{}, true});
    OpDef op = conv_pool_def("conv2d_weight_grad", {{"x"}, {"dout"}}, std::move(attrs));
    op.infer_shape = [](const InferCtx& c) { return weight_grad_dims(c).w_shape(); };
    op.cpu(conv2d_weight_grad_kernel);
#if !defined(__EMSCRIPTEN__)
    op.cpu_half = conv2d_weight_grad_half_kernel;
#endif
    // Bilinear, the adjoint of conv2d in w:
    //   <weight_grad(x, dout), g> = <conv2d(x, g), dout> = <x, input_grad(dout, g)>,
    // so d x = conv2d_input_grad(dout, g), d dout = conv2d(x, g)
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
      const Tensor &x = c.input(0), &dy = c.input(1);
      return {c.needs(0) ? conv2d_input_grad(dy, c.dout, x.shape(), c.attrs) : Tensor(),
              c.needs(1) ? conv2d_op(x, c.dout, c.attrs) : Tensor()};
    };
    r.add(std::move(op));
  }
}

}  // namespace bprop
