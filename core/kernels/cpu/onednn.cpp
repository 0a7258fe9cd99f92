// The native half of onednn.h: finding oneDNN at run time and running bfloat16 GEMMs on it, one thread per call.
//
// Two oneDNN entry points, chosen per product by measurement (one thread, AMX, oneDNN 2.6.3; GFLOP/s of the
// bfloat16-output product, the float32 route including its rounding pass):
//
//                                  gemm API (float32 C, rounded)   matmul primitive (bfloat16 C)
//   256^3   NN / NT / TN            574 / 577 / 558                 1089 / 993 / 778
//   512^3   NN / NT / TN            610 / 675 / 671                 1009 / 1013 / 795
//   1024^3  NN / NT / TN            630 / 651 / 613                 684 (up to 777) / 953 / 454
//   2048^3  NN / NT / TN            576 / 601 / 561                 500 / 604 / 390
//   64^3    NN                      261                             214
//   16^3    NN                      15                              6
//
// - dnnl_gemm_bf16bf16f32 (the "gemm API": row-major, float32 C) does run on AMX (about 700 GFLOP/s at 1024^3
//   for the GEMM alone), has the least fixed cost, and is the best for large products with a transposed A. But its
//   float32 result must then be rounded: at 1024^3 that pass over 4 MiB, out of cache, costs about a tenth of the
//   time. bf16_gemm (float32 output) always uses it.
// - The matmul primitive with a bfloat16 destination (what PyTorch runs for a bfloat16 matmul) rounds each float32
//   sum once in its own kernel (bit for bit float_to_bfloat16 of the same sums, checked over random products; only a
//   NaN's payload can differ, oneDNN keeping it), and is up to 1.9x faster from about 64^3 up. A primitive is built
//   (JIT) once per shape and kept in a cache. Its float32 destination was tried first: it is slow at 1024 columns
//   (about 550 GFLOP/s: rows 4 KiB apart in the destination), and padded rows make oneDNN pick its gemm API path.
//   bf16_gemm_rounded uses it where the table says it wins (use_matmul_primitive), on AMX only.
//
// Threads: bprop calls GEMMs from its pool's workers (a batched matmul's batches, the row blocks of a large
// product), each expected to use the calling thread only (blas.cpp says why). oneDNN's OpenMP build sizes
// every parallel region from omp_get_max_threads() in the calling thread (at primitive creation for a primitive,
// at the call for the gemm API), and OpenMP keeps that setting (nthreads-var) per thread; so each call sets it to 1
// for its duration and puts the caller's value back (ScopedOneThread). With one thread oneDNN runs its kernels
// inline: no OpenMP team is started, and no OpenMP thread is left spinning next to bprop's. (Measured on a 2-core
// machine: without it, a 1024^3 call from a plain thread ran on both cores, twice as fast, and the process gained
// an OpenMP thread; with it, one thread, no new thread, and the caller's omp_get_max_threads() unchanged after.) A oneDNN built on another runtime (TBB, threadpool) could not be
// held to one thread this way, so it is not used.
#include "kernels/cpu/onednn.h"

#include <atomic>
#include <stdexcept>

#if !defined(__EMSCRIPTEN__)
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "bprop/errors.h"
#include "tensor/buffer_cache.h"
#include "tensor/half_simd.h"
#endif

