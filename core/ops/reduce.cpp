// Reductions: sum mean prod amax amin logsumexp var std argmax argmin.
//
// Every kernel views x as (outer, red, inner) and reduces the middle axis: adjacent reduced axes merge
// into one, adjacent kept axes too, and size-1 axes are ignored. Loops cover that view: rows (inner == 1,
// contiguous lanes, pairwise summation), columns (inner > 1, e.g. the sum over the batch of a bias gradient: a
// row of accumulators updated one input row at a time), blocks (reduced, kept, reduced: axes 0, 2, 3 of NCHW,
// each lane a run of contiguous pieces) and, for layouts that fit none of these, a strided copy that moves the
// reduced axes last before the row loop. In the
// row loop, sums run four double accumulators over each leaf of a lane (then pairwise; float32 leaves go to
// the vectorised sum of kernels/cpu/vmath.h), and max, min, argmax and exp-sums use Eigen's vectorised
// reductions on the leaves.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "kernels/cpu/vmath.h"
#include "ops/op_helpers.h"
#include "ops/sum_order.h"
#include "registry/half_kernels.h"

namespace bprop {
namespace {

using namespace opdef;

// ---- layout -------------------------------------------------------------------------------------------

struct Layout {
  int64_t outer = 1, red = 1, inner = 1;
  // > 1: x is (blocks, outer, red), reduced over blocks and red (axes 0, 2 and 3 of NCHW: batch-norm
  // statistics); each output's lane is `blocks` contiguous runs, reduced in turn and combined in order.
  int64_t blocks = 1;
  std::vector<int64_t> perm;  // non-empty: x is first copied with its axes permuted by perm (then inner == 1)
};

Layout plan_layout(const Shape& shape, const std::vector<int64_t>& axes) {
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : axes) reduced[static_cast<size_t>(a)] = true;
  std::vector<std::pair<int64_t, bool>> groups;  // (size, reduced) of merged runs of axes
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!groups.empty() && groups.back().second == reduced[d]) {
      groups.back().first *= shape[d];
    } else {
      groups.emplace_back(shape[d], reduced[d]);
    }
  }
  Layout l;
  size_t g = 0;
  if (g < groups.size() && !groups[g].second) l.outer = groups[g++].first;
  if (g < groups.size() && groups[g].second) l.red = groups[g++].first;
  if (g < groups.size() && !groups[g].second) l.inner = groups[g++].first;
  if (g == groups.size()) return l;
  // (Not when the first reduced run is empty: the lanes are empty then, which the general layout handles.)
  if (groups.size() == 3 && groups[0].second && !groups[1].second && groups[2].second && groups[0].first > 0) {
    Layout b;  // reduced, kept, reduced
    b.blocks = groups[0].first;
    b.outer = groups[1].first;
    b.red = groups[2].first;
    return b;
  }
  Layout p;  // kept axes first, reduced axes last
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d]) {
      p.perm.push_back(static_cast<int64_t>(d));
      p.outer *= shape[d];
    }
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (reduced[d]) {
      p.perm.push_back(static_cast<int64_t>(d));
      p.red *= shape[d];
    }
  }
  return p;
}

// dst = src with its axes permuted by perm (dst's axis i is src's axis perm[i]), row-major both.
template <typename T>
void permute_copy(const T* src, const Shape& shape, const std::vector<int64_t>& perm, T* dst) {
  const size_t rank = perm.size();
  const int64_t total = shape_numel(shape);
  if (total == 0 || rank == 0) return;
  const std::vector<int64_t> st = row_major_strides(shape);
  Shape ps(rank);
  std::vector<int64_t> pst(rank);
  for (size_t i = 0; i < rank; ++i) {
    ps[i] = shape[static_cast<size_t>(perm[i])];
    pst[i] = st[static_cast<size_t>(perm[i])];
  }
  const int64_t inner = ps[rank - 1], inner_stride = pst[rank - 1];
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (int64_t o = 0; o < total; o += inner) {
    for (int64_t i = 0; i < inner; ++i) dst[o + i] = src[off + i * inner_stride];
    for (size_t d = rank - 1; d-- > 0;) {
      ++idx[d];
      off += pst[d];
      if (idx[d] < ps[d]) break;
      off -= pst[d] * ps[d];
      idx[d] = 0;
    }
  }
}

