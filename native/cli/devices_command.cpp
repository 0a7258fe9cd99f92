// bprop devices: what this host offers bprop: the CPU (threads, vector features, BLAS, the bfloat16 GEMM) and Ascend
// NPUs (count, SoC, CANN version and where it was found), or why there are none.
#include <iostream>
#include <thread>

#include "ascend/runtime.h"
#include "commands.h"
#include "kernels/cpu/blas.h"
#include "kernels/cpu/onednn.h"

namespace bprop::cli {
namespace {

std::string cpu_features() {
  std::string f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) f += " avx512f";
  if (__builtin_cpu_supports("avx2")) f += " avx2";
  if (__builtin_cpu_supports("fma")) f += " fma";
  if (__builtin_cpu_supports("sse4.2")) f += " sse4.2";
#elif defined(__aarch64__)
  f += " neon";
#endif
  return f.empty() ? " (baseline)" : f;
}

}  // namespace

int devices_command(const std::vector<std::string>& args) {
  if (!args.empty() && (args.front() == "--help" || args.front() == "-h")) {
    std::cout << "usage: bprop devices\n\nLists the CPU (threads, vector features, BLAS, the bfloat16 GEMM) and the "
                 "Ascend NPUs found (with the CANN version), or why none were found.\n";
    return 0;
  }
  std::cout << "cpu: " << std::thread::hardware_concurrency() << " threads," << cpu_features()
            << "; GEMM on " << cpu::blas_name() << "\n";
  // (the counts: this process's bfloat16 matrix products run on oneDNN, and those widened to float32 without it)
  const cpu::HalfGemmStats half = cpu::half_gemm_stats();
  const std::string bf16_backend =
      cpu::bf16_gemm_available() ? cpu::onednn_name() : "float32 copies, oneDNN " + cpu::onednn_name();
  std::cout << "cpu: bfloat16 GEMM on " << bf16_backend << "; this process: " << half.onednn
            << " products on it, " << half.fallback << " widened to float32 without it\n";
  try {
    ascend::Runtime& rt = ascend::Runtime::get();
    std::cout << "ascend: " << rt.device_count() << " device" << (rt.device_count() == 1 ? "" : "s") << " ("
              << rt.soc_name() << "), CANN " << rt.version() << ", " << rt.lib().runtime_path() << "\n";
    for (int i = 0; i < rt.device_count(); ++i) std::cout << "  ascend:" << i << "\n";
  } catch (const std::exception& e) {
    std::cout << "ascend: none (" << e.what() << ")\n";
  }
  return 0;
}

}  // namespace bprop::cli