namespace bprop::cpu {

namespace {

std::atomic<uint64_t> g_onednn_products{0}, g_fallback_products{0};

}  // namespace

HalfGemmStats half_gemm_stats() {
  return {g_onednn_products.load(std::memory_order_relaxed), g_fallback_products.load(std::memory_order_relaxed)};
}
void note_half_gemm_onednn(uint64_t products) { g_onednn_products.fetch_add(products, std::memory_order_relaxed); }
void note_half_gemm_fallback(uint64_t products) {
  g_fallback_products.fetch_add(products, std::memory_order_relaxed);
}

#if defined(__EMSCRIPTEN__)

bool bf16_gemm_available() { return false; }
std::string onednn_name() { return "none (not in WebAssembly builds)"; }
void set_onednn_enabled(bool) {}
void bf16_gemm(bool, bool, int64_t, int64_t, int64_t, const BFloat16*, int64_t, const BFloat16*, int64_t, float, float*,
               int64_t) {
  throw std::logic_error("bf16_gemm: oneDNN is not available in WebAssembly builds");
}
void bf16_gemm_rounded(bool, bool, int64_t, int64_t, int64_t, const BFloat16*, int64_t, const BFloat16*, int64_t,
                       BFloat16*, int64_t) {
  throw std::logic_error("bf16_gemm_rounded: oneDNN is not available in WebAssembly builds");
}

#else

namespace {

// ---- the few oneDNN declarations used ----
// With the values and layouts the oneDNN 2.x headers (dnnl.h, dnnl_types.h) give them, so that building needs no
// oneDNN headers. Only libdnnl.so.2 is loaded: oneDNN keeps its ABI within a major version.

using Status = int;  // dnnl_status_t
constexpr Status kSuccess = 0, kOutOfMemory = 1;
using Handle = void*;  // dnnl_engine_t, dnnl_stream_t, dnnl_memory_t, dnnl_primitive_attr_t, ..._desc_t, ..._t
// dnnl_memory_desc_t (696 bytes) and dnnl_matmul_desc_t (2800 bytes) are filled by oneDNN's own init functions
// and only passed back to it: opaque storage of at least their size and alignment (8) is all that is needed.
struct alignas(8) MemoryDesc {
  unsigned char bytes[1024];
};
struct alignas(8) MatmulDesc {
  unsigned char bytes[4096];
};
using Dims = int64_t[12];  // dnnl_dims_t (DNNL_MAX_NDIMS = 12)
struct ExecArg {           // dnnl_exec_arg_t
  int arg;
  Handle memory;
};
struct DnnlVersion {  // dnnl_version_t
  int major, minor, patch;
  const char* hash;
  unsigned cpu_runtime, gpu_runtime;
};
constexpr unsigned kRuntimeSeq = 1, kRuntimeOmp = 2;  // DNNL_RUNTIME_SEQ, DNNL_RUNTIME_OMP
constexpr int kEngineCpu = 1;                         // dnnl_cpu
constexpr int kBf16 = 2;                              // dnnl_bf16 (dnnl_f32 is 3)
constexpr int kScratchpadUser = 1;                    // dnnl_scratchpad_mode_user
constexpr int kQueryScratchpadMd = 136;               // dnnl_query_scratchpad_md
constexpr unsigned kStreamDefault = 1;                // dnnl_stream_default_flags
constexpr int kArgSrc = 1, kArgDst = 17, kArgWeights = 33, kArgScratchpad = 80;  // DNNL_ARG_*
constexpr int kIsaAmx = 0x3e7;                                                   // dnnl_cpu_isa_avx512_core_amx

// dnnl_gemm_bf16bf16f32 is exported by libdnnl but declared only in oneDNN's own tests: row-major like dnnl_sgemm,
// 'N' or 'T' per operand, int64 (dnnl_dim_t) sizes.
using GemmBf16Fn = Status (*)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha,
                              const uint16_t* a, int64_t lda, const uint16_t* b, int64_t ldb, float beta, float* c,
                              int64_t ldc);
using VersionFn = const DnnlVersion* (*)();
using IsaFn = int (*)();  // dnnl_get_effective_cpu_isa
using EngineCreateFn = Status (*)(Handle* engine, int kind, size_t index);
using StreamCreateFn = Status (*)(Handle* stream, Handle engine, unsigned flags);
using DestroyFn = Status (*)(Handle);  // dnnl_{stream,memory,primitive,primitive_desc,primitive_attr}_destroy
using MemoryDescInitFn = Status (*)(MemoryDesc* md, int ndims, const Dims dims, int data_type, const Dims strides);
using MemoryDescSizeFn = size_t (*)(const MemoryDesc* md);
using MatmulDescInitFn = Status (*)(MatmulDesc* desc, const MemoryDesc* src, const MemoryDesc* weights,
                                    const MemoryDesc* bias, const MemoryDesc* dst);
using AttrCreateFn = Status (*)(Handle* attr);
using AttrSetScratchpadModeFn = Status (*)(Handle attr, int mode);
using PrimitiveDescCreateFn = Status (*)(Handle* pd, const void* op_desc, Handle attr, Handle engine, Handle hint);
using PrimitiveDescQueryMdFn = const MemoryDesc* (*)(Handle pd, int what, int index);
using PrimitiveCreateFn = Status (*)(Handle* primitive, Handle pd);
using MemoryCreateFn = Status (*)(Handle* memory, const MemoryDesc* md, Handle engine, void* data);
using ExecuteFn = Status (*)(Handle primitive, Handle stream, int nargs, const ExecArg* args);
using OmpGetMaxThreadsFn = int (*)();
using OmpSetNumThreadsFn = void (*)(int);

// dnnl_cpu_isa_t's values in oneDNN 2.x, by name.
std::string isa_name(int isa) {
  switch (isa) {
    case 0x1: return "sse41";
    case 0x3: return "avx";
    case 0x7: return "avx2";
    case 0x407: return "avx2_vnni";
    case 0x27: return "avx512_core";
    case 0x67: return "avx512_core_vnni";
    case 0xe7: return "avx512_core_bf16";
    case kIsaAmx: return "avx512_core_amx";
    default: {
      char hex[16];
      std::snprintf(hex, sizeof hex, "isa 0x%x", static_cast<unsigned>(isa));
      return hex;
    }
  }
}

// The matmul primitive's part of the library (null when a symbol is missing: then only the gemm API is used).
struct PrimitiveApi {
  Handle engine = nullptr;
  StreamCreateFn stream_create = nullptr;
  DestroyFn stream_destroy = nullptr, memory_destroy = nullptr, primitive_destroy = nullptr,
            primitive_desc_destroy = nullptr, attr_destroy = nullptr;
  MemoryDescInitFn memory_desc_init = nullptr;
  MemoryDescSizeFn memory_desc_size = nullptr;
  MatmulDescInitFn matmul_desc_init = nullptr;
  AttrCreateFn attr_create = nullptr;
  AttrSetScratchpadModeFn attr_set_scratchpad_mode = nullptr;
  PrimitiveDescCreateFn primitive_desc_create = nullptr;
  PrimitiveDescQueryMdFn primitive_desc_query_md = nullptr;
  PrimitiveCreateFn primitive_create = nullptr;
  MemoryCreateFn memory_create = nullptr;
  ExecuteFn execute = nullptr;
  DestroyFn stream_wait = nullptr;
};

struct Library {
  GemmBf16Fn gemm = nullptr;
  PrimitiveApi prim;
  bool use_primitive = false;  // the primitive is there and the CPU has AMX (what use_matmul_primitive measured)
  // The OpenMP runtime oneDNN runs its threads on (null for the sequential build).
  OmpGetMaxThreadsFn omp_get_max_threads = nullptr;
  OmpSetNumThreadsFn omp_set_num_threads = nullptr;
  std::string name = "none (libdnnl.so.2 not found)";
  bool loaded() const { return gemm != nullptr; }
};

// BPROP_DNNL=off (or 0) keeps oneDNN out of the process.
bool disabled_by_environment() {
  const char* v = std::getenv("BPROP_DNNL");
  return v != nullptr && (std::strcmp(v, "off") == 0 || std::strcmp(v, "0") == 0);
}

template <typename Fn>
bool find(void* handle, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  return fn != nullptr;
}

bool load_primitive_api(void* handle, PrimitiveApi& p) {
  EngineCreateFn engine_create = nullptr;
  const bool all =
      find(handle, "dnnl_engine_create", engine_create) && find(handle, "dnnl_stream_create", p.stream_create) &&
      find(handle, "dnnl_stream_destroy", p.stream_destroy) && find(handle, "dnnl_stream_wait", p.stream_wait) &&
      find(handle, "dnnl_memory_destroy", p.memory_destroy) &&
      find(handle, "dnnl_primitive_destroy", p.primitive_destroy) &&
      find(handle, "dnnl_primitive_desc_destroy", p.primitive_desc_destroy) &&
      find(handle, "dnnl_primitive_attr_destroy", p.attr_destroy) &&
      find(handle, "dnnl_memory_desc_init_by_strides", p.memory_desc_init) &&
      find(handle, "dnnl_memory_desc_get_size", p.memory_desc_size) &&
      find(handle, "dnnl_matmul_desc_init", p.matmul_desc_init) &&
      find(handle, "dnnl_primitive_attr_create", p.attr_create) &&
      find(handle, "dnnl_primitive_attr_set_scratchpad_mode", p.attr_set_scratchpad_mode) &&
      find(handle, "dnnl_primitive_desc_create", p.primitive_desc_create) &&
      find(handle, "dnnl_primitive_desc_query_md", p.primitive_desc_query_md) &&
      find(handle, "dnnl_primitive_create", p.primitive_create) &&
      find(handle, "dnnl_memory_create", p.memory_create) && find(handle, "dnnl_primitive_execute", p.execute);
  // The engine lives as long as the process (nothing unloads the library).
  return all && engine_create(&p.engine, kEngineCpu, 0) == kSuccess;
}

Library load_onednn() {
  Library lib;
  if (disabled_by_environment()) {
    lib.name = "none (disabled by BPROP_DNNL)";
    return lib;
  }
  void* handle = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!handle) return lib;
  // The library stays loaded for the life of the process (its JIT kernels and buffers are reused).
  VersionFn version = nullptr;
  GemmBf16Fn gemm = nullptr;
  const DnnlVersion* v = find(handle, "dnnl_version", version) ? version() : nullptr;
  if (!v || v->major != 2 || !find(handle, "dnnl_gemm_bf16bf16f32", gemm)) {
    lib.name = "none (libdnnl.so.2 without oneDNN 2's bfloat16 GEMM)";
    return lib;
  }
  if (v->cpu_runtime == kRuntimeOmp) {  // (see the top of this file; libgomp is found through libdnnl's handle)
    if (!find(handle, "omp_get_max_threads", lib.omp_get_max_threads) ||
        !find(handle, "omp_set_num_threads", lib.omp_set_num_threads)) {
      lib.name = "none (oneDNN's OpenMP runtime not found)";
      return lib;
    }
  } else if (v->cpu_runtime != kRuntimeSeq) {
    lib.name = "none (oneDNN built for a threading runtime other than OpenMP)";
    return lib;
  }
  lib.gemm = gemm;
  lib.name = "onednn " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  IsaFn isa = nullptr;
  const int effective_isa = find(handle, "dnnl_get_effective_cpu_isa", isa) ? isa() : -1;
  if (effective_isa >= 0) lib.name += " (" + isa_name(effective_isa) + ")";
  lib.use_primitive = effective_isa == kIsaAmx && load_primitive_api(handle, lib.prim);
  return lib;
}