// ---- the reduction loops ------------------------------------------------------------------------------
// A reducer Red has: Acc; init(); step(acc, v, r, j) for the element at position r of output j's lane;
// combine(left, right) of two partial results (left covers earlier positions); finish(acc, j) writes out[j].
// Optionally kBlock = true and block(q, b, n, j): the result of the n contiguous elements at q, which are positions
// [b, b + n) of output j's lane (n <= kLeaf).

template <typename Red>
constexpr bool has_block = requires { requires Red::kBlock; };

constexpr int64_t kGrain = cpu::kParallelGrain;
constexpr int64_t kLeaf = sum_order::kLeaf;  // pairwise summation: lanes up to this length are summed directly
constexpr int64_t kCols = 1024;  // column loop: accumulators kept per block of output columns

// A leaf without a block(): the n elements at q (positions b, b + 1, ...) on four interleaved accumulators.
template <typename T, typename Red>
typename Red::Acc reduce_leaf(const Red& rd, const T* q, int64_t b, int64_t n, int64_t j) {
  typename Red::Acc a0 = rd.init(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a0 = rd.step(a0, q[i], b + i, j);
    a1 = rd.step(a1, q[i + 1], b + i + 1, j);
    a2 = rd.step(a2, q[i + 2], b + i + 2, j);
    a3 = rd.step(a3, q[i + 3], b + i + 3, j);
  }
  for (; i < n; ++i) a0 = rd.step(a0, q[i], b + i, j);
  return rd.combine(rd.combine(a0, a1), rd.combine(a2, a3));
}

// Reduces p[b, e) of one contiguous lane: leaves of at most kLeaf elements, halves combined pairwise.
template <typename T, typename Red>
typename Red::Acc reduce_lane(const Red& rd, const T* p, int64_t b, int64_t e, int64_t j) {
  if (e - b > kLeaf) {
    const int64_t mid = b + (e - b) / 2;
    return rd.combine(reduce_lane<T>(rd, p, b, mid, j), reduce_lane<T>(rd, p, mid, e, j));
  }
  if constexpr (has_block<Red>) {
    if (e > b) return rd.block(p + b, b, e - b, j);
  }
  return reduce_leaf(rd, p + b, b, e - b, j);
}

template <typename T, typename Red>
void run_reduce(const T* x, const Layout& l, const Red& rd) {
  using Acc = typename Red::Acc;
  const int64_t outer = l.outer, red = l.red, inner = l.inner;
  const int64_t nout = outer * inner;
  if (nout == 0) return;
  const int64_t lane_cost = std::max<int64_t>(red, 1);
  if (l.blocks > 1) {
    // Output o's reduced positions are k * red + t (block k, element t), read at x[(k * outer + o) * red + t]:
    // the lane pointer is shifted back by k * red so reduce_lane sees each block at its own positions.
    const int64_t blocks = l.blocks;
    cpu::parallel_for(outer, std::max<int64_t>(1, kGrain / (lane_cost * blocks)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        Acc a = reduce_lane<T>(rd, x + o * red, 0, red, o);
        for (int64_t k = 1; k < blocks; ++k) {
          const T* lane = x + (k * (outer - 1) + o) * red;
          a = rd.combine(a, reduce_lane<T>(rd, lane, k * red, (k + 1) * red, o));
        }
        rd.finish(a, o);
      }
    });
    return;
  }
  if (inner == 1) {
    const int64_t threads = cpu::num_threads();
    if (outer >= threads || outer * red < 2 * kGrain) {
      cpu::parallel_for(outer, std::max<int64_t>(1, kGrain / lane_cost), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) rd.finish(reduce_lane<T>(rd, x + o * red, 0, red, o), o);
      });
      return;
    }
    // Few long lanes: each is split over the threads and the partial results combined in order.
    const int64_t chunks = std::min<int64_t>(threads, (red + kGrain - 1) / kGrain);
    const int64_t step = (red + chunks - 1) / chunks;
    std::vector<Acc> part(static_cast<size_t>(chunks));
    for (int64_t o = 0; o < outer; ++o) {
      const T* lane = x + o * red;
      cpu::parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) {
          part[static_cast<size_t>(k)] = reduce_lane<T>(rd, lane, k * step, std::min(red, (k + 1) * step), o);
        }
      });
      Acc a = part[0];
      for (int64_t k = 1; k < chunks; ++k) a = rd.combine(a, part[static_cast<size_t>(k)]);
      rd.finish(a, o);
    }
    return;
  }
  // Columns: the outputs [b, e) are handled a block of columns at a time, reading x row by row.
  cpu::parallel_for(nout, std::max<int64_t>(1, kGrain / lane_cost), [&](int64_t b, int64_t e) {
    std::vector<Acc> acc;
    for (int64_t j = b; j < e;) {
      const int64_t o = j / inner, i0 = j % inner;
      const int64_t w = std::min({inner - i0, e - j, kCols});
      acc.assign(static_cast<size_t>(w), rd.init());
      const T* base = x + o * red * inner + i0;
      for (int64_t r = 0; r < red; ++r) {
        const T* row = base + r * inner;
        Acc* a = acc.data();
        for (int64_t i = 0; i < w; ++i) a[i] = rd.step(a[i], row[i], r, j + i);
      }
      for (int64_t i = 0; i < w; ++i) rd.finish(acc[static_cast<size_t>(i)], j + i);
      j += w;
    }
  });
}

