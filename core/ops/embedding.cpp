// embedding(indices:int32, table (V, D)) -> the table's rows at the indices, shaped indices.shape + (D,).
// It is gather(table, indices, axis=0) with PyTorch's bounds (no negative indices), so its gradient is
// gather's: the scatter-add gather_grad (the indices get none).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;

Shape embedding_shape(const InferCtx& c) {
  const Shape& is = c.input(0).shape();
  const Shape& ts = c.input(1).shape();
  if (ts.size() != 2) {
    c.shape_error("argument 'table' of shape " + shape_str(ts) + " must be 2-D (num_embeddings, embedding_dim)");
  }
  Shape out = is;
  out.push_back(ts[1]);
  return out;
}

void embedding_kernel(KernelCtx& c) {
  const Tensor& indices = c.inputs[0];
  const Tensor& table = c.inputs[1];
  const int64_t rows = table.shape()[0], dim = table.shape()[1];
  const int32_t* idx = indices.data<int32_t>();
  const int64_t count = indices.numel();
  for (int64_t k = 0; k < count; ++k) {
    if (idx[k] < 0 || idx[k] >= rows) {
      throw ValueError("For 'embedding', index " + std::to_string(idx[k]) + " (at flat position " + std::to_string(k) +
                       " of 'indices' of shape " + shape_str(indices.shape()) +
                       ") is out of range for 'table' of shape " + shape_str(table.shape()) + " (expected 0.." +
                       std::to_string(rows - 1) + ")");
    }
  }
  if (c.out.numel() == 0) return;
  const size_t row_bytes = static_cast<size_t>(dim) * dtype_size(table.dtype());
  const char* src = static_cast<const char*>(table.raw_data());
  char* dst = static_cast<char*>(c.out.raw_data());
  cpu::parallel_for(count, std::max<int64_t>(1, cpu::kParallelGrain / dim), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      std::memcpy(dst + static_cast<size_t>(k) * row_bytes, src + static_cast<size_t>(idx[k]) * row_bytes, row_bytes);
    }
  });
}

}  // namespace

void register_embedding_ops(Registry& r) {
  OpDef op;
  op.name = "embedding";
  op.family = "embedding";
  op.inputs = {{"indices"}, {"table"}};
  op.infer_shape = embedding_shape;
  op.infer_dtype = [](const InferCtx& c) {
    require_int(c, 0);
    return c.input(1).dtype();
  };
  op.cpu(embedding_kernel);
  // embedding(idx, table) = gather(table, idx, 0): d table = scatter-add of dout at the indices (gather_grad)
  op.bprop = [](const BpropCtx& c) -> std::vector<Tensor> {
    static const OpDef& gather_grad = registry().get("gather_grad");
    if (!c.needs(1)) return {Tensor(), Tensor()};
    const int64_t rows = c.input(1).shape()[0];
    return {Tensor(), call_op(gather_grad, {c.dout, c.input(0)}, {{"axis", int64_t{0}}, {"dim_size", rows}})};
  };
  r.add(std::move(op));
}

}  // namespace bprop
