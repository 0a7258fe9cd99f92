// Pooling, PyTorch semantics: max_pool2d avg_pool2d, and the linear ops their gradients are written with, each
// differentiable again:
//   max_pool2d_grad(dout, x)     dout added onto each window's argmax in x
//   max_pool2d_gather(g, x)      g read at each window's argmax in x (the transpose of max_pool2d_grad)
//   avg_pool2d_grad(dout)        dout / (kH kW) spread over each window (the transpose of avg_pool2d)
// Non-overlapping 2x2 windows (the usual CNN pooling) have loops of their own.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/loop_hints.h"
#include "ops/conv_pool_common.h"

namespace bprop {
namespace {

using namespace opdef;
using namespace conv_pool;

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

}  // namespace

void register_pool_ops(Registry& r) {
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