// ---- reducers -----------------------------------------------------------------------------------------

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    (void)v;
    return false;
  }
}

// Sums and products accumulate floats in double and int32 in unsigned 64-bit arithmetic (wrapping modulo
// 2^32 in the end, as NumPy's int32 does).
template <typename T>
using Wide = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

template <typename T>
Wide<T> widen(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(v);
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
}

template <typename T>
T narrow(Wide<T> a) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(a);
  } else {
    return static_cast<T>(static_cast<uint32_t>(a));
  }
}

template <typename T>
using Vec = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

// float32 leaves are summed by the vectorised loop of kernels/cpu/vmath.h (in double, like the others).
template <typename T>
double float_leaf_sum(const T* q, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    return cpu::vm::sum(q, n);
  } else {
    (void)q, (void)n;
    return 0.0;
  }
}

template <typename T>
struct SumRed {
  using Acc = Wide<T>;
  static constexpr bool kBlock = std::is_same_v<T, float>;
  T* out;
  Acc init() const { return Acc(0); }
  Acc block(const T* q, int64_t, int64_t n, int64_t) const { return float_leaf_sum(q, n); }
  Acc step(Acc a, T v, int64_t, int64_t) const { return a + widen(v); }
  Acc combine(Acc a, Acc b) const { return a + b; }
  void finish(Acc a, int64_t j) const { out[j] = narrow<T>(a); }
};

// Products stay in double throughout (a float leaf could overflow where the whole product does not).
template <typename T>
struct ProdRed {
  using Acc = Wide<T>;
  T* out;
  Acc init() const { return Acc(1); }
  Acc step(Acc a, T v, int64_t, int64_t) const { return a * widen(v); }
  Acc combine(Acc a, Acc b) const { return a * b; }
  void finish(Acc a, int64_t j) const { out[j] = narrow<T>(a); }
};

// The sum divided by `count` into a double buffer (a mean of the lane, for var and std) or into out.
template <typename T, typename O>
struct MeanRed {
  using Acc = double;
  static constexpr bool kBlock = std::is_same_v<T, float>;
  O* out;
  double count;
  Acc init() const { return 0.0; }
  Acc block(const T* q, int64_t, int64_t n, int64_t) const { return float_leaf_sum(q, n); }
  Acc step(Acc a, T v, int64_t, int64_t) const { return a + static_cast<double>(v); }
  Acc combine(Acc a, Acc b) const { return a + b; }
  void finish(Acc a, int64_t j) const { out[j] = static_cast<O>(a / count); }
};

// The largest (Max) or smallest of the n > 0 elements at q; NaN propagates (as NumPy's amax).
template <bool Max, typename T>
T extreme_of(const T* q, int64_t n) {
  const Vec<T> v(q, n);
  if constexpr (std::is_floating_point_v<T>) {
    return Max ? v.template maxCoeff<Eigen::PropagateNaN>() : v.template minCoeff<Eigen::PropagateNaN>();
  } else {
    return Max ? v.maxCoeff() : v.minCoeff();
  }
}

