// The native half of the GEMM dispatch (blas.h): finding OpenBLAS at run time and calling its cblas_?gemm.
#include "kernels/cpu/blas.h"

#if !defined(__EMSCRIPTEN__)
#include <dlfcn.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#endif

namespace bprop::cpu {

#if defined(__EMSCRIPTEN__)

std::string blas_name() { return "eigen"; }
bool blas_active() { return false; }
void set_blas_enabled(bool) {}

#else

namespace {

// The few CBLAS declarations used, with the values cblas.h gives them, so that building needs no BLAS headers.
constexpr int kCblasRowMajor = 101;
constexpr int kCblasNoTrans = 111;
constexpr int kCblasTrans = 112;
using SgemmFn = void (*)(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda,
                         const float* b, int ldb, float beta, float* c, int ldc);
using DgemmFn = void (*)(int order, int ta, int tb, int m, int n, int k, double alpha, const double* a, int lda,
                         const double* b, int ldb, double beta, double* c, int ldc);
using SetThreadsFn = void (*)(int);
using CorenameFn = char* (*)();

struct Library {
  SgemmFn sgemm = nullptr;
  DgemmFn dgemm = nullptr;
  std::string name = "eigen";
  bool loaded() const { return sgemm != nullptr && dgemm != nullptr; }
};

// BPROP_BLAS=off (or 0) keeps OpenBLAS out of the process.
bool disabled_by_environment() {
  const char* v = std::getenv("BPROP_BLAS");
  return v != nullptr && (std::strcmp(v, "off") == 0 || std::strcmp(v, "0") == 0);
}

// The OpenBLAS kernel family for this CPU, or nullptr to leave OpenBLAS's own detection alone. The same rule
// as bench/run.mjs (openblasCoretype). __builtin_cpu_supports also checks that the OS saves the wider registers.
const char* coretype_for_this_cpu() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return "SkylakeX";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return nullptr;
}

// Sets an environment variable, when it is unset or empty and value is not null, until the end of the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (value == nullptr || (old != nullptr && *old != '\0')) return;
    set_ = true;
    had_ = old != nullptr;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (!set_) return;
    if (had_) setenv(name_, "", 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool set_ = false, had_ = false;
};

Library load_openblas() {
  Library lib;
  if (disabled_by_environment()) return lib;
  // Debian 12's OpenBLAS 0.3.21 does not know recent Xeon models (Sapphire Rapids and later) and falls back to
  // its SSE3 "Prescott" kernels, about 7x slower than its AVX-512 ones on them. OpenBLAS reads
  // OPENBLAS_CORETYPE once, when it is loaded, so it is set here, for the dlopen, from the CPU's features (a
  // non-empty value the user set is kept). OPENBLAS_NUM_THREADS=1 likewise keeps it from starting a thread pool
  // that would never get work (below) but spins for a while after starting. Both are put back afterwards, so the
  // process environment, and what child processes inherit, stays the user's. (If the process already holds
  // OpenBLAS, nothing is read again: its kernel is the one it chose then, and blas_name() reports it.)
  ScopedEnv coretype("OPENBLAS_CORETYPE", coretype_for_this_cpu());
  ScopedEnv threads("OPENBLAS_NUM_THREADS", "1");
  void* handle = nullptr;
  for (const char* so : {"libopenblas.so.0", "libopenblas.so"}) {
    handle = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (handle) break;
  }
  if (!handle) return lib;  // no OpenBLAS: Eigen only
  // The library stays loaded for the life of the process (nothing unloads it; its buffers are reused).
  lib.sgemm = reinterpret_cast<SgemmFn>(dlsym(handle, "cblas_sgemm"));
  lib.dgemm = reinterpret_cast<DgemmFn>(dlsym(handle, "cblas_dgemm"));
  if (!lib.loaded()) {
    lib.sgemm = nullptr;
    lib.dgemm = nullptr;
    return lib;
  }
  // One thread per call: bprop's pool splits large GEMMs and calls them from its workers (conv2d per image,
  // batched matmul per batch). A multi-threaded OpenBLAS called from several of those workers at once would
  // queue them on its global level-3 lock while its own spinning threads compete with bprop's for the cores.
  // So the number of threads working on a GEMM is bprop's (cpu::set_num_threads), as with Eigen.
  if (auto set_threads = reinterpret_cast<SetThreadsFn>(dlsym(handle, "openblas_set_num_threads"))) set_threads(1);
  lib.name = "openblas";
  if (auto corename = reinterpret_cast<CorenameFn>(dlsym(handle, "openblas_get_corename"))) {
    if (const char* core = corename()) lib.name += " (" + std::string(core) + ")";
  }
  return lib;
}

const Library& library() {
  static const Library lib = load_openblas();
  return lib;
}

std::atomic<bool> g_enabled{true};

int to_int(int64_t v) { return static_cast<int>(v); }

}  // namespace

std::string blas_name() { return blas_active() ? library().name : "eigen"; }

bool blas_active() { return g_enabled.load(std::memory_order_relaxed) && library().loaded(); }

void set_blas_enabled(bool on) { g_enabled.store(on, std::memory_order_relaxed); }

namespace detail {

bool blas_wanted(int64_t m, int64_t n, int64_t k) {
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX) return false;  // CBLAS takes int sizes
  const double macs = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  return macs >= static_cast<double>(kBlasMinMacs) && blas_active();
}

void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
               int64_t ldb, float beta, float* c, int64_t ldc) {
  library().sgemm(kCblasRowMajor, ta ? kCblasTrans : kCblasNoTrans, tb ? kCblasTrans : kCblasNoTrans, to_int(m),
                  to_int(n), to_int(k), 1.0f, a, to_int(lda), b, to_int(ldb), beta, c, to_int(ldc));
}

void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
               int64_t ldb, double beta, double* c, int64_t ldc) {
  library().dgemm(kCblasRowMajor, ta ? kCblasTrans : kCblasNoTrans, tb ? kCblasTrans : kCblasNoTrans, to_int(m),
                  to_int(n), to_int(k), 1.0, a, to_int(lda), b, to_int(ldb), beta, c, to_int(ldc));
}

}  // namespace detail

#endif

}  // namespace bprop::cpu
