#include "kernels/cpu/im2col.h"

#include <algorithm>

namespace bprop::cpu {

template <typename T>
void im2col(const T* image, T* col, const ConvGeom& g) {
  const int64_t plane = g.h * g.w, cols = g.cols();
  for (int64_t c = 0; c < g.channels; ++c) {
    const T* xc = image + c * plane;
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        T* row = col + ((c * g.kh + i) * g.kw + j) * cols;
        const int64_t off_w = j * g.dw - g.pw;
        int64_t x0 = 0, x1 = 0;
        valid_output_range(off_w, g.sw, g.w, g.ow, &x0, &x1);
        for (int64_t y = 0; y < g.oh; ++y) {
          T* dst = row + y * g.ow;
          const int64_t iy = y * g.sh - g.ph + i * g.dh;
          if (iy < 0 || iy >= g.h) {
            std::fill(dst, dst + g.ow, T(0));
            continue;
          }
          const T* src = xc + iy * g.w;
          std::fill(dst, dst + x0, T(0));
          if (g.sw == 1) {
            std::copy(src + x0 + off_w, src + x1 + off_w, dst + x0);
          } else {
            for (int64_t x = x0; x < x1; ++x) dst[x] = src[x * g.sw + off_w];
          }
          std::fill(dst + x1, dst + g.ow, T(0));
        }
      }
    }
  }
}

template <typename T>
void col2im(const T* col, T* image, const ConvGeom& g) {
  const int64_t plane = g.h * g.w, cols = g.cols();
  for (int64_t c = 0; c < g.channels; ++c) {
    T* xc = image + c * plane;
    for (int64_t i = 0; i < g.kh; ++i) {
      for (int64_t j = 0; j < g.kw; ++j) {
        const T* row = col + ((c * g.kh + i) * g.kw + j) * cols;
        const int64_t off_w = j * g.dw - g.pw;
        int64_t x0 = 0, x1 = 0;
        valid_output_range(off_w, g.sw, g.w, g.ow, &x0, &x1);
        for (int64_t y = 0; y < g.oh; ++y) {
          const int64_t iy = y * g.sh - g.ph + i * g.dh;
          if (iy < 0 || iy >= g.h) continue;
          const T* src = row + y * g.ow;
          T* dst = xc + iy * g.w;
          if (g.sw == 1) {
            for (int64_t x = x0; x < x1; ++x) dst[x + off_w] += src[x];
          } else {
            for (int64_t x = x0; x < x1; ++x) dst[x * g.sw + off_w] += src[x];
          }
        }
      }
    }
  }
}

template void im2col<float>(const float*, float*, const ConvGeom&);
template void im2col<double>(const double*, double*, const ConvGeom&);
template void col2im<float>(const float*, float*, const ConvGeom&);
template void col2im<double>(const double*, double*, const ConvGeom&);

}  // namespace bprop::cpu
