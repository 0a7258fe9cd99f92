// The registered set of device backends (bprop/device.h): a backend defined here, in the test, with no edit to the
// core: device texts find it, tensors live in its memory (which the host may not read directly), copies go
// through it, ops dispatch to a kernel set on it or fall back to the CPU, and abstract (traced) tensors are a kind
// of their own. Also the CPU's own registration and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

#include "bprop/bprop.h"
#include "bprop/device.h"
#include "bprop/jit.h"
#include "bprop/registry.h"

namespace {

using namespace bprop;

// Memory from malloc, but declared device memory: the core must never read it on the host, only copy it.
class TestDevice final : public DeviceBackend {
 public:
  Backend id{};
  int copies_to_host = 0;
  int copies_from_host = 0;
  int allocations = 0;
  std::map<void*, size_t> live;

  Backend backend() const override { return id; }
  int device_count() override { return 2; }
  void* allocate(int, size_t bytes) override {
    void* p = std::malloc(bytes ? bytes : 1);
    live[p] = bytes;
    ++allocations;
    return p;
  }
  void release(int, void* ptr, size_t) noexcept override {
    live.erase(ptr);
    std::free(ptr);
  }
  void copy_to_host(int, void* host, const void* dev, size_t bytes) override {
    ++copies_to_host;
    std::memcpy(host, dev, bytes);
  }
  void copy_from_host(int, void* dev, const void* host, size_t bytes) override {
    ++copies_from_host;
    std::memcpy(dev, host, bytes);
  }
  void copy_on_device(int, void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void synchronize(int) override {}
};

TestDevice& test_device() {
  static TestDevice device;
  return device;
}

Backend test_backend() {
  static const Backend id = [] {
    const Backend b = register_backend({.name = "TestDev",
                                        .aliases = {"td"},
                                        .load = []() -> DeviceBackend& { return test_device(); },
                                        .describe = [] { return std::vector<std::string>{"testdev: 2 devices"}; },
                                        .describe_op = [](const OpDef& op) { return "test " + op.name; }});
    test_device().id = b;
    return b;
  }();
  return id;
}

TEST(DeviceBackends, TheCpuIsRegisteredFirst) {
  const std::vector<Backend> all = registered_backends();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front(), Backend::CPU);
  EXPECT_STREQ(backend_name(Backend::CPU), "cpu");
  EXPECT_TRUE(device_backend(Backend::CPU).host_memory());
  EXPECT_EQ(parse_device("CPU"), Device::cpu());
  EXPECT_THROW(parse_device("cpu:1"), ValueError);
  const std::vector<std::string> lines = backend_registration(Backend::CPU).describe();
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front().rfind("cpu: ", 0), 0u) << lines.front();
}

TEST(DeviceBackends, ANewBackendIsFoundByItsNamesAndDescribesItself) {
  const Backend b = test_backend();
  EXPECT_NE(b, Backend::CPU);
  EXPECT_STREQ(backend_name(b), "testdev");  // names are case-insensitive, kept in lower case
  EXPECT_EQ(parse_device("testdev"), (Device{b, 0}));
  EXPECT_EQ(parse_device("TD:1"), (Device{b, 1}));
  EXPECT_EQ((Device{b, 1}).str(), "testdev:1");
  EXPECT_EQ(backend_registration(b).describe().front(), "testdev: 2 devices");
  EXPECT_EQ(backend_registration(b).describe_op(registry().get("add")), "test add");
  try {
    parse_device("tpu:0");
    FAIL() << "no error";
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'tpu:0'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'testdev:N'"), std::string::npos) << msg;  // the message lists what this build has
  }
  // Names are unique across names and aliases.
  EXPECT_THROW(register_backend({.name = "td", .aliases = {}, .load = []() -> DeviceBackend& { return test_device(); },
                                 .describe = {}, .describe_op = {}}),
               ValueError);
  EXPECT_THROW(register_backend({.name = "other", .aliases = {"TestDev"},
                                 .load = []() -> DeviceBackend& { return test_device(); }, .describe = {}, .describe_op = {}}),
               ValueError);
}

