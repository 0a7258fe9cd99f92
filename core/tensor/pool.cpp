#include "bprop/pool.h"

#include <array>
#include <cstdint>

namespace bprop::pool {
namespace {

constexpr size_t kGranule = 16;
constexpr size_t kClasses = kMaxBlock / kGranule;
// A list longer than this returns blocks to operator new: bounds what an idle thread keeps.
constexpr uint32_t kMaxCached = 1u << 16;

struct FreeBlock {
  FreeBlock* next;
};

struct FreeLists {
  std::array<FreeBlock*, kClasses> head{};
  std::array<uint32_t, kClasses> count{};
  ~FreeLists();
};

// Set once this thread's lists are destroyed: blocks freed later (thread-exit and static destructors) go straight
// back to operator delete. A plain bool has no destructor, so it stays readable to the end.
thread_local bool t_lists_gone = false;
thread_local FreeLists t_lists;

FreeLists::~FreeLists() {
  t_lists_gone = true;
  for (size_t c = 0; c < kClasses; ++c) {
    while (FreeBlock* b = head[c]) {
      head[c] = b->next;
      ::operator delete(b);
    }
  }
}

size_t size_class(size_t bytes) { return (bytes + kGranule - 1) / kGranule - 1; }

}  // namespace

void* allocate(size_t bytes) {
  if (bytes == 0 || bytes > kMaxBlock || t_lists_gone) return ::operator new(bytes);
  const size_t c = size_class(bytes);
  FreeLists& lists = t_lists;
  if (FreeBlock* b = lists.head[c]) {
    lists.head[c] = b->next;
    --lists.count[c];
    // The next block of this size is likely out of cache (freed a whole tape ago): fetch it now, while this one
    // is being used, rather than stall on reading its link at the next allocation.
    if (b->next) __builtin_prefetch(b->next, 1);
    return b;
  }
  return ::operator new((c + 1) * kGranule);
}

void deallocate(void* p, size_t bytes) noexcept {
  if (!p) return;
  if (bytes == 0 || bytes > kMaxBlock || t_lists_gone) {
    ::operator delete(p);
    return;
  }
  const size_t c = size_class(bytes);
  FreeLists& lists = t_lists;
  if (lists.count[c] >= kMaxCached) {
    ::operator delete(p);
    return;
  }
  auto* b = static_cast<FreeBlock*>(p);
  b->next = lists.head[c];
  lists.head[c] = b;
  ++lists.count[c];
}

}  // namespace bprop::pool
