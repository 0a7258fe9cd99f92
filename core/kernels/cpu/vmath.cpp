// The array functions of vmath.h: the loops of vmath_loops.inc compiled once for the build's target and, on
// x86-64 (GCC or clang), again for AVX2+FMA and for AVX-512, with a table of function pointers chosen from
// the running CPU on first use. The native build has no -march flags, so without this the loops would only
// use SSE2. Elsewhere (WebAssembly with -msimd128, aarch64) the build's target is the only one.

// GCC keeps floating-point operations that might raise an exception (as 2^64 * 2^64 does, folded from exp's
// clamp at +89) out of if-converted code, so a clamp that it threads into a branch stops the loop from being
// vectorised. No result depends on it; clang assumes the same by default.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include "kernels/cpu/vmath.h"

#include <atomic>
#include <string>

#include "bprop/errors.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BPROP_VM_X86 1
#else
#define BPROP_VM_X86 0
#endif

// clang: four vectors per iteration (independent dependency chains to overlap: the functions are long chains).
// Measured in WebAssembly (V8), per element on 1M floats, two -> four: tanh 1.86 -> 1.47 ns, sigmoid 1.94 -> 1.52,
// exp 1.66 -> 1.30 (one: 2.4, 2.4 and 2.0; eight: 5% faster than four, but jitted W5 not, and larger code).
// This file needs -O2 or more: clang does not vectorise at -Oz, not even loops marked so (it warns then).
// The loops may run in place (kernels/cpu/loop_hints.h): assume_safety / ivdep keep them vectorised then.
#if defined(__clang__)
#define BPROP_VM_VECTORIZE _Pragma("clang loop vectorize(assume_safety) interleave_count(4)")
#elif defined(__GNUC__)
#define BPROP_VM_VECTORIZE _Pragma("GCC ivdep")
#else
#define BPROP_VM_VECTORIZE
#endif

namespace bprop::cpu::vm {

namespace generic {
#define BPROP_VM_TARGET
#include "kernels/cpu/vmath_loops.inc"
#undef BPROP_VM_TARGET
}  // namespace generic

#if BPROP_VM_X86
namespace avx2 {
#define BPROP_VM_TARGET __attribute__((target("avx2,fma")))
#include "kernels/cpu/vmath_loops.inc"
#undef BPROP_VM_TARGET
}  // namespace avx2

// GCC would otherwise use 256-bit vectors for AVX-512 code; these loops run long enough for 512 (clang has no
// such target option).
namespace avx512 {
#if defined(__clang__)
#define BPROP_VM_TARGET __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")))
#else
#define BPROP_VM_TARGET \
  __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,prefer-vector-width=512")))
#endif
#include "kernels/cpu/vmath_loops.inc"
#undef BPROP_VM_TARGET
}  // namespace avx512
#endif

namespace {

using Unary = void (*)(const float*, float*, int64_t);
using Binary = void (*)(const float*, const float*, float*, int64_t);

struct Table {
  Isa isa;
  Unary exp, expm1, log, log1p, tanh, sigmoid, softplus, silu, gelu, gelu_tanh;
  Binary tanh_grad, sigmoid_grad, gelu_grad;
  double (*sum)(const float*, int64_t);
  void (*arith_vv)(Arith, const float*, const float*, float*, int64_t);
  void (*arith_vs)(Arith, const float*, float, float*, int64_t);
  void (*arith_sv)(Arith, float, const float*, float*, int64_t);
};

#define BPROP_VM_TABLE(isa, ns)                                                                           \
  Table {                                                                                                 \
    isa, ns::exp, ns::expm1, ns::log, ns::log1p, ns::tanh, ns::sigmoid, ns::softplus, ns::silu, ns::gelu, \
        ns::gelu_tanh, ns::tanh_grad, ns::sigmoid_grad, ns::gelu_grad, ns::sum, ns::arith_vv, ns::arith_vs,   \
        ns::arith_sv                                                                                      \
  }

const Table kGeneric = BPROP_VM_TABLE(Isa::Generic, generic);
#if BPROP_VM_X86
const Table kAvx2 = BPROP_VM_TABLE(Isa::Avx2, avx2);
const Table kAvx512 = BPROP_VM_TABLE(Isa::Avx512, avx512);
#endif
#undef BPROP_VM_TABLE

const Table* table_for(Isa isa) {
  switch (isa) {
    case Isa::Generic: return &kGeneric;
#if BPROP_VM_X86
    case Isa::Avx2: return &kAvx2;
    case Isa::Avx512: return &kAvx512;
#else
    default: return nullptr;
#endif
  }
  return nullptr;
}

Isa best_isa() {
  if (isa_supported(Isa::Avx512)) return Isa::Avx512;
  if (isa_supported(Isa::Avx2)) return Isa::Avx2;
  return Isa::Generic;
}

std::atomic<const Table*>& current() {
  static std::atomic<const Table*> t{table_for(best_isa())};
  return t;
}

const Table& T() { return *current().load(std::memory_order_relaxed); }

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Generic: return "generic";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
  }
  return "?";
}

bool isa_supported(Isa isa) {
#if BPROP_VM_X86
  __builtin_cpu_init();  // idempotent; needed when this runs before the runtime's own initialisers
  switch (isa) {
    case Isa::Generic: return true;
    case Isa::Avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::Avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }
  return false;
#else
  return isa == Isa::Generic;
#endif
}

Isa active_isa() { return T().isa; }

void set_isa(Isa isa) {
  if (!isa_supported(isa)) throw ValueError(std::string("vmath: instruction set '") + isa_name(isa) +
                                            "' is not available on this CPU or build");
  current().store(table_for(isa), std::memory_order_relaxed);
}

void exp(const float* x, float* y, int64_t n) { T().exp(x, y, n); }
void expm1(const float* x, float* y, int64_t n) { T().expm1(x, y, n); }
void log(const float* x, float* y, int64_t n) { T().log(x, y, n); }
void log1p(const float* x, float* y, int64_t n) { T().log1p(x, y, n); }
void tanh(const float* x, float* y, int64_t n) { T().tanh(x, y, n); }
void sigmoid(const float* x, float* y, int64_t n) { T().sigmoid(x, y, n); }
void softplus(const float* x, float* y, int64_t n) { T().softplus(x, y, n); }
void silu(const float* x, float* y, int64_t n) { T().silu(x, y, n); }
void gelu(const float* x, float* y, int64_t n) { T().gelu(x, y, n); }
void gelu_tanh(const float* x, float* y, int64_t n) { T().gelu_tanh(x, y, n); }
void gelu_grad(const float* x, const float* dy, float* out, int64_t n) { T().gelu_grad(x, dy, out, n); }
void tanh_grad(const float* y, const float* dy, float* out, int64_t n) { T().tanh_grad(y, dy, out, n); }
void sigmoid_grad(const float* y, const float* dy, float* out, int64_t n) { T().sigmoid_grad(y, dy, out, n); }
double sum(const float* x, int64_t n) { return T().sum(x, n); }
void arith(Arith op, const float* a, const float* b, float* out, int64_t n) { T().arith_vv(op, a, b, out, n); }
void arith(Arith op, const float* a, float b, float* out, int64_t n) { T().arith_vs(op, a, b, out, n); }
void arith(Arith op, float a, const float* b, float* out, int64_t n) { T().arith_sv(op, a, b, out, n); }

}  // namespace bprop::cpu::vm
