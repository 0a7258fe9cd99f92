// Shape ops: reshape transpose broadcast_to squeeze expand_dims concat stack tile flip pad.
// reshape, squeeze and expand_dims return views of their input; the others copy through cpu::strided_copy.
#include <algorithm>

#include "kernels/cpu/copy.h"
#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;

std::string ints_str(const IntList& v) { return attr_value_str(AttrValue(v)); }

// An "axis" attribute value back as the typed functions' Axis.
Axis axis_of(const AttrValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return Axis(*i);
  if (const auto* l = std::get_if<IntList>(&v)) return Axis(*l);
  return Axis();
}

// A reshape-like op's kernel: the output shares the input's storage.
void view_kernel(KernelCtx& c) { c.out = c.inputs[0].view(c.out_shape); }

// ---- reshape ----

Shape reshape_shape(const InferCtx& c) {
  const Tensor& x = c.input(0);
  const IntList req = c.attrs.get_ints("shape");
  Shape out = req;
  int64_t infer_at = -1, known = 1;
  for (size_t i = 0; i < req.size(); ++i) {
    if (req[i] == -1) {
      if (infer_at >= 0) c.value_error("'shape' " + ints_str(req) + " has more than one -1");
      infer_at = static_cast<int64_t>(i);
    } else if (req[i] < 0) {
      c.value_error("'shape' " + ints_str(req) + " has the negative dimension " + std::to_string(req[i]));
    } else {
      // Saturates rather than overflows: a product past every element count cannot match x's.
      known = req[i] == 0 || known == 0 ? 0 : mul_checked(known, req[i]).value_or(INT64_MAX);
    }
  }
  const int64_t n = x.numel();
  auto mismatch = [&] {
    c.shape_error("cannot reshape 'x' of shape " + shape_str(x.shape()) + " (" + std::to_string(n) +
                  " elements) into shape " + shape_str(req));
  };
  if (infer_at >= 0) {
    if (known == 0 || n % known != 0) mismatch();
    out[static_cast<size_t>(infer_at)] = n / known;
  } else if (known != n) {
    mismatch();
  }
  return out;
}

// ---- transpose ----

// perm normalised to [0, rank) (already validated by infer).
IntList perm_of(const Attrs& a, int64_t rank) {
  IntList p = a.get_ints("perm");
  for (auto& v : p) v = v < 0 ? v + rank : v;
  return p;
}

Shape transpose_shape(const InferCtx& c) {
  const Tensor& x = c.input(0);
  const IntList perm = c.attrs.get_ints("perm");
  const int64_t rank = x.dim();
  if (static_cast<int64_t>(perm.size()) != rank) {
    c.shape_error("'perm' " + ints_str(perm) + " has " + std::to_string(perm.size()) + " entries but 'x' of shape " +
                  shape_str(x.shape()) + " has rank " + std::to_string(rank));
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  Shape out(static_cast<size_t>(rank));
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < -rank || perm[i] >= rank) {
      c.shape_error("'perm' " + ints_str(perm) + " has the axis " + std::to_string(perm[i]) +
                    ", out of range for 'x' of shape " + shape_str(x.shape()));
    }
    const int64_t a = perm[i] < 0 ? perm[i] + rank : perm[i];
    if (seen[static_cast<size_t>(a)]) {
      c.value_error("'perm' " + ints_str(perm) + " names axis " + std::to_string(a) + " more than once");
    }
    seen[static_cast<size_t>(a)] = true;
    out[i] = x.shape()[static_cast<size_t>(a)];
  }
  return out;
}

void transpose_kernel(KernelCtx& c) {
  const Tensor& x = c.inputs[0];
  const IntList perm = perm_of(c.attrs, x.dim());
  const std::vector<int64_t> xs = row_major_strides(x.shape());
  std::vector<int64_t> src(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) src[i] = xs[static_cast<size_t>(perm[i])];
  cpu::copy_block(x, 0, src, c.out, 0, row_major_strides(c.out_shape), c.out_shape);
}

