// Indexing ops: slice strided_slice gather, and the linear ops their gradients need: gather_grad (the
// scatter-add that undoes gather) and strided_slice_grad (dout written back into zeros of the input's shape).
#include <algorithm>
#include <cstring>

#include "kernels/cpu/copy.h"
#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;

std::string ints_str(const IntList& v) { return attr_value_str(AttrValue(v)); }

// ---- internal ops, typed ----

Tensor gather_grad(const Tensor& dout, const Tensor& indices, int64_t axis, int64_t dim_size) {
  static const OpDef& op = registry().get("gather_grad");
  return call_op(op, {dout, indices}, {{"axis", axis}, {"dim_size", dim_size}});
}

Tensor strided_slice_grad(const Tensor& dout, const Shape& shape, const IntList& begin, const IntList& end,
                          const IntList& strides) {
  static const OpDef& op = registry().get("strided_slice_grad");
  return call_op(op, {dout},
                 {{"shape", IntList(shape)}, {"begin", begin}, {"end", end}, {"strides", strides}});
}

// ---- slice ----

Shape slice_shape(const InferCtx& c) {
  const Tensor& x = c.input(0);
  const IntList begin = c.attrs.get_ints("begin"), size = c.attrs.get_ints("size");
  if (static_cast<int64_t>(begin.size()) != x.dim() || static_cast<int64_t>(size.size()) != x.dim()) {
    c.shape_error("'begin' " + ints_str(begin) + " and 'size' " + ints_str(size) + " need one entry per axis of 'x' of shape " +
                  shape_str(x.shape()));
  }
  Shape out(begin.size());
  for (size_t i = 0; i < begin.size(); ++i) {
    const int64_t d = x.shape()[i];
    if (begin[i] < 0 || begin[i] > d) {
      c.value_error("'begin' " + ints_str(begin) + " is out of bounds on axis " + std::to_string(i) + " of 'x' of shape " +
                    shape_str(x.shape()));
    }
    const int64_t n = size[i] == -1 ? d - begin[i] : size[i];
    if (n < 0) {
      c.value_error("'size' " + ints_str(size) + " has the negative entry " + std::to_string(n) + " on axis " +
                    std::to_string(i) + " (only -1, the rest of the axis, may be negative)");
    }
    if (n > d - begin[i]) {  // begin[i] + n, compared without overflowing
      c.value_error("begin[" + std::to_string(i) + "] + size[" + std::to_string(i) + "] = " + std::to_string(begin[i]) +
                    " + " + std::to_string(n) + " exceeds dim " + std::to_string(i) + " of size " + std::to_string(d) +
                    " of 'x' of shape " + shape_str(x.shape()));
    }
    out[i] = n;
  }
  return out;
}

void slice_kernel(KernelCtx& c) {
  const Tensor& x = c.inputs[0];
  const IntList begin = c.attrs.get_ints("begin");
  const std::vector<int64_t> xs = row_major_strides(x.shape());
  int64_t offset = 0;
  for (size_t i = 0; i < begin.size(); ++i) offset += begin[i] * xs[i];
  cpu::copy_block(x, offset, xs, c.out, 0, row_major_strides(c.out_shape), c.out_shape);
}

// ---- strided_slice ----

// One axis of x[b:e:s]: the first index, the step and the element count, as Python's slice.indices.
struct AxisSlice {
  int64_t start, step, count;
};

AxisSlice python_slice(int64_t b, int64_t e, int64_t s, int64_t n) {
  int64_t count = 0;
  if (s > 0) {
    auto clamp = [n](int64_t v) { return v < 0 ? std::max<int64_t>(v + n, 0) : std::min(v, n); };
    b = clamp(b);
    e = clamp(e);
    if (e > b) count = static_cast<int64_t>(static_cast<uint64_t>(e - b - 1) / static_cast<uint64_t>(s)) + 1;
  } else {
    auto clamp = [n](int64_t v) { return v < 0 ? std::max<int64_t>(v + n, -1) : std::min(v, n - 1); };
    b = clamp(b);
    e = clamp(e);
    const uint64_t mag = static_cast<uint64_t>(-(s + 1)) + 1;
    if (b > e) count = static_cast<int64_t>(static_cast<uint64_t>(b - e - 1) / mag) + 1;
  }
  return {count > 0 ? b : 0, s, count};
}

