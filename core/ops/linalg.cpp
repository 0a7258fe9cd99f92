// Linear algebra: matmul(a, b) with NumPy's semantics (1-D promotion, batches, broadcast batch dims).
#include <algorithm>

#include "kernels/cpu/blas.h"
#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;

// a (..., n, k) @ b (..., k, m) after 1-D promotion: a 1-D a is (1, k), a 1-D b is (k, 1).
struct MatmulDims {
  Shape a_batch, b_batch, batch;  // batch: the broadcast of both
  int64_t n = 1, k = 1, m = 1;
  bool a_vec = false, b_vec = false;

  Shape out_shape() const {
    Shape s = batch;
    if (!a_vec) s.push_back(n);
    if (!b_vec) s.push_back(m);
    return s;
  }
};

MatmulDims matmul_dims(const InferCtx& c) {
  const Shape& as = c.input(0).shape();
  const Shape& bs = c.input(1).shape();
  const std::string both = "'a' of shape " + shape_str(as) + " and 'b' of shape " + shape_str(bs);
  if (as.empty() || bs.empty()) c.shape_error("both arguments must have at least one dimension, got " + both);
  MatmulDims d;
  d.a_vec = as.size() == 1;
  d.b_vec = bs.size() == 1;
  d.n = d.a_vec ? 1 : as[as.size() - 2];
  d.k = as.back();
  const int64_t kb = d.b_vec ? bs[0] : bs[bs.size() - 2];
  d.m = d.b_vec ? 1 : bs.back();
  if (d.k != kb) {
    c.shape_error("the inner dimensions of " + both + " do not match (" + std::to_string(d.k) +
                  " != " + std::to_string(kb) + ")");
  }
  if (!d.a_vec) d.a_batch.assign(as.begin(), as.end() - 2);
  if (!d.b_vec) d.b_batch.assign(bs.begin(), bs.end() - 2);
  const size_t rank = std::max(d.a_batch.size(), d.b_batch.size());
  d.batch.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - d.a_batch.size() ? 1 : d.a_batch[i - (rank - d.a_batch.size())];
    const int64_t y = i < rank - d.b_batch.size() ? 1 : d.b_batch[i - (rank - d.b_batch.size())];
    if (x != y && x != 1 && y != 1) c.shape_error("the batch dimensions of " + both + " do not broadcast");
    d.batch[i] = x == 1 ? y : x;
  }
  return d;
}

// Every output batch's a (n, k) @ b (k, m), row-major; the GEMMs go through cpu::gemm (OpenBLAS when large).
template <typename T>
void matmul_impl(const T* a, const T* b, T* c, const MatmulDims& d) {
  using cpu::Trans;
  const int64_t nb = shape_numel(d.batch);
  if (nb == 0 || d.n == 0 || d.m == 0) return;
  if (shape_numel(d.b_batch) == 1) {
    // One b for every batch: a's batches stack into the rows of a single GEMM.
    cpu::gemm_threaded<Trans::No, Trans::No>(nb * d.n, d.m, d.k, a, d.k, b, d.m, T(0), c, d.m);
    return;
  }
  // Offsets (in matrices) of each output batch's a and b.
  std::vector<int64_t> a_off(static_cast<size_t>(nb)), b_off(static_cast<size_t>(nb));
  const std::vector<int64_t> strides[2] = {cpu::broadcast_strides(d.a_batch, d.batch),
                                           cpu::broadcast_strides(d.b_batch, d.batch)};
  cpu::for_each_broadcast<2>(d.batch, strides, [&](int64_t o, const int64_t* off) {
    a_off[static_cast<size_t>(o)] = off[0];
    b_off[static_cast<size_t>(o)] = off[1];
  });
  const int64_t a_mat = d.n * d.k, b_mat = d.k * d.m, c_mat = d.n * d.m;
  auto a_of = [&](int64_t i) { return a + a_off[static_cast<size_t>(i)] * a_mat; };
  auto b_of = [&](int64_t i) { return b + b_off[static_cast<size_t>(i)] * b_mat; };
  const int64_t cost = std::max<int64_t>(1, d.n * d.k * d.m);
  if (nb >= cpu::num_threads() || cost < cpu::kGemmGrain) {
    // Batches enough for every thread, or too small to split: whole GEMMs, the batches split over the threads.
    cpu::parallel_for(nb, std::max<int64_t>(1, cpu::kGemmGrain / cost), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) {
        cpu::gemm<Trans::No, Trans::No>(d.n, d.m, d.k, a_of(i), d.k, b_of(i), d.m, T(0), c + i * c_mat, d.m);
      }
    });
    return;
  }
  for (int64_t i = 0; i < nb; ++i) {
    cpu::gemm_threaded<Trans::No, Trans::No>(d.n, d.m, d.k, a_of(i), d.k, b_of(i), d.m, T(0), c + i * c_mat, d.m);
  }
}

