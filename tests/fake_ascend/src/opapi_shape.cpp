// libopapi.so (fake), part 3: shape and data movement — expand (broadcast to a size), permute, cat (of an
// aclTensorList), stack, flip, repeat (torch.repeat), constant padding. Every dtype the fake knows; the kernels
// copy element by element through the views.
#include <algorithm>

#include "opapi_common.h"

namespace fake_ascend {
namespace {

#define FA_ALL_TYPES                                                                                      \
  {                                                                                                       \
    ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_INT8, ACL_UINT8, ACL_INT16, ACL_UINT16, ACL_INT32, \
        ACL_UINT32, ACL_INT64, ACL_UINT64, ACL_BOOL                                                       \
  }

// torch.expand: `size` may add leading dimensions (which must be given); -1 keeps a dimension of self; a dimension
// of self may only grow from 1.
bool expand_shape(Op& op, const Shape& in, const std::vector<int64_t>& size, Shape* out) {
  if (!op.check(size.size() >= in.size(),
                "size " + shape_str(size) + " has fewer dimensions than self " + shape_str(in))) {
    return false;
  }
  const size_t lead = size.size() - in.size();
  out->assign(size.size(), 0);
  for (size_t i = 0; i < size.size(); ++i) {
    if (i < lead) {
      if (!op.check(size[i] >= 0, "size " + shape_str(size) + ": the new leading dimension " + std::to_string(i) +
                                      " must be given (not " + std::to_string(size[i]) + ")")) {
        return false;
      }
      (*out)[i] = size[i];
      continue;
    }
    const int64_t d = in[i - lead], s = size[i] == -1 ? d : size[i];
    if (!op.check(s >= 0 && (s == d || d == 1), "self shape " + shape_str(in) + " cannot be expanded to size " +
                                                    shape_str(size) + " (dimension " + std::to_string(i) + ": " +
                                                    std::to_string(d) + " to " + std::to_string(size[i]) + ")")) {
      return false;
    }
    (*out)[i] = s;
  }
  return true;
}

// `dims` a permutation of the axes of a `rank`-d tensor (negative dims count from the end) -> axes in [0, rank).
bool permutation(Op& op, const std::vector<int64_t>& dims, size_t rank, std::vector<int64_t>* axes) {
  if (!op.check(dims.size() == rank, "dims " + shape_str(dims) + " must have one entry per dimension of self (" +
                                         std::to_string(rank) + ")")) {
    return false;
  }
  std::vector<bool> seen(rank, false);
  axes->clear();
  for (int64_t d : dims) {
    int64_t ax = 0;
    if (!op.axis("dims entry", d, rank, &ax)) return false;
    if (!op.check(!seen[ax], "dims " + shape_str(dims) + " names dimension " + std::to_string(ax) + " twice")) {
      return false;
    }
    seen[ax] = true;
    axes->push_back(ax);
  }
  return true;
}

}  // namespace
}  // namespace fake_ascend

using namespace fake_ascend;

extern "C" {

FA_EXPORT aclnnStatus aclnnExpandGetWorkspaceSize(const aclTensor* self, const aclIntArray* size, aclTensor* out,
                                                  uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnExpand", ws, ex);
  TDesc a, o;
  std::vector<int64_t> sz;
  Shape shape;
  op.tensor(self, "self", &a, false);
  op.int_array(size, "size", &sz);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, FA_ALL_TYPES);
  if (op.status() || !expand_shape(op, a.shape, sz, &shape)) return op.status();
  op.shape_is("out", o, shape);
  op.dtype_is("out", o, a.dtype);
  if (op.status()) return op.status();
  const TDesc A = broadcast_view(a, shape);
  return op.finish(0, [=](uint8_t*, uint64_t) { copy_view(A, o); });
}

FA_EXPORT aclnnStatus aclnnPermuteGetWorkspaceSize(const aclTensor* self, const aclIntArray* dims, aclTensor* out,
                                                   uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnPermute", ws, ex);
  TDesc a, o;
  std::vector<int64_t> d, axes;
  op.tensor(self, "self", &a, false);
  op.int_array(dims, "dims", &d);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, FA_ALL_TYPES);
  if (op.status() || !permutation(op, d, a.ndim(), &axes)) return op.status();
  TDesc view = a;
  for (size_t i = 0; i < axes.size(); ++i) {
    view.shape[i] = a.shape[axes[i]];
    view.strides[i] = a.strides[axes[i]];
  }
  op.shape_is("out", o, view.shape);
  op.dtype_is("out", o, a.dtype);
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) { copy_view(view, o); });
}

