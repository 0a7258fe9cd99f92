// Linear algebra: matmul(a, b) with NumPy's semantics (1-D promotion, batches, broadcast batch dims), and the
// internal matmul_t(a, b, transpose_a, transpose_b) its bprop runs on (MindSpore's MatMul attributes): the
// transposes of dA = dout B^T and dB = A^T dout become GEMM flags instead of copies. bfloat16 products run on
// oneDNN when it is there (a half fast path, OpDef::cpu_half); other half calls compute on float32 copies.
#include <algorithm>

#include "kernels/cpu/blas.h"
#include "kernels/cpu/onednn.h"
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

// d.batch: the broadcast of a's and b's batch dimensions.
void broadcast_batches(const InferCtx& c, MatmulDims& d, const std::string& both) {
  const size_t rank = std::max(d.a_batch.size(), d.b_batch.size());
  d.batch.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - d.a_batch.size() ? 1 : d.a_batch[i - (rank - d.a_batch.size())];
    const int64_t y = i < rank - d.b_batch.size() ? 1 : d.b_batch[i - (rank - d.b_batch.size())];
    if (x != y && x != 1 && y != 1) c.shape_error("the batch dimensions of " + both + " do not broadcast");
    d.batch[i] = x == 1 ? y : x;
  }
}

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
  broadcast_batches(c, d, both);
  return d;
}

// matmul_t: a (..., n, k), or (..., k, n) when transpose_a; b (..., k, m), or (..., m, k) when transpose_b.
MatmulDims matmul_t_dims(const InferCtx& c) {
  const Shape& as = c.input(0).shape();
  const Shape& bs = c.input(1).shape();
  const bool ta = c.attrs.get_bool("transpose_a"), tb = c.attrs.get_bool("transpose_b");
  const std::string both = "'a' of shape " + shape_str(as) + " and 'b' of shape " + shape_str(bs);
  if (as.size() < 2 || bs.size() < 2) c.shape_error("both arguments must have at least two dimensions, got " + both);
  MatmulDims d;
  const int64_t ar = as[as.size() - 2], ac = as.back(), br = bs[bs.size() - 2], bc = bs.back();
  d.n = ta ? ac : ar;
  d.k = ta ? ar : ac;
  const int64_t kb = tb ? bc : br;
  d.m = tb ? br : bc;
  if (d.k != kb) {
    c.shape_error("the inner dimensions of " + both + " (transpose_a " + (ta ? "true" : "false") + ", transpose_b " +
                  (tb ? "true" : "false") + ") do not match (" + std::to_string(d.k) + " != " + std::to_string(kb) + ")");
  }
  d.a_batch.assign(as.begin(), as.end() - 2);
  d.b_batch.assign(bs.begin(), bs.end() - 2);
  broadcast_batches(c, d, both);
  return d;
}

// The GEMMs of a matmul on operands and output of one type T: cpu::gemm (OpenBLAS when large) on the calling
// thread, or cpu::gemm_threaded over the threads.
template <typename T>
struct StoredTypeGemm {
  using In = T;
  using Out = T;
  static constexpr int64_t kGrain = cpu::kGemmGrain;
  template <cpu::Trans TA, cpu::Trans TB>
  void one(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
           int64_t ldc) const {
    cpu::gemm<TA, TB>(m, n, k, a, lda, b, ldb, T(0), c, ldc);
  }
  template <cpu::Trans TA, cpu::Trans TB>
  void threaded(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
                int64_t ldc) const {
    cpu::gemm_threaded<TA, TB>(m, n, k, a, lda, b, ldb, T(0), c, ldc);
  }
};

// The GEMMs of a bfloat16 matmul on oneDNN (cpu::bf16_gemm_rounded): bfloat16 operands, float32 sums rounded once
// into the bfloat16 output, as on the widened path.
struct Bf16Gemm {
  using In = BFloat16;
  using Out = BFloat16;
  // Multiply-adds from which a GEMM is split over the threads: far more than cpu::kGemmGrain, as AMX runs about
  // 2^18 of them per microsecond and each piece repacks the shared operand. Measured on a 2-core VM, where handing
  // work to the pool costs about 100 us: two threads lost up to 512^3 (a 512^3 product took 1.2x as long split in
  // two) and won from 768^3 (1.3x faster), 4 x 384^3 stacked.
  static constexpr int64_t kGrain = int64_t{1} << 27;

