// Convolution and pooling, PyTorch semantics: conv2d max_pool2d avg_pool2d, and the linear ops their gradients
// are written with, each differentiable again:
//   conv2d_input_grad(dout, w)   the transposed convolution (col2im of w^T dout): d conv2d / d x
//   conv2d_weight_grad(x, dout)  dout im2col(x)^T summed over the batch:           d conv2d / d w
//   max_pool2d_grad(dout, x)     dout added onto each window's argmax in x
//   max_pool2d_gather(g, x)      g read at each window's argmax in x (the transpose of max_pool2d_grad)
//   avg_pool2d_grad(dout)        dout / (kH kW) spread over each window (the transpose of avg_pool2d)
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
#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;

using cpu::kGemmGrain;  // multiply-adds below which work runs on one thread
using cpu::Trans;
// conv2d_weight_grad sums the batch in this many fixed blocks (at most), each with its own partial sum, so
// the result does not depend on the number of threads.
constexpr int64_t kWeightGradBlocks = 16;

std::string ints_str(const IntList& v) { return attr_value_str(AttrValue(v)); }
std::string pair_str(int64_t a, int64_t b) { return shape_str({a, b}); }
std::string arg_desc(const InferCtx& c, size_t i) {
  return "argument '" + c.op.inputs[i].name + "' of shape " + shape_str(c.input(i).shape());
}

// An IntPair attribute (normalised to [h, w]).
std::pair<int64_t, int64_t> pair_attr(const Attrs& a, const char* name) {
  const IntList v = a.get_ints(name);
  return {v[0], v[1]};
}

// A shape given as an attribute (x_shape, w_shape): non-negative entries of the expected count.
Shape shape_attr(const InferCtx& c, const char* name, size_t min_rank, size_t max_rank) {
  const IntList v = c.attrs.get_ints(name);
  const bool bad_rank = v.size() < min_rank || v.size() > max_rank;
  if (bad_rank || std::any_of(v.begin(), v.end(), [](int64_t d) { return d < 0; })) {
    const std::string ranks = min_rank == max_rank ? std::to_string(min_rank)
                                                   : std::to_string(min_rank) + " or " + std::to_string(max_rank);
    c.value_error("attribute '" + std::string(name) + "' must be a shape of " + ranks +
                  " non-negative sizes, got " + ints_str(v));
  }
  return Shape(v.begin(), v.end());
}

void require_at_least(const InferCtx& c, const char* name, std::pair<int64_t, int64_t> v, int64_t lo,
                      const char* what) {
  if (v.first < lo || v.second < lo) {
    c.value_error("attribute '" + std::string(name) + "' must be " + what + ", got " + ints_str({v.first, v.second}));
  }
}

// ---- convolution geometry ----

