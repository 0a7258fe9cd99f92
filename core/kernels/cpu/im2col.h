// im2col / col2im for 2-D convolutions: the patches of a (C, H, W) image laid out as the columns of a
// (C * kH * kW, OH * OW) matrix, so a convolution is one GEMM, and the scatter-add that undoes it.
#pragma once
#include <algorithm>
#include <cstdint>

namespace bprop::cpu {

/// The geometry of one convolution over a (channels, h, w) image with a (kh, kw) kernel.
struct ConvGeom {
  int64_t channels = 0, h = 0, w = 0;
  int64_t kh = 1, kw = 1;
  int64_t sh = 1, sw = 1;  // stride
  int64_t ph = 0, pw = 0;  // zero padding on each side
  int64_t dh = 1, dw = 1;  // dilation
  int64_t oh = 0, ow = 0;  // output size

  int64_t rows() const { return channels * kh * kw; }
  int64_t cols() const { return oh * ow; }
  /// True when the column matrix is the image itself (1x1 kernel, stride 1, no padding).
  bool pointwise() const { return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0; }
};

/// The output positions o in [0, n_out) whose input position o * stride + offset lies in [0, n_in), as the
/// half-open range [*lo, *hi) (empty when none does).
inline void valid_output_range(int64_t offset, int64_t stride, int64_t n_in, int64_t n_out, int64_t* lo,
                               int64_t* hi) {
  // ceil(x / stride) for x > 0, written so that no sum overflows with a stride near INT64_MAX; offset is minus
  // a padding and n_in an input size, so -offset and n_in - offset do not overflow.
  const auto ceil_div = [stride](int64_t x) { return (x - 1) / stride + 1; };
  int64_t a = offset >= 0 ? 0 : ceil_div(-offset);
  int64_t b = n_in - offset <= 0 ? 0 : ceil_div(n_in - offset);
  a = std::min(a, n_out);
  b = std::min(b, n_out);
  *lo = a;
  *hi = std::max(a, b);
}

/// col (rows, cols): col[(c, i, j), (y, x)] = image[c, y * sh - ph + i * dh, x * sw - pw + j * dw], 0 outside.
template <typename T>
void im2col(const T* image, T* col, const ConvGeom& g);

/// The transpose of im2col: adds every column entry back onto its image element (padding entries dropped).
/// `image` is accumulated into, not cleared.
template <typename T>
void col2im(const T* col, T* image, const ConvGeom& g);

}  // namespace bprop::cpu