// ---- broadcast_to ----

Shape broadcast_to_shape(const InferCtx& c) {
  const Shape& xs = c.input(0).shape();
  const Shape target = c.attrs.get_ints("shape");
  for (int64_t d : target) {
    if (d < 0) c.value_error("'shape' " + shape_str(target) + " has the negative dimension " + std::to_string(d));
  }
  bool ok = xs.size() <= target.size();
  const size_t lead = ok ? target.size() - xs.size() : 0;
  for (size_t i = 0; ok && i < xs.size(); ++i) ok = xs[i] == target[lead + i] || xs[i] == 1;
  if (!ok) c.shape_error("cannot broadcast 'x' of shape " + shape_str(xs) + " to shape " + shape_str(target));
  return target;
}

void broadcast_to_kernel(KernelCtx& c) {
  const Tensor& x = c.inputs[0];
  cpu::copy_block(x, 0, cpu::broadcast_strides(x.shape(), c.out_shape), c.out, 0, row_major_strides(c.out_shape),
                  c.out_shape);
}

// ---- squeeze / expand_dims ----

std::vector<int64_t> squeeze_axes(const InferCtx& c) {
  const Shape& xs = c.input(0).shape();
  const int64_t rank = c.input(0).dim();
  const AttrValue& axis = c.attrs.get("axis");
  std::vector<int64_t> axes;
  if (std::holds_alternative<std::monostate>(axis)) {
    for (int64_t i = 0; i < rank; ++i) {
      if (xs[static_cast<size_t>(i)] == 1) axes.push_back(i);
    }
    return axes;
  }
  const IntList given = c.attrs.get_ints("axis");
  if (rank == 0 && !given.empty()) {
    c.shape_error("'axis' " + ints_str(given) + " is out of range for 'x' of shape ()");
  }
  axes = reduce_axes(c, axis, rank);
  for (int64_t a : axes) {
    if (xs[static_cast<size_t>(a)] != 1) {
      c.shape_error("cannot squeeze axis " + std::to_string(a) + " of 'x' of shape " + shape_str(xs) +
                    ": its size is " + std::to_string(xs[static_cast<size_t>(a)]) + ", not 1");
    }
  }
  return axes;
}

Shape squeeze_shape(const InferCtx& c) {
  const std::vector<int64_t> axes = squeeze_axes(c);
  Shape out;
  const Shape& xs = c.input(0).shape();
  for (size_t i = 0; i < xs.size(); ++i) {
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) == axes.end()) out.push_back(xs[i]);
  }
  return out;
}

Shape expand_dims_shape(const InferCtx& c) {
  const Shape& xs = c.input(0).shape();
  if (c.attrs.is_null("axis")) c.value_error("'axis' must be an int or a list of ints, got null");
  const IntList given = c.attrs.get_ints("axis");
  const int64_t out_rank = c.input(0).dim() + static_cast<int64_t>(given.size());
  if (out_rank > kMaxRank) {
    c.shape_error("'axis' " + ints_str(given) + " adds " + std::to_string(given.size()) + " axes to 'x' of shape " +
                  shape_str(xs) + ": rank " + std::to_string(out_rank) + " is more than the limit of " +
                  std::to_string(kMaxRank));
  }
  std::vector<bool> is_new(static_cast<size_t>(out_rank), false);
  for (int64_t a : given) {
    const int64_t n = normalize_axis(a, out_rank, c.op.name);
    if (is_new[static_cast<size_t>(n)]) {
      c.value_error("'axis' " + ints_str(given) + " names output axis " + std::to_string(n) + " more than once");
    }
    is_new[static_cast<size_t>(n)] = true;
  }
  Shape out;
  size_t j = 0;
  for (int64_t i = 0; i < out_rank; ++i) out.push_back(is_new[static_cast<size_t>(i)] ? 1 : xs[j++]);
  return out;
}