// size + 2 * padding, and the extent (size - 1) * dilation + 1 of a dilated kernel; nothing on int64 overflow.
std::optional<int64_t> padded_extent(int64_t size, int64_t padding) {
  const auto both = mul_checked(padding, 2);
  return both ? add_checked(size, *both) : std::nullopt;
}
std::optional<int64_t> dilated_extent(int64_t size, int64_t dilation) {
  const auto span = mul_checked(size - 1, dilation);
  return span ? add_checked(*span, 1) : std::nullopt;
}
// The value, or a MemoryError saying that `what` passes every size.
int64_t checked(const InferCtx& c, std::optional<int64_t> v, const std::string& what) {
  if (!v) throw MemoryError(c.prefix() + what + " is more than 2^63");
  return *v;
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
void require_dout(const InferCtx& c, size_t i, const Shape& expected, const std::string& what) {
  if (c.input(i).shape() != expected) {
    c.shape_error(arg_desc(c, i) + " does not match the shape " + shape_str(expected) + " of " + what);
  }
}

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

// Multiply-adds of a unit of work, for the thread grain: saturates (an empty tensor's other sizes may be huge).
int64_t work_of(std::initializer_list<int64_t> sizes) {
  int64_t w = 1;
  for (int64_t s : sizes) w = mul_checked(w, s).value_or(INT64_MAX);
  return w;
}

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

// ---- pooling geometry ----

struct PoolDims {
  int64_t planes = 0, h = 0, w = 0;  // x viewed as (planes, H, W)
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  int64_t oh = 0, ow = 0;
  Shape out_shape;
};

// The pools' stride: null means kernel_size; else an int or an [h, w] pair.
std::pair<int64_t, int64_t> pool_stride(const InferCtx& c, std::pair<int64_t, int64_t> kernel) {
  const AttrValue& v = c.attrs.get("stride");
  if (std::holds_alternative<std::monostate>(v)) return kernel;
  if (const auto* i = std::get_if<int64_t>(&v)) return {*i, *i};
  const IntList& l = std::get<IntList>(v);
  if (l.size() != 2) c.value_error("attribute 'stride' must be an int, a pair of ints or null, got " + ints_str(l));
  return {l[0], l[1]};
}

// Validates pooling an input of shape xs (3-D (C, H, W) or 4-D (N, C, H, W)) under c's kernel_size, stride
// and padding: PyTorch's rules (padding at most half the kernel; the output size rounds down).
PoolDims pool_dims(const InferCtx& c, const Shape& xs, const std::string& x_desc) {
  if (xs.size() != 3 && xs.size() != 4) c.shape_error(x_desc + " must be 3-D (C, H, W) or 4-D (N, C, H, W)");
  const auto kernel = pair_attr(c.attrs, "kernel_size");
  const auto padding = pair_attr(c.attrs, "padding");
  require_at_least(c, "kernel_size", kernel, 1, "positive");
  const auto stride = pool_stride(c, kernel);
  require_at_least(c, "stride", stride, 1, "positive");
  require_at_least(c, "padding", padding, 0, "non-negative");
  if (padding.first > kernel.first / 2 || padding.second > kernel.second / 2) {  // 2 * padding > kernel
    c.value_error("attribute 'padding' " + ints_str({padding.first, padding.second}) +
                  " must be at most half of 'kernel_size' " + ints_str({kernel.first, kernel.second}));
  }
  PoolDims d;
  d.h = xs[xs.size() - 2];
  d.w = xs[xs.size() - 1];
  if (d.h < 1 || d.w < 1) c.shape_error(x_desc + " has an empty spatial size " + pair_str(d.h, d.w));
  d.planes = shape_numel(Shape(xs.begin(), xs.end() - 2));
  d.kh = kernel.first, d.kw = kernel.second;
  d.sh = stride.first, d.sw = stride.second;
  d.ph = padding.first, d.pw = padding.second;
  // padding is at most half the kernel, and the kernel at most the padded input: no sum here overflows unless the
  // kernel itself is past every size.
  const int64_t hp = checked(c, padded_extent(d.h, d.ph), "the input height with 'padding'");
  const int64_t wp = checked(c, padded_extent(d.w, d.pw), "the input width with 'padding'");
  if (hp < d.kh || wp < d.kw) {
    c.shape_error("'kernel_size' " + pair_str(d.kh, d.kw) + " is larger than the padded input " + pair_str(hp, wp) +
                  " of " + x_desc + " with padding " + pair_str(d.ph, d.pw));
  }
  d.oh = (hp - d.kh) / d.sh + 1;
  d.ow = (wp - d.kw) / d.sw + 1;
  d.out_shape = Shape(xs.begin(), xs.end() - 2);
  d.out_shape.push_back(d.oh);
  d.out_shape.push_back(d.ow);
  return d;
}

PoolDims input_pool_dims(const InferCtx& c) { return pool_dims(c, c.input(0).shape(), arg_desc(c, 0)); }

// max_pool2d_grad(dout, x) / max_pool2d_gather(g, x): x is input 1, input 0 is shaped like the pool's output
// (grad) or like x (gather).
PoolDims argmax_pool_dims(const InferCtx& c, bool dout_is_output) {
  const PoolDims d = pool_dims(c, c.input(1).shape(), arg_desc(c, 1));
  const Shape& expected = dout_is_output ? d.out_shape : c.input(1).shape();
  require_dout(c, 0, expected, dout_is_output ? "max_pool2d of " + arg_desc(c, 1) : arg_desc(c, 1));
  return d;
}

// avg_pool2d_grad(dout) {x_shape, ...}
PoolDims avg_grad_dims(const InferCtx& c) {
  const Shape xs = shape_attr(c, "x_shape", 3, 4);
  const std::string x_desc = "attribute 'x_shape' " + ints_str(IntList(xs.begin(), xs.end()));
  const PoolDims d = pool_dims(c, xs, x_desc);
  require_dout(c, 0, d.out_shape, "avg_pool2d of " + x_desc);
  return d;
}

// Runs body(plane_begin, plane_end) over the planes, split over threads when the work is large.
template <typename Body>
void for_planes(const PoolDims& d, Body body) {
  const int64_t cost = std::max<int64_t>(1, work_of({d.oh, d.ow, d.kh, d.kw}));
  cpu::parallel_for(d.planes, std::max<int64_t>(1, cpu::kParallelGrain / cost), body);
}

// The average-pooling loops walk one output row at a time: for each input row and kernel column they sweep the
// output columns, so the inner loop runs over contiguous (stride 1) input. Per output column, the window's
// elements are visited in row-major order.
struct PoolColumns {
  std::vector<int64_t> lo, hi;  // per kernel column kx: the output columns whose window holds an input column
};
PoolColumns pool_columns(const PoolDims& d) {
  PoolColumns pc;
  pc.lo.resize(static_cast<size_t>(d.kw));
  pc.hi.resize(static_cast<size_t>(d.kw));
  for (int64_t kx = 0; kx < d.kw; ++kx) {
    const size_t k = static_cast<size_t>(kx);
    cpu::valid_output_range(kx - d.pw, d.sw, d.w, d.ow, &pc.lo[k], &pc.hi[k]);
  }
  return pc;
}

// The running maximum of one pooling window: the first largest element in visiting (row-major) order, and the
// last NaN. The updates are selects, not branches (random data would mispredict them).
template <typename T>
struct WindowMax {
  T best = -std::numeric_limits<T>::infinity();
  int64_t best_i = 0, nan_i = -1;

  void add(T v, int64_t i) {
    const bool greater = v > best;
    best_i = greater ? i : best_i;
    best = greater ? v : best;
    nan_i = v != v ? i : nan_i;
  }
};

// Calls fn(out_index, in_index, value) for every window of every plane, in_index the flat position in x of the
// window's maximum `value`: the first one in row-major order, or the last NaN when the window holds one
// (PyTorch's rule). Padding (-inf) never wins, as every window holds an element of x (padding is at most half
// the kernel). Windows are visited one at a time, or kLanes side by side where none of them is clipped by the
// padding: each running maximum is a chain of dependent selects, and independent chains overlap.
template <typename T, typename Fn>
void for_each_argmax(const T* x, const PoolDims& d, Fn fn) {
  constexpr int64_t kLanes = 4;
  const int64_t in_plane = d.h * d.w, out_plane = d.oh * d.ow;
  // Output columns [ox_lo, ox_hi) have windows inside the input's columns.
  int64_t ox_lo = 0, ox_hi = 0;
  cpu::valid_output_range(-d.pw, d.sw, d.w - d.kw + 1, d.ow, &ox_lo, &ox_hi);
  for_planes(d, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const T* xp = x + p * in_plane;
      const int64_t base = p * in_plane;
      for (int64_t oy = 0; oy < d.oh; ++oy) {
        const int64_t y0 = oy * d.sh - d.ph;
        const int64_t ya = std::max<int64_t>(y0, 0), yb = std::min(y0 + d.kh, d.h);
        const int64_t o = p * out_plane + oy * d.ow;
        auto emit = [&](int64_t ox, const WindowMax<T>& m) {
          if (m.nan_i >= 0) fn(o + ox, base + m.nan_i, xp[m.nan_i]);
          else fn(o + ox, base + m.best_i, m.best);
        };
        int64_t ox = 0;
        while (ox < d.ow) {
          if (ox >= ox_lo && ox + kLanes <= ox_hi) {
            WindowMax<T> m[kLanes];
            const int64_t x0 = ox * d.sw - d.pw;
            for (int64_t l = 0; l < kLanes; ++l) m[l].best_i = ya * d.w + x0 + l * d.sw;
            for (int64_t yy = ya; yy < yb; ++yy) {
              for (int64_t kx = 0; kx < d.kw; ++kx) {
                const int64_t i = yy * d.w + x0 + kx;
                for (int64_t l = 0; l < kLanes; ++l) m[l].add(xp[i + l * d.sw], i + l * d.sw);
              }
            }
            for (int64_t l = 0; l < kLanes; ++l) emit(ox + l, m[l]);
            ox += kLanes;
            continue;
          }
          const int64_t x0 = ox * d.sw - d.pw;
          const int64_t xa = std::max<int64_t>(x0, 0), xb = std::min(x0 + d.kw, d.w);
          WindowMax<T> m;
          m.best_i = ya * d.w + xa;
          for (int64_t yy = ya; yy < yb; ++yy) {
            for (int64_t xx = xa; xx < xb; ++xx) m.add(xp[yy * d.w + xx], yy * d.w + xx);
          }
          emit(ox, m);
          ++ox;
        }
      }
    }
  });
}

