// Plugging the relaxed-SIMD GEMM tile (web/fma-kernel.js) into the GEMM: the JavaScript side places the
// separately compiled kernel in this module's function table and passes its index here.
#include <emscripten/emscripten.h>

#include <cstdint>

#include "kernels/cpu/simd_gemm.h"

extern "C" {

/// Uses the function at `table_index` as the float32 GEMM tile when it passes the built-in check; returns 1 if
/// it does, 0 if it was refused (the built-in tile stays). In WebAssembly a function pointer is its table index.
EMSCRIPTEN_KEEPALIVE int bp_set_f32_tile(uint32_t table_index) {
  const auto tile = reinterpret_cast<bprop::cpu::F32Tile>(static_cast<uintptr_t>(table_index));
  return bprop::cpu::set_f32_tile(tile) ? 1 : 0;
}

}  // extern "C"