// ---- concat / stack ----

DType list_dtype(const InferCtx& c) {
  DType d = c.input(0).dtype();
  for (const Tensor& t : c.inputs) d = promote_types(d, t.dtype());
  return d;
}

Shape concat_shape(const InferCtx& c) {
  const Shape& s0 = c.input(0).shape();
  if (s0.empty()) c.shape_error("cannot concatenate 0-d tensors (tensor 0 has shape ())");
  const int64_t rank = static_cast<int64_t>(s0.size());
  const int64_t axis = normalize_axis(c.attrs.get_int("axis"), rank, c.op.name);
  Shape out = s0;
  for (size_t i = 1; i < c.inputs.size(); ++i) {
    const Shape& si = c.input(i).shape();
    bool ok = si.size() == s0.size();
    for (size_t d = 0; ok && d < si.size(); ++d) ok = static_cast<int64_t>(d) == axis || si[d] == s0[d];
    if (!ok) {
      c.shape_error("tensor " + std::to_string(i) + " of shape " + shape_str(si) + " does not match tensor 0 of shape " +
                    shape_str(s0) + " outside axis " + std::to_string(axis));
    }
    const auto sum = add_checked(out[static_cast<size_t>(axis)], si[static_cast<size_t>(axis)]);
    if (!sum) c.shape_error("the sizes along axis " + std::to_string(axis) + " add up to more than 2^63");
    out[static_cast<size_t>(axis)] = *sum;
  }
  return out;
}

void concat_kernel(KernelCtx& c) {
  const int64_t axis = normalize_axis(c.attrs.get_int("axis"), static_cast<int64_t>(c.out_shape.size()), c.op.name);
  const std::vector<int64_t> os = row_major_strides(c.out_shape);
  int64_t offset = 0;
  for (const Tensor& t : c.inputs) {
    const Tensor x = cpu::as_dtype(t, c.out_dtype);
    cpu::copy_block(x, 0, row_major_strides(x.shape()), c.out, offset * os[static_cast<size_t>(axis)], os, x.shape());
    offset += x.shape()[static_cast<size_t>(axis)];
  }
}

Shape stack_shape(const InferCtx& c) {
  const Shape& s0 = c.input(0).shape();
  const int64_t axis = normalize_axis(c.attrs.get_int("axis"), static_cast<int64_t>(s0.size()) + 1, c.op.name);
  for (size_t i = 1; i < c.inputs.size(); ++i) {
    if (c.input(i).shape() != s0) {
      c.shape_error("tensor " + std::to_string(i) + " of shape " + shape_str(c.input(i).shape()) +
                    " does not match tensor 0 of shape " + shape_str(s0) + " (stacked tensors need equal shapes)");
    }
  }
  Shape out = s0;
  out.insert(out.begin() + axis, static_cast<int64_t>(c.inputs.size()));
  return out;
}

void stack_kernel(KernelCtx& c) {
  const int64_t axis = normalize_axis(c.attrs.get_int("axis"), static_cast<int64_t>(c.out_shape.size()), c.op.name);
  std::vector<int64_t> dst = row_major_strides(c.out_shape);
  const int64_t step = dst[static_cast<size_t>(axis)];
  dst.erase(dst.begin() + axis);
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Tensor x = cpu::as_dtype(c.inputs[i], c.out_dtype);
    cpu::copy_block(x, 0, row_major_strides(x.shape()), c.out, static_cast<int64_t>(i) * step, dst, x.shape());
  }
}

// ---- tile ----

// x's shape and the multiples, both left-padded with 1s to one rank (NumPy's tile rule).
void tile_dims(const Shape& xs, const IntList& multiples, Shape* dims, IntList* reps) {
  const size_t rank = std::max(xs.size(), multiples.size());
  dims->assign(rank - xs.size(), 1);
  dims->insert(dims->end(), xs.begin(), xs.end());
  reps->assign(rank - multiples.size(), 1);
  reps->insert(reps->end(), multiples.begin(), multiples.end());
}