const Library& library() {
  static const Library lib = load_onednn();
  return lib;
}

std::atomic<bool> g_enabled{true};

// The calling thread's OpenMP thread count set to 1 for the scope (see the top of this file).
class ScopedOneThread {
 public:
  explicit ScopedOneThread(const Library& lib) : lib_(lib) {
    if (!lib_.omp_set_num_threads) return;
    saved_ = lib_.omp_get_max_threads();
    if (saved_ != 1) lib_.omp_set_num_threads(1);
  }
  ~ScopedOneThread() {
    if (lib_.omp_set_num_threads && saved_ != 1) lib_.omp_set_num_threads(saved_);
  }
  ScopedOneThread(const ScopedOneThread&) = delete;
  ScopedOneThread& operator=(const ScopedOneThread&) = delete;

 private:
  const Library& lib_;
  int saved_ = 1;
};

// Scratch memory from bprop's per-thread buffer cache (large blocks are reused, not page-faulted in every call).
class Scratch {
 public:
  explicit Scratch(size_t bytes) : bytes_(bytes), p_(bytes > 0 ? detail::acquire_buffer(bytes) : nullptr) {}
  ~Scratch() {
    if (p_) detail::release_buffer(p_, bytes_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return p_; }

 private:
  size_t bytes_;
  void* p_;
};

void check(Status status, const char* what) {
  if (status == kSuccess) return;
  if (status == kOutOfMemory) throw MemoryError(std::string("oneDNN ran out of memory in ") + what);
  throw ValueError(std::string("oneDNN failed in ") + what + " (status " + std::to_string(status) + ")");
}

// ---- the gemm API ----

void gemm_api(const Library& lib, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const BFloat16* a, int64_t lda,
              const BFloat16* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  ScopedOneThread one(lib);
  check(lib.gemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, reinterpret_cast<const uint16_t*>(a), lda,
                 reinterpret_cast<const uint16_t*>(b), ldb, beta, c, ldc),
        "a bfloat16 GEMM");
}