// amax / amin; NaN propagates.
template <typename T, bool Max>
struct ExtremeRed {
  using Acc = T;
  static constexpr bool kBlock = true;
  T* out;
  Acc init() const {
    if constexpr (std::is_floating_point_v<T>) {
      return Max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    } else {
      return Max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
  }
  Acc step(Acc a, T v, int64_t, int64_t) const { return combine(a, v); }
  Acc combine(Acc a, Acc b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return (Max ? b > a : b < a) ? b : a;
  }
  Acc block(const T* q, int64_t, int64_t n, int64_t) const { return extreme_of<Max>(q, n); }
  void finish(Acc a, int64_t j) const { out[j] = a; }
};

// argmax / argmin: the first position of the extreme value (the first NaN when there is one).
template <typename T, bool Max>
struct ArgRed {
  struct Acc {
    T v;
    int64_t i;
  };
  static constexpr bool kBlock = true;
  int32_t* out;
  Acc init() const { return {T(), -1}; }
  // True when candidate c replaces the current best a.
  static bool better(const Acc& c, const Acc& a) {
    if (a.i < 0) return c.i >= 0;
    if (c.i < 0) return false;
    const bool cn = is_nan(c.v), an = is_nan(a.v);
    if (cn || an) return cn && (!an || c.i < a.i);
    if (Max ? c.v > a.v : c.v < a.v) return true;
    return c.v == a.v && c.i < a.i;
  }
  Acc step(Acc a, T v, int64_t r, int64_t) const {
    const Acc c{v, r};
    return better(c, a) ? c : a;
  }
  Acc combine(Acc a, Acc b) const { return better(b, a) ? b : a; }
  // Two passes over a leaf: its extreme value (vectorised), then the first position holding it.
  Acc block(const T* q, int64_t b, int64_t n, int64_t) const {
    const T best = extreme_of<Max>(q, n);
    int64_t r = 0;
    if (is_nan(best)) {
      while (!is_nan(q[r])) ++r;
    } else {
      while (q[r] != best) ++r;
    }
    return {best, b + r};
  }
  void finish(Acc a, int64_t j) const { out[j] = static_cast<int32_t>(std::max<int64_t>(a.i, 0)); }
};

// logsumexp's second pass: shift[j] + log(sum exp(x - shift[j])), shift the lane's max where finite.
// exp runs in T (vectorised over a leaf), the sums of leaves in double.
template <typename T>
struct LogSumExpRed {
  using Acc = double;
  static constexpr bool kBlock = true;
  const T* shift;
  T* out;
  Acc init() const { return 0.0; }
  Acc step(Acc a, T v, int64_t, int64_t j) const { return a + static_cast<double>(std::exp(v - shift[j])); }
  Acc combine(Acc a, Acc b) const { return a + b; }
  Acc block(const T* q, int64_t, int64_t n, int64_t j) const {
    return static_cast<double>((Vec<T>(q, n) - shift[j]).exp().sum());
  }
  void finish(Acc a, int64_t j) const { out[j] = static_cast<T>(static_cast<double>(shift[j]) + std::log(a)); }
};

// var / std second pass: sum (x - mean[j])^2 / max(N - correction, 0), square-rooted for std.
template <typename T>
struct SquaredDevRed {
  using Acc = double;
  const double* mean;
  double denom;
  bool root;
  T* out;
  Acc init() const { return 0.0; }
  Acc step(Acc a, T v, int64_t, int64_t j) const {
    const double d = static_cast<double>(v) - mean[j];
    return a + d * d;
  }
  Acc combine(Acc a, Acc b) const { return a + b; }
  void finish(Acc a, int64_t j) const {
    const double v = a / denom;
    out[j] = static_cast<T>(root ? std::sqrt(v) : v);
  }
};

// A reducer over float32 values (Red) reading float16 or bfloat16 storage S, for PyTorch's CPU semantics (the
// float32 reduction of the exactly widened input, rounded once): each leaf is widened into a float32 tile on the
// stack and reduced as Red reduces float32, so the result is Red's on a float32 copy of the input, bit for bit,
// without that copy. (The column loop widens element by element.)
template <typename S, typename Red>
struct HalfLanes {
  using Acc = typename Red::Acc;
  static constexpr bool kBlock = true;
  Red rd;
  Acc init() const { return rd.init(); }
  Acc step(Acc a, S v, int64_t r, int64_t j) const { return rd.step(a, static_cast<float>(v), r, j); }
  Acc combine(Acc a, Acc b) const { return rd.combine(a, b); }
  Acc block(const S* q, int64_t b, int64_t n, int64_t j) const {
    float tile[kLeaf];
    if constexpr (std::is_same_v<S, Half>) half_to_float(q, tile, n);
    else bfloat16_to_float(q, tile, n);
    if constexpr (has_block<Red>) return rd.block(tile, b, n, j);
    else return reduce_leaf(rd, tile, b, n, j);
  }
  void finish(Acc a, int64_t j) const { rd.finish(a, j); }
};

template <typename S>
constexpr bool kHalfStorage = std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>;

// Runs `rd`, a reducer over the compute type, on x stored as S (through HalfLanes for half storage).
template <typename S, typename Red>
void reduce_stored(const S* x, const Layout& l, const Red& rd) {
  if constexpr (kHalfStorage<S>) run_reduce(x, l, HalfLanes<S, Red>{rd});
  else run_reduce(x, l, rd);
}

// ---- kernels ------------------------------------------------------------------------------------------

template <typename Fn>
void visit_numeric(DType dt, Fn&& fn) {
  visit_dtype(dt, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) fn.template operator()<T>();
  });
}

