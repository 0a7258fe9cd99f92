// Normalising activations: softmax and log_softmax {axis=-1}.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;

// Inner positions handled together by one work unit of a strided (not last axis) softmax.
constexpr int64_t kColumnBlock = 256;

// The input viewed as (outer, n, inner) around the softmax axis.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};

AxisSplit split_at(const Shape& shape, int64_t axis) {
  AxisSplit s;
  if (shape.empty()) return s;  // a 0-d tensor is one row of one element
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    const int64_t extent = shape[static_cast<size_t>(d)];
    if (d < axis) s.outer *= extent;
    else if (d == axis) s.n = extent;
    else s.inner *= extent;
  }
  return s;
}

// One contiguous row: y = softmax(x) or log_softmax(x), stable by subtracting the row's max. Sums are
// accumulated in double.
template <bool kLog, typename T>
void softmax_row(const T* x, T* y, int64_t n) {
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t k = 0; k < n; ++k) m = x[k] > m ? x[k] : m;
  // A NaN anywhere makes the whole row NaN (through the sum), as PyTorch does.
  double s = 0.0;
  if constexpr (kLog) {
    for (int64_t k = 0; k < n; ++k) s += static_cast<double>(std::exp(x[k] - m));
    const T shift = static_cast<T>(static_cast<double>(m) + std::log(s));
    for (int64_t k = 0; k < n; ++k) y[k] = x[k] - shift;
  } else {
    for (int64_t k = 0; k < n; ++k) {
      y[k] = std::exp(x[k] - m);
      s += static_cast<double>(y[k]);
    }
    const T inv = static_cast<T>(1.0 / s);
    for (int64_t k = 0; k < n; ++k) y[k] *= inv;
  }
}

// Columns [i0, i1) of one outer slice of a strided softmax: element k of column i sits at k * inner + i.
// The loops run over i innermost, so memory is walked contiguously.
template <bool kLog, typename T>
void softmax_columns(const T* x, T* y, int64_t n, int64_t inner, int64_t i0, int64_t i1, std::vector<T>& max_buf,
                     std::vector<double>& sum_buf) {
  const int64_t w = i1 - i0;
  max_buf.assign(static_cast<size_t>(w), -std::numeric_limits<T>::infinity());
  sum_buf.assign(static_cast<size_t>(w), 0.0);
  T* m = max_buf.data();
  double* s = sum_buf.data();
  for (int64_t k = 0; k < n; ++k) {
    const T* row = x + k * inner + i0;
    for (int64_t i = 0; i < w; ++i) m[i] = row[i] > m[i] ? row[i] : m[i];
  }
  for (int64_t k = 0; k < n; ++k) {
    const T* row = x + k * inner + i0;
    T* out = y + k * inner + i0;
    for (int64_t i = 0; i < w; ++i) {
      const T e = std::exp(row[i] - m[i]);
      if constexpr (!kLog) out[i] = e;
      s[i] += static_cast<double>(e);
    }
  }
  if constexpr (kLog) {
    for (int64_t i = 0; i < w; ++i) s[i] = static_cast<double>(m[i]) + std::log(s[i]);  // the shift
  }
  for (int64_t k = 0; k < n; ++k) {
    const T* row = x + k * inner + i0;
    T* out = y + k * inner + i0;
    for (int64_t i = 0; i < w; ++i) {
      if constexpr (kLog) out[i] = row[i] - static_cast<T>(s[i]);
      else out[i] = static_cast<T>(static_cast<double>(out[i]) / s[i]);
    }
  }
}

template <bool kLog>
void softmax_kernel(KernelCtx& c) {
  const Tensor& x = c.inputs[0];
  const int64_t axis = normalize_axis(c.attrs.get_int("axis"), x.dim(), c.op.name);
  const AxisSplit sp = split_at(x.shape(), axis);
  if (x.numel() == 0) return;
  visit_float(c.out_dtype, [&]<typename T>() {
    const T* px = x.data<T>();
    T* py = c.out.data<T>();
    if (sp.inner == 1) {
      // Fast path (the last axis): contiguous rows, split over threads.
      const int64_t n = sp.n;
      cpu::parallel_for(sp.outer, std::max<int64_t>(1, cpu::kParallelGrain / n), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) softmax_row<kLog>(px + r * n, py + r * n, n);
      });
      return;
    }
    // General axis: work units are (outer slice, block of inner columns).
    const int64_t blocks = (sp.inner + kColumnBlock - 1) / kColumnBlock;
    const int64_t unit_work = sp.n * std::min(sp.inner, kColumnBlock);
    cpu::parallel_for(sp.outer * blocks, std::max<int64_t>(1, cpu::kParallelGrain / unit_work),
                      [&](int64_t b, int64_t e) {
                        std::vector<T> m;
                        std::vector<double> s;
                        for (int64_t u = b; u < e; ++u) {
                          const int64_t o = u / blocks, blk = u % blocks;
                          const int64_t i0 = blk * kColumnBlock, i1 = std::min(sp.inner, i0 + kColumnBlock);
                          const int64_t base = o * sp.n * sp.inner;
                          softmax_columns<kLog>(px + base, py + base, sp.n, sp.inner, i0, i1, m, s);
                        }
                      });
  });
}

Shape softmax_shape(const InferCtx& c) {
  normalize_axis(c.attrs.get_int("axis"), c.input(0).dim(), c.op.name);
  return c.input(0).shape();
}

DType softmax_dtype(const InferCtx& c) {
  // Like PyTorch, integer inputs are refused rather than promoted.
  require_float(c, 0);
  return c.input(0).dtype();
}

OpDef softmax_def(const char* name) {
  OpDef op;
  op.name = name;
  op.family = "activation";
  op.inputs = {{"x"}};
  op.attrs = {{"axis", AttrKind::Int, int64_t{-1}}};
  op.infer_shape = softmax_shape;
  op.infer_dtype = softmax_dtype;
  op.amp = AmpClass::Float32;  // mixed precision's black list
  return op;
}

}  // namespace

void register_activation_ops(Registry& r) {
  {
    OpDef op = softmax_def("softmax");
    op.cpu(softmax_kernel<false>);
    // softmax: dx = out * (dout - sum(dout * out, axis, keepdims))
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
      const int64_t axis = c.attrs.get_int("axis");
      return {c.out * (c.dout - ops::sum(c.dout * c.out, axis, true))};
    };
    r.add(std::move(op));
  }
  {
    OpDef op = softmax_def("log_softmax");
    op.cpu(softmax_kernel<true>);
    // log_softmax: dx = dout - exp(out) * sum(dout, axis, keepdims)
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
      const int64_t axis = c.attrs.get_int("axis");
      return {c.dout - ops::exp(c.out) * ops::sum(c.dout, axis, true)};
    };
    r.add(std::move(op));
  }
}

}  // namespace bprop