// ---- non-overlapping 2x2 windows (kernel 2, stride 2, no padding: the usual CNN pooling) ----
// The general loops above spend most of their time on index arithmetic per window. Here each output row reads
// two input rows and the loops over its columns are branch-free and vectorise; the windows pick the same element
// as WindowMax does (the first largest, or the last NaN), so results are bit-identical to the general path.

bool is_pool2x2(const PoolDims& d) {
  return d.kh == 2 && d.kw == 2 && d.sh == 2 && d.sw == 2 && d.ph == 0 && d.pw == 0;
}

/// Which element of the window (a b / c d) WindowMax picks, 0..3 in row-major order: the last NaN, else the
/// first element equal to the maximum. Written as selects on values GCC and clang if-convert, so the loops below
/// vectorise (WindowMax's chain of index selects kept them scalar and branchy).
template <typename T>
inline int32_t window2x2_argmax(T a, T b, T c, T d) {
  const T ab = b > a ? b : a, cd = d > c ? d : c, m = cd > ab ? cd : ab;  // any NaN is handled below
  int32_t j = c == m ? 2 : 3;
  j = b == m ? 1 : j;
  j = a == m ? 0 : j;
  j = a != a ? 0 : j;
  j = b != b ? 1 : j;
  j = c != c ? 2 : j;
  return d != d ? 3 : j;
}

