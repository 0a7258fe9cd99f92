// libopapi.so (fake), part 3: shape and data movement — expand (broadcast to a size), permute, cat (of an
// aclTensorList). Every dtype the fake knows; the kernels copy element by element through the views.
#include <algorithm>

#include "opapi_common.h"

namespace fake_ascend {
namespace {

#define FA_ALL_TYPES                                                                                                 \
  {                                                                                                                  \
    ACL_FLOAT, ACL_DOUBLE, ACL_INT8, ACL_UINT8, ACL_INT16, ACL_UINT16, ACL_INT32, ACL_UINT32, ACL_INT64, ACL_UINT64, \
        ACL_BOOL                                                                                                     \
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
  op.dtype("self", a.dtype, FA_ALL_TYPES, kCannAll);
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
  op.dtype("self", a.dtype, FA_ALL_TYPES, kCannAll);
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
    op.dtype(("tensors[" + std::to_string(i) + "]").c_str(), ts[i].dtype, FA_ALL_TYPES, kCannAll);
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

FAKE_ACLNN_LAUNCH_FN(Expand)
FAKE_ACLNN_LAUNCH_FN(Permute)
FAKE_ACLNN_LAUNCH_FN(Cat)

}  // extern "C"
