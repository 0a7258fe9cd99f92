// What keeps small-tensor code cheap: recycled blocks, inline small vectors, shared scalar operands, and a tape
// that still frees every node (long chains included) and still differentiates correctly through all of it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bprop/bprop.h"
#include "bprop/pool.h"
#include "bprop/small_vector.h"
#include "primitive_test_util.h"
#include "autodiff/functional.h"
#include "autodiff/tape.h"
#include "registry/arg_lists.h"
#include "tensor/buffer_cache.h"

using namespace bprop;

TEST(SmallVector, StaysInlineThenSpillsKeepingOrder) {
  SmallVector<std::shared_ptr<int>, 2> v;
  EXPECT_TRUE(v.empty());
  auto a = std::make_shared<int>(1);
  v.push_back(a);
  v.push_back(std::make_shared<int>(2));
  EXPECT_EQ(a.use_count(), 2);
  v.push_back(std::make_shared<int>(3));  // spills to the heap
  v.push_back(std::make_shared<int>(4));
  ASSERT_EQ(v.size(), 4u);
  int expected = 1;
  for (const auto& p : v) EXPECT_EQ(*p, expected++);
  EXPECT_EQ(*v.back(), 4);
  v.pop_back();
  EXPECT_EQ(*v.back(), 3);

  SmallVector<std::shared_ptr<int>, 2> copy = v;
  EXPECT_EQ(copy.size(), 3u);
  EXPECT_EQ(a.use_count(), 3);
  SmallVector<std::shared_ptr<int>, 2> moved = std::move(copy);
  EXPECT_EQ(moved.size(), 3u);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from SmallVector is empty by contract
  EXPECT_EQ(a.use_count(), 3);
  moved.clear();
  v.clear();
  EXPECT_EQ(a.use_count(), 1);  // clearing releases the inline slots too
}

TEST(SmallVector, ResizeValueInitialisesAndReleases) {
  SmallVector<std::shared_ptr<int>, 3> v;
  v.resize(2);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], nullptr);
  auto a = std::make_shared<int>(7);
  v[1] = a;
  v.resize(1);
  EXPECT_EQ(a.use_count(), 1);
  v.resize(5);
  EXPECT_EQ(v.size(), 5u);
  for (const auto& p : v) EXPECT_EQ(p, nullptr);
}

TEST(Pool, RecyclesBlocksOfASizeClass) {
  void* a = pool::allocate(100);
  pool::deallocate(a, 100);
  void* b = pool::allocate(97);  // same 16-byte class as 100
  EXPECT_EQ(a, b);
  pool::deallocate(b, 97);
  void* big = pool::allocate(pool::kMaxBlock + 1);  // served by operator new
  ASSERT_NE(big, nullptr);
  pool::deallocate(big, pool::kMaxBlock + 1);
}

TEST(Pool, BlocksMayBeFreedOnAnotherThread) {
  auto shared = pool::make_shared<std::string>("made on the main thread, long enough to allocate");
  std::thread t([s = std::move(shared)]() mutable { s.reset(); });
  t.join();
  // A thread's own lists outlive nothing it allocated: a tensor made and dropped on a short-lived thread is fine.
  std::thread u([] {
    Tensor x = scalar(2.0);
    EXPECT_DOUBLE_EQ((x * 3.0).item(), 6.0);
  });
  u.join();
}

TEST(ScalarOperands, RepeatedConstantsKeepTheirDtypeAndValue) {
  const Tensor f32 = scalar(1.5);
  const Tensor f64 = scalar(1.5, DType::Float64);
  const Tensor i32 = full({}, 3, DType::Int32);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ((f32 * 2.0).dtype(), DType::Float32);
    EXPECT_EQ((f64 * 2.0).dtype(), DType::Float64);
    EXPECT_DOUBLE_EQ((f64 * 2.0).item(), 3.0);
    EXPECT_EQ((i32 * 2.0).dtype(), DType::Int32);  // an integral constant keeps an int tensor int
    EXPECT_EQ((i32 * 2.5).dtype(), DType::Float32);  // a fractional one promotes, as in PyTorch
    EXPECT_DOUBLE_EQ((i32 * 2.5).item(), 7.5);
    EXPECT_TRUE(std::isnan((f32 * std::nan("")).item()));
    EXPECT_DOUBLE_EQ((f32 - 0.5).item(), 1.0);
    EXPECT_DOUBLE_EQ((0.5 - f32).item(), -1.0);
  }
  // More distinct constants than the cache holds: every result is still right.
  for (int k = 0; k < 40; ++k) EXPECT_DOUBLE_EQ((f64 + k).item(), 1.5 + k) << k;
}

