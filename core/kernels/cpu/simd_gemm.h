// A packed, cache-blocked GEMM written with portable SIMD vectors: the GEMM of the WebAssembly build (blas.h).
//
// Eigen's generic GEMM compiled to WASM SIMD128 reaches about 17 GFLOP/s in float32 here; this one packs panels
// the way BLAS libraries do (B in depth x 8 column panels, A in 6 x depth row panels, both zero-padded) and runs
// a 6 x 8 register tile (6 x 4 for double), about 25 GFLOP/s: the machine's limit for SIMD128 without fused
// multiply-add (12 multiplies and 12 adds per 96 flops, two vector ports). It is also far smaller than Eigen's
// GEMM instantiated per dtype and transpose.
#pragma once
#include <cstdint>

namespace bprop::cpu {

/// C (m, n) = op(A) op(B) + beta C, row-major, for T in {float, double, int32_t}. A is stored (m, k), or (k, m)
/// when ta; B (k, n), or (n, k) when tb; lda, ldb, ldc are row strides. beta == 0 never reads C (it may hold
/// garbage or NaN). Integer products wrap like the rest of the int32 kernels.
template <typename T>
void simd_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
               T beta, T* c, int64_t ldc);

/// A float32 register-tile kernel supplied at run time: out[6][8] (row-major) = the sum over p < kc of
/// pa[6 p + r] * pb[8 p + j], from panels packed as simd_gemm packs them. In WebAssembly this is the
/// relaxed-SIMD (fused multiply-add) kernel web/fma-kernel.js builds where the engine supports it.
using F32Tile = void (*)(int32_t kc, const float* pa, const float* pb, float* out);

/// Makes `tile` the float32 kernel of simd_gemm after checking it against the built-in one on a fixed problem;
/// returns false (and changes nothing) when it disagrees. nullptr restores the built-in kernel.
bool set_f32_tile(F32Tile tile);

}  // namespace bprop::cpu