std::vector<int64_t> axes_attr(const std::string& op, const Attrs& attrs, int64_t rank) {
  return reduce_axes(op, attrs.get("axis"), rank);
}

int64_t reduced_count(const Shape& shape, const std::vector<int64_t>& axes) {
  int64_t n = 1;
  for (int64_t a : axes) n *= shape[static_cast<size_t>(a)];
  return n;
}

// x converted to the compute dtype (a half input stays half: HalfLanes widens it) and laid out for run_reduce.
struct Prepared {
  Tensor x;
  Layout layout;
  int64_t count = 1;  // elements per output (N)
};

Prepared prepare(const KernelCtx& c, DType compute) {
  Prepared p;
  p.x = is_half(c.inputs[0].dtype()) ? c.inputs[0] : cpu::as_dtype(c.inputs[0], compute);
  compute = p.x.dtype();
  const std::vector<int64_t> axes = axes_attr(c.op.name, c.attrs, p.x.dim());
  p.count = reduced_count(p.x.shape(), axes);
  p.layout = plan_layout(p.x.shape(), axes);
  if (!p.layout.perm.empty()) {
    Tensor moved = Tensor::empty(p.x.shape(), compute);
    visit_storage_dtype(compute, [&]<typename T>() {
      permute_copy(p.x.data<T>(), p.x.shape(), p.layout.perm, moved.data<T>());
    });
    p.x = moved;
  }
  return p;
}

// Calls body.template operator()<S, T>(x, out) on the prepared input: x stored as S, values and output of type T.
// A half input gives its storage type S and T = float, the float32 result rounded once into the half output;
// any other input has been converted to the output's dtype (S = T: a float dtype, or any numeric one with
// kAnyNumeric).
template <bool kAnyNumeric, typename Body>
void reduce_into_output(KernelCtx& c, const Prepared& p, Body&& body) {
  if (is_half(p.x.dtype())) {
    if (!c.out.defined()) c.out = Tensor::empty(c.out_shape, c.out_dtype, Device::cpu(), c.op.name);
    Tensor result = is_half(c.out_dtype) ? Tensor::empty(c.out_shape, DType::Float32) : c.out;
    visit_storage_dtype(p.x.dtype(), [&]<typename S>() {
      if constexpr (kHalfStorage<S>) body.template operator()<S, float>(p.x.data<S>(), result.data<float>());
    });
    if (is_half(c.out_dtype)) round_half(c.out_dtype, result.data<float>(), c.out.raw_data(), result.numel());
    return;
  }
  auto same = [&]<typename T>() { body.template operator()<T, T>(p.x.data<T>(), c.out.data<T>()); };
  if constexpr (kAnyNumeric) visit_numeric(c.out_dtype, same);
  else visit_float(c.out_dtype, same);
}

void sum_kernel(KernelCtx& c) {
  const Prepared p = prepare(c, c.out_dtype);
  reduce_into_output<true>(c, p, [&]<typename S, typename T>(const S* x, T* out) {
    reduce_stored(x, p.layout, SumRed<T>{out});
  });
}

void prod_kernel(KernelCtx& c) {
  const Prepared p = prepare(c, c.out_dtype);
  visit_numeric(c.out_dtype, [&]<typename T>() { run_reduce(p.x.data<T>(), p.layout, ProdRed<T>{c.out.data<T>()}); });
}