TEST(ScalarOperands, PublicScalarLikeIsAFreshTensor) {
  const Tensor x = scalar(1.0);
  Tensor a = scalar_like(4.0, x);
  Tensor b = scalar_like(4.0, x);
  EXPECT_FALSE(a.same(b));
  a.data<float>()[0] = 5;  // the caller owns it
  EXPECT_DOUBLE_EQ(b.item(), 4.0);
  EXPECT_DOUBLE_EQ((x * 4.0).item(), 4.0);
}

TEST(Tape, LongScalarChainGradientMatchesTheChainRule) {
  // The benchmark's scalar chain, shortened: y = sin(y) * 1.0001 + 0.1.
  constexpr int kIters = 2000;
  auto fn = [](const std::vector<Tensor>& a) -> Value {
    Tensor y = a[0];
    for (int i = 0; i < kIters; ++i) y = ops::sin(y) * 1.0001 + 0.1;
    return y;
  };
  const Value r = value_and_grad(fn, 0)({scalar(0.5, DType::Float64)});
  double y = 0.5, g = 1.0;
  for (int i = 0; i < kIters; ++i) {
    g *= 1.0001 * std::cos(y);
    y = std::sin(y) * 1.0001 + 0.1;
  }
  EXPECT_NEAR(r[0].tensor().item(), y, 1e-12);
  EXPECT_NEAR(r[1].tensor().item(), g, 1e-12 * std::abs(g) + 1e-300);
}

// MindSpore's SetUnusedInputs for the output: a node keeps its op's output only when the op's bprop reads it.
TEST(Tape, ANodeKeepsItsOutputOnlyWhenItsBpropReadsIt) {
  const int level = autodiff::open_level();
  std::shared_ptr<autodiff::Node> leaf;
  const Tensor x = autodiff::make_leaf(scalar(0.5, DType::Float64), level, leaf);
  const Tensor s = ops::sin(x);      // d sin = cos(x) dout: the input only
  const Tensor m = x * x;            // the inputs only
  const Tensor e = ops::exp(x);      // d exp = out dout
  const Tensor t = ops::tanh(x);     // tanh_grad(out, dout)
  autodiff::close_level(level);
  EXPECT_FALSE(autodiff::node_at(s, level)->out.defined());
  EXPECT_FALSE(autodiff::node_at(m, level)->out.defined());
  EXPECT_TRUE(autodiff::node_at(e, level)->out.defined());
  EXPECT_TRUE(autodiff::node_at(t, level)->out.defined());
  // The default keeps it: an op registered without the declaration (every user primitive) is always safe.
  EXPECT_TRUE(OpDef{}.bprop_reads_out);
  // Gradients through both kinds, first and second order (the shared vectors check every op this way).
  auto f = [](const std::vector<Tensor>& a) -> Value { return ops::exp(ops::sin(a[0])) * a[0]; };
  const double v = 0.5;
  const double d1 = grad(f, 0)({scalar(v, DType::Float64)}).tensor().item();
  const double d2 = grad(grad(f, 0), 0)({scalar(v, DType::Float64)}).tensor().item();
  const double es = std::exp(std::sin(v)), c = std::cos(v), sn = std::sin(v);
  EXPECT_NEAR(d1, es * (c * v + 1), 1e-12);
  EXPECT_NEAR(d2, es * (c * c * v + 2 * c - sn * v), 1e-12);
}