  template <cpu::Trans TA, cpu::Trans TB>
  void one(int64_t m, int64_t n, int64_t k, const BFloat16* a, int64_t lda, const BFloat16* b, int64_t ldb,
           BFloat16* c, int64_t ldc) const {
    cpu::bf16_gemm_rounded(TA == cpu::Trans::Yes, TB == cpu::Trans::Yes, m, n, k, a, lda, b, ldb, c, ldc);
  }
  // The rows of C (or its columns, when there are more of them) split over the threads, as cpu::gemm_threaded does.
  template <cpu::Trans TA, cpu::Trans TB>
  void threaded(int64_t m, int64_t n, int64_t k, const BFloat16* a, int64_t lda, const BFloat16* b, int64_t ldb,
                BFloat16* c, int64_t ldc) const {
    using cpu::Trans;
    if (m >= n) {
      const int64_t row_cost = std::max<int64_t>(1, n * k);
      cpu::parallel_for(m, std::max<int64_t>(1, kGrain / row_cost), [&](int64_t r0, int64_t r1) {
        one<TA, TB>(r1 - r0, n, k, a + (TA == Trans::Yes ? r0 : r0 * lda), lda, b, ldb, c + r0 * ldc, ldc);
      });
    } else {
      const int64_t col_cost = std::max<int64_t>(1, m * k);
      cpu::parallel_for(n, std::max<int64_t>(1, kGrain / col_cost), [&](int64_t c0, int64_t c1) {
        one<TA, TB>(m, c1 - c0, k, a, lda, b + (TB == Trans::Yes ? c0 * ldb : c0), ldb, c + c0, ldc);
      });
    }
  }
};

// Every output batch's op(a) @ op(b), row-major, where op transposes a stored (k, n) a when TA and a stored (m, k)
// b when TB; the GEMMs go through `g` (StoredTypeGemm or Bf16Gemm).
template <cpu::Trans TA, cpu::Trans TB, typename G>
void matmul_impl(const typename G::In* a, const typename G::In* b, typename G::Out* c, const MatmulDims& d,
                 const G& g) {
  using cpu::Trans;
  const int64_t nb = shape_numel(d.batch);
  if (nb == 0 || d.n == 0 || d.m == 0) return;
  const int64_t lda = TA == Trans::Yes ? d.n : d.k, ldb = TB == Trans::Yes ? d.k : d.m;
  if (TA == Trans::No && shape_numel(d.b_batch) == 1 && shape_numel(d.a_batch) == nb) {
    // One b for every batch: a's batches stack into the rows of a single GEMM.
    g.template threaded<Trans::No, TB>(nb * d.n, d.m, d.k, a, lda, b, ldb, c, d.m);
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
  if (nb >= cpu::num_threads() || cost < G::kGrain) {
    // Batches enough for every thread, or too small to split: whole GEMMs, the batches split over the threads.
    cpu::parallel_for(nb, std::max<int64_t>(1, G::kGrain / cost), [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) {
        g.template one<TA, TB>(d.n, d.m, d.k, a_of(i), lda, b_of(i), ldb, c + i * c_mat, d.m);
      }
    });
    return;
  }
  for (int64_t i = 0; i < nb; ++i) {
    g.template threaded<TA, TB>(d.n, d.m, d.k, a_of(i), lda, b_of(i), ldb, c + i * c_mat, d.m);
  }
}

// matmul_impl with the transposes as values.
template <typename G>
void matmul_dispatch(bool ta, bool tb, const typename G::In* a, const typename G::In* b, typename G::Out* c,
                     const MatmulDims& d, const G& g) {
  using cpu::Trans;
  if (ta && tb) matmul_impl<Trans::Yes, Trans::Yes>(a, b, c, d, g);
  else if (ta) matmul_impl<Trans::Yes, Trans::No>(a, b, c, d, g);
  else if (tb) matmul_impl<Trans::No, Trans::Yes>(a, b, c, d, g);
  else matmul_impl<Trans::No, Trans::No>(a, b, c, d, g);
}

// Multiply-adds per product below which a bfloat16 matmul stays on the widened path, where oneDNN's fixed cost per
// call makes it no faster: measured on one thread, a whole matmul call took 1.6 us on oneDNN and 1.4 us widened at
// 16^3, 1.7 and 1.9 us at 24^3, 3.5 and 8.1 us at 64^3. (Declining here is not a fallback: nothing is counted.)
constexpr int64_t kBf16MinMacs = int64_t{1} << 13;

// The half fast path of matmul and matmul_t: bfloat16 operands and output on oneDNN. Declines (false) anything
// else, and when oneDNN is missing counts the products that then run widened to float32.
bool matmul_bf16(KernelCtx& c, const MatmulDims& d, bool ta, bool tb) {
  if (c.out_dtype != DType::BFloat16 || c.inputs[0].dtype() != DType::BFloat16 ||
      c.inputs[1].dtype() != DType::BFloat16) {
    return false;
  }
  if (d.n * d.k * d.m < kBf16MinMacs) return false;
  const int64_t products = shape_numel(d.batch);
  if (!cpu::bf16_gemm_available()) {
    cpu::note_half_gemm_fallback(static_cast<uint64_t>(products));
    return false;
  }
  if (!c.out.defined()) c.out = Tensor::empty(c.out_shape, c.out_dtype, Device::cpu(), c.op.name);
  matmul_dispatch(ta, tb, c.inputs[0].data<BFloat16>(), c.inputs[1].data<BFloat16>(), c.out.data<BFloat16>(), d,
                  Bf16Gemm{});
  cpu::note_half_gemm_onednn(static_cast<uint64_t>(products));
  return true;
}

