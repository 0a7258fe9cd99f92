// The convolution and pooling kernels' loops against their definitions: im2col (and col2im as its transpose)
// over geometries with and without its contiguous "same"-padding path, and max pooling's values and argmax
// (first maximum in row-major order, the last NaN when a window holds one) on wide rows, where windows are
// processed side by side, with ties, NaNs, padding and overlapping windows, in float32 and float64.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "bprop/bprop.h"
#include "kernels/cpu/im2col.h"

using namespace bprop;

namespace {

// Deterministic values in [-1, 1).
std::vector<double> values(size_t n, uint32_t seed) {
  std::vector<double> v(n);
  uint32_t s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<double>(s >> 8) / 8388608.0 - 1.0;
  }
  return v;
}

}  // namespace

// im2col against its definition, and col2im as its transpose (<im2col(x), c> = <x, col2im(c)>), over
// geometries with and without the contiguous "same"-padding path (stride 1, output as wide as the input).
TEST(Im2col, MatchesTheDefinitionAndCol2imIsItsTranspose) {
  struct Geom {
    int64_t c, h, w, kh, kw, sh, sw, ph, pw, dh, dw;
  };
  const std::vector<Geom> geoms = {
      {2, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1},  // same padding
      {1, 4, 3, 3, 5, 1, 1, 0, 4, 1, 2},  // same width through dilation, no padding in height
      {3, 6, 6, 3, 3, 1, 1, 0, 0, 1, 1},  // valid padding: narrower output
      {2, 7, 5, 2, 3, 2, 1, 1, 1, 1, 1},  // strided rows, same width
      {2, 6, 7, 3, 2, 2, 3, 1, 1, 2, 1},  // strided and dilated
      {1, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1},  // one pixel: most taps see only padding
      {1, 3, 2, 1, 5, 1, 1, 0, 2, 1, 1},  // a tap entirely left or right of a 2-wide image
  };
  for (const Geom& q : geoms) {
    cpu::ConvGeom g;
    g.channels = q.c, g.h = q.h, g.w = q.w, g.kh = q.kh, g.kw = q.kw, g.sh = q.sh, g.sw = q.sw;
    g.ph = q.ph, g.pw = q.pw, g.dh = q.dh, g.dw = q.dw;
    g.oh = (q.h + 2 * q.ph - q.dh * (q.kh - 1) - 1) / q.sh + 1;
    g.ow = (q.w + 2 * q.pw - q.dw * (q.kw - 1) - 1) / q.sw + 1;
    SCOPED_TRACE("image " + std::to_string(q.h) + "x" + std::to_string(q.w) + " kernel " + std::to_string(q.kh) +
                 "x" + std::to_string(q.kw) + " out " + std::to_string(g.oh) + "x" + std::to_string(g.ow));
    const std::vector<double> image = values(static_cast<size_t>(q.c * q.h * q.w), 7);
    std::vector<double> col(static_cast<size_t>(g.rows() * g.cols()), 99.0);  // every entry must be written
    cpu::im2col(image.data(), col.data(), g);
    for (int64_t c = 0; c < q.c; ++c) {
      for (int64_t i = 0; i < q.kh; ++i) {
        for (int64_t j = 0; j < q.kw; ++j) {
          for (int64_t y = 0; y < g.oh; ++y) {
            for (int64_t x = 0; x < g.ow; ++x) {
              const int64_t iy = y * q.sh - q.ph + i * q.dh, ix = x * q.sw - q.pw + j * q.dw;
              const bool inside = iy >= 0 && iy < q.h && ix >= 0 && ix < q.w;
              const double want = inside ? image[static_cast<size_t>((c * q.h + iy) * q.w + ix)] : 0.0;
              const int64_t r = (c * q.kh + i) * q.kw + j;
              ASSERT_EQ(col[static_cast<size_t>(r * g.cols() + y * g.ow + x)], want)
                  << "channel " << c << " tap " << i << "," << j << " at " << y << "," << x;
            }
          }
        }
      }
    }
    const std::vector<double> cot = values(col.size(), 8);
    std::vector<double> back(image.size(), 0.0);
    cpu::col2im(cot.data(), back.data(), g);
    double lhs = 0, rhs = 0;
    for (size_t i = 0; i < col.size(); ++i) lhs += col[i] * cot[i];
    for (size_t i = 0; i < image.size(); ++i) rhs += image[i] * back[i];
    EXPECT_NEAR(lhs, rhs, 1e-12 * (1.0 + std::abs(lhs)));
  }
}


namespace {

struct PoolCase {
  Shape x;
  int64_t kh, kw, sh, sw, ph, pw;
};

// max_pool2d by its definition: per window (padding excluded), the first maximum in row-major order, or the
// last NaN. Returns the values and, per output, the flat index of the chosen element in x.
void naive_max_pool(const std::vector<double>& x, const PoolCase& c, int64_t oh, int64_t ow,
                    std::vector<double>* out, std::vector<int64_t>* arg) {
  const int64_t h = c.x[c.x.size() - 2], w = c.x.back();
  const int64_t planes = shape_numel(c.x) / (h * w);
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        int64_t best = -1, nan = -1;
        for (int64_t ky = 0; ky < c.kh; ++ky) {
          for (int64_t kx = 0; kx < c.kw; ++kx) {
            const int64_t iy = oy * c.sh - c.ph + ky, ix = ox * c.sw - c.pw + kx;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            const int64_t i = (p * h + iy) * w + ix;
            const double v = x[static_cast<size_t>(i)];
            if (std::isnan(v)) nan = i;
            else if (best < 0 || v > x[static_cast<size_t>(best)]) best = i;
          }
        }
        const int64_t i = nan >= 0 ? nan : best;
        out->push_back(x[static_cast<size_t>(i)]);
        arg->push_back(i);
      }
    }
  }
}

}  // namespace