void matmul_kernel(KernelCtx& c) {
  const MatmulDims d = matmul_dims(InferCtx{c.op, c.inputs, c.attrs});
  const Tensor a = cpu::as_dtype(c.inputs[0], c.out_dtype);
  const Tensor b = cpu::as_dtype(c.inputs[1], c.out_dtype);
  visit_dtype(c.out_dtype, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) matmul_impl(a.data<T>(), b.data<T>(), c.out.data<T>(), d);
  });
}

// t with its last two axes swapped.
Tensor swap_last2(const Tensor& t) {
  IntList perm;
  for (int64_t i = 0; i < t.dim(); ++i) perm.push_back(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return ops::transpose(t, perm);
}

// matmul: with 1-D operands promoted to matrices, dA = dout B^T and dB = A^T dout, summed over broadcast
// batch dims and reshaped back to 1-D where promoted.
std::vector<Tensor> matmul_bprop(const BpropCtx& c) {
  const Tensor &a = c.input(0), &b = c.input(1);
  const bool a_vec = a.dim() == 1, b_vec = b.dim() == 1;
  const int64_t k = a.shape().back();
  const Tensor a2 = a_vec ? ops::reshape(a, {1, k}) : a;
  const Tensor b2 = b_vec ? ops::reshape(b, {k, 1}) : b;
  Shape s = c.dout.shape();  // batch + (n, m) with the promoted unit dims restored
  if (b_vec) s.push_back(1);
  if (a_vec) s.insert(s.end() - 1, 1);
  const Tensor dout = c.dout.shape() == s ? c.dout : ops::reshape(c.dout, s);
  Tensor da, db;
  if (c.needs(0)) {
    da = ops::sum_to(ops::matmul(dout, swap_last2(b2)), a2.shape());
    if (a_vec) da = ops::reshape(da, a.shape());
  }
  if (c.needs(1)) {
    if (b2.dim() == 2 && a2.dim() > 2) {
      // b is shared by every batch: one GEMM over the stacked rows, (rows, k)^T (rows, m).
      const int64_t rows = shape_numel(Shape(a2.shape().begin(), a2.shape().end() - 1));
      const int64_t m = s.back();
      db = ops::matmul(swap_last2(ops::reshape(a2, {rows, k})), ops::reshape(dout, {rows, m}));
    } else {
      db = ops::sum_to(ops::matmul(swap_last2(a2), dout), b2.shape());
    }
    if (b_vec) db = ops::reshape(db, b.shape());
  }
  return {da, db};
}

}  // namespace

void register_linalg_ops(Registry& r) {
  OpDef op;
  op.name = "matmul";
  op.family = "linalg";
  op.inputs = {{"a"}, {"b"}};
  op.infer_shape = [](const InferCtx& c) { return matmul_dims(c).out_shape(); };
  op.infer_dtype = promote_dtype;
  op.cpu(matmul_kernel);
  op.bprop = matmul_bprop;
  r.add(std::move(op));
}

}  // namespace bprop