// ---- the matmul primitive, one per shape ----

// A built primitive for dense row-major operands: A (m, k) or, when ta, stored (k, m); B (k, n) or stored (n, k);
// C (m, n) bfloat16.
struct Primitive {
  Handle primitive = nullptr;
  MemoryDesc a, b, c, scratchpad;
  size_t scratchpad_bytes = 0;
};
using PrimitiveKey = std::tuple<bool, bool, int64_t, int64_t, int64_t>;  // ta, tb, m, n, k

// Builds the primitive, or returns null if oneDNN has none for the shape.
std::shared_ptr<const Primitive> build_primitive(const PrimitiveApi& api, const PrimitiveKey& key) {
  const auto [ta, tb, m, n, k] = key;
  auto p = std::shared_ptr<Primitive>(new Primitive, [destroy = api.primitive_destroy](Primitive* q) {
    if (q->primitive) destroy(q->primitive);
    delete q;
  });
  const Dims a_dims = {m, k}, b_dims = {k, n}, c_dims = {m, n};
  const Dims a_strides = {ta ? 1 : k, ta ? m : 1}, b_strides = {tb ? 1 : n, tb ? k : 1}, c_strides = {n, 1};
  MatmulDesc desc;
  if (api.memory_desc_init(&p->a, 2, a_dims, kBf16, a_strides) != kSuccess ||
      api.memory_desc_init(&p->b, 2, b_dims, kBf16, b_strides) != kSuccess ||
      api.memory_desc_init(&p->c, 2, c_dims, kBf16, c_strides) != kSuccess ||
      api.matmul_desc_init(&desc, &p->a, &p->b, nullptr, &p->c) != kSuccess) {
    return nullptr;
  }
  // The scratchpad comes with each call (user mode): then one primitive may run on several threads at once.
  Handle attr = nullptr;
  if (api.attr_create(&attr) != kSuccess) return nullptr;
  Handle pd = nullptr;
  const bool described = api.attr_set_scratchpad_mode(attr, kScratchpadUser) == kSuccess &&
                         api.primitive_desc_create(&pd, &desc, attr, api.engine, nullptr) == kSuccess;
  api.attr_destroy(attr);
  if (!described) return nullptr;
  bool built = false;
  if (const MemoryDesc* sp = api.primitive_desc_query_md(pd, kQueryScratchpadMd, 0)) {
    p->scratchpad = *sp;
    p->scratchpad_bytes = api.memory_desc_size(sp);
    built = api.primitive_create(&p->primitive, pd) == kSuccess;
  }
  api.primitive_desc_destroy(pd);
  return built ? p : nullptr;
}