TEST(MaxPool2dKernel, ValuesAndArgmaxMatchTheDefinition) {
  const std::vector<PoolCase> cases = {
      {{2, 3, 6, 28}, 2, 2, 2, 2, 0, 0},  // the common 2x2 pool over wide rows (a path of its own)
      {{1, 2, 7, 9}, 2, 2, 2, 2, 0, 0},   // 2x2 with an odd last row and column that no window covers
      {{3, 5, 2}, 2, 2, 2, 2, 0, 0},      // 2x2, 3-D, one window row
      {{1, 2, 7, 19}, 3, 3, 1, 1, 1, 1},  // overlapping windows, padding on every side
      {{2, 5, 23}, 3, 2, 2, 3, 1, 1},     // 3-D input, uneven strides, clipped right edge
      {{1, 1, 4, 9}, 1, 4, 1, 1, 0, 2},   // one-row windows, wide padding
  };
  for (DType dt : {DType::Float32, DType::Float64}) {
    for (const PoolCase& c : cases) {
      SCOPED_TRACE(shape_str(c.x) + " kernel " + std::to_string(c.kh) + "x" + std::to_string(c.kw) + " " +
                   dtype_name(dt));
      // Values on a coarse grid (many ties) with some NaNs and infinities.
      std::vector<double> xv = values(static_cast<size_t>(shape_numel(c.x)), 11);
      for (size_t i = 0; i < xv.size(); ++i) {
        xv[i] = std::round(xv[i] * 3.0);
        if (i % 37 == 5) xv[i] = std::numeric_limits<double>::quiet_NaN();
        if (i % 41 == 7) xv[i] = -std::numeric_limits<double>::infinity();
      }
      const Tensor x = ops::cast(tensor(xv, c.x, DType::Float64), dt);
      const Tensor y = ops::max_pool2d(x, {c.kh, c.kw}, Size2{c.sh, c.sw}, {c.ph, c.pw});
      const int64_t oh = y.shape()[y.dim() - 2], ow = y.shape().back();
      std::vector<double> want;
      std::vector<int64_t> arg;
      naive_max_pool(xv, c, oh, ow, &want, &arg);
      const std::vector<double> got = y.to_vector<double>();
      ASSERT_EQ(got.size(), want.size());
      for (size_t o = 0; o < got.size(); ++o) {
        if (std::isnan(want[o])) EXPECT_TRUE(std::isnan(got[o])) << "output " << o;
        else EXPECT_EQ(got[o], want[o]) << "output " << o;
      }
      // The gradient puts each output's cotangent on its window's chosen element.
      const std::vector<double> dyv = values(got.size(), 12);
      const Tensor dy = ops::cast(tensor(dyv, y.shape(), DType::Float64), dt);
      const Fn pool = [&](const std::vector<Tensor>& in) -> Value {
        return ops::max_pool2d(in[0], {c.kh, c.kw}, Size2{c.sh, c.sw}, {c.ph, c.pw});
      };
      const Tensor dx_t = vjp(pool, {x}, dy).second[0];
      const std::vector<double> dy_cast = dy.to_vector<double>();
      std::vector<double> dx_want(xv.size(), 0.0);
      for (size_t o = 0; o < arg.size(); ++o) dx_want[static_cast<size_t>(arg[o])] += dy_cast[o];
      const std::vector<double> dx = dx_t.to_vector<double>();
      ASSERT_EQ(dx.size(), dx_want.size());
      // One window owns each element here, or none: 0 + dy exactly (a -0 cotangent lands as +0).
      const bool overlapping = c.kh > c.sh || c.kw > c.sw;
      for (size_t i = 0; i < dx.size(); ++i) {
        if (overlapping) EXPECT_NEAR(dx[i], dx_want[i], 1e-6) << "element " << i;
        else EXPECT_EQ(dx[i], dx_want[i]) << "element " << i;
      }
      // max_pool2d_gather (the second-order gradient's op) reads g at each window's chosen element.
      const std::vector<double> gv = values(xv.size(), 13);
      const Tensor g = ops::cast(tensor(gv, c.x, DType::Float64), dt);
      const Attrs attrs{{"kernel_size", IntList{c.kh, c.kw}}, {"stride", IntList{c.sh, c.sw}},
                        {"padding", IntList{c.ph, c.pw}}};
      const std::vector<double> gathered = call_op("max_pool2d_gather", {g, x}, attrs).to_vector<double>();
      const std::vector<double> g_cast = g.to_vector<double>();
      ASSERT_EQ(gathered.size(), arg.size());
      for (size_t o = 0; o < arg.size(); ++o) EXPECT_EQ(gathered[o], g_cast[static_cast<size_t>(arg[o])]) << o;
    }
  }
}
