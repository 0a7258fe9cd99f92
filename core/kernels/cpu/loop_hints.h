// Loop hints for elementwise loops that may run in place.
//
// Graph mode writes a result over an input that dies at its op (graph/memory_plan.cpp), so an elementwise array
// function can run with its output equal to an input, element for element. Compilers guard their vectorised loops
// with an overlap check whose fallback is the scalar loop, which that exact aliasing takes (relu ran 8x slower in
// place in WebAssembly). Element i is read before element i is written and no iteration reads another's element,
// so the vector loop is right for exact aliasing; partial overlap never happens. clang reports a loop it was told
// this about but could not vectorise (one calling std::sin, say) as a warning, at the LTO link too: such loops go
// through elementwise_loop<false>, without the hint.
#pragma once

#if defined(__clang__) && defined(__OPTIMIZE_SIZE__)
#define BPROP_ELEMENTWISE_LOOP  // (-Os/-Oz: clang vectorises nothing, so there is no overlap check to avoid)
#elif defined(__clang__)
#define BPROP_ELEMENTWISE_LOOP _Pragma("clang loop interleave(assume_safety)")
#elif defined(__GNUC__)
#define BPROP_ELEMENTWISE_LOOP _Pragma("GCC ivdep")
#else
#define BPROP_ELEMENTWISE_LOOP
#endif


#include <cstdint>

namespace bprop::cpu {

/// body(i) for i in [0, n): with the in-place hint when the body vectorises (kVectorizes), plain otherwise.
template <bool kVectorizes, typename Body>
inline __attribute__((always_inline)) void elementwise_loop(int64_t n, Body body) {
  if constexpr (kVectorizes) {
    BPROP_ELEMENTWISE_LOOP
    for (int64_t i = 0; i < n; ++i) body(i);
  } else {
    for (int64_t i = 0; i < n; ++i) body(i);
  }
}

}  // namespace bprop::cpu
