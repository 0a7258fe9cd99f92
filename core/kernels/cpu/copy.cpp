#include "kernels/cpu/copy.h"

#include <cmath>
#include <cstring>

namespace bprop::cpu {
namespace {

// Dimensions of a copy after dropping size-1 dimensions and merging neighbours that are contiguous in both
// source and destination.
struct Dims {
  std::vector<int64_t> n, s, d;
};

Dims simplify(const Shape& shape, const std::vector<int64_t>& s, const std::vector<int64_t>& d) {
  Dims g;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (!g.n.empty() && g.s.back() == s[i] * shape[i] && g.d.back() == d[i] * shape[i]) {
      g.n.back() *= shape[i];
      g.s.back() = s[i];
      g.d.back() = d[i];
    } else {
      g.n.push_back(shape[i]);
      g.s.push_back(s[i]);
      g.d.push_back(d[i]);
    }
  }
  return g;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Calls row(src_offset, dst_offset) for every multi-index of dims (n, s, d), split over threads; `row_work`
// is the number of elements one call moves.
template <typename Row>
void for_each_row(const std::vector<int64_t>& n, const std::vector<int64_t>& s, const std::vector<int64_t>& d,
                  int64_t row_work, Row row) {
  const size_t r = n.size();
  int64_t total = 1;
  for (int64_t v : n) total *= v;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(row_work, 1));
  parallel_for(total, grain, [&](int64_t b, int64_t e) {
    std::vector<int64_t> idx(r);
    int64_t so = 0, dof = 0, rem = b;
    for (size_t j = r; j-- > 0;) {
      idx[j] = rem % n[j];
      rem /= n[j];
      so += idx[j] * s[j];
      dof += idx[j] * d[j];
    }
    for (int64_t t = b; t < e; ++t) {
      row(so, dof);
      for (size_t j = r; j-- > 0;) {
        ++idx[j];
        so += s[j];
        dof += d[j];
        if (idx[j] < n[j]) break;
        so -= s[j] * n[j];
        dof -= d[j] * n[j];
        idx[j] = 0;
      }
    }
  });
}

constexpr int64_t kTile = 32;

template <typename E>
void copy_typed(const E* src, E* dst, const Dims& g) {
  const size_t r = g.n.size();
  if (r == 0) {
    *dst = *src;
    return;
  }
  const int64_t n = g.n[r - 1], ss = g.s[r - 1], ds = g.d[r - 1];

  // A transpose: the destination's rows are contiguous, the source is contiguous along another dimension k.
  // Copy through kTile x kTile tiles so both sides stay in cache.
  size_t k = r;
  if (ds == 1 && ss != 1 && ss != 0 && n >= 8) {
    for (size_t j = 0; j + 1 < r; ++j) {
      if (g.s[j] == 1 && g.n[j] >= 8) k = j;
    }
  }
  if (k < r) {
    std::vector<int64_t> on, os, od;  // the other (outer) dimensions
    for (size_t j = 0; j + 1 < r; ++j) {
      if (j == k) continue;
      on.push_back(g.n[j]);
      os.push_back(g.s[j]);
      od.push_back(g.d[j]);
    }
    const int64_t nk = g.n[k], dk = g.d[k];
    const int64_t kblocks = ceil_div(nk, kTile);
    int64_t outer = 1;
    for (int64_t v : on) outer *= v;
    parallel_for(outer * kblocks, std::max<int64_t>(1, kParallelGrain / (kTile * n)), [&](int64_t b, int64_t e) {
      for (int64_t u = b; u < e; ++u) {
        int64_t rem = u / kblocks, so = 0, dof = 0;
        for (size_t j = on.size(); j-- > 0;) {
          const int64_t i = rem % on[j];
          rem /= on[j];
          so += i * os[j];
          dof += i * od[j];
        }
        const int64_t k0 = (u % kblocks) * kTile, k1 = std::min(nk, k0 + kTile);
        for (int64_t l0 = 0; l0 < n; l0 += kTile) {
          const int64_t l1 = std::min(n, l0 + kTile);
          for (int64_t kk = k0; kk < k1; ++kk) {
            const E* ps = src + so + kk;
            E* pd = dst + dof + kk * dk;
            for (int64_t l = l0; l < l1; ++l) pd[l] = ps[l * ss];
          }
        }
      }
    });
    return;
  }

  const std::vector<int64_t> on(g.n.begin(), g.n.end() - 1), os(g.s.begin(), g.s.end() - 1),
      od(g.d.begin(), g.d.end() - 1);
  if (ss == 1 && ds == 1) {
    for_each_row(on, os, od, n, [&](int64_t so, int64_t dof) {
      std::memcpy(dst + dof, src + so, static_cast<size_t>(n) * sizeof(E));
    });
  } else if (ss == 0 && ds == 1) {
    for_each_row(on, os, od, n, [&](int64_t so, int64_t dof) { std::fill(dst + dof, dst + dof + n, src[so]); });
  } else {
    for_each_row(on, os, od, n, [&](int64_t so, int64_t dof) {
      const E* ps = src + so;
      E* pd = dst + dof;
      for (int64_t i = 0; i < n; ++i) pd[i * ds] = ps[i * ss];
    });
  }
}

}  // namespace

void strided_copy(const void* src, const std::vector<int64_t>& src_strides, void* dst,
                  const std::vector<int64_t>& dst_strides, const Shape& shape, size_t elem_size) {
  if (shape_numel(shape) == 0) return;
  const Dims g = simplify(shape, src_strides, dst_strides);
  switch (elem_size) {
    case 1: copy_typed(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst), g); break;
    case 2: copy_typed(static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), g); break;
    case 4: copy_typed(static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), g); break;
    default: copy_typed(static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst), g); break;
  }
}

void copy_block(const Tensor& src, int64_t src_offset, const std::vector<int64_t>& src_strides, Tensor& dst,
                int64_t dst_offset, const std::vector<int64_t>& dst_strides, const Shape& shape) {
  if (shape_numel(shape) == 0) return;
  const size_t e = dtype_size(src.dtype());
  strided_copy(static_cast<const char*>(src.raw_data()) + src_offset * static_cast<int64_t>(e), src_strides,
               static_cast<char*>(dst.raw_data()) + dst_offset * static_cast<int64_t>(e), dst_strides, shape, e);
}

void fill_tensor(Tensor& t, double value) {
  const int64_t n = t.numel();
  if (n == 0) return;
  if (value == 0.0 && !std::signbit(value)) {
    std::memset(t.raw_data(), 0, t.nbytes());
    return;
  }
  visit_storage_dtype(t.dtype(), [&]<typename T>() {
    T* p = t.data<T>();
    T v;
    if constexpr (std::is_same_v<T, bool>) v = value != 0.0;
    else if constexpr (std::is_integral_v<T>) v = std::isnan(value) ? T(0) : static_cast<T>(std::clamp(value, -2147483648.0, 2147483647.0));
    else v = convert_element<T>(value);
    parallel_for(n, kParallelGrain * 4, [&](int64_t b, int64_t e) { std::fill(p + b, p + e, v); });
  });
}

}  // namespace bprop::cpu