/// s ? a : b through the bits: compilers turn a select between loaded values back into branches.
template <typename T>
inline T select_bits(bool s, T a, T b) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  const U mask = U(0) - U(s);
  // (std::bit_cast is missing from the older libc++ Emscripten ships; the builtin is in GCC and clang)
  return __builtin_bit_cast(T, static_cast<U>((__builtin_bit_cast(U, a) & mask) | (__builtin_bit_cast(U, b) & ~mask)));
}

/// row(i, o) for every output row of every plane: i the offset in x of the row's windows' first input row, o the
/// offset of the output row.
template <typename Row>
void for_rows2x2(const PoolDims& d, Row row) {
  for_planes(d, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      for (int64_t oy = 0; oy < d.oh; ++oy) row(p * d.h * d.w + 2 * oy * d.w, (p * d.oh + oy) * d.ow);
    }
  });
}

/// out = each window's maximum (max_pool2d: g = x), or g read at each window's argmax in x (max_pool2d_gather).
template <typename T>
void pool2x2_gather(const T* x, const T* g, T* out, const PoolDims& d) {
  const int64_t w = d.w, ow = d.ow;
  for_rows2x2(d, [&](int64_t i, int64_t o) {
    const T *x0 = x + i, *x1 = x0 + w, *g0 = g + i, *g1 = g0 + w;
    T* y = out + o;
    for (int64_t ox = 0; ox < ow; ++ox) {
      const int64_t c = 2 * ox;
      const int32_t j = window2x2_argmax(x0[c], x0[c + 1], x1[c], x1[c + 1]);
      const T ga = g0[c], gb = g0[c + 1], gc = g1[c], gd = g1[c + 1];
      T r = select_bits(j == 1, gb, ga);
      r = select_bits(j == 2, gc, r);
      y[ox] = select_bits(j == 3, gd, r);
    }
  });
}