void mean_kernel(KernelCtx& c) {
  const Prepared p = prepare(c, c.out_dtype);
  reduce_into_output<false>(c, p, [&]<typename S, typename T>(const S* x, T* out) {
    reduce_stored(x, p.layout, MeanRed<T, T>{out, static_cast<double>(p.count)});
  });
}

template <bool Max>
void extreme_kernel(KernelCtx& c) {
  const Prepared p = prepare(c, c.out_dtype);
  reduce_into_output<true>(c, p, [&]<typename S, typename T>(const S* x, T* out) {
    reduce_stored(x, p.layout, ExtremeRed<T, Max>{out});
  });
}

template <bool Max>
void arg_kernel(KernelCtx& c) {
  const DType in = c.inputs[0].dtype() == DType::Bool ? DType::Int32 : c.inputs[0].dtype();
  const Prepared p = prepare(c, in);
  if (!c.out.defined()) c.out = Tensor::empty(c.out_shape, c.out_dtype, Device::cpu(), c.op.name);
  visit_storage_dtype(in, [&]<typename S>() {
    if constexpr (kHalfStorage<S>) {
      reduce_stored(p.x.data<S>(), p.layout, ArgRed<float, Max>{c.out.data<int32_t>()});
    } else if constexpr (!std::is_same_v<S, bool>) {
      run_reduce(p.x.data<S>(), p.layout, ArgRed<S, Max>{c.out.data<int32_t>()});
    }
  });
}

void logsumexp_kernel(KernelCtx& c) {
  const Prepared p = prepare(c, c.out_dtype);
  reduce_into_output<false>(c, p, [&]<typename S, typename T>(const S* x, T* out) {
    std::vector<T> shift(static_cast<size_t>(c.out.numel()));
    reduce_stored(x, p.layout, ExtremeRed<T, true>{shift.data()});
    for (T& s : shift) {
      if (!std::isfinite(s)) s = T(0);  // all -inf gives -inf, any +inf gives +inf, NaN stays NaN
    }
    reduce_stored(x, p.layout, LogSumExpRed<T>{shift.data(), out});
  });
}

void var_std_kernel(KernelCtx& c, bool root) {
  const Prepared p = prepare(c, c.out_dtype);
  const int64_t correction = c.attrs.get_int("correction");
  const double denom = static_cast<double>(std::max<int64_t>(p.count - correction, 0));  // as NumPy's ddof
  reduce_into_output<false>(c, p, [&]<typename S, typename T>(const S* x, T* out) {
    std::vector<double> mean(static_cast<size_t>(c.out.numel()));
    reduce_stored(x, p.layout, MeanRed<T, double>{mean.data(), static_cast<double>(p.count)});
    reduce_stored(x, p.layout, SquaredDevRed<T>{mean.data(), denom, root, out});
  });
}

// ---- shape rules --------------------------------------------------------------------------------------

Shape keepdims_shape(const Shape& shape, const std::vector<int64_t>& axes) {
  Shape s = shape;
  for (int64_t a : axes) s[static_cast<size_t>(a)] = 1;
  return s;
}

Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& axes, bool keepdims) {
  if (keepdims) return keepdims_shape(shape, axes);
  Shape s;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) == axes.end()) s.push_back(shape[d]);
  }
  return s;
}

Shape reduce_shape(const InferCtx& c) {
  const Shape& shape = c.input(0).shape();
  return reduced_shape(shape, reduce_axes(c, c.attrs.get("axis"), c.input(0).dim()), c.attrs.get_bool("keepdims"));
}

// amax, amin, argmax, argmin: an output element over an empty lane has no value (NumPy's ValueError).
Shape reduce_shape_no_identity(const InferCtx& c) {
  const Shape& shape = c.input(0).shape();
  const std::vector<int64_t> axes = reduce_axes(c, c.attrs.get("axis"), c.input(0).dim());
  const Shape out = reduced_shape(shape, axes, c.attrs.get_bool("keepdims"));
  if (reduced_count(shape, axes) == 0 && shape_numel(out) > 0) {
    c.value_error("cannot reduce argument 'x' of shape " + shape_str(shape) + " over the empty axis " +
                  attr_value_str(c.attrs.get("axis")) + ": the reduction has no identity");
  }
  return out;
}