// The per-axis slices of x[begin:end:strides] over `shape`; axes past the lists are taken whole.
std::vector<AxisSlice> strided_slices(const InferCtx& c, const Shape& shape, const char* what) {
  const IntList begin = c.attrs.get_ints("begin"), end = c.attrs.get_ints("end"),
                strides = c.attrs.get_ints("strides");
  if (begin.size() != end.size() || begin.size() != strides.size()) {
    c.value_error("'begin' " + ints_str(begin) + ", 'end' " + ints_str(end) + " and 'strides' " + ints_str(strides) +
                  " must have the same length");
  }
  if (begin.size() > shape.size()) {
    c.shape_error("'begin' " + ints_str(begin) + " has " + std::to_string(begin.size()) + " entries but " + what +
                  " of shape " + shape_str(shape) + " has rank " + std::to_string(shape.size()));
  }
  std::vector<AxisSlice> out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i < begin.size()) {
      if (strides[i] == 0) c.value_error("'strides' " + ints_str(strides) + " has a zero step on axis " + std::to_string(i));
      out.push_back(python_slice(begin[i], end[i], strides[i], shape[i]));
    } else {
      out.push_back({0, 1, shape[i]});
    }
  }
  return out;
}

// Offset and strides (in elements of a row-major tensor of `shape`) of the elements the slices select.
int64_t slice_layout(const Shape& shape, const std::vector<AxisSlice>& sl, std::vector<int64_t>* strides) {
  const std::vector<int64_t> rm = row_major_strides(shape);
  int64_t offset = 0;
  strides->resize(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    offset += sl[i].start * rm[i];
    // A step matters only where the axis yields two elements or more, and then it is shorter than the axis (a
    // step past every size, e.g. -9223372036854775807, times the stride would overflow).
    (*strides)[i] = sl[i].count > 1 ? sl[i].step * rm[i] : 0;
  }
  return offset;
}

Shape counts_of(const std::vector<AxisSlice>& sl) {
  Shape out;
  for (const auto& s : sl) out.push_back(s.count);
  return out;
}

void strided_slice_kernel(KernelCtx& c) {
  const Tensor& x = c.inputs[0];
  const InferCtx ic{c.op, c.inputs, c.attrs};
  std::vector<int64_t> src;
  const int64_t offset = slice_layout(x.shape(), strided_slices(ic, x.shape(), "'x'"), &src);
  cpu::copy_block(x, offset, src, c.out, 0, row_major_strides(c.out_shape), c.out_shape);
}

Shape grad_target_shape(const InferCtx& c) {
  const Shape shape = c.attrs.get_ints("shape");
  for (int64_t d : shape) {
    if (d < 0) c.value_error("'shape' " + shape_str(shape) + " has the negative dimension " + std::to_string(d));
  }
  return shape;
}

Shape strided_slice_grad_shape(const InferCtx& c) {
  const Shape shape = grad_target_shape(c);
  const Shape expect = counts_of(strided_slices(c, shape, "'shape'"));
  if (c.input(0).shape() != expect) {
    c.shape_error("'dout' of shape " + shape_str(c.input(0).shape()) + " does not match the slice shape " +
                  shape_str(expect) + " of 'shape' " + shape_str(shape));
  }
  return shape;
}

void strided_slice_grad_kernel(KernelCtx& c) {
  const Tensor& dout = c.inputs[0];
  const InferCtx ic{c.op, c.inputs, c.attrs};
  std::vector<int64_t> dst;
  const int64_t offset = slice_layout(c.out_shape, strided_slices(ic, c.out_shape, "'shape'"), &dst);
  cpu::fill_tensor(c.out, 0.0);
  cpu::copy_block(dout, 0, row_major_strides(dout.shape()), c.out, offset, dst, dout.shape());
}

