#include "registry/arg_lists.h"

#include <new>

namespace bprop::detail {
namespace {

// Lists kept per thread: a forward pass over a long chain keeps one list per recorded op in its tape, and
// releasing the tape gives them all back for the next pass (65,536 lists of two take about 4 MB).
constexpr size_t kMaxKept = 65536;
constexpr size_t kMaxCapacity = 8;  // a list with room for more goes back to the allocator

// Set once this thread's bin is destroyed: lists given back later (thread-exit and static destructors) are freed.
// A plain bool has no destructor, so it stays readable to the end.
thread_local bool t_bin_gone = false;
struct Bin {
  std::vector<std::vector<Tensor>> lists;
  ~Bin() { t_bin_gone = true; }
};
thread_local Bin t_bin;

}  // namespace

std::vector<Tensor> take_arg_list() {
  if (t_bin_gone) return {};
  auto& lists = t_bin.lists;
  if (lists.empty()) {
    std::vector<Tensor> fresh;
    fresh.reserve(2);  // a tape node keeps its list: room for a binary op's operands and no more
    return fresh;
  }
  std::vector<Tensor> list = std::move(lists.back());
  lists.pop_back();
  if (!lists.empty()) __builtin_prefetch(lists.back().data(), 1);  // the next call's buffer (see pool::allocate)
  return list;
}

void recycle_arg_list(std::vector<Tensor>& list) noexcept {
  list.clear();
  if (t_bin_gone || list.capacity() == 0 || list.capacity() > kMaxCapacity) return;
  auto& lists = t_bin.lists;
  if (lists.size() >= kMaxKept) return;
  try {
    lists.push_back(std::move(list));
  } catch (const std::bad_alloc&) {  // no room to keep it: it is freed instead
  }
}

}  // namespace bprop::detail