Shape arg_shape(const InferCtx& c) {
  const AttrValue& axis = c.attrs.get("axis");
  if (const IntList* list = std::get_if<IntList>(&axis); list && list->size() != 1) {
    c.value_error("'axis' must be one axis or null, got " + attr_value_str(axis) + " for argument 'x' of shape " +
                  shape_str(c.input(0).shape()));
  }
  return reduce_shape_no_identity(c);  // axis null: a flat index, 0-d (all ones of x's rank with keepdims)
}

Shape var_shape(const InferCtx& c) {
  const int64_t correction = c.attrs.get_int("correction");
  if (correction != 0 && correction != 1) {
    c.value_error("attribute 'correction' must be 0 or 1, got " + std::to_string(correction));
  }
  return reduce_shape(c);
}

// ---- bprop helpers ------------------------------------------------------------------------------------

struct ReduceInfo {
  std::vector<int64_t> axes;
  Shape kept;     // x's shape with the reduced axes set to 1: dout reshaped to it broadcasts against x
  int64_t count;  // N, elements per output
};

ReduceInfo reduce_info(const char* op, const BpropCtx& c) {
  const Tensor& x = c.input(0);
  ReduceInfo info;
  info.axes = axes_attr(op, c.attrs, x.dim());
  info.kept = keepdims_shape(x.shape(), info.axes);
  info.count = reduced_count(x.shape(), info.axes);
  return info;
}

// t (shaped like the op's output) reshaped to the keepdims shape.
Tensor keep(const Tensor& t, const Shape& kept) { return t.shape() == kept ? t : ops::reshape(t, kept); }

Tensor expand_to(const Tensor& t, const Shape& shape) { return t.shape() == shape ? t : ops::broadcast_to(t, shape); }

IntList axes_list(const std::vector<int64_t>& axes) { return IntList(axes.begin(), axes.end()); }

// amax / amin: dout goes to the elements equal to the result, split evenly among ties (as PyTorch's amax).
std::vector<Tensor> extreme_bprop(const char* op, const BpropCtx& c) {
  const ReduceInfo info = reduce_info(op, c);
  const Tensor& x = c.input(0);
  const Tensor mask = mask_as(ops::equal(x, keep(c.out, info.kept)), x);
  const Tensor ties = ops::sum(mask, axes_list(info.axes), true);
  return {mask * (keep(c.dout, info.kept) / ties)};
}

struct ReduceOp {
  const char* name;
  InferShapeFn shape;
  InferDTypeFn dtype;
  KernelFn kernel;
  BpropFn bprop;  // empty: no grad
  bool correction = false;
};

}  // namespace

