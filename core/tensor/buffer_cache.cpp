#include "tensor/buffer_cache.h"

#include <cstdlib>
#include <new>
#include <vector>

namespace bprop::detail {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kPage = 4096;
// Smaller blocks are cheap for malloc to recycle; the cap bounds what an idle thread keeps.
constexpr size_t kMinCached = 64 * 1024;
#ifndef __EMSCRIPTEN__
constexpr size_t kMaxCachedBytes = size_t{128} << 20;
constexpr size_t kMaxCachedBlocks = 64;
#endif

size_t rounded(size_t bytes) {
  const size_t unit = bytes >= kMinCached ? kPage : kAlign;
  return (bytes + unit - 1) / unit * unit;
}

void* fresh(size_t size) {
  void* p = std::aligned_alloc(kAlign, size);
  if (!p) throw std::bad_alloc();
  return p;
}

#ifndef __EMSCRIPTEN__
struct Block {
  size_t size;
  void* p;
};

struct Cache {
  std::vector<Block> blocks;  // oldest first
  size_t bytes = 0;
  Cache() { blocks.reserve(kMaxCachedBlocks); }  // release_buffer never allocates
  ~Cache();
};

// Set once this thread's cache is destroyed (a plain bool stays readable to the end).
thread_local bool t_cache_gone = false;
thread_local Cache t_cache;

Cache::~Cache() {
  t_cache_gone = true;
  for (const Block& b : blocks) std::free(b.p);
}
#endif

}  // namespace

void* acquire_buffer(size_t bytes) {
  const size_t size = rounded(bytes);
#ifndef __EMSCRIPTEN__
  if (size >= kMinCached && !t_cache_gone) {
    Cache& c = t_cache;
    for (size_t i = c.blocks.size(); i-- > 0;) {  // newest first: the most recently freed is warmest
      if (c.blocks[i].size != size) continue;
      void* p = c.blocks[i].p;
      c.blocks.erase(c.blocks.begin() + static_cast<std::ptrdiff_t>(i));
      c.bytes -= size;
      return p;
    }
  }
#endif
  return fresh(size);
}

void release_buffer(void* p, size_t bytes) noexcept {
  if (!p) return;
#ifndef __EMSCRIPTEN__
  const size_t size = rounded(bytes);
  if (size >= kMinCached && size <= kMaxCachedBytes && !t_cache_gone) {
    Cache& c = t_cache;
    while (!c.blocks.empty() && (c.bytes + size > kMaxCachedBytes || c.blocks.size() >= kMaxCachedBlocks)) {
      std::free(c.blocks.front().p);
      c.bytes -= c.blocks.front().size;
      c.blocks.erase(c.blocks.begin());
    }
    c.blocks.push_back({size, p});
    c.bytes += size;
    return;
  }
#else
  (void)bytes;
#endif
  std::free(p);
}

}  // namespace bprop::detail
