// Tensors cross to JavaScript as integer handles: indices into one table of tensors. A handle is a plain
// number on the JavaScript side (no embind object, no registration), so an op call is one WebAssembly call
// with integers in and an integer out. Handle 0 means "no tensor" (an omitted optional input, or an error).
//
// Every handle given to JavaScript is owned by exactly one JavaScript Tensor (or, for handles passed back to
// C++, by the C++ code that takes it), and released exactly once.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "bprop/errors.h"
#include "bprop/tensor.h"

namespace bprop::js {

class HandleTable {
 public:
  /// A new handle holding t (an undefined tensor gets 0).
  uint32_t add(Tensor t) {
    if (!t.defined()) return 0;
    if (free_.empty()) {
      slots_.push_back(std::move(t));
      return static_cast<uint32_t>(slots_.size());
    }
    const uint32_t h = free_.back();
    free_.pop_back();
    slots_[h - 1] = std::move(t);
    return h;
  }
  /// The tensor of handle h; ValueError for 0 or a released handle.
  const Tensor& get(uint32_t h) const {
    if (h == 0 || h > slots_.size() || !slots_[h - 1].defined()) throw ValueError("bprop: invalid tensor handle");
    return slots_[h - 1];
  }
  /// The tensor of h, or an undefined tensor for 0.
  Tensor get_or_none(uint32_t h) const { return h == 0 ? Tensor{} : get(h); }
  /// Frees handle h (0 and released handles are ignored).
  void release(uint32_t h) {
    if (h == 0 || h > slots_.size() || !slots_[h - 1].defined()) return;
    slots_[h - 1] = Tensor{};
    free_.push_back(h);
  }
  /// The tensor of h, releasing the handle.
  Tensor take(uint32_t h) {
    Tensor t = get(h);
    release(h);
    return t;
  }

 private:
  std::vector<Tensor> slots_;
  std::vector<uint32_t> free_;
};

inline HandleTable& handles() {
  static HandleTable table;
  return table;
}

}  // namespace bprop::js
