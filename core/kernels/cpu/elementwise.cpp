#include "kernels/cpu/elementwise.h"

#include <algorithm>
#include <cstring>

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

// A stretch shorter than this is run several rows at a time where the shapes allow (RowBlocks), since each call of
// fn costs an indirect call and its loop's set-up: adding a (3,) bias to a (10000, 3) matrix would otherwise be
// 10,000 calls of three elements.
constexpr int64_t kShortStretch = 64;
constexpr size_t kTileBytes = 2048;

// Runs of whole rows along the innermost outer dimension, one fn call per run, where along that dimension one
// operand steps on contiguously (its stride is the stretch's length) and the other either repeats its stretch
// (stride 0: a (3,) bias over (10000, 3)) or has one element per row ((10000, 1) with (10000, 3)). The other's
// elements for the run are laid out in a tile: the stretch copied end to end once, or each row's element repeated
// across the row for every run. (One element for every row is left to merge_dims, which merges the dimensions.)
struct RowBlocks {
  bool on = false;
  bool a_steps = false;       // which operand steps on contiguously (the other one goes through the tile)
  bool per_row = false;       // the other has one element per row (else it repeats its stretch)
  int64_t rows = 0;           // rows per call: as many as the tile holds, at most the dimension's size
};

RowBlocks plan_row_blocks(const Runs& r, size_t in_size) {
  RowBlocks p;
  if (r.size.empty() || r.inner >= kShortStretch) return p;
  const size_t last = r.size.size() - 1;
  const auto steps_on = [&](int64_t stride, int64_t inner_step) { return inner_step == 1 && stride == r.inner; };
  const auto tileable = [](int64_t stride, int64_t inner_step) { return inner_step == 1 ? stride == 0 : true; };
  if (steps_on(r.stride_a[last], r.inner_a) && tileable(r.stride_b[last], r.inner_b)) {
    p.a_steps = true;
    p.per_row = r.inner_b == 0;
  } else if (steps_on(r.stride_b[last], r.inner_b) && tileable(r.stride_a[last], r.inner_a)) {
    p.a_steps = false;
    p.per_row = r.inner_a == 0;
  } else {
    return p;
  }
  p.rows = std::min(static_cast<int64_t>(kTileBytes / in_size) / r.inner, r.size[last]);
  p.on = p.rows >= 2;
  return p;
}

// tile = each of `rows` elements (`stride` apart from src) repeated `inner` times, elements of E.
template <typename E>
void expand_rows(const char* src, int64_t stride, int64_t rows, int64_t inner, char* tile) {
  const E* x = reinterpret_cast<const E*>(src);
  E* t = reinterpret_cast<E*>(tile);
  for (int64_t k = 0; k < rows; ++k) std::fill(t + k * inner, t + (k + 1) * inner, x[k * stride]);
}

void expand_rows(const char* src, int64_t stride, int64_t rows, int64_t inner, char* tile, size_t esize) {
  switch (esize) {
    case 1: expand_rows<uint8_t>(src, stride, rows, inner, tile); break;
    case 4: expand_rows<uint32_t>(src, stride, rows, inner, tile); break;
    default: expand_rows<uint64_t>(src, stride, rows, inner, tile); break;
  }
}

}  // namespace

void broadcast_binary(ElementFn fn, const void* a, const Shape& as, const void* b, const Shape& bs, size_t in_size,
                      void* out, const Shape& os, size_t out_size) {
  const int64_t n = shape_numel(os);
  if (n == 0) return;
  const Runs r = merge_dims(as, bs, os);
  const RowBlocks blocks = plan_row_blocks(r, in_size);
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
    alignas(64) char tile[kTileBytes];
    int64_t tile_of = -1;  // the offset of the stretch the tile repeats
    int64_t i = s % r.inner;
    while (s < e) {
      const size_t last = rank - 1;
      if (blocks.on && i == 0 && e - s >= 2 * r.inner && r.size[last] - idx[last] >= 2) {
        const int64_t rows = std::min({blocks.rows, r.size[last] - idx[last], (e - s) / r.inner});
        const int64_t tiled_off = blocks.a_steps ? off_b : off_a;
        const char* tiled_src = (blocks.a_steps ? pb : pa) + tiled_off * esize;
        if (blocks.per_row) {
          expand_rows(tiled_src, blocks.a_steps ? r.stride_b[last] : r.stride_a[last], rows, r.inner, tile, in_size);
        } else if (tile_of != tiled_off) {
          for (int64_t k = 0; k < blocks.rows; ++k) std::memcpy(tile + k * r.inner * esize, tiled_src, r.inner * esize);
          tile_of = tiled_off;
        }
        const ElementOperand tiled{tile, false};
        const ElementOperand stepping{blocks.a_steps ? pa + off_a * esize : pb + off_b * esize, false};
        const ElementOperand in[2] = {blocks.a_steps ? stepping : tiled, blocks.a_steps ? tiled : stepping};
        fn(in, po + s * osize, rows * r.inner);
        s += rows * r.inner;
        idx[last] += rows;
        off_a += rows * r.stride_a[last];
        off_b += rows * r.stride_b[last];
        if (idx[last] < r.size[last]) continue;
        idx[last] -= 1;  // then step the outer dimensions as after the run's last row
        off_a -= r.stride_a[last];
        off_b -= r.stride_b[last];
      } else {
        const int64_t len = std::min(r.inner - i, e - s);
        const ElementOperand in[2] = {{pa + (off_a + i * r.inner_a) * esize, r.inner_a == 0},
                                      {pb + (off_b + i * r.inner_b) * esize, r.inner_b == 0}};
        fn(in, po + s * osize, len);
        s += len;
        i = 0;
      }
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

bool repeats_in(const Shape& operand, const Shape& shape, int64_t* inner) {
  if (operand.size() > shape.size()) return false;
  const size_t pad = shape.size() - operand.size();
  auto dim = [&](size_t d) { return d < pad ? int64_t{1} : operand[d - pad]; };
  size_t first = 0, end = shape.size();
  while (first < end && dim(first) == 1) ++first;
  while (end > first && dim(end - 1) == 1) --end;
  if (first == end) return false;  // one element: a scalar operand
  for (size_t d = first; d < end; ++d) {
    if (dim(d) != shape[d]) return false;
  }
  int64_t repeat = 1;
  for (size_t d = end; d < shape.size(); ++d) repeat *= shape[d];
  *inner = repeat;
  return true;
}

void copy_repeated(const char* src, int64_t count, int64_t inner, int64_t esize, int64_t t0, int64_t len, char* dst) {
  if (inner == 1) {  // a row: stretches of the row, copied
    for (int64_t j = 0, pos = t0 % count; j < len; pos = 0) {
      const int64_t n = std::min(len - j, count - pos);
      std::memcpy(dst + j * esize, src + pos * esize, static_cast<size_t>(n * esize));
      j += n;
    }
    return;
  }
  for (int64_t j = 0; j < len;) {  // a column: runs of one element
    const int64_t pos = t0 + j;
    const int64_t n = std::min(len - j, inner - pos % inner);
    const char* v = src + ((pos / inner) % count) * esize;
    char* out = dst + j * esize;
    std::memcpy(out, v, static_cast<size_t>(esize));
    for (int64_t filled = 1; filled < n; filled *= 2) {  // doubling the run already written
      std::memcpy(out + filled * esize, out, static_cast<size_t>(std::min(filled, n - filled) * esize));
    }
    j += n;
  }
}

}  // namespace bprop::cpu
