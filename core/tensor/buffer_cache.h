// Large tensor buffers, recycled per thread (internal to the core).
//
// Why: a training step frees and re-allocates buffers of the same sizes every step. glibc hands blocks above its
// mmap threshold back to the operating system, so each step page-faults its large buffers in again (measured: about
// a tenth of a CNN training step natively). Keeping a bounded number of freed large blocks for reuse removes that.
// WebAssembly has no page faults to save, so there the buffers go straight to malloc/free.
#pragma once
#include <cstddef>

namespace bprop::detail {

/// A 64-byte aligned block of at least `bytes` (> 0) bytes; std::bad_alloc when memory is exhausted.
void* acquire_buffer(size_t bytes);
/// Returns a block from acquire_buffer of the same `bytes`.
void release_buffer(void* p, size_t bytes) noexcept;

}  // namespace bprop::detail
