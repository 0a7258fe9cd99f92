#include "kernels/cpu/im2col.h"

#include <algorithm>

#include "bprop/half.h"

namespace bprop::cpu {

template <typename T>
void im2col(const T* image, T* col, const ConvGeom& g) {
  const int64_t plane = g.h * g.w, cols = g.cols();
  // With stride 1 and an output as wide as the input ("same" padding), the valid part of a kernel tap's rows
  // is one contiguous run of the image: one copy, then zeros over the clipped columns, instead of a short copy
  // per output row (a library call each, for rows of a few dozen elements).
  const bool contiguous = g.sh == 1 && g.sw == 1 && g.ow == g.w;
  for (int64_t c = 0; c < g.channels; ++c) {
    const T* xc = image + c * plane;
    for (int64_t i = 0; i < g.kh; ++i) {
      int64_t y0 = 0, y1 = 0;  // the output rows whose input row lies inside the image
      valid_output_range(i * g.dh - g.ph, g.sh, g.h, g.oh, &y0, &y1);
      for (int64_t j = 0; j < g.kw; ++j) {
        T* row = col + ((c * g.kh + i) * g.kw + j) * cols;
        const int64_t off_w = j * g.dw - g.pw;
        int64_t x0 = 0, x1 = 0;
        valid_output_range(off_w, g.sw, g.w, g.ow, &x0, &x1);
        if (y0 >= y1 || x0 >= x1) {  // the tap sees only padding
          std::fill(row, row + cols, T(0));
          continue;
        }
        std::fill(row, row + y0 * g.ow, T(0));
        std::fill(row + y1 * g.ow, row + cols, T(0));
        if (contiguous) {
          // output (y, x) reads image (y - ph + i dh, x + off_w): from (y0, x0) to (y1 - 1, x1 - 1) in one run
          const T* src = xc + (y0 - g.ph + i * g.dh) * g.w + x0 + off_w;
          std::copy(src, src + (y1 - y0 - 1) * g.ow + (x1 - x0), row + y0 * g.ow + x0);
          // then zeros over the clipped columns, a few per row: column by column (strided stores, where a fill
          // per row would be a library call per row)
          auto clear_column = [&](int64_t x) {
            for (int64_t y = y0; y < y1; ++y) row[y * g.ow + x] = T(0);
          };
          for (int64_t x = 0; x < x0; ++x) clear_column(x);
          for (int64_t x = x1; x < g.ow; ++x) clear_column(x);
          continue;
        }
        for (int64_t y = y0; y < y1; ++y) {
          T* dst = row + y * g.ow;
          const T* src = xc + (y * g.sh - g.ph + i * g.dh) * g.w;
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
#if !defined(__EMSCRIPTEN__)
template void im2col<BFloat16>(const BFloat16*, BFloat16*, const ConvGeom&);  // the bfloat16 fast path's patches
#endif
template void col2im<float>(const float*, float*, const ConvGeom&);
template void col2im<double>(const double*, double*, const ConvGeom&);

}  // namespace bprop::cpu