// The primitives built so far, by shape (a null entry: oneDNN had none). Entries are shared: one dropped from the
// cache (when it is full) lives on until the calls running it return.
class PrimitiveCache {
 public:
  std::shared_ptr<const Primitive> get(const Library& lib, const PrimitiveKey& key) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = entries_.find(key); it != entries_.end()) return it->second;
    }
    // Built outside the lock (oneDNN JIT-compiles its kernels: milliseconds), with one thread as when running it: the
    // primitive's thread count is fixed when it is created.
    std::shared_ptr<const Primitive> p;
    {
      ScopedOneThread one(lib);
      p = build_primitive(lib.prim, key);
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.size() >= kMaxEntries) entries_.clear();
    return entries_.emplace(key, std::move(p)).first->second;  // (a shape built twice at once keeps the first)
  }

 private:
  static constexpr size_t kMaxEntries = 512;
  std::mutex mu_;
  std::map<PrimitiveKey, std::shared_ptr<const Primitive>> entries_;
};

PrimitiveCache& primitive_cache() {
  static PrimitiveCache cache;
  return cache;
}

// This thread's oneDNN stream (streams are not shared between threads).
class ThreadStream {
 public:
  ~ThreadStream() {
    if (stream_) library().prim.stream_destroy(stream_);
  }
  Handle get(const PrimitiveApi& api) {
    if (!stream_) check(api.stream_create(&stream_, api.engine, kStreamDefault), "creating a stream");
    return stream_;
  }

 private:
  Handle stream_ = nullptr;
};