// ---- gather / gather_grad ----

// The indices as int64 in [0, dim), negative ones counted from the end; ValueError naming a bad one.
std::vector<int64_t> checked_indices(const std::string& op, const Tensor& indices, int64_t dim, int64_t axis,
                                     const char* arg, const Shape& shape) {
  const int32_t* p = indices.data<int32_t>();
  std::vector<int64_t> out(static_cast<size_t>(indices.numel()));
  for (size_t k = 0; k < out.size(); ++k) {
    int64_t v = p[k];
    if (v < -dim || v >= dim) {
      throw ValueError("For '" + op + "', index " + std::to_string(v) + " (at flat position " + std::to_string(k) +
                       " of 'indices') is out of range for axis " + std::to_string(axis) + " of size " +
                       std::to_string(dim) + " of " + arg + " of shape " + shape_str(shape));
    }
    out[k] = v < 0 ? v + dim : v;
  }
  return out;
}

Shape gather_shape(const InferCtx& c) {
  const Shape& xs = c.input(0).shape();
  const Shape& is = c.input(1).shape();
  if (xs.empty()) c.shape_error("'x' must have at least one axis, got shape ()");
  const size_t axis = static_cast<size_t>(normalize_axis(c.attrs.get_int("axis"), c.input(0).dim(), c.op.name));
  Shape out(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(axis));
  out.insert(out.end(), is.begin(), is.end());
  out.insert(out.end(), xs.begin() + static_cast<std::ptrdiff_t>(axis) + 1, xs.end());
  return out;
}

template <typename E>
void gather_rows(const E* x, E* out, const std::vector<int64_t>& idx, int64_t outer, int64_t dim, int64_t inner) {
  const int64_t k_count = static_cast<int64_t>(idx.size());
  cpu::parallel_for(outer * k_count, std::max<int64_t>(1, cpu::kParallelGrain / std::max<int64_t>(inner, 1)),
                    [&](int64_t b, int64_t e) {
                      int64_t o = b / k_count, k = b % k_count;
                      if (inner == 1) {  // one element per index: a plain indexed load
                        for (int64_t r = b; r < e;) {
                          const E* row = x + o * dim;
                          const int64_t stop = std::min(e, r + (k_count - k));
                          for (; r < stop; ++r, ++k) out[r] = row[idx[static_cast<size_t>(k)]];
                          k = 0;
                          ++o;
                        }
                        return;
                      }
                      for (int64_t r = b; r < e; ++r) {
                        const E* src = x + (o * dim + idx[static_cast<size_t>(k)]) * inner;
                        E* dst = out + r * inner;
                        std::memcpy(dst, src, static_cast<size_t>(inner) * sizeof(E));
                        if (++k == k_count) {
                          k = 0;
                          ++o;
                        }
                      }
                    });
}

void gather_kernel(KernelCtx& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& indices = c.inputs[1];
  const int64_t axis = normalize_axis(c.attrs.get_int("axis"), x.dim(), c.op.name);
  const Shape& xs = x.shape();
  const int64_t dim = xs[static_cast<size_t>(axis)];
  const std::vector<int64_t> idx = checked_indices(c.op.name, indices, dim, axis, "'x'", xs);
  if (c.out.numel() == 0) return;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= xs[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < xs.size(); ++i) inner *= xs[i];
  switch (dtype_size(x.dtype())) {
    case 1: gather_rows(x.data<uint8_t>(), c.out.data<uint8_t>(), idx, outer, dim, inner); break;
    case 4: gather_rows(x.data<uint32_t>(), c.out.data<uint32_t>(), idx, outer, dim, inner); break;
    default: gather_rows(x.data<uint64_t>(), c.out.data<uint64_t>(), idx, outer, dim, inner); break;
  }
}