Shape tile_shape(const InferCtx& c) {
  const IntList m = c.attrs.get_ints("multiples");
  for (int64_t v : m) {
    if (v < 0) c.value_error("'multiples' " + ints_str(m) + " has the negative entry " + std::to_string(v));
  }
  Shape dims;
  IntList reps;
  tile_dims(c.input(0).shape(), m, &dims, &reps);
  Shape out(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    const auto n = mul_checked(dims[i], reps[i]);
    if (!n) {
      throw MemoryError(c.prefix() + "'multiples' " + ints_str(m) + " repeats dimension " + std::to_string(i) +
                        " of size " + std::to_string(dims[i]) + " " + std::to_string(reps[i]) +
                        " times: more than 2^63 elements");
    }
    out[i] = *n;
  }
  return out;
}

void tile_kernel(KernelCtx& c) {
  const Tensor& x = c.inputs[0];
  if (c.out.numel() == 0) return;  // (an empty dimension may come with a repeat count near 2^63)
  Shape dims;
  IntList reps;
  tile_dims(x.shape(), c.attrs.get_ints("multiples"), &dims, &reps);
  // The output as (reps[0], dims[0], reps[1], dims[1], ...): the source repeats along every reps axis.
  const std::vector<int64_t> xs = row_major_strides(dims);
  Shape inter;
  std::vector<int64_t> src;
  for (size_t i = 0; i < dims.size(); ++i) {
    inter.push_back(reps[i]);
    inter.push_back(dims[i]);
    src.push_back(0);
    src.push_back(xs[i]);
  }
  cpu::copy_block(x, 0, src, c.out, 0, row_major_strides(inter), inter);
}

// ---- flip ----

void flip_kernel(KernelCtx& c) {
  const Tensor& x = c.inputs[0];
  std::vector<int64_t> src = row_major_strides(x.shape());
  int64_t offset = 0;
  for (int64_t a : reduce_axes(c.op.name, c.attrs.get("axis"), x.dim())) {
    const size_t i = static_cast<size_t>(a);
    if (x.shape()[i] == 0) continue;
    offset += (x.shape()[i] - 1) * src[i];
    src[i] = -src[i];
  }
  cpu::copy_block(x, offset, src, c.out, 0, row_major_strides(c.out_shape), c.out_shape);
}

// ---- pad ----

Shape pad_shape(const InferCtx& c) {
  const Tensor& x = c.input(0);
  const AttrValue& pv = c.attrs.get("paddings");
  const IntMatrix& p = std::get<IntMatrix>(pv);
  if (static_cast<int64_t>(p.size()) != x.dim()) {
    c.shape_error("'paddings' " + attr_value_str(pv) + " has " + std::to_string(p.size()) +
                  " rows but 'x' of shape " + shape_str(x.shape()) + " has rank " + std::to_string(x.dim()));
  }
  Shape out = x.shape();
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i].size() != 2) {
      c.value_error("'paddings' " + attr_value_str(pv) + " must hold one [lo, hi] pair per dimension, row " +
                    std::to_string(i) + " has " + std::to_string(p[i].size()) + " entries");
    }
    if (p[i][0] < 0 || p[i][1] < 0) {
      c.value_error("'paddings' " + attr_value_str(pv) + " has a negative entry in row " + std::to_string(i));
    }
    const auto both = add_checked(p[i][0], p[i][1]);
    const auto padded = both ? add_checked(out[i], *both) : std::nullopt;
    if (!padded) {
      throw MemoryError(c.prefix() + "'paddings' row " + std::to_string(i) + " " + ints_str(p[i]) +
                        " around dimension " + std::to_string(i) + " of size " + std::to_string(out[i]) +
                        " makes more than 2^63 elements");
    }
    out[i] = *padded;
  }
  return out;
}