TEST(Tape, AUserPrimitiveThatDeclaresItsBpropDoesNotReadOutKeepsNoOutput) {
  // cube(x) = x^3, d = 3 x^2 dout: written from the input, so `out` is not needed.
  for (const bool reads_out : {true, false}) {
    const std::string name = reads_out ? "tape_test_cube_reads_out" : "tape_test_cube";
    PrimitiveDef def = primtest::elementwise_float64(name, [](double x) { return x * x * x; });
    def.bprop = [reads_out](const std::vector<Tensor>& in, const Tensor& out, const Tensor& dout) -> std::vector<Tensor> {
      EXPECT_EQ(out.defined(), reads_out);  // an undefined tensor when the primitive said it does not read it
      return {in[0] * in[0] * 3.0 * dout};
    };
    def.bprop_reads_out = reads_out;
    register_primitive(def);
    const int level = autodiff::open_level();
    std::shared_ptr<autodiff::Node> leaf;
    const Tensor x = autodiff::make_leaf(scalar(0.5, DType::Float64), level, leaf);
    const Tensor y = call_op(name, {x});
    autodiff::close_level(level);
    EXPECT_EQ(autodiff::node_at(y, level)->out.defined(), reads_out) << name;
    // first and second order through it
    const Fn f = [&](const std::vector<Tensor>& a) -> Value { return call_op(name, {a[0]}); };
    EXPECT_NEAR(grad(f, 0)({scalar(2.0, DType::Float64)}).tensor().item(), 12.0, 1e-12) << name;
    EXPECT_NEAR(grad(grad(f, 0), 0)({scalar(2.0, DType::Float64)}).tensor().item(), 12.0, 1e-12) << name;
  }
}

// grad walks its tape once, so each node's saved inputs go as soon as its bprop has run (PyTorch's
// retain_graph=False), and the node itself with them; a vjp's pullback may be called again and keeps both. A probe
// at the bottom of a chain of sins, whose bprop runs last, sees the difference: the chain's saved inputs and its
// nodes are gone in one case, not in the other.
TEST(Tape, AGradWalkFreesEachNodeAndWhatItSavedOnceItsBpropHasRun) {
  static int64_t bytes_seen = -1;
  static std::weak_ptr<autodiff::Node> top_sin;  // the node of the last sin, which runs first
  static bool top_sin_alive = false;
  PrimitiveDef def = primtest::elementwise_float64("tape_test_probe", [](double x) { return x; });
  def.bprop = [](const std::vector<Tensor>&, const Tensor&, const Tensor& dout) -> std::vector<Tensor> {
    bytes_seen = memory_stats().bytes;
    top_sin_alive = !top_sin.expired();
    return {dout};
  };
  def.bprop_reads_out = false;
  register_primitive(def);
  constexpr int kSins = 20;
  constexpr int64_t kBytes = 10000 * 8;  // one float64 tensor of the chain
  auto chain = [](const std::vector<Tensor>& a) -> Value {
    Tensor y = call_op("tape_test_probe", {a[0]});
    for (int i = 0; i < kSins; ++i) y = ops::sin(y);
    top_sin = y.impl()->trace.back().node;
    return ops::sum(y);
  };
  const Tensor x = arange(0, 10000, 1, DType::Float64) * 1e-4;

  const Tensor g = grad(chain, 0)({x}).tensor();
  const int64_t during_grad = bytes_seen;
  EXPECT_FALSE(top_sin_alive);
  const autodiff::Pullback pb = autodiff::forward_for_vjp(chain, {x}, {0}, "vjp");
  const Tensor g_again = pb(ones({}, DType::Float64))[0];
  const int64_t during_vjp = bytes_seen;
  EXPECT_TRUE(top_sin_alive);
  EXPECT_LT(during_grad + kSins / 2 * kBytes, during_vjp) << during_grad << " bytes vs " << during_vjp;
  EXPECT_EQ(g.to_vector<double>(), g_again.to_vector<double>());  // the same gradient either way
  const Tensor twice = pb(ones({}, DType::Float64))[0];           // and the pullback still walks again
  EXPECT_EQ(g.to_vector<double>(), twice.to_vector<double>());
}