void matmul_kernel(KernelCtx& c) {
  const MatmulDims d = matmul_dims(InferCtx{c.op, c.inputs, c.attrs});
  const Tensor a = cpu::as_dtype(c.inputs[0], c.out_dtype);
  const Tensor b = cpu::as_dtype(c.inputs[1], c.out_dtype);
  visit_dtype(c.out_dtype, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      matmul_impl<cpu::Trans::No, cpu::Trans::No>(a.data<T>(), b.data<T>(), c.out.data<T>(), d, StoredTypeGemm<T>{});
    }
  });
}

bool matmul_half_kernel(KernelCtx& c) {
  return matmul_bf16(c, matmul_dims(InferCtx{c.op, c.inputs, c.attrs}), false, false);
}

void matmul_t_kernel(KernelCtx& c) {
  const MatmulDims d = matmul_t_dims(InferCtx{c.op, c.inputs, c.attrs});
  const Tensor a = cpu::as_dtype(c.inputs[0], c.out_dtype);
  const Tensor b = cpu::as_dtype(c.inputs[1], c.out_dtype);
  const bool ta = c.attrs.get_bool("transpose_a"), tb = c.attrs.get_bool("transpose_b");
  visit_float(c.out_dtype, [&]<typename T>() {
    matmul_dispatch(ta, tb, a.data<T>(), b.data<T>(), c.out.data<T>(), d, StoredTypeGemm<T>{});
  });
}

bool matmul_t_half_kernel(KernelCtx& c) {
  return matmul_bf16(c, matmul_t_dims(InferCtx{c.op, c.inputs, c.attrs}), c.attrs.get_bool("transpose_a"),
                     c.attrs.get_bool("transpose_b"));
}

// op(a) @ op(b) through the internal op (differentiable, any order).
Tensor matmul_t(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  static const OpDef& op = registry().get("matmul_t");
  return call_op(op, {a, b}, {{"transpose_a", ta}, {"transpose_b", tb}});
}

// matmul_t: for C = op(A) op(B), dop(A) = dC op(B)^T and dop(B) = op(A)^T dC, written back through the
// transposes as matmul_t calls again; summed over broadcast batch dims.
std::vector<Tensor> matmul_t_bprop(const BpropCtx& c) {
  const bool ta = c.attrs.get_bool("transpose_a"), tb = c.attrs.get_bool("transpose_b");
  const Tensor &a = c.input(0), &b = c.input(1), &g = c.dout;
  Tensor da, db;
  if (c.needs(0)) da = ops::sum_to(ta ? matmul_t(b, g, tb, true) : matmul_t(g, b, false, !tb), a.shape());
  if (c.needs(1)) db = ops::sum_to(tb ? matmul_t(g, a, true, ta) : matmul_t(a, g, !ta, false), b.shape());
  return {da, db};
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
    da = ops::sum_to(matmul_t(dout, b2, false, true), a2.shape());
    if (a_vec) da = ops::reshape(da, a.shape());
  }
  if (c.needs(1)) {
    if (b2.dim() == 2 && a2.dim() > 2) {
      // b is shared by every batch: one GEMM over the stacked rows, (rows, k)^T (rows, m).
      const int64_t rows = shape_numel(Shape(a2.shape().begin(), a2.shape().end() - 1));
      const int64_t m = s.back();
      db = matmul_t(ops::reshape(a2, {rows, k}), ops::reshape(dout, {rows, m}), true, false);
    } else {
      db = ops::sum_to(matmul_t(a2, dout, true, false), b2.shape());
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
  op.cpu_half = matmul_half_kernel;
  op.bprop = matmul_bprop;
  op.bprop_reads_out = false;
  op.amp = AmpClass::Half;  // mixed precision's white list
  r.add(std::move(op));

  OpDef t;
  t.name = "matmul_t";
  t.family = "linalg";
  t.inputs = {{"a"}, {"b"}};
  t.attrs = {{"transpose_a", AttrKind::Bool, false}, {"transpose_b", AttrKind::Bool, false}};
  t.infer_shape = [](const InferCtx& c) { return matmul_t_dims(c).out_shape(); };
  t.infer_dtype = [](const InferCtx& c) {
    for (size_t i = 0; i < 2; ++i) {
      if (!is_float(c.input(i).dtype())) {
        c.dtype_error(std::string("'") + (i == 0 ? "a" : "b") + "' must be float32 or float64, got " +
                      dtype_name(c.input(i).dtype()));
      }
    }
    return promote_dtype(c);
  };
  t.cpu(matmul_t_kernel);
  t.cpu_half = matmul_t_half_kernel;
  t.bprop = matmul_t_bprop;
  t.amp = AmpClass::Half;
  r.add(std::move(t));
}

}  // namespace bprop