/// dx = dout added onto each window's argmax in x (max_pool2d_grad); the elements no window covers (an odd last
/// row or column) are zero.
template <typename T>
void pool2x2_scatter(const T* x, const T* dout, T* dx, const PoolDims& d) {
  const int64_t w = d.w, ow = d.ow;
  for_rows2x2(d, [&](int64_t i, int64_t o) {
    const T *x0 = x + i, *x1 = x0 + w, *g = dout + o;
    T *d0 = dx + i, *d1 = d0 + w;
    BPROP_ELEMENTWISE_LOOP  // dx is the kernel's own output: no iteration reads what another writes
    for (int64_t ox = 0; ox < ow; ++ox) {
      const int64_t c = 2 * ox;
      const int32_t j = window2x2_argmax(x0[c], x0[c + 1], x1[c], x1[c + 1]);
      const T v = g[ox] + T(0);  // 0 + dout, as the general path adds onto zeros (a -0 cotangent lands as +0)
      d0[c] = select_bits(j == 0, v, T(0));
      d0[c + 1] = select_bits(j == 1, v, T(0));
      d1[c] = select_bits(j == 2, v, T(0));
      d1[c + 1] = select_bits(j == 3, v, T(0));
    }
    if (w % 2 != 0) d0[w - 1] = d1[w - 1] = T(0);
  });
  if (d.h % 2 != 0) {
    for (int64_t p = 1; p <= d.planes; ++p) std::fill(dx + p * d.h * w - w, dx + p * d.h * w, T(0));
  }
}

void max_pool2d_kernel(KernelCtx& c) {
  const PoolDims d = input_pool_dims(InferCtx{c.op, c.inputs, c.attrs});
  visit_float(c.out_dtype, [&]<typename T>() {
    T* out = c.out.data<T>();
    const T* x = c.inputs[0].data<T>();
    if (is_pool2x2(d)) return pool2x2_gather(x, x, out, d);
    for_each_argmax(x, d, [&](int64_t o, int64_t, T v) { out[o] = v; });
  });
}

void max_pool2d_grad_kernel(KernelCtx& c) {
  const PoolDims d = argmax_pool_dims(InferCtx{c.op, c.inputs, c.attrs}, true);
  const Tensor dy = cpu::as_dtype(c.inputs[0], c.out_dtype);
  const Tensor x = cpu::as_dtype(c.inputs[1], c.out_dtype);
  if (is_pool2x2(d)) {
    return visit_float(c.out_dtype, [&]<typename T>() {
      pool2x2_scatter(x.data<T>(), dy.data<T>(), c.out.data<T>(), d);
    });
  }
  cpu::fill_tensor(c.out, 0.0);
  visit_float(c.out_dtype, [&]<typename T>() {
    const T* pd = dy.data<T>();
    T* dx = c.out.data<T>();
    for_each_argmax(x.data<T>(), d, [&](int64_t o, int64_t i, T) { dx[i] += pd[o]; });  // planes own their rows
  });
}

void max_pool2d_gather_kernel(KernelCtx& c) {
  const PoolDims d = argmax_pool_dims(InferCtx{c.op, c.inputs, c.attrs}, false);
  const Tensor g = cpu::as_dtype(c.inputs[0], c.out_dtype);
  const Tensor x = cpu::as_dtype(c.inputs[1], c.out_dtype);
  visit_float(c.out_dtype, [&]<typename T>() {
    const T* pg = g.data<T>();
    T* out = c.out.data<T>();
    if (is_pool2x2(d)) return pool2x2_gather(x.data<T>(), pg, out, d);
    for_each_argmax(x.data<T>(), d, [&](int64_t o, int64_t i, T) { out[o] = pg[i]; });
  });
}