// A walk that fails half-way (a bprop throws) leaves nothing behind: the same graph walked again, and new graphs,
// get exactly the gradients of a walk that never failed.
TEST(Tape, AWalkThatFailsHalfWayLeavesNoGradientBehind) {
  static bool fail_once = false;
  PrimitiveDef def = primtest::elementwise_float64("tape_test_fails_once", [](double x) { return 2 * x; });
  def.bprop = [](const std::vector<Tensor>&, const Tensor&, const Tensor& dout) -> std::vector<Tensor> {
    if (fail_once) {
      fail_once = false;
      throw ValueError("tape_test_fails_once: failing as asked");
    }
    return {dout * 2.0};
  };
  def.bprop_reads_out = false;
  register_primitive(def);
  // x feeds the primitive and, around it, two more paths, so that partial sums sit on nodes when it throws
  auto f = [](const std::vector<Tensor>& a) -> Value {
    const Tensor s = ops::sin(a[0]);
    return ops::sum(call_op("tape_test_fails_once", {s}) * s + ops::exp(s));
  };
  const Tensor x = tensor({0.1, 0.2, 0.3}, {3}, DType::Float64);
  const std::vector<double> want = grad(f, 0)({x}).tensor().to_vector<double>();
  const autodiff::Pullback pb = autodiff::forward_for_vjp(f, {x}, {0}, "vjp");
  EXPECT_EQ(pb(ones({}, DType::Float64))[0].to_vector<double>(), want);
  const int64_t storages = memory_stats().storages;
  fail_once = true;
  EXPECT_THROW(pb(ones({}, DType::Float64)), ValueError);
  EXPECT_EQ(memory_stats().storages, storages);  // no partial sum left on a node of the kept graph
  EXPECT_EQ(pb(ones({}, DType::Float64))[0].to_vector<double>(), want);
  fail_once = true;
  EXPECT_THROW(grad(f, 0)({x}), ValueError);
  EXPECT_EQ(grad(f, 0)({x}).tensor().to_vector<double>(), want);
}

TEST(ArgLists, ARecycledListComesBackEmptyWithItsRoom) {
  std::vector<Tensor> list = detail::take_arg_list();
  list.push_back(scalar(1.0));
  list.push_back(scalar(2.0));
  const Tensor* buffer = list.data();
  detail::recycle_arg_list(list);
  EXPECT_TRUE(list.empty());
  const std::vector<Tensor> again = detail::take_arg_list();
  EXPECT_TRUE(again.empty());
  EXPECT_EQ(again.data(), buffer);  // the same buffer, no allocation
  EXPECT_GE(again.capacity(), 2u);
  // A list taken by the tape (moved away) has no room left: nothing is kept for it.
  std::vector<Tensor> moved = detail::take_arg_list();
  moved.push_back(scalar(3.0));
  std::vector<Tensor> taken = std::move(moved);
  detail::recycle_arg_list(moved);
  EXPECT_EQ(taken.size(), 1u);
}

TEST(Storage, SmallTensorsLiveInsideTheirStorageAndHoldTheirValues) {
  const MemoryStats before = memory_stats();
  std::vector<Tensor> ts;
  for (int64_t n : {0, 1, 4, 5, 16, 17, 1000}) {  // inline up to 16 bytes, up to 64, then a buffer of its own
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>(i) + 0.5;
    ts.push_back(tensor(v, {n}));
  }
  int64_t bytes = 0;
  for (const Tensor& t : ts) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % alignof(std::max_align_t), 0u) << t.numel();
    const std::vector<float> back = t.to_vector<float>();
    for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(back[static_cast<size_t>(i)], static_cast<float>(i) + 0.5f);
    bytes += static_cast<int64_t>(t.nbytes());
  }
  EXPECT_EQ(memory_stats().storages - before.storages, static_cast<int64_t>(ts.size()));
  EXPECT_EQ(memory_stats().bytes - before.bytes, bytes);
  ts.clear();
  EXPECT_EQ(memory_stats().storages, before.storages);
}

