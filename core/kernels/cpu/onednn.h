// bfloat16 GEMMs on oneDNN: op(A) op(B) with A and B in bfloat16, summed in float32, into float32 or bfloat16.
//
// Natively, the system's oneDNN (libdnnl.so.2) is loaded with dlopen() at first use, as OpenBLAS is (blas.h): no
// build-time dependency, and without it, or with BPROP_DNNL=off (or 0) in the environment, nothing is loaded and
// bf16_gemm_available() is false. On CPUs with AMX or AVX512-BF16 it multiplies bfloat16 directly, several times
// faster than widening the operands to float32 and running a float32 GEMM. Its kernels there treat subnormal
// inputs and float32 results as zero (the instructions' fixed mode), where the widened path keeps them. Like
// OpenBLAS it runs one thread per call: bprop's pool (parallel.h) supplies the threads. The WebAssembly build has
// none of it.
#pragma once
#include <cstdint>
#include <string>

#include "bprop/half.h"

namespace bprop::cpu {

/// True when bf16_gemm can run (oneDNN was loaded and routing to it is enabled).
bool bf16_gemm_available();

/// "onednn <version> (<isa>)", e.g. "onednn 2.6.3 (avx512_core_amx)", or "none (<why>)".
std::string onednn_name();

/// Turns the routing of bfloat16 GEMMs to oneDNN on or off for the whole process (BPROP_DNNL=off or 0 in the
/// environment, read at first use, keeps the library from being loaded at all). For tests and benchmarks.
void set_onednn_enabled(bool on);

/// Row-major C (m, n) = op(A) op(B) + beta C on the calling thread, one thread. A is stored (m, k), or (k, m) when
/// ta; B (k, n), or (n, k) when tb; lda, ldb, ldc are the row strides. Only when bf16_gemm_available().
void bf16_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const BFloat16* a, int64_t lda, const BFloat16* b,
               int64_t ldb, float beta, float* c, int64_t ldc);

/// The same product into a bfloat16 C: each float32 sum rounded once to nearest even, as float_to_bfloat16 rounds
/// (a NaN's payload aside). On whichever of oneDNN's GEMM and matmul primitive is faster for the shape (onednn.cpp).
void bf16_gemm_rounded(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const BFloat16* a, int64_t lda,
                       const BFloat16* b, int64_t ldb, BFloat16* c, int64_t ldc);

/// What bfloat16 GEMM-based ops did: matrix products (one per batch element) run on oneDNN, and those widened to
/// float32 because oneDNN was not available. For `bprop devices`.
struct HalfGemmStats {
  uint64_t onednn = 0;
  uint64_t fallback = 0;
};
HalfGemmStats half_gemm_stats();
void note_half_gemm_onednn(uint64_t products);
void note_half_gemm_fallback(uint64_t products);

}  // namespace bprop::cpu