FA_EXPORT aclnnStatus aclnnCatGetWorkspaceSize(const aclTensorList* tensors, int64_t dim, aclTensor* out, uint64_t* ws,
                                               aclOpExecutor** ex) {
  Op op("aclnnCat", ws, ex);
  std::vector<TDesc> ts;
  TDesc o;
  op.tensor_list(tensors, "tensors", &ts);
  op.tensor(out, "out", &o, true);
  if (op.status() || !op.check(!ts.empty(), "tensors is an empty aclTensorList")) return op.status();
  for (size_t i = 0; i < ts.size(); ++i) {
    op.dtype(("tensors[" + std::to_string(i) + "]").c_str(), ts[i].dtype, FA_ALL_TYPES);
  }
  const size_t rank = ts[0].ndim();
  int64_t ax = 0;
  if (!op.check(rank >= 1, "tensors[0] is 0-d: zero-dimensional tensors cannot be concatenated") ||
      !op.axis("dim", dim, rank, &ax)) {
    return op.status();
  }
  Shape shape = ts[0].shape;
  shape[ax] = 0;
  aclDataType r = ts[0].dtype;
  for (size_t i = 0; i < ts.size(); ++i) {
    bool fits = ts[i].ndim() == rank;
    for (size_t k = 0; fits && k < rank; ++k) fits = static_cast<int64_t>(k) == ax || ts[i].shape[k] == shape[k];
    if (!op.check(fits, "tensors[" + std::to_string(i) + "] shape " + shape_str(ts[i].shape) +
                            " does not match tensors[0] shape " + shape_str(ts[0].shape) + " outside dim " +
                            std::to_string(dim))) {
      return op.status();
    }
    shape[ax] += ts[i].shape[ax];
    r = promote(r, ts[i].dtype);
  }
  op.shape_is("out", o, shape);
  op.dtype_is("out", o, r);
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) {
    int64_t at = 0;
    for (const TDesc& t : ts) {
      TDesc part = o;  // the slice of out that t fills
      part.shape = t.shape;
      part.offset = o.offset + at * o.strides[ax];
      copy_view(t, part);
      at += t.shape[ax];
    }
  });
}

// torch.stack: every tensor of one shape, a new axis `dim` in [-(rank + 1), rank]; the dtypes promote as Cat's.
FA_EXPORT aclnnStatus aclnnStackGetWorkspaceSize(const aclTensorList* tensors, int64_t dim, aclTensor* out,
                                                 uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnStack", ws, ex);
  std::vector<TDesc> ts;
  TDesc o;
  op.tensor_list(tensors, "tensors", &ts);
  op.tensor(out, "out", &o, true);
  if (op.status() || !op.check(!ts.empty(), "tensors is an empty aclTensorList")) return op.status();
  aclDataType r = ts[0].dtype;
  for (size_t i = 0; i < ts.size(); ++i) {
    op.dtype(("tensors[" + std::to_string(i) + "]").c_str(), ts[i].dtype, FA_ALL_TYPES);
    op.check(ts[i].shape == ts[0].shape, "tensors[" + std::to_string(i) + "] shape " + shape_str(ts[i].shape) +
                                             " differs from tensors[0] shape " + shape_str(ts[0].shape));
    r = promote(r, ts[i].dtype);
  }
  int64_t ax = 0;
  if (!op.axis("dim", dim, ts[0].ndim() + 1, &ax)) return op.status();
  Shape shape = ts[0].shape;
  shape.insert(shape.begin() + ax, static_cast<int64_t>(ts.size()));
  op.shape_is("out", o, shape);
  op.dtype_is("out", o, r);
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) {
    for (size_t i = 0; i < ts.size(); ++i) {
      TDesc part = o;  // out[..., i, ...] along the new axis
      part.shape.erase(part.shape.begin() + ax);
      part.strides.erase(part.strides.begin() + ax);
      part.offset = o.offset + static_cast<int64_t>(i) * o.strides[ax];
      copy_view(ts[i], part);
    }
  });
}

// torch.repeat: `repeats` has at least self's rank entries (self gains leading dimensions of 1); dimension d of out
// is self's times repeats[d].
FA_EXPORT aclnnStatus aclnnRepeatGetWorkspaceSize(const aclTensor* self, const aclIntArray* repeats, aclTensor* out,
                                                  uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnRepeat", ws, ex);
  TDesc a, o;
  std::vector<int64_t> reps;
  op.tensor(self, "self", &a, false);
  op.int_array(repeats, "repeats", &reps);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, FA_ALL_TYPES);
  if (op.status() || !op.check(reps.size() >= a.ndim(), "repeats " + shape_str(reps) + " has fewer entries than self " +
                                                            shape_str(a.shape) + " has dimensions")) {
    return op.status();
  }
  const size_t lead = reps.size() - a.ndim();
  Shape in(lead, 1), shape(reps.size());
  in.insert(in.end(), a.shape.begin(), a.shape.end());
  for (size_t d = 0; d < reps.size(); ++d) {
    if (!op.check(reps[d] >= 0, "repeats " + shape_str(reps) + " has a negative entry")) return op.status();
    shape[d] = in[d] * reps[d];
  }
  op.shape_is("out", o, shape);
  op.dtype_is("out", o, a.dtype);
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) {
    // out as [r0, d0, r1, d1, ...]: self broadcast over the r axes (stride 0), d axes with self's strides
    TDesc src = a, dst = o;
    src.shape.clear();
    src.strides.clear();
    dst.shape.clear();
    dst.strides.clear();
    for (size_t d = 0; d < reps.size(); ++d) {
      const int64_t self_stride = d < lead ? 0 : a.strides[d - lead];
      src.shape.insert(src.shape.end(), {reps[d], in[d]});
      src.strides.insert(src.strides.end(), {0, self_stride});
      dst.shape.insert(dst.shape.end(), {reps[d], in[d]});
      dst.strides.insert(dst.strides.end(), {in[d] * o.strides[d], o.strides[d]});
    }
    copy_view(src, dst);
  });
}