TEST(DeviceBackends, DeviceMemoryIsNeverReadOnTheHost) {
  const Device dev{test_backend(), 1};
  TestDevice& td = test_device();
  const size_t live_before = td.live.size();
  {
    const Tensor host = tensor({1, 2, 3, 4}, {2, 2});
    const Tensor on_dev = host.to(dev);
    EXPECT_TRUE(on_dev.on_device());
    EXPECT_FALSE(on_dev.on_host());
    EXPECT_FALSE(on_dev.is_abstract());
    EXPECT_EQ(on_dev.device(), dev);
    EXPECT_EQ(td.live.size(), live_before + 1);
    EXPECT_THROW(on_dev.data<float>(), ValueError);  // any device, not only the NPU
    const int reads = td.copies_to_host;
    EXPECT_EQ(on_dev.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
    EXPECT_EQ(td.copies_to_host, reads + 1);
    const Tensor back = on_dev.cpu();
    EXPECT_TRUE(back.on_host());
    EXPECT_EQ(back.data<float>()[3], 4.0f);
    // Device memory is not the host's: memory_stats() does not count it.
    const int64_t host_bytes = memory_stats().bytes;
    const Tensor big = zeros({1024}).to(dev);
    EXPECT_EQ(memory_stats().bytes, host_bytes);
  }
  EXPECT_EQ(td.live.size(), live_before);  // every storage gave its memory back
}

TEST(DeviceBackends, OpsRunTheBackendsKernelOrFallBackToTheCpu) {
  const Device dev{test_backend(), 0};
  int ran = 0;
  // A device kernel for 'neg' only: it reads and writes device memory through the backend's own pointers.
  registry().set_kernel("neg", dev.backend, [&ran](KernelCtx& c) {
    ++ran;
    const float* x = static_cast<const float*>(c.inputs[0].raw_data());
    float* y = static_cast<float*>(c.out.raw_data());
    for (int64_t i = 0; i < c.out.numel(); ++i) y[i] = -x[i];
  });
  reset_fallback_counts();
  const Tensor x = tensor({1, -2, 3}, {3}).to(dev);
  const Tensor y = ops::neg(x);
  EXPECT_EQ(ran, 1);
  EXPECT_TRUE(y.on_device());
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{-1, 2, -3}));
  const Tensor z = ops::exp(x);  // no kernel here: the CPU's, with a host round trip, counted
  EXPECT_TRUE(z.on_device());
  EXPECT_NEAR(z.to_vector<float>()[1], std::exp(-2.0f), 1e-6);
  EXPECT_EQ(fallback_counts()["exp"], 1);
  EXPECT_EQ(fallback_counts().count("neg"), 0u);
  // Gradients stay on the device too.
  const Tensor g = grad([](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::neg(a[0])); })({x}).tensor();
  EXPECT_TRUE(g.on_device());
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{-1, -1, -1}));
}

// A jitted function on a device runs through the same executor as on the CPU: its intermediate values live in
// the memory plan's buffers on the device (a replay allocates only its result), a node without a device kernel
// computes on the host and lands in its planned buffer, and the results are the eager ones.
TEST(DeviceBackends, JittedGraphsOnADeviceReuseTheirPlannedBuffers) {
  const Device dev{test_backend(), 0};
  registry().set_kernel("neg", dev.backend, [](KernelCtx& c) {
    const float* x = static_cast<const float*>(c.inputs[0].raw_data());
    float* y = static_cast<float*>(c.out.raw_data());
    for (int64_t i = 0; i < c.out.numel(); ++i) y[i] = -x[i];
  });
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    const Tensor n = ops::neg(a[0]);
    return ops::mul(ops::neg(ops::exp(n)), n);  // exp and mul: the CPU's kernels
  };
  const Tensor x = tensor({0.5f, -1, 2, 0.25f}, {4}).to(dev);
  const std::vector<float> eager = f({x}).tensor().to_vector<float>();
  const JitFn jf = jit(f);
  TestDevice& td = test_device();
  EXPECT_EQ(jf({x}).tensor().to_vector<float>(), eager);  // (traces, compiles, and fills the plan's buffers)
  const JitStats st = jf.stats();
  EXPECT_EQ(st.traces, 1);
  EXPECT_GT(st.planned_bytes, 0);
  EXPECT_EQ(st.in_place, 0);  // (the CPU's: a device kernel may not write over what it reads)
  reset_fallback_counts();
  const int before = td.allocations;
  const Tensor y = jf({x}).tensor();
  EXPECT_EQ(td.allocations, before + 1);  // the result only: neg(x), exp and the second neg reuse planned buffers
  EXPECT_TRUE(y.on_device());
  EXPECT_EQ(y.to_vector<float>(), eager);
  EXPECT_EQ(fallback_counts()["exp"], 1);
  EXPECT_EQ(fallback_counts()["mul"], 1);
}