// out = sum of each window (padding counts as zeros) / (kH kW), summed in double.
void avg_pool2d_kernel(KernelCtx& c) {
  const PoolDims d = input_pool_dims(InferCtx{c.op, c.inputs, c.attrs});
  const PoolColumns pc = pool_columns(d);
  visit_float(c.out_dtype, [&]<typename T>() {
    const T* x = c.inputs[0].data<T>();
    T* out = c.out.data<T>();
    const double inv = 1.0 / (static_cast<double>(d.kh) * static_cast<double>(d.kw));
    for_planes(d, [&](int64_t p0, int64_t p1) {
      std::vector<double> acc(static_cast<size_t>(d.ow));
      for (int64_t p = p0; p < p1; ++p) {
        const T* xp = x + p * d.h * d.w;
        for (int64_t oy = 0; oy < d.oh; ++oy) {
          const int64_t y0 = oy * d.sh - d.ph;
          const int64_t ya = std::max<int64_t>(y0, 0), yb = std::min(y0 + d.kh, d.h);
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t yy = ya; yy < yb; ++yy) {
            const T* row = xp + yy * d.w;
            for (int64_t kx = 0; kx < d.kw; ++kx) {
              const int64_t off = kx - d.pw;
              for (int64_t ox = pc.lo[static_cast<size_t>(kx)]; ox < pc.hi[static_cast<size_t>(kx)]; ++ox) {
                acc[static_cast<size_t>(ox)] += static_cast<double>(row[ox * d.sw + off]);
              }
            }
          }
          T* orow = out + (p * d.oh + oy) * d.ow;
          for (int64_t ox = 0; ox < d.ow; ++ox) orow[ox] = static_cast<T>(acc[static_cast<size_t>(ox)] * inv);
        }
      }
    });
  });
}

// dx = every dout / (kH kW) added over its window (padding positions dropped).
void avg_pool2d_grad_kernel(KernelCtx& c) {
  const PoolDims d = avg_grad_dims(InferCtx{c.op, c.inputs, c.attrs});
  const PoolColumns pc = pool_columns(d);
  const Tensor dy = cpu::as_dtype(c.inputs[0], c.out_dtype);
  cpu::fill_tensor(c.out, 0.0);
  visit_float(c.out_dtype, [&]<typename T>() {
    const T* pd = dy.data<T>();
    T* dx = c.out.data<T>();
    const T inv = static_cast<T>(1.0 / (static_cast<double>(d.kh) * static_cast<double>(d.kw)));
    for_planes(d, [&](int64_t p0, int64_t p1) {
      std::vector<T> v(static_cast<size_t>(d.ow));
      for (int64_t p = p0; p < p1; ++p) {
        T* xp = dx + p * d.h * d.w;
        for (int64_t oy = 0; oy < d.oh; ++oy) {
          const int64_t y0 = oy * d.sh - d.ph;
          const int64_t ya = std::max<int64_t>(y0, 0), yb = std::min(y0 + d.kh, d.h);
          const T* drow = pd + (p * d.oh + oy) * d.ow;
          for (int64_t ox = 0; ox < d.ow; ++ox) v[static_cast<size_t>(ox)] = drow[ox] * inv;
          for (int64_t yy = ya; yy < yb; ++yy) {
            T* row = xp + yy * d.w;
            for (int64_t kx = 0; kx < d.kw; ++kx) {
              const int64_t off = kx - d.pw;
              for (int64_t ox = pc.lo[static_cast<size_t>(kx)]; ox < pc.hi[static_cast<size_t>(kx)]; ++ox) {
                row[ox * d.sw + off] += v[static_cast<size_t>(ox)];
              }
            }
          }
        }
      }
    });
  });
}

// ---- pooling ops, typed ----

Attrs pool_attrs(const Attrs& a) {
  return {{"kernel_size", a.get("kernel_size")}, {"stride", a.get("stride")}, {"padding", a.get("padding")}};
}

Tensor max_pool2d_grad(const Tensor& dout, const Tensor& x, const Attrs& a) {
  static const OpDef& op = registry().get("max_pool2d_grad");
  return call_op(op, {dout, x}, pool_attrs(a));
}

Tensor max_pool2d_gather(const Tensor& g, const Tensor& x, const Attrs& a) {
  static const OpDef& op = registry().get("max_pool2d_gather");
  return call_op(op, {g, x}, pool_attrs(a));
}