// torch.constant_pad_nd: `pad` holds (begin, end) pairs from the last dimension backwards, at most 2 rank entries;
// positions outside self are `value` (converted to self's dtype). Negative entries crop.
FA_EXPORT aclnnStatus aclnnConstantPadNdGetWorkspaceSize(const aclTensor* self, const aclIntArray* pad,
                                                         const aclScalar* value, aclTensor* out, uint64_t* ws,
                                                         aclOpExecutor** ex) {
  Op op("aclnnConstantPadNd", ws, ex);
  TDesc a, o;
  std::vector<int64_t> p;
  ScalarValue v;
  op.tensor(self, "self", &a, false);
  op.int_array(pad, "pad", &p);
  op.scalar(value, "value", &v);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, FA_ALL_TYPES);
  if (op.status() || !op.check(p.size() % 2 == 0 && p.size() <= 2 * a.ndim(),
                               "pad " + shape_str(p) + " must have an even length of at most twice self's rank " +
                                   std::to_string(a.ndim()))) {
    return op.status();
  }
  const size_t rank = a.ndim();
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  for (size_t k = 0; k < p.size() / 2; ++k) {
    begin[rank - 1 - k] = p[2 * k];
    end[rank - 1 - k] = p[2 * k + 1];
  }
  Shape shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    shape[d] = a.shape[d] + begin[d] + end[d];
    if (!op.check(shape[d] >= 0, "pad " + shape_str(p) + " makes dimension " + std::to_string(d) + " of self " +
                                     shape_str(a.shape) + " negative")) {
      return op.status();
    }
  }
  op.shape_is("out", o, shape);
  op.dtype_is("out", o, a.dtype);
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) {
    // fill, then copy the part of self that lies inside out
    const bool fl = is_floating(a.dtype);
    if (fl)
      store(o, std::vector<double>(static_cast<size_t>(o.numel()), v.as<double>()));
    else
      store(o, std::vector<int64_t>(static_cast<size_t>(o.numel()), v.as<int64_t>()));
    TDesc src = a, dst = o;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t lo = std::max<int64_t>(0, -begin[d]), hi = std::max<int64_t>(0, -end[d]);
      const int64_t n = std::max<int64_t>(0, a.shape[d] - lo - hi);
      src.offset += lo * a.strides[d];
      dst.offset += std::max<int64_t>(0, begin[d]) * o.strides[d];
      src.shape[d] = dst.shape[d] = n;
    }
    copy_view(src, dst);
  });
}

// out(i) = self(i with i_d -> size_d - 1 - i_d for every d in dims): a view with those strides negated.
FA_EXPORT aclnnStatus aclnnFlipGetWorkspaceSize(const aclTensor* self, const aclIntArray* dims, aclTensor* out,
                                                uint64_t* ws, aclOpExecutor** ex) {
  Op op("aclnnFlip", ws, ex);
  TDesc a, o;
  std::vector<int64_t> d;
  op.tensor(self, "self", &a, false);
  op.int_array(dims, "dims", &d);
  op.tensor(out, "out", &o, true);
  op.dtype("self", a.dtype, FA_ALL_TYPES);
  if (op.status()) return op.status();
  TDesc view = a;
  std::vector<bool> seen(a.ndim(), false);
  for (int64_t dim : d) {
    int64_t ax = 0;
    if (!op.axis("dims entry", dim, a.ndim(), &ax)) return op.status();
    if (!op.check(!seen[ax], "dims " + shape_str(d) + " names dimension " + std::to_string(ax) + " twice")) {
      return op.status();
    }
    seen[ax] = true;
    if (a.shape[ax] > 0) view.offset += (a.shape[ax] - 1) * view.strides[ax];
    view.strides[ax] = -view.strides[ax];
  }
  op.shape_is("out", o, a.shape);
  op.dtype_is("out", o, a.dtype);
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) { copy_view(view, o); });
}

FAKE_ACLNN_LAUNCH_FN(Expand)
FAKE_ACLNN_LAUNCH_FN(Flip)
FAKE_ACLNN_LAUNCH_FN(Stack)
FAKE_ACLNN_LAUNCH_FN(Repeat)
FAKE_ACLNN_LAUNCH_FN(ConstantPadNd)
FAKE_ACLNN_LAUNCH_FN(Permute)
FAKE_ACLNN_LAUNCH_FN(Cat)

}  // extern "C"