// A device whose reads complete only later, as a WebGPU buffer's mapAsync: copy_to_host refuses, saying so, and
// copy_to_host_async completes when the test "polls".
class AsyncReadDevice final : public DeviceBackend {
 public:
  Backend id{};
  std::vector<std::function<void()>> pending;
  void poll() {
    auto ready = std::move(pending);
    pending.clear();
    for (auto& f : ready) f();
  }
  Backend backend() const override { return id; }
  int device_count() override { return 1; }
  void* allocate(int, size_t bytes) override { return std::malloc(bytes ? bytes : 1); }
  void release(int, void* ptr, size_t) noexcept override { std::free(ptr); }
  void copy_to_host(int, void*, const void*, size_t) override {
    throw ValueError("asyncdev:0 reads its memory only asynchronously: use read_async (await t.data() in "
                     "JavaScript)");
  }
  void copy_to_host_async(int, void* host, const void* dev, size_t bytes,
                          std::function<void(std::exception_ptr)> done) override {
    pending.push_back([=] {
      std::memcpy(host, dev, bytes);
      done(nullptr);
    });
  }
  void copy_from_host(int, void* dev, const void* host, size_t bytes) override { std::memcpy(dev, host, bytes); }
  void copy_on_device(int, void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void synchronize(int) override {}
};

AsyncReadDevice& async_device() {
  static AsyncReadDevice device;
  static const bool registered = [] {
    device.id = register_backend({.name = "asyncdev", .aliases = {}, .load = []() -> DeviceBackend& { return device; },
                                  .describe = {}, .describe_op = {}});
    return true;
  }();
  (void)registered;
  return device;
}

TEST(DeviceBackends, AsynchronousReadsAreTheOneWayToReadAnAsyncOnlyDevice) {
  AsyncReadDevice& ad = async_device();
  const Tensor x = tensor({1.5, -2, 4}, {3}).to(Device{ad.id, 0});
  try {
    (void)x.to_vector<float>();
    FAIL() << "a synchronous read succeeded";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("only asynchronously"), std::string::npos) << e.what();
  }
  Tensor got;
  bool called = false;
  read_async(x, [&](Tensor host, std::exception_ptr error) {
    called = true;
    EXPECT_FALSE(error);
    got = host;
  });
  EXPECT_FALSE(called);  // not before the device completes the read
  ad.poll();
  ASSERT_TRUE(called);
  EXPECT_TRUE(got.on_host());
  EXPECT_EQ(got.to_vector<float>(), (std::vector<float>{1.5, -2, 4}));

  // A host tensor is read at once; a traced one is an error given to the callback, not thrown.
  bool host_read = false;
  read_async(ones({2}), [&](Tensor host, std::exception_ptr error) {
    host_read = !error && host.to_vector<float>() == std::vector<float>{1, 1};
  });
  EXPECT_TRUE(host_read);
  const JitFn f = jit([](const std::vector<Tensor>& a) -> Value {
    std::exception_ptr seen;
    read_async(a[0], [&](Tensor, std::exception_ptr error) { seen = error; });
    EXPECT_TRUE(seen);
    return a[0];
  });
  f({ones({2})});
}

TEST(DeviceBackends, AbstractTensorsAreTheirOwnKind) {
  bool checked = false;
  const JitFn f = jit([&checked](const std::vector<Tensor>& a) -> Value {
    const Tensor& t = a[0];
    EXPECT_TRUE(t.is_abstract());
    EXPECT_FALSE(t.on_host());
    EXPECT_FALSE(t.on_device());
    EXPECT_THROW(t.data<float>(), ValueError);
    EXPECT_THROW(t.to_vector<float>(), ValueError);
    EXPECT_THROW(t.cpu(), ValueError);
    checked = true;
    return ops::mul(t, t);
  });
  const Tensor y = f({tensor({2, 3}, {2})}).tensor();
  EXPECT_TRUE(checked);
  EXPECT_TRUE(y.on_host());
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{4, 9}));
}

}  // namespace
