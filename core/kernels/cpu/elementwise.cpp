#include "kernels/cpu/elementwise.h"

#include <algorithm>

namespace bprop::cpu {

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  const std::vector<int64_t> in_st = row_major_strides(in);
  const size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[lead + i] = in[i] == 1 ? 0 : in_st[i];
  return st;
}

namespace {

// The output's dimensions with each operand's strides (in elements), dimensions of size 1 dropped and adjacent
// ones merged where both operands step through them as through one; the last is the stretch fn runs on.
struct Runs {
  std::vector<int64_t> size, stride_a, stride_b;  // outer dimensions, outermost first
  int64_t inner = 1, inner_a = 0, inner_b = 0;    // the stretch: its length and each operand's step (0 or 1)
};

Runs merge_dims(const Shape& as, const Shape& bs, const Shape& os) {
  const std::vector<int64_t> sa = broadcast_strides(as, os), sb = broadcast_strides(bs, os);
  std::vector<int64_t> size, ta, tb;  // innermost first while merging
  for (size_t d = os.size(); d-- > 0;) {
    if (os[d] == 1) continue;
    if (!size.empty() && sa[d] == ta.back() * size.back() && sb[d] == tb.back() * size.back()) {
      size.back() *= os[d];  // (the merged dimension keeps the inner one's steps)
      continue;
    }
    size.push_back(os[d]);
    ta.push_back(sa[d]);
    tb.push_back(sb[d]);
  }
  Runs r;
  if (!size.empty()) {
    r.inner = size.front();
    r.inner_a = ta.front();
    r.inner_b = tb.front();
    r.size.assign(size.rbegin(), size.rend() - 1);
    r.stride_a.assign(ta.rbegin(), ta.rend() - 1);
    r.stride_b.assign(tb.rbegin(), tb.rend() - 1);
  }
  return r;
}

}  // namespace

void broadcast_binary(ElementFn fn, const void* a, const Shape& as, const void* b, const Shape& bs, size_t in_size,
                      void* out, const Shape& os, size_t out_size) {
  const int64_t n = shape_numel(os);
  if (n == 0) return;
  const Runs r = merge_dims(as, bs, os);
  const auto* pa = static_cast<const char*>(a);
  const auto* pb = static_cast<const char*>(b);
  auto* po = static_cast<char*>(out);
  const auto esize = static_cast<int64_t>(in_size), osize = static_cast<int64_t>(out_size);
  parallel_for(n, kParallelGrain, [&](int64_t s, int64_t e) {
    // the outer multi-index of element s, and the operands' offsets there
    const size_t rank = r.size.size();
    std::vector<int64_t> idx(rank);
    int64_t off_a = 0, off_b = 0;
    int64_t rest = s / r.inner;
    for (size_t d = rank; d-- > 0;) {
      idx[d] = rest % r.size[d];
      rest /= r.size[d];
      off_a += idx[d] * r.stride_a[d];
      off_b += idx[d] * r.stride_b[d];
    }
    int64_t i = s % r.inner;
    while (s < e) {
      const int64_t len = std::min(r.inner - i, e - s);
      const ElementOperand in[2] = {{pa + (off_a + i * r.inner_a) * esize, r.inner_a == 0},
                                    {pb + (off_b + i * r.inner_b) * esize, r.inner_b == 0}};
      fn(in, po + s * osize, len);
      s += len;
      i = 0;
      for (size_t d = rank; d-- > 0;) {  // the next stretch
        off_a += r.stride_a[d];
        off_b += r.stride_b[d];
        if (++idx[d] < r.size[d]) break;
        off_a -= r.stride_a[d] * r.size[d];
        off_b -= r.stride_b[d] * r.size[d];
        idx[d] = 0;
      }
    }
  });
}

}  // namespace bprop::cpu