Tensor avg_pool2d_op(const Tensor& x, const Attrs& a) {
  static const OpDef& op = registry().get("avg_pool2d");
  return call_op(op, {x}, pool_attrs(a));
}

Tensor avg_pool2d_grad(const Tensor& dout, const Shape& x_shape, const Attrs& a) {
  static const OpDef& op = registry().get("avg_pool2d_grad");
  Attrs attrs = pool_attrs(a);
  attrs.set("x_shape", IntList(x_shape.begin(), x_shape.end()));
  return call_op(op, {dout}, attrs);
}

std::vector<AttrSpec> pool_attr_specs() {
  return {{"kernel_size", AttrKind::IntPair, std::monostate{}, true},
          {"stride", AttrKind::Axes, std::monostate{}},  // null: kernel_size
          {"padding", AttrKind::IntPair, IntList{0, 0}}};
}

OpDef conv_pool_def(const char* name, std::vector<InputSpec> inputs, std::vector<AttrSpec> attrs) {
  OpDef op;
  op.name = name;
  op.family = "conv_pool";
  op.inputs = std::move(inputs);
  op.attrs = std::move(attrs);
  op.infer_dtype = float_inputs_dtype;
  return op;
}

}  // namespace

void register_conv_pool_ops(Registry& r) {
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
  {
    OpDef op = conv_pool_def("max_pool2d", {{"x"}}, pool_attr_specs());
    op.infer_shape = [](const InferCtx& c) { return input_pool_dims(c).out_shape; };
    op.cpu(max_pool2d_kernel);
    // max_pool2d: dx = dout added onto each window's argmax
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
      return {max_pool2d_grad(c.dout, c.input(0), c.attrs)};
    };
    r.add(std::move(op));
  }
  {
    OpDef op = conv_pool_def("max_pool2d_grad", {{"dout"}, {"x"}}, pool_attr_specs());
    op.infer_shape = [](const InferCtx& c) {
      argmax_pool_dims(c, true);
      return c.input(1).shape();
    };
    op.cpu(max_pool2d_grad_kernel);
    // Linear in dout: d dout = g read at each window's argmax; x only picks the argmax (gradient zero almost
    // everywhere, none returned)
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
      return {c.needs(0) ? max_pool2d_gather(c.dout, c.input(1), c.attrs) : Tensor(), Tensor()};
    };
    r.add(std::move(op));
  }
  {
    OpDef op = conv_pool_def("max_pool2d_gather", {{"g"}, {"x"}}, pool_attr_specs());
    op.infer_shape = [](const InferCtx& c) { return argmax_pool_dims(c, false).out_shape; };
    op.cpu(max_pool2d_gather_kernel);
    // Linear in g, the transpose of max_pool2d_grad: d g = max_pool2d_grad(dout, x); x: zero almost everywhere
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
      return {c.needs(0) ? max_pool2d_grad(c.dout, c.input(1), c.attrs) : Tensor(), Tensor()};
    };
    r.add(std::move(op));
  }
  {
    OpDef op = conv_pool_def("avg_pool2d", {{"x"}}, pool_attr_specs());
    op.infer_shape = [](const InferCtx& c) { return input_pool_dims(c).out_shape; };
    op.cpu(avg_pool2d_kernel);
    // avg_pool2d is linear: dx = avg_pool2d_grad(dout) (dout / (kH kW) spread over each window)
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
      return {avg_pool2d_grad(c.dout, c.input(0).shape(), c.attrs)};
    };
    r.add(std::move(op));
  }
  {
    std::vector<AttrSpec> attrs = pool_attr_specs();
    attrs.insert(attrs.begin(), {"x_shape", AttrKind::IntList, std::monostate{}, true});
    OpDef op = conv_pool_def("avg_pool2d_grad", {{"dout"}}, std::move(attrs));
    op.infer_shape = [](const InferCtx& c) {
      avg_grad_dims(c);
      return shape_attr(c, "x_shape", 3, 4);
    };
    op.cpu(avg_pool2d_grad_kernel);
    // Linear, the transpose of avg_pool2d: d dout = avg_pool2d(g)
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> { return {avg_pool2d_op(c.dout, c.attrs)}; };
    r.add(std::move(op));
  }
}

}  // namespace bprop
