// Recycled small blocks for the objects every op call creates (tensor impls, storages, tape nodes).
//
// Why: a recorded op allocates a handful of small objects, and a backward walk frees tens of thousands of them at
// once. glibc's per-thread cache holds only 7 blocks per size, so such bursts fall through to its slow paths
// (consolidation, memalign); recycling through unbounded per-thread free lists keeps an op call at a few
// instructions per allocation. Blocks freed on another thread join that thread's lists.
#pragma once
#include <cstddef>
#include <memory>
#include <new>

namespace bprop::pool {

/// Largest block served from the free lists; bigger requests go to operator new.
inline constexpr size_t kMaxBlock = 512;

void* allocate(size_t bytes);
void deallocate(void* p, size_t bytes) noexcept;

/// A std allocator over the free lists, for std::allocate_shared (object and control block in one block).
template <typename T>
struct Allocator {
  using value_type = T;
  Allocator() noexcept = default;
  template <typename U>
  Allocator(const Allocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor): rebinding is implicit
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "pooled blocks have operator new's default alignment");
  T* allocate(size_t n) { return static_cast<T*>(pool::allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { pool::deallocate(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const Allocator<U>&) const noexcept { return true; }
};

/// std::make_shared through the free lists.
template <typename T, typename... Args>
std::shared_ptr<T> make_shared(Args&&... args) {
  return std::allocate_shared<T>(Allocator<T>(), std::forward<Args>(args)...);
}

}  // namespace bprop::pool