// oneDNN memory objects wrapping the operands for one call.
class Memories {
 public:
  explicit Memories(const PrimitiveApi& api) : api_(api) {}
  ~Memories() {
    for (int i = 0; i < n_; ++i) api_.memory_destroy(args_[i].memory);
  }
  Memories(const Memories&) = delete;
  Memories& operator=(const Memories&) = delete;
  void add(int arg, const MemoryDesc& md, const void* data) {
    Handle mem = nullptr;
    check(api_.memory_create(&mem, &md, api_.engine, const_cast<void*>(data)), "wrapping an operand");
    args_[n_++] = {arg, mem};
  }
  int size() const { return n_; }
  const ExecArg* args() const { return args_; }

 private:
  const PrimitiveApi& api_;
  ExecArg args_[4] = {};
  int n_ = 0;
};

void run_primitive(const Library& lib, const Primitive& p, const BFloat16* a, const BFloat16* b, BFloat16* c) {
  thread_local ThreadStream stream;
  const PrimitiveApi& api = lib.prim;
  const Scratch scratchpad(p.scratchpad_bytes);
  Memories mem(api);
  mem.add(kArgSrc, p.a, a);
  mem.add(kArgWeights, p.b, b);
  mem.add(kArgDst, p.c, c);
  if (p.scratchpad_bytes > 0) mem.add(kArgScratchpad, p.scratchpad, scratchpad.get());
  ScopedOneThread one(lib);
  const Handle s = stream.get(api);
  check(api.execute(p.primitive, s, mem.size(), mem.args()), "a bfloat16 matmul");
  check(api.stream_wait(s), "a bfloat16 matmul");
}

// Whether the primitive beats the gemm API for a bfloat16-output product (the table at the top of this file): not
// below 64^3 multiply-adds (its fixed cost, about a microsecond, dominates), not with a transposed A and a long
// sum, nor for the largest untransposed products. Dense operands only (its fast kernels want them).
bool use_matmul_primitive(bool ta, bool tb, int64_t m, int64_t n, int64_t k, bool dense) {
  const double macs = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (!dense || macs < static_cast<double>(int64_t{1} << 18)) return false;
  if (ta && k >= 1024 && m >= 128) return false;
  if (!ta && !tb && macs >= static_cast<double>(int64_t{1} << 31)) return false;
  return true;
}

}  // namespace

bool bf16_gemm_available() { return g_enabled.load(std::memory_order_relaxed) && library().loaded(); }

std::string onednn_name() {
  const Library& lib = library();
  if (lib.loaded() && !g_enabled.load(std::memory_order_relaxed)) return "none (disabled)";
  return lib.name;
}

void set_onednn_enabled(bool on) { g_enabled.store(on, std::memory_order_relaxed); }

void bf16_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const BFloat16* a, int64_t lda, const BFloat16* b,
               int64_t ldb, float beta, float* c, int64_t ldc) {
  static_assert(sizeof(BFloat16) == sizeof(uint16_t), "BFloat16 is the 16 bits, as oneDNN's bfloat16_t");
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // nothing to sum: C = beta C (oneDNN is not asked about an empty product)
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    }
    return;
  }
  const Library& lib = library();
  if (!lib.loaded()) throw std::logic_error("bf16_gemm: oneDNN is not available");
  gemm_api(lib, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

void bf16_gemm_rounded(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const BFloat16* a, int64_t lda,
                       const BFloat16* b, int64_t ldb, BFloat16* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  const Library& lib = library();
  if (!lib.loaded()) throw std::logic_error("bf16_gemm_rounded: oneDNN is not available");
  const bool dense = lda == (ta ? m : k) && ldb == (tb ? k : n) && ldc == n;
  if (k > 0 && lib.use_primitive && use_matmul_primitive(ta, tb, m, n, k, dense)) {
    if (const auto p = primitive_cache().get(lib, PrimitiveKey{ta, tb, m, n, k})) {
      run_primitive(lib, *p, a, b, c);
      return;
    }
  }
  // The gemm API into float32 scratch (rows n apart), each row then rounded into C.
  const Scratch scratch(static_cast<size_t>(m) * static_cast<size_t>(n) * sizeof(float));
  float* f = static_cast<float*>(scratch.get());
  bf16_gemm(ta, tb, m, n, k, a, lda, b, ldb, 0.0f, f, n);
  if (ldc == n) {
    float_to_bfloat16_simd(f, c, m * n);
  } else {
    for (int64_t i = 0; i < m; ++i) float_to_bfloat16_simd(f + i * n, c + i * ldc, n);
  }
}

#endif

}  // namespace bprop::cpu