void register_reduce_ops(Registry& r) {
  const std::vector<ReduceOp> table = {
      // sum: dx = broadcast_to(dout with the reduced axes kept, x.shape); a 0-d dout (a full sum) broadcasts
      // as it is, in one fill
      {"sum", reduce_shape, numeric_dtype, sum_kernel,
       [](const BpropCtx& c) -> std::vector<Tensor> {
         if (c.dout.dim() == 0) return {expand_to(c.dout, c.input(0).shape())};
         const ReduceInfo info = reduce_info("sum", c);
         return {expand_to(keep(c.dout, info.kept), c.input(0).shape())};
       }},
      // mean: dx = broadcast_to(dout, x.shape) / N
      {"mean", reduce_shape, float_dtype, mean_kernel,
       [](const BpropCtx& c) -> std::vector<Tensor> {
         const ReduceInfo info = reduce_info("mean", c);
         return {expand_to(keep(c.dout, info.kept) / static_cast<double>(info.count), c.input(0).shape())};
       }},
      // prod: dx_i = dout * prod_{j != i} x_j, i.e. out / x in a lane without zeros; at a lane's only zero the
      // product of the others; 0 elsewhere (as PyTorch). Exact at first order; at second order exact where a
      // lane holds at most one zero (with two or more, the cross terms between the zeros are dropped).
      {"prod", reduce_shape, numeric_dtype, prod_kernel,
       [](const BpropCtx& c) -> std::vector<Tensor> {
         const ReduceInfo info = reduce_info("prod", c);
         const Tensor& x = c.input(0);
         const IntList axes = axes_list(info.axes);
         const Tensor is_zero = ops::equal(x, like(0.0, x));
         const Tensor x_safe = ops::where(is_zero, like(1.0, x), x);
         const Tensor zeros_in_lane = ops::sum(mask_as(is_zero, x), axes, true);
         const Tensor others = ops::where(ops::equal(zeros_in_lane, like(1.0, x)), ops::prod(x_safe, axes, true),
                                          like(0.0, x));
         return {keep(c.dout, info.kept) * ops::where(is_zero, others, keep(c.out, info.kept) / x_safe)};
       }},
      // amax: dx = dout * (x == out) / (number of ties)
      {"amax", reduce_shape_no_identity, numeric_dtype, extreme_kernel<true>,
       [](const BpropCtx& c) { return extreme_bprop("amax", c); }},
      // amin: dx = dout * (x == out) / (number of ties)
      {"amin", reduce_shape_no_identity, numeric_dtype, extreme_kernel<false>,
       [](const BpropCtx& c) { return extreme_bprop("amin", c); }},
      // logsumexp: dx = dout * exp(x - out)
      {"logsumexp", reduce_shape, float_dtype, logsumexp_kernel,
       [](const BpropCtx& c) -> std::vector<Tensor> {
         const ReduceInfo info = reduce_info("logsumexp", c);
         return {keep(c.dout, info.kept) * ops::exp(c.input(0) - keep(c.out, info.kept))};
       }},
      // var: dx = dout * 2 (x - mean(x)) / (N - correction)
      {"var", var_shape, float_dtype, [](KernelCtx& c) { var_std_kernel(c, false); },
       [](const BpropCtx& c) -> std::vector<Tensor> {
         const ReduceInfo info = reduce_info("var", c);
         const Tensor& x = c.input(0);
         const double denom = static_cast<double>(info.count - c.attrs.get_int("correction"));
         const Tensor centered = x - ops::mean(x, axes_list(info.axes), true);
         return {keep(c.dout, info.kept) * centered * (2.0 / denom)};
       },
       true},
      // std: dx = dout * (x - mean(x)) / ((N - correction) * out)
      {"std", var_shape, float_dtype, [](KernelCtx& c) { var_std_kernel(c, true); },
       [](const BpropCtx& c) -> std::vector<Tensor> {
         const ReduceInfo info = reduce_info("std", c);
         const Tensor& x = c.input(0);
         const double denom = static_cast<double>(info.count - c.attrs.get_int("correction"));
         const Tensor centered = x - ops::mean(x, axes_list(info.axes), true);
         return {keep(c.dout, info.kept) * centered / (keep(c.out, info.kept) * denom)};
       },
       true},
      {"argmax", arg_shape, [](const InferCtx&) { return DType::Int32; }, arg_kernel<true>, nullptr},
      {"argmin", arg_shape, [](const InferCtx&) { return DType::Int32; }, arg_kernel<false>, nullptr},
  };
  for (const auto& d : table) {
    OpDef op;
    op.name = d.name;
    op.family = "reduce";
    op.inputs = {{"x"}};
    op.attrs = {{"axis", AttrKind::Axes, std::monostate{}}, {"keepdims", AttrKind::Bool, false}};
    if (d.correction) op.attrs.push_back({"correction", AttrKind::Int, int64_t{1}});
    op.infer_shape = d.shape;
    op.infer_dtype = d.dtype;
    op.cpu(d.kernel);
    op.bprop = d.bprop;
    // sum's and mean's bprops read the input's shape and dout only (prod, amax, amin, logsumexp, ... read `out`)
    op.bprop_reads_out = std::string_view(d.name) != "sum" && std::string_view(d.name) != "mean";
    op.no_grad = !d.bprop;
    // Accumulating reductions run in float32 under mixed precision (PyTorch autocast's float32 list): a loss
    // summed or averaged over a batch in half loses digits and overflows float16 at 65504. amax/amin/argmax
    // are exact in any dtype and follow their input.
    const std::string_view n = d.name;
    if (n == "logsumexp" || n == "sum" || n == "mean" || n == "prod" || n == "var" || n == "std")
      op.amp = AmpClass::Float32;
    op.takes_half = n != "prod";
    // A half input is read in tiles (HalfLanes) rather than through a float32 copy of it: the kernel takes the
    // half call itself.
    if (op.takes_half) {
      op.cpu_half = [kernel = d.kernel](KernelCtx& c) {
        kernel(c);
        return true;
      };
    }
    r.add(std::move(op));
  }
}

}  // namespace bprop