// gather_grad's axis in its output, whose rank is dout.rank - indices.rank + 1.
int64_t gather_grad_axis(const std::string& op, const Attrs& a, int64_t dout_rank, int64_t idx_rank) {
  return normalize_axis(a.get_int("axis"), dout_rank - idx_rank + 1, op);
}

Shape gather_grad_shape(const InferCtx& c) {
  const Shape& ds = c.input(0).shape();
  const Shape& is = c.input(1).shape();
  const int64_t dim_size = c.attrs.get_int("dim_size");
  if (dim_size < 0) c.value_error("'dim_size' must be non-negative, got " + std::to_string(dim_size));
  const int64_t out_rank = c.input(0).dim() - c.input(1).dim() + 1;
  if (out_rank < 1) {
    c.shape_error("'dout' of shape " + shape_str(ds) + " has a lower rank than 'indices' of shape " + shape_str(is));
  }
  const size_t axis = static_cast<size_t>(gather_grad_axis(c.op.name, c.attrs, c.input(0).dim(), c.input(1).dim()));
  if (!std::equal(is.begin(), is.end(), ds.begin() + static_cast<std::ptrdiff_t>(axis))) {
    c.shape_error("'dout' of shape " + shape_str(ds) + " does not hold 'indices' of shape " + shape_str(is) +
                  " at axis " + std::to_string(axis));
  }
  Shape out(ds.begin(), ds.begin() + static_cast<std::ptrdiff_t>(axis));
  out.push_back(dim_size);
  out.insert(out.end(), ds.begin() + static_cast<std::ptrdiff_t>(axis + is.size()), ds.end());
  return out;
}

void gather_grad_kernel(KernelCtx& c) {
  const Tensor& dout = c.inputs[0];
  const Tensor& indices = c.inputs[1];
  const int64_t axis = gather_grad_axis(c.op.name, c.attrs, dout.dim(), indices.dim());
  const int64_t dim = c.out_shape[static_cast<size_t>(axis)];
  const std::vector<int64_t> idx = checked_indices(c.op.name, indices, dim, axis, "the output", c.out_shape);
  cpu::fill_tensor(c.out, 0.0);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= c.out_shape[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < c.out_shape.size(); ++i) inner *= c.out_shape[i];
  const int64_t k_count = static_cast<int64_t>(idx.size());
  if (c.out.numel() == 0 || k_count == 0 || inner == 0) return;
  // Work units: (outer index, block of inner columns). Each unit owns its output elements, so repeated indices
  // accumulate without races; columns are split when there are too few outer rows to keep the threads busy.
  const int64_t threads = cpu::num_threads();
  const int64_t col_block =
      outer >= threads ? inner : std::min(inner, std::max<int64_t>(64, (inner + threads - 1) / threads));
  const int64_t blocks = (inner + col_block - 1) / col_block;
  visit_float(c.out_dtype, [&]<typename T>() {
    const T* pd = dout.data<T>();
    T* po = c.out.data<T>();
    cpu::parallel_for(outer * blocks, std::max<int64_t>(1, cpu::kParallelGrain / (k_count * col_block)),
                      [&](int64_t b, int64_t e) {
                        for (int64_t u = b; u < e; ++u) {
                          const int64_t o = u / blocks, c0 = (u % blocks) * col_block,
                                        c1 = std::min(inner, c0 + col_block);
                          if (inner == 1) {  // one element per index: a plain indexed add
                            const T* src = pd + o * k_count;
                            T* dst = po + o * dim;
                            for (int64_t k = 0; k < k_count; ++k) dst[idx[static_cast<size_t>(k)]] += src[k];
                            continue;
                          }
                          for (int64_t k = 0; k < k_count; ++k) {
                            const T* src = pd + (o * k_count + k) * inner;
                            T* dst = po + (o * dim + idx[static_cast<size_t>(k)]) * inner;
                            for (int64_t j = c0; j < c1; ++j) dst[j] += src[j];
                          }
                        }
                      });
  });
}

}  // namespace