void pad_kernel(KernelCtx& c) {
  const Tensor& x = c.inputs[0];
  const IntMatrix& p = std::get<IntMatrix>(c.attrs.get("paddings"));
  cpu::fill_tensor(c.out, c.attrs.get_float("value"));
  const std::vector<int64_t> os = row_major_strides(c.out_shape);
  int64_t offset = 0;
  for (size_t i = 0; i < p.size(); ++i) offset += p[i][0] * os[i];
  cpu::copy_block(x, 0, row_major_strides(x.shape()), c.out, offset, os, x.shape());
}

// One row per op: its attributes, shape inference, CPU kernel and bprop (the dtype is its input's, or the list's).
struct ShapeOp {
  const char* name;
  std::vector<AttrSpec> attrs;
  InferShapeFn shape;
  KernelFn kernel;
  BpropFn bprop;
  bool view = false;      // the output shares x's storage (OpDef::allocates_output false)
  bool variadic = false;  // one list input "xs"
};
constexpr bool kView = true;
constexpr bool kList = true;

}  // namespace

void register_shape_ops(Registry& r) {
  const std::vector<ShapeOp> table = {
      // reshape: dx = reshape(dout, x.shape)
      {"reshape", {{"shape", AttrKind::IntList, std::monostate{}, true}}, reshape_shape, view_kernel,
       [](const BpropCtx& c) -> std::vector<Tensor> { return {ops::reshape(c.dout, c.input(0).shape())}; }, kView},
      // transpose: dx = transpose(dout, inverse(perm))
      {"transpose", {{"perm", AttrKind::IntList, std::monostate{}, true}}, transpose_shape, transpose_kernel,
       [](const BpropCtx& c) -> std::vector<Tensor> {
         const IntList perm = perm_of(c.attrs, c.input(0).dim());
         IntList inv(perm.size());
         for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
         return {ops::transpose(c.dout, inv)};
       }},
      // broadcast_to: dx = sum_to(dout, x.shape) (sum over the broadcast axes)
      {"broadcast_to", {{"shape", AttrKind::IntList, std::monostate{}, true}}, broadcast_to_shape, broadcast_to_kernel,
       [](const BpropCtx& c) -> std::vector<Tensor> { return {ops::sum_to(c.dout, c.input(0).shape())}; }},
      // squeeze: dx = reshape(dout, x.shape)
      {"squeeze", {{"axis", AttrKind::Axes, std::monostate{}}}, squeeze_shape, view_kernel,
       [](const BpropCtx& c) -> std::vector<Tensor> { return {ops::reshape(c.dout, c.input(0).shape())}; }, kView},
      // expand_dims: dx = reshape(dout, x.shape)
      {"expand_dims", {{"axis", AttrKind::Axes, std::monostate{}, true}}, expand_dims_shape, view_kernel,
       [](const BpropCtx& c) -> std::vector<Tensor> { return {ops::reshape(c.dout, c.input(0).shape())}; }, kView},
      // concat: dx_i = the slice of dout along axis that x_i filled
      {"concat", {{"axis", AttrKind::Int, int64_t{0}}}, concat_shape, concat_kernel,
       [](const BpropCtx& c) {
         const int64_t axis = normalize_axis(c.attrs.get_int("axis"), c.dout.dim(), "concat");
         std::vector<Tensor> dx(c.inputs.size());
         int64_t offset = 0;
         for (size_t i = 0; i < c.inputs.size(); ++i) {
           const Shape& s = c.input(i).shape();
           if (c.needs(i)) {
             IntList begin(s.size(), 0);
             begin[static_cast<size_t>(axis)] = offset;
             dx[i] = ops::slice(c.dout, begin, s);
           }
           offset += s[static_cast<size_t>(axis)];
         }
         return dx;
       },
       !kView, kList},
      // stack: dx_i = reshape(slice of dout at index i along axis, x_i.shape)
      {"stack", {{"axis", AttrKind::Int, int64_t{0}}}, stack_shape, stack_kernel,
       [](const BpropCtx& c) {
         const int64_t axis = normalize_axis(c.attrs.get_int("axis"), c.dout.dim(), "stack");
         std::vector<Tensor> dx(c.inputs.size());
         for (size_t i = 0; i < c.inputs.size(); ++i) {
           if (!c.needs(i)) continue;
           IntList begin(c.dout.shape().size(), 0);
           IntList size = c.dout.shape();
           begin[static_cast<size_t>(axis)] = static_cast<int64_t>(i);
           size[static_cast<size_t>(axis)] = 1;
           dx[i] = ops::reshape(ops::slice(c.dout, begin, size), c.input(i).shape());
         }
         return dx;
       },
       !kView, kList},
      // tile: view dout as (m0, d0, m1, d1, ...) and sum over the m axes: dx = sum(reshape(dout), m axes)
      {"tile", {{"multiples", AttrKind::IntList, std::monostate{}, true}}, tile_shape, tile_kernel,
       [](const BpropCtx& c) -> std::vector<Tensor> {
         const Shape& xs = c.input(0).shape();
         // An empty output (a zero in x's shape or in multiples) sends nothing back, and its (m0, d0, ...) view
         // could pair the zero with a repeat count near 2^63, past what a tensor's shape may hold.
         if (c.dout.numel() == 0) return {zeros(xs, c.dout.dtype())};
         Shape dims;
         IntList reps;
         tile_dims(xs, c.attrs.get_ints("multiples"), &dims, &reps);
         Shape inter;
         IntList axes;
         for (size_t i = 0; i < dims.size(); ++i) {
           if (reps[i] != 1) {
             axes.push_back(static_cast<int64_t>(inter.size()));
             inter.push_back(reps[i]);
           }
           inter.push_back(dims[i]);
         }
         Tensor g = ops::reshape(c.dout, inter);
         if (!axes.empty()) g = ops::sum(g, axes, false);
         return {g.shape() == xs ? g : ops::reshape(g, xs)};
       }},
      // flip: dx = flip(dout, axis)
      {"flip", {{"axis", AttrKind::Axes, std::monostate{}}},
       [](const InferCtx& c) {
         reduce_axes(c, c.attrs.get("axis"), c.input(0).dim());  // validates the axes
         return c.input(0).shape();
       },
       flip_kernel,
       [](const BpropCtx& c) -> std::vector<Tensor> { return {ops::flip(c.dout, axis_of(c.attrs.get("axis")))}; }},
      // pad: dx = slice(dout, lo, x.shape) (the padding value is a constant)
      {"pad", {{"paddings", AttrKind::IntMatrix, std::monostate{}, true}, {"value", AttrKind::Float, 0.0}}, pad_shape,
       pad_kernel,
       [](const BpropCtx& c) -> std::vector<Tensor> {
         const IntMatrix& p = std::get<IntMatrix>(c.attrs.get("paddings"));
         IntList begin;
         for (const auto& row : p) begin.push_back(row[0]);
         return {ops::slice(c.dout, begin, c.input(0).shape())};
       }},
  };
  for (const ShapeOp& s : table) {
    OpDef op;
    op.name = s.name;
    op.family = "shape";
    op.variadic = s.variadic;
    op.inputs = {{s.variadic ? "xs" : "x"}};
    op.attrs = s.attrs;
    op.infer_shape = s.shape;
    op.infer_dtype = s.variadic ? list_dtype : same_dtype;
    op.allocates_output = !s.view;
    op.cpu(s.kernel);
    op.bprop = s.bprop;
    op.bprop_reads_out = false;  // (every row's bprop reads dout and the inputs' shapes only)
    r.add(std::move(op));
  }
}

}  // namespace bprop