TEST(Tape, EveryStorageIsFreedAfterDeepAndNestedGrads) {
  const MemoryStats before = memory_stats();
  {
    auto chain = [](const std::vector<Tensor>& a) -> Value {
      Tensor y = a[0];
      for (int i = 0; i < 200000; ++i) y = ops::sin(y) * 0.5 + 0.25;  // deep: destruction must not recurse
      return y;
    };
    const Value r = value_and_grad(chain, 0)({scalar(0.3)});
    EXPECT_TRUE(std::isfinite(r[1].tensor().item()));
    auto cube = [](const std::vector<Tensor>& a) -> Value { return a[0] * a[0] * a[0]; };
    auto d3 = grad(grad(grad(cube, 0), 0), 0);
    EXPECT_DOUBLE_EQ(d3({scalar(2.0, DType::Float64)}).tensor().item(), 6.0);
  }
  const MemoryStats after = memory_stats();
  // Only cached scalar operands (a bounded number) may stay alive.
  EXPECT_LE(after.storages - before.storages, 16);
}

// The live-storage count is kept per thread (no locked add per op): storages made on one thread and freed on
// another, and a thread that exits while its storages live on, must still add up across threads.
TEST(MemoryStats, CountsStoragesAcrossThreads) {
  const MemoryStats before = memory_stats();
  std::vector<Tensor> made_elsewhere;
  std::thread maker([&] {
    for (int i = 0; i < 5; ++i) made_elsewhere.push_back(Tensor::empty({100}, DType::Float32));  // 400 bytes each
  });
  maker.join();  // the thread is gone, its storages are not
  MemoryStats during = memory_stats();
  EXPECT_EQ(during.storages - before.storages, 5);
  EXPECT_EQ(during.bytes - before.bytes, 5 * 400);

  const Tensor here = Tensor::empty({10}, DType::Float64);
  std::thread freer([&] { made_elsewhere.clear(); });  // freed on a third thread
  freer.join();
  during = memory_stats();
  EXPECT_EQ(during.storages - before.storages, 1);
  EXPECT_EQ(during.bytes - before.bytes, 80);
}

// The peak counts from the last reset: the most bytes live at once, whichever thread made or freed them.
TEST(MemoryStats, PeakIsTheMostBytesLiveSinceTheReset) {
  reset_peak_memory();
  const MemoryStats start = memory_stats();
  EXPECT_EQ(start.peak_bytes, start.bytes);
  {
    const Tensor a = Tensor::empty({1000}, DType::Float32);  // 4000 bytes
    {
      const Tensor b = Tensor::empty({500}, DType::Float64);  // 4000 more: the peak
    }
    const Tensor c = Tensor::empty({100}, DType::Float32);  // 400: below it
    std::thread other([] { const Tensor d = Tensor::empty({250}, DType::Float32); });  // 1000, with a and c: below
    other.join();
  }
  const MemoryStats end = memory_stats();
  EXPECT_EQ(end.bytes, start.bytes);
  EXPECT_EQ(end.peak_bytes - start.bytes, 8000);
  reset_peak_memory();  // a new window starts at what is live now
  EXPECT_EQ(memory_stats().peak_bytes, end.bytes);
}

TEST(BufferCache, LargeBlocksAreReusedAlignedAndBounded) {
  constexpr size_t kBig = size_t{1} << 20;
  void* a = detail::acquire_buffer(kBig);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  detail::release_buffer(a, kBig);
#ifndef __EMSCRIPTEN__
  void* b = detail::acquire_buffer(kBig - 100);  // same 4 KiB-rounded size: the block comes back
  EXPECT_EQ(a, b);
  detail::release_buffer(b, kBig - 100);
#endif
  void* small = detail::acquire_buffer(100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 64, 0u);
  detail::release_buffer(small, 100);
  // Far more than the cap, freed and re-acquired: every block is usable memory.
  std::vector<void*> blocks;
  for (int i = 0; i < 200; ++i) blocks.push_back(detail::acquire_buffer(kBig + static_cast<size_t>(i) * 8192));
  for (size_t i = 0; i < blocks.size(); ++i) {
    static_cast<unsigned char*>(blocks[i])[kBig - 1] = 1;
    detail::release_buffer(blocks[i], kBig + i * 8192);
  }
}

TEST(BufferCache, TensorsBuiltOnRecycledBuffersHoldTheirOwnValues) {
  for (int round = 0; round < 3; ++round) {
    Tensor a = full({256, 256}, round);
    Tensor b = a * 2.0;
    EXPECT_DOUBLE_EQ(b.to_vector<double>()[65535], 2.0 * round);
  }
}
