// A vector that keeps up to N elements inside the object: a tensor's per-level trace and a tape node's edges
// almost always have one to three entries, and a heap allocation for each recorded op would cost more than the
// op itself on small tensors. Past N, all elements move to a heap vector; the object itself stays 16 bytes plus
// its N slots, since every op's output and every tape node carries one.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace bprop {

template <typename T, size_t N>
class SmallVector {
 public:
  SmallVector() = default;
  SmallVector(const SmallVector& o) { *this = o; }
  SmallVector(SmallVector&& o) noexcept { *this = std::move(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this == &o) return *this;
    clear();
    if (o.spilled()) {
      heap_ = std::make_unique<std::vector<T>>(*o.heap_);
    } else {
      for (size_t i = 0; i < o.size_; ++i) inline_[i] = o.inline_[i];
      size_ = o.size_;
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this == &o) return *this;
    clear();
    if (o.spilled()) {
      heap_ = std::move(o.heap_);
    } else {
      for (size_t i = 0; i < o.size_; ++i) inline_[i] = std::move(o.inline_[i]);
      size_ = o.size_;
    }
    o.clear();
    return *this;
  }

  size_t size() const { return spilled() ? heap_->size() : size_; }
  bool empty() const { return size() == 0; }
  T* begin() { return spilled() ? heap_->data() : inline_.data(); }
  T* end() { return begin() + size(); }
  const T* begin() const { return spilled() ? heap_->data() : inline_.data(); }
  const T* end() const { return begin() + size(); }
  T& operator[](size_t i) { return begin()[i]; }
  const T& operator[](size_t i) const { return begin()[i]; }
  T& back() { return end()[-1]; }
  const T& back() const { return end()[-1]; }

  void push_back(T v) {
    if (!spilled() && size_ < N) {
      inline_[size_++] = std::move(v);
      return;
    }
    spill();
    heap_->push_back(std::move(v));
  }
  void pop_back() {
    if (spilled()) {
      heap_->pop_back();
    } else {
      inline_[--size_] = T();
    }
  }
  /// New elements are value-initialised.
  void resize(size_t n) {
    if (!spilled() && n <= N) {
      for (size_t i = n; i < size_; ++i) inline_[i] = T();
      size_ = static_cast<uint32_t>(n);
      return;
    }
    spill();
    heap_->resize(n);
  }
  void clear() {
    for (size_t i = 0; i < size_; ++i) inline_[i] = T();
    size_ = 0;
    heap_.reset();
  }

 private:
  bool spilled() const { return heap_ != nullptr; }
  // Moves the inline elements to the heap; from then on the heap holds all of them.
  void spill() {
    if (spilled()) return;
    heap_ = std::make_unique<std::vector<T>>();
    heap_->reserve(N * 2);
    for (size_t i = 0; i < size_; ++i) heap_->push_back(std::move(inline_[i]));
    for (size_t i = 0; i < size_; ++i) inline_[i] = T();
    size_ = 0;
  }

  std::array<T, N> inline_{};
  uint32_t size_ = 0;  // of inline_, while not spilled
  std::unique_ptr<std::vector<T>> heap_;  // all the elements once more than N were held
};

}  // namespace bprop