void register_index_ops(Registry& r) {
  {
    OpDef op;
    op.name = "slice";
    op.family = "index";
    op.inputs = {{"x"}};
    op.attrs = {{"begin", AttrKind::IntList, std::monostate{}, true}, {"size", AttrKind::IntList, std::monostate{}, true}};
    op.infer_shape = slice_shape;
    op.infer_dtype = same_dtype;
    op.cpu(slice_kernel);
    // slice: dx = pad(dout, [[begin, dim - begin - size], ...]) (zeros outside the slice)
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
      const Shape& xs = c.input(0).shape();
      const IntList begin = c.attrs.get_ints("begin");
      IntMatrix p;
      for (size_t i = 0; i < xs.size(); ++i) p.push_back({begin[i], xs[i] - begin[i] - c.dout.shape()[i]});
      return {ops::pad(c.dout, p, 0.0)};
    };
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "strided_slice";
    op.family = "index";
    op.inputs = {{"x"}};
    op.attrs = {{"begin", AttrKind::IntList, std::monostate{}, true},
                {"end", AttrKind::IntList, std::monostate{}, true},
                {"strides", AttrKind::IntList, std::monostate{}, true}};
    op.infer_shape = [](const InferCtx& c) { return counts_of(strided_slices(c, c.input(0).shape(), "'x'")); };
    op.infer_dtype = same_dtype;
    op.cpu(strided_slice_kernel);
    // strided_slice: dx = zeros of x.shape with dout written at the sliced positions
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
      return {strided_slice_grad(c.dout, c.input(0).shape(), c.attrs.get_ints("begin"), c.attrs.get_ints("end"),
                                 c.attrs.get_ints("strides"))};
    };
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "strided_slice_grad";
    op.family = "index";
    op.inputs = {{"dout"}};
    op.attrs = {{"shape", AttrKind::IntList, std::monostate{}, true},
                {"begin", AttrKind::IntList, std::monostate{}, true},
                {"end", AttrKind::IntList, std::monostate{}, true},
                {"strides", AttrKind::IntList, std::monostate{}, true}};
    op.infer_shape = strided_slice_grad_shape;
    op.infer_dtype = same_dtype;
    op.cpu(strided_slice_grad_kernel);
    // strided_slice_grad is linear in dout: d(dout) = strided_slice(ddx, begin, end, strides)
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
      return {ops::strided_slice(c.dout, c.attrs.get_ints("begin"), c.attrs.get_ints("end"),
                                 c.attrs.get_ints("strides"))};
    };
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "gather";
    op.family = "index";
    op.inputs = {{"x"}, {"indices"}};
    op.attrs = {{"axis", AttrKind::Int, int64_t{0}}};
    op.infer_shape = gather_shape;
    op.infer_dtype = [](const InferCtx& c) {
      require_int(c, 1);
      return c.input(0).dtype();
    };
    op.cpu(gather_kernel);
    // gather: dx = scatter-add of dout into zeros of x.shape at the indices along axis (indices: no gradient)
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
      const Tensor& x = c.input(0);
      const int64_t axis = normalize_axis(c.attrs.get_int("axis"), x.dim(), "gather");
      return {gather_grad(c.dout, c.input(1), axis, x.shape()[static_cast<size_t>(axis)])};
    };
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "gather_grad";
    op.family = "index";
    op.inputs = {{"dout"}, {"indices"}};
    op.attrs = {{"axis", AttrKind::Int, int64_t{0}}, {"dim_size", AttrKind::Int, std::monostate{}, true}};
    op.infer_shape = gather_grad_shape;
    op.infer_dtype = [](const InferCtx& c) {
      require_float(c, 0);
      require_int(c, 1);
      return c.input(0).dtype();
    };
    op.cpu(gather_grad_kernel);
    // gather_grad is linear in dout: d(dout) = gather(ddx, indices, axis)
    op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
      const int64_t axis = gather_grad_axis("gather_grad", c.attrs, c.input(0).dim(), c.input(1).dim());
      return {ops::gather(c.dout, c.input(1), axis)};
    };
    r.add(std::move(op));
  }
}

}  // namespace bprop
