// Tests of the fake CANN libraries (README.md). They load lib64/ with dlopen as the Ascend backend does, check every
// kernel against a naive reference (backward kernels against finite differences of a double-precision forward),
// and check that each protocol rule the fake enforces fails loudly: an error code and message, or a death with
// "fake-ascend: ..." on stderr.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fake_ascend/fake_acl.h"

namespace {

const std::string kLib64 = FAKE_ASCEND_LIB64;

void* open_lib(const char* file) {
  void* h = dlopen((kLib64 + "/" + file).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "cannot load %s: %s\n", file, dlerror());
    std::abort();
  }
  return h;
}

void* sym(const char* name) {
  static void* const libs[] = {open_lib("libascendcl.so"), open_lib("libnnopbase.so"), open_lib("libopapi.so"),
                               open_lib("libopapi_nn.so"), open_lib("libopapi_transformer.so")};
  for (void* h : libs) {
    if (void* p = dlsym(h, name)) return p;
  }
  std::fprintf(stderr, "the fake libraries have no function %s\n", name);
  std::abort();
}

// A function of the fake libraries, typed by its declaration in fake_acl.h (so every argument is passed as CANN's
// ABI wants it). Nothing links the libraries: decltype does not use the declaration's definition.
#define FN(name) (reinterpret_cast<decltype(&::name)>(sym(#name)))

std::string recent() {
  const char* m = FN(aclGetRecentErrMsg)();
  return m ? m : "";
}

using Shape = std::vector<int64_t>;
using Vec = std::vector<double>;

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Shape contiguous(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

std::vector<float> randf(size_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::vector<float> v(n);
  uint32_t x = seed * 2654435761u + 12345;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = lo + (hi - lo) * static_cast<float>(x >> 8) / 16777216.0f;
  }
  return v;
}

Vec to_d(const std::vector<float>& v) { return Vec(v.begin(), v.end()); }

void expect_near(const std::vector<float>& got, const Vec& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i]))) << what << " [" << i << "]";
  }
}

// Exact equality, where NaN equals NaN.
template <class T>
void expect_same(const std::vector<T>& got, const std::vector<T>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << what << " [" << i << "] = " << got[i] << ", not NaN";
        continue;
      }
    }
    EXPECT_EQ(got[i], want[i]) << what << " [" << i << "]";
  }
}

// The gradient of sum(r * f(x)) by central differences (exact for the linear functions, up to rounding).
Vec fd_grad(const std::function<Vec(const Vec&)>& f, Vec x, const Vec& r, double h) {
  Vec g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + h;
    const Vec a = f(x);
    x[i] = keep - h;
    const Vec b = f(x);
    x[i] = keep;
    double s = 0;
    for (size_t j = 0; j < r.size(); ++j) s += r[j] * (a[j] - b[j]);
    g[i] = s / (2 * h);
  }
  return g;
}

// ---- the fixture: aclInit, device 0, one stream; helpers that upload tensors and run operators ----

class Fake : public ::testing::Test {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // each death test in a fresh process, not a fork
    ASSERT_EQ(FN(aclInit)(nullptr), ACL_SUCCESS) << recent();
    ASSERT_EQ(FN(aclrtSetDevice)(0), ACL_SUCCESS) << recent();
    ASSERT_EQ(FN(aclrtCreateStream)(&stream), ACL_SUCCESS) << recent();
    FN(fake_ascend_reset_counters)();
  }

  void TearDown() override {
    if (finalized) return;
    EXPECT_EQ(FN(aclrtSynchronizeDevice)(), ACL_SUCCESS) << recent();
    cleanup_objects();
    for (void* p : buffers) EXPECT_EQ(FN(aclrtFree)(p), ACL_SUCCESS) << recent();
    EXPECT_EQ(FN(aclrtDestroyStream)(stream), ACL_SUCCESS) << recent();
    EXPECT_EQ(FN(aclrtResetDevice)(0), ACL_SUCCESS) << recent();
    EXPECT_EQ(FN(aclFinalize)(), ACL_SUCCESS) << recent();
  }

  void cleanup_objects() {
    for (aclTensor* t : tensors) FN(aclDestroyTensor)(t);
    for (aclScalar* s : scalars) FN(aclDestroyScalar)(s);
    for (aclIntArray* a : int_arrays) FN(aclDestroyIntArray)(a);
    for (aclBoolArray* a : bool_arrays) FN(aclDestroyBoolArray)(a);
    for (aclTensorList* l : tensor_lists) FN(aclDestroyTensorList)(l);
    tensors.clear();
    tensor_lists.clear();
    scalars.clear();
    int_arrays.clear();
    bool_arrays.clear();
  }

  void* dmalloc(size_t bytes) {
    void* p = nullptr;
    EXPECT_EQ(FN(aclrtMalloc)(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS) << recent();
    buffers.push_back(p);
    return p;
  }

  void dfree(void* p) {
    EXPECT_EQ(FN(aclrtFree)(p), ACL_SUCCESS) << recent();
    buffers.erase(std::find(buffers.begin(), buffers.end(), p));
  }

  struct Info {
    void* dev;
    int64_t n;
    size_t elem;
  };

  // A contiguous device tensor holding `v` (T must have the size of dt).
  template <class T>
  aclTensor* tensor(const Shape& shape, const std::vector<T>& v, aclDataType dt) {
    EXPECT_EQ(static_cast<int64_t>(v.size()), numel(shape));
    void* d = dmalloc(std::max<size_t>(v.size() * sizeof(T), 1));
    if (!v.empty()) {
      EXPECT_EQ(FN(aclrtMemcpy)(d, v.size() * sizeof(T), v.data(), v.size() * sizeof(T), ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_SUCCESS)
          << recent();
    }
    return wrap(shape, dt, d, sizeof(T));
  }
  aclTensor* tf(const Shape& shape, const std::vector<float>& v) { return tensor(shape, v, ACL_FLOAT); }
  // An uninitialised contiguous device tensor.
  aclTensor* empty(const Shape& shape, aclDataType dt, size_t elem) {
    return wrap(shape, dt, dmalloc(std::max<size_t>(numel(shape) * elem, 1)), elem);
  }
  aclTensor* ef(const Shape& shape) { return empty(shape, ACL_FLOAT, 4); }

  // Tensors are named as torch_npu names them: NCL when 3-D, NCHW when 4-D, NCDHW when 5-D, ND otherwise (`format`
  // overrides).
  aclTensor* wrap(const Shape& shape, aclDataType dt, void* d, size_t elem, int format = -1) {
    const Shape st = contiguous(shape);
    const aclFormat f = format >= 0            ? static_cast<aclFormat>(format)
                        : shape.size() == 3 ? ACL_FORMAT_NCL
                        : shape.size() == 4 ? ACL_FORMAT_NCHW
                        : shape.size() == 5 ? ACL_FORMAT_NCDHW
                                            : ACL_FORMAT_ND;
    aclTensor* t = FN(aclCreateTensor)(shape.data(), shape.size(), dt, st.data(), 0, f, shape.data(), shape.size(), d);
    EXPECT_NE(t, nullptr) << recent();
    tensors.push_back(t);
    info[t] = Info{d, numel(shape), elem};
    return t;
  }

  template <class T>
  std::vector<T> get(aclTensor* t) {
    const Info& i = info.at(t);
    EXPECT_EQ(sizeof(T), i.elem);
    std::vector<T> v(static_cast<size_t>(i.n));
    if (!v.empty()) {
      EXPECT_EQ(FN(aclrtMemcpy)(v.data(), v.size() * sizeof(T), i.dev, v.size() * sizeof(T), ACL_MEMCPY_DEVICE_TO_HOST),
                ACL_SUCCESS)
          << recent();
    }
    return v;
  }
  std::vector<float> gf(aclTensor* t) { return get<float>(t); }

  aclScalar* sf(float v) { return keep(FN(aclCreateScalar)(&v, ACL_FLOAT)); }
  aclScalar* sd(double v) { return keep(FN(aclCreateScalar)(&v, ACL_DOUBLE)); }
  aclScalar* si(int64_t v) { return keep(FN(aclCreateScalar)(&v, ACL_INT64)); }
  aclScalar* keep(aclScalar* s) {
    EXPECT_NE(s, nullptr);
    scalars.push_back(s);
    return s;
  }
  aclIntArray* ia(const std::vector<int64_t>& v) {
    aclIntArray* a = FN(aclCreateIntArray)(v.data(), v.size());
    int_arrays.push_back(a);
    return a;
  }
  aclBoolArray* ba(std::vector<char> v) {
    bool b[8];
    for (size_t i = 0; i < v.size(); ++i) b[i] = v[i] != 0;
    aclBoolArray* a = FN(aclCreateBoolArray)(b, v.size());
    bool_arrays.push_back(a);
    return a;
  }

  // An aclTensorList of `ts`, which owns them from now on (aclDestroyTensorList destroys them, as in CANN).
  aclTensorList* tl(const std::vector<aclTensor*>& ts) {
    const std::vector<const aclTensor*> v(ts.begin(), ts.end());
    aclTensorList* l = FN(aclCreateTensorList)(v.data(), v.size());
    EXPECT_NE(l, nullptr) << recent();
    for (aclTensor* t : ts) {
      if (auto it = std::find(tensors.begin(), tensors.end(), t); it != tensors.end()) tensors.erase(it);
    }
    tensor_lists.push_back(l);
    return l;
  }

  // GetWorkspaceSize, a workspace of the size asked for, the launch and the stream's synchronisation.
  template <class GetWs, class Launch, class... A>
  int run(GetWs get_ws, Launch launch, A... args) {
    uint64_t ws = 0;
    aclOpExecutor* ex = nullptr;
    if (int rc = get_ws(args..., &ws, &ex)) return rc;
    last_ws = ws;
    void* w = ws ? dmalloc(ws) : nullptr;
    if (int rc = launch(w, ws, ex, stream)) return rc;
    return FN(aclrtSynchronizeStream)(stream);
  }

  aclrtStream stream = nullptr;
  bool finalized = false;
  uint64_t last_ws = 0;
  std::vector<void*> buffers;
  std::vector<aclTensor*> tensors;
  std::vector<aclScalar*> scalars;
  std::vector<aclIntArray*> int_arrays;
  std::vector<aclBoolArray*> bool_arrays;
  std::vector<aclTensorList*> tensor_lists;
  std::map<const aclTensor*, Info> info;
};

#define RUN(Op, ...) run(FN(aclnn##Op##GetWorkspaceSize), FN(aclnn##Op), __VA_ARGS__)
#define GET_WS(Op, ...) FN(aclnn##Op##GetWorkspaceSize)(__VA_ARGS__)

// ================================ the runtime ================================

TEST(Runtime, CallsBeforeAclInitFail) {
  void* p = nullptr;
  EXPECT_EQ(FN(aclrtMalloc)(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE);
  EXPECT_NE(recent().find("aclrtMalloc: aclInit has not been called"), std::string::npos);
  EXPECT_EQ(FN(aclrtSetDevice)(0), ACL_ERROR_UNINITIALIZE);
  aclrtStream s = nullptr;
  EXPECT_EQ(FN(aclrtCreateStream)(&s), ACL_ERROR_UNINITIALIZE);
  EXPECT_EQ(FN(aclrtGetSocName)(), nullptr);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  EXPECT_EQ(FN(aclnnInplaceZeroGetWorkspaceSize)(nullptr, &ws, &ex), ACL_ERROR_UNINITIALIZE);
  EXPECT_NE(FN(aclFinalize)(), ACL_SUCCESS);
}

TEST(Runtime, InitTwiceAndFinalizeTwice) {
  ASSERT_EQ(FN(aclInit)(nullptr), ACL_SUCCESS);
  EXPECT_EQ(FN(aclInit)(nullptr), ACL_ERROR_REPEAT_INITIALIZE);
  EXPECT_NE(recent().find("aclInit was called twice"), std::string::npos);
  EXPECT_EQ(FN(aclFinalize)(), ACL_SUCCESS);
  EXPECT_EQ(FN(aclFinalize)(), ACL_ERROR_REPEAT_FINALIZE);
  EXPECT_EQ(FN(aclInit)("/nonexistent/acl.json"), ACL_ERROR_INVALID_FILE);
  EXPECT_EQ(FN(aclInit)(nullptr), ACL_SUCCESS);  // a new session after aclFinalize
  EXPECT_EQ(FN(aclFinalize)(), ACL_SUCCESS);
}

TEST(Runtime, DeviceCountAndInvalidDevice) {
  setenv("FAKE_ASCEND_DEVICES", "2", 1);
  ASSERT_EQ(FN(aclInit)(nullptr), ACL_SUCCESS);
  unsetenv("FAKE_ASCEND_DEVICES");
  uint32_t count = 0;
  EXPECT_EQ(FN(aclrtGetDeviceCount)(&count), ACL_SUCCESS);
  EXPECT_EQ(count, 2u);
  int32_t dev = -1;
  EXPECT_EQ(FN(aclrtGetDevice)(&dev), ACL_ERROR_RT_CONTEXT_NULL);  // none set yet
  EXPECT_EQ(FN(aclrtSetDevice)(2), ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT_NE(recent().find("aclrtSetDevice: device id 2 is invalid: there are 2 device(s)"), std::string::npos);
  EXPECT_EQ(FN(aclrtSetDevice)(-1), ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT_EQ(FN(aclrtSetDevice)(1), ACL_SUCCESS);
  EXPECT_EQ(FN(aclrtGetDevice)(&dev), ACL_SUCCESS);
  EXPECT_EQ(dev, 1);
  EXPECT_EQ(FN(aclrtResetDevice)(1), ACL_SUCCESS);
  EXPECT_EQ(FN(aclrtResetDevice)(1), ACL_ERROR_INVALID_PARAM);  // not set any more
  EXPECT_EQ(FN(aclFinalize)(), ACL_SUCCESS);
}

TEST(Runtime, FailInitKnob) {
  setenv("FAKE_ASCEND_FAIL_INIT", "507899", 1);
  EXPECT_EQ(FN(aclInit)(nullptr), 507899);
  unsetenv("FAKE_ASCEND_FAIL_INIT");
  EXPECT_NE(recent().find("FAKE_ASCEND_FAIL_INIT=507899"), std::string::npos);
  void* p = nullptr;
  EXPECT_EQ(FN(aclrtMalloc)(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE);  // still not initialised
  ASSERT_EQ(FN(aclInit)(nullptr), ACL_SUCCESS);
  EXPECT_EQ(FN(aclFinalize)(), ACL_SUCCESS);
}

TEST(Runtime, RecentErrorMessageIsTakenOnce) {
  EXPECT_EQ(FN(aclrtSetDevice)(0), ACL_ERROR_UNINITIALIZE);
  const char* m = FN(aclGetRecentErrMsg)();
  ASSERT_NE(m, nullptr);
  EXPECT_NE(std::string(m).find("aclrtSetDevice"), std::string::npos);
  EXPECT_EQ(FN(aclGetRecentErrMsg)(), nullptr);  // returned, then cleared
}

TEST(Runtime, MissingDriverFailsToLoad) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The toolkit layout the backend reads its version from.
  std::ifstream info(kLib64 + "/../ascend_toolkit_install.info");
  std::string line;
  std::getline(info, line);
  EXPECT_EQ(line, "version=8.0.RC3-fake");
  // A copy of lib64/ without libascend_hal.so, loaded in a fresh process (this one may have the originals loaded).
  char tmpl[] = "/tmp/fake_ascend_nodriver.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::filesystem::path dir = tmpl;
  for (const auto& e : std::filesystem::directory_iterator(kLib64)) {
    if (e.path().filename() != "libascend_hal.so") std::filesystem::copy_file(e.path(), dir / e.path().filename());
  }
  EXPECT_EXIT(
      {
        void* h = dlopen((dir / "libascendcl.so").c_str(), RTLD_NOW | RTLD_LOCAL);
        const char* e = h ? nullptr : dlerror();
        std::fprintf(stderr, "dlopen: %s\n", e ? e : "loaded");
        const bool driver_missing = e && std::strstr(e, "libascend_hal.so");
        std::filesystem::remove_all(dir);
        std::exit(driver_missing ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "libascend_hal.so: cannot open shared object file");
  std::filesystem::remove_all(dir);
}

TEST(Runtime, LeaksAreReportedAtExitWithoutFinalize) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto leak = [] {
    FN(aclInit)(nullptr);
    FN(aclrtSetDevice)(0);
    void* p = nullptr;
    FN(aclrtMalloc)(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST);
    const int64_t dims = 2, stride = 1;
    FN(aclCreateTensor)(&dims, 1, ACL_FLOAT, &stride, 0, ACL_FORMAT_ND, &dims, 1, p);
  };
  EXPECT_EXIT(
      {
        leak();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0),
      "fake-ascend: leaks at process exit \\(aclFinalize never ran\\):.*1 device block\\(s\\) still allocated "
      "\\(100 bytes\\).*1 aclTensor object\\(s\\) never destroyed");
  EXPECT_EXIT(
      {
        setenv("FAKE_ASCEND_STRICT_LEAKS", "1", 1);
        leak();
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGABRT), "fake-ascend: FAKE_ASCEND_STRICT_LEAKS=1");
}

TEST_F(Fake, InfoQueries) {
  EXPECT_STREQ(FN(aclrtGetSocName)(), "Ascend910B1");
  int32_t major = -1, minor = -1, patch = -1;
  EXPECT_EQ(FN(aclrtGetVersion)(&major, &minor, &patch), ACL_SUCCESS);
  EXPECT_GE(major, 1);
  size_t free0 = 0, total = 0, free1 = 0;
  EXPECT_EQ(FN(aclrtGetMemInfo)(ACL_HBM_MEM, &free0, &total), ACL_SUCCESS);
  EXPECT_GT(total, 0u);
  EXPECT_LE(free0, total);
  dmalloc(1 << 20);
  EXPECT_EQ(FN(aclrtGetMemInfo)(ACL_HBM_MEM, &free1, &total), ACL_SUCCESS);
  EXPECT_LE(free1 + (1 << 20), free0);
  int32_t dev = -1;
  EXPECT_EQ(FN(aclrtGetDevice)(&dev), ACL_SUCCESS);
  EXPECT_EQ(dev, 0);
}

// ================================ device memory ================================

TEST_F(Fake, MallocAlignmentAndLiveBytes) {
  EXPECT_EQ(FN(fake_ascend_live_bytes)(), 0u);
  void* a = dmalloc(1);
  void* b = dmalloc(100);
  void* c = dmalloc(1000);
  for (void* p : {a, b, c}) EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_EQ(FN(fake_ascend_live_bytes)(), 1101u);
  dfree(b);
  EXPECT_EQ(FN(fake_ascend_live_bytes)(), 1001u);
  void* p = nullptr;
  EXPECT_EQ(FN(aclrtMalloc)(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
}

TEST_F(Fake, MallocExhaustion) {
  size_t free_bytes = 0, total = 0;
  ASSERT_EQ(FN(aclrtGetMemInfo)(ACL_HBM_MEM, &free_bytes, &total), ACL_SUCCESS);
  void* p = nullptr;
  EXPECT_EQ(FN(aclrtMalloc)(&p, total + 1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
  EXPECT_NE(recent().find("aclrtMalloc: out of device memory"), std::string::npos);
}

TEST_F(Fake, FreeOfSomethingElse) {
  int host = 0;
  EXPECT_EQ(FN(aclrtFree)(&host), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent().find("is not device memory"), std::string::npos);
  char* p = static_cast<char*>(dmalloc(256));
  EXPECT_EQ(FN(aclrtFree)(p + 64), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent().find("not its start"), std::string::npos);
  dfree(p);
  EXPECT_EQ(FN(aclrtFree)(p), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent().find("not a live aclrtMalloc block"), std::string::npos);
}

TEST_F(Fake, HostAccessOfDeviceMemoryDies) {
  float* p = static_cast<float*>(dmalloc(256));
  EXPECT_DEATH(
      {
        volatile float x = p[3];
        (void)x;
      },
      "fake-ascend: the host accessed device memory at 0x[0-9a-f]+ \\(inside a 256-byte aclrtMalloc block at "
      "0x[0-9a-f]+, offset 12\\)");
  EXPECT_DEATH({ p[0] = 1.0f; }, "fake-ascend: the host accessed device memory");
  EXPECT_DEATH({ std::memset(p, 0, 16); }, "fake-ascend: the host accessed device memory");
}

TEST_F(Fake, OtherSegfaultsStillCrashNormally) {
  // The handler passes faults outside the device heap on (here: to the default action, or to ASan's handler).
  EXPECT_DEATH(
      {
        volatile uintptr_t address = 16;  // opaque to the compiler
        *reinterpret_cast<volatile int*>(address) = 1;
      },
      "");
}

TEST_F(Fake, NewMemoryIsPoisonedAndMemsetWorks) {
  void* d = dmalloc(16);
  std::vector<uint8_t> h(16, 0);
  ASSERT_EQ(FN(aclrtMemcpy)(h.data(), 16, d, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  for (uint8_t b : h) EXPECT_EQ(b, 0xFF);
  ASSERT_EQ(FN(aclrtMemset)(d, 16, 0x12, 16), ACL_SUCCESS);
  ASSERT_EQ(FN(aclrtMemcpy)(h.data(), 16, d, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  for (uint8_t b : h) EXPECT_EQ(b, 0x12);
  EXPECT_EQ(FN(aclrtMemset)(d, 32, 0, 32), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent().find("runs past the end"), std::string::npos);
  EXPECT_EQ(FN(aclrtMemset)(d, 8, 0, 16), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(FN(aclrtMemset)(h.data(), 16, 0, 16), ACL_ERROR_INVALID_PARAM);
}

TEST_F(Fake, MemcpyKindsAreChecked) {
  char* d = static_cast<char*>(dmalloc(64));
  char* d2 = static_cast<char*>(dmalloc(64));
  std::vector<char> h(64, 1), h2(64, 0);
  auto memcpy_ = FN(aclrtMemcpy);
  EXPECT_EQ(memcpy_(d, 64, d2, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent().find("aclrtMemcpy(ACL_MEMCPY_HOST_TO_DEVICE): src 0x"), std::string::npos);
  EXPECT_EQ(memcpy_(h2.data(), 64, h.data(), 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent().find("dst 0x"), std::string::npos);
  EXPECT_EQ(memcpy_(h2.data(), 64, h.data(), 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent().find("src 0x"), std::string::npos);
  EXPECT_EQ(memcpy_(d, 64, h.data(), 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(memcpy_(d, 64, d2, 64, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(memcpy_(d, 32, h.data(), 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent().find("larger than destMax"), std::string::npos);
  EXPECT_EQ(memcpy_(d + 32, 64, h.data(), 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent().find("runs past the end of the 64-byte aclrtMalloc block"), std::string::npos);
  EXPECT_EQ(memcpy_(d, 64, h.data(), 64, static_cast<aclrtMemcpyKind>(7)), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(memcpy_(d, 64, nullptr, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
  // the legal four
  EXPECT_EQ(memcpy_(d, 64, h.data(), 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  EXPECT_EQ(memcpy_(d2, 64, d, 64, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
  EXPECT_EQ(memcpy_(h2.data(), 64, d2, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_EQ(h2, h);
  std::vector<char> h3(64, 0);
  EXPECT_EQ(memcpy_(h3.data(), 64, h2.data(), 64, ACL_MEMCPY_HOST_TO_HOST), ACL_SUCCESS);
  EXPECT_EQ(h3, h);
}

// ================================ streams ================================

TEST_F(Fake, KernelsRunOnlyAtSynchronisation) {
  aclTensor* a = tf({4}, {1, 2, 3, 4});
  aclTensor* b = tf({4}, {10, 20, 30, 40});
  aclTensor* o = ef({4});
  uint64_t ws = 1;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(GET_WS(Add, a, b, sf(1), o, &ws, &ex), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(ws, 0u);
  ASSERT_EQ(FN(aclnnAdd)(nullptr, 0, ex, stream), ACLNN_SUCCESS) << recent();
  std::vector<float> host(4, -7.0f);
  ASSERT_EQ(FN(aclrtMemcpyAsync)(host.data(), 16, info[o].dev, 16, ACL_MEMCPY_DEVICE_TO_HOST, stream), ACL_SUCCESS);
  EXPECT_EQ(FN(fake_ascend_kernel_launches)(), 0u);
  EXPECT_EQ(host, std::vector<float>(4, -7.0f));  // a missing synchronisation shows as stale data
  EXPECT_EQ(FN(aclrtSynchronizeStream)(stream), ACL_SUCCESS);
  EXPECT_EQ(host, (std::vector<float>{11, 22, 33, 44}));
  EXPECT_EQ(FN(fake_ascend_kernel_launches)(), 1u);
  EXPECT_EQ(FN(fake_ascend_syncs)(), 1u);
  EXPECT_STREQ(FN(fake_ascend_last_kernel)(), "aclnnAdd");
  FN(fake_ascend_reset_counters)();
  EXPECT_EQ(FN(fake_ascend_kernel_launches)(), 0u);
  EXPECT_STREQ(FN(fake_ascend_last_kernel)(), "");
}

TEST_F(Fake, StaleDataAcrossStreams) {
  aclrtStream other = nullptr;
  ASSERT_EQ(FN(aclrtCreateStream)(&other), ACL_SUCCESS);
  aclTensor* a = tf({2}, {1, 2});
  aclTensor* o = ef({2});
  aclTensor* o2 = ef({2});
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(GET_WS(Muls, a, sf(3), o, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(FN(aclnnMuls)(nullptr, 0, ex, stream), ACLNN_SUCCESS);
  ASSERT_EQ(GET_WS(Neg, o, o2, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(FN(aclnnNeg)(nullptr, 0, ex, other), ACLNN_SUCCESS);
  ASSERT_EQ(FN(aclrtSynchronizeStream)(other), ACL_SUCCESS);  // runs Neg before Muls: reads the poisoned o
  EXPECT_TRUE(std::isnan(gf(o2)[0]));
  ASSERT_EQ(FN(aclrtSynchronizeDevice)(), ACL_SUCCESS);
  EXPECT_EQ(gf(o), (std::vector<float>{3, 6}));
  ASSERT_EQ(FN(aclrtDestroyStream)(other), ACL_SUCCESS);
}

TEST_F(Fake, DefaultStreamAndSynchronizeDevice) {
  aclTensor* a = tf({3}, {1, 4, 9});
  aclTensor* o = ef({3});
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(GET_WS(Sqrt, a, o, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(FN(aclnnSqrt)(nullptr, 0, ex, nullptr), ACLNN_SUCCESS);  // the default stream
  ASSERT_EQ(FN(aclrtSynchronizeStream)(nullptr), ACL_SUCCESS);
  EXPECT_EQ(gf(o), (std::vector<float>{1, 2, 3}));
  ASSERT_EQ(GET_WS(Neg, a, o, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(FN(aclnnNeg)(nullptr, 0, ex, stream), ACLNN_SUCCESS);
  ASSERT_EQ(FN(aclrtSynchronizeDevice)(), ACL_SUCCESS);
  EXPECT_EQ(gf(o), (std::vector<float>{-1, -4, -9}));
  EXPECT_EQ(FN(fake_ascend_syncs)(), 2u);
}

TEST_F(Fake, SynchronousCopyOfPendingWorkDies) {
  aclTensor* a = tf({4}, {1, 2, 3, 4});
  aclTensor* o = ef({4});
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(GET_WS(Add, a, a, sf(1), o, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(FN(aclnnAdd)(nullptr, 0, ex, stream), ACLNN_SUCCESS);
  std::vector<float> host(4);
  void* od = info[o].dev;
  void* ad = info[a].dev;
  EXPECT_DEATH(FN(aclrtMemcpy)(host.data(), 16, od, 16, ACL_MEMCPY_DEVICE_TO_HOST),
               "fake-ascend: aclrtMemcpy reads device memory \\[0x[0-9a-f]+, 0x[0-9a-f]+\\) that queued work still "
               "writes: aclnnAdd on stream 0x[0-9a-f]+ has not run yet");
  EXPECT_DEATH(FN(aclrtMemcpy)(ad, 16, host.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE),
               "fake-ascend: aclrtMemcpy writes device memory .* that queued work still reads: aclnnAdd");
  EXPECT_DEATH(FN(aclrtMemset)(ad, 16, 0, 16), "fake-ascend: aclrtMemset writes device memory");
  // reading an input that queued work only reads is fine
  EXPECT_EQ(FN(aclrtMemcpy)(host.data(), 16, ad, 16, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
}

TEST_F(Fake, StreamUseAfterResetDies) {
  aclTensor* a = tf({2}, {1, 2});
  aclTensor* o = ef({2});
  aclrtStream s = stream;
  EXPECT_DEATH(
      {
        FN(aclrtResetDevice)(0);
        FN(aclrtSynchronizeStream)(s);
      },
      "fake-ascend: aclrtSynchronizeStream: stream 0x[0-9a-f]+ belongs to device 0, which aclrtResetDevice reset");
  EXPECT_DEATH(
      {
        FN(aclrtResetDevice)(0);
        FN(aclrtDestroyStream)(s);
      },
      "fake-ascend: aclrtDestroyStream: stream 0x[0-9a-f]+ belongs to device 0, which aclrtResetDevice already "
      "reset");
  EXPECT_DEATH(
      {
        uint64_t ws = 0;
        aclOpExecutor* ex = nullptr;
        FN(aclnnNegGetWorkspaceSize)(a, o, &ws, &ex);
        FN(aclrtResetDevice)(0);
        FN(aclrtSetDevice)(0);  // the device is back, the stream is not
        FN(aclnnNeg)(nullptr, 0, ex, s);
      },
      "fake-ascend: aclnnNeg: stream 0x[0-9a-f]+ belongs to device 0, which aclrtResetDevice reset");
}

TEST_F(Fake, DestroyStreamWithQueuedWorkDies) {
  aclTensor* a = tf({2}, {1, 2});
  aclTensor* o = ef({2});
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(GET_WS(Neg, a, o, &ws, &ex), ACLNN_SUCCESS);
  ASSERT_EQ(FN(aclnnNeg)(nullptr, 0, ex, stream), ACLNN_SUCCESS);
  aclrtStream s = stream;
  EXPECT_DEATH(FN(aclrtDestroyStream)(s),
               "fake-ascend: aclrtDestroyStream: stream 0x[0-9a-f]+ still has 1 queued "
               "task\\(s\\) \\(the first: aclnnNeg\\)");
}

TEST_F(Fake, FinalizeWithLiveStreamsOrQueuedWorkDies) {
  aclrtStream s = stream;
  EXPECT_DEATH(FN(aclFinalize)(),
               "fake-ascend: aclFinalize: 1 stream\\(s\\) made by aclrtCreateStream are still "
               "alive");
  aclTensor* a = tf({2}, {1, 2});
  aclTensor* o = ef({2});
  EXPECT_DEATH(
      {
        uint64_t ws = 0;
        aclOpExecutor* ex = nullptr;
        FN(aclnnNegGetWorkspaceSize)(a, o, &ws, &ex);
        FN(aclnnNeg)(nullptr, 0, ex, nullptr);  // on the default stream
        FN(aclrtDestroyStream)(s);
        FN(aclFinalize)();
      },
      "fake-ascend: aclFinalize: 1 queued task\\(s\\) never ran \\(the first: aclnnNeg on the default stream of "
      "device 0\\)");
}

// ================================ executors ================================

TEST_F(Fake, ExecutorRunsOnce) {
  aclTensor* a = tf({2}, {1, 2});
  aclTensor* o = ef({2});
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(GET_WS(Add, a, a, sf(1), o, &ws, &ex), ACLNN_SUCCESS);
  EXPECT_EQ(FN(aclnnMul)(nullptr, 0, ex, stream), ACLNN_ERR_PARAM_INVALID);  // another operator's entry point
  EXPECT_NE(recent().find("made by aclnnAddGetWorkspaceSize"), std::string::npos);
  EXPECT_DEATH(
      {
        volatile char c = *reinterpret_cast<volatile char*>(ex);
        (void)c;
      },
      "fake-ascend: the host dereferenced 0x[0-9a-f]+, inside an aclOpExecutor handle");
  ASSERT_EQ(FN(aclnnAdd)(nullptr, 0, ex, stream), ACLNN_SUCCESS);
  EXPECT_EQ(FN(aclnnAdd)(nullptr, 0, ex, stream), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("aclnnAdd: this aclOpExecutor (from aclnnAddGetWorkspaceSize) was launched already"),
            std::string::npos);
  EXPECT_EQ(FN(aclnnAdd)(nullptr, 0, nullptr, stream), ACLNN_ERR_PARAM_NULLPTR);
  int bogus = 0;
  EXPECT_EQ(FN(aclnnAdd)(nullptr, 0, reinterpret_cast<aclOpExecutor*>(&bogus), stream), ACLNN_ERR_PARAM_INVALID);
  ASSERT_EQ(FN(aclrtSynchronizeStream)(stream), ACL_SUCCESS);
  EXPECT_EQ(FN(fake_ascend_kernel_launches)(), 1u);  // the second launch ran nothing
  EXPECT_EQ(gf(o), (std::vector<float>{2, 4}));
}

TEST_F(Fake, WorkspaceIsCheckedAndWritten) {
  aclTensor* a = tf({2, 3}, {1, 2, 3, 4, 5, 6});
  aclTensor* o = ef({2});
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(GET_WS(ReduceSum, a, ia({1}), false, ACL_FLOAT, o, &ws, &ex), ACLNN_SUCCESS) << recent();
  ASSERT_GT(ws, 0u);
  void* w = dmalloc(ws);
  EXPECT_EQ(FN(aclnnReduceSum)(w, ws - 1, ex, stream), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("is smaller than the"), std::string::npos);
  EXPECT_EQ(FN(aclnnReduceSum)(nullptr, ws, ex, stream), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("workspace is nullptr"), std::string::npos);
  void* small = dmalloc(ws / 2);
  EXPECT_EQ(FN(aclnnReduceSum)(small, ws, ex, stream), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("is not inside one live aclrtMalloc block"), std::string::npos);
  ASSERT_EQ(FN(aclnnReduceSum)(w, ws, ex, stream), ACLNN_SUCCESS);  // the failed launches left it launchable
  ASSERT_EQ(FN(aclrtSynchronizeStream)(stream), ACL_SUCCESS);
  EXPECT_EQ(gf(o), (std::vector<float>{6, 15}));
  std::vector<uint8_t> scratch(ws);
  ASSERT_EQ(FN(aclrtMemcpy)(scratch.data(), ws, w, ws, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_NE(std::count(scratch.begin(), scratch.end(), 0xFF), static_cast<long>(ws));  // the kernel wrote into it
}

TEST_F(Fake, FreeingMemoryQueuedWorkUsesDies) {
  aclTensor* a = tf({2, 3}, {1, 2, 3, 4, 5, 6});
  aclTensor* o = ef({2});
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(GET_WS(ReduceSum, a, ia({1}), false, ACL_FLOAT, o, &ws, &ex), ACLNN_SUCCESS);
  void* w = dmalloc(ws);
  ASSERT_EQ(FN(aclnnReduceSum)(w, ws, ex, stream), ACLNN_SUCCESS);
  void* ad = info[a].dev;
  EXPECT_DEATH(FN(aclrtFree)(w),
               "fake-ascend: aclrtFree\\(0x[0-9a-f]+\\): the [0-9]+-byte block is still used by "
               "queued work: aclnnReduceSum on stream 0x[0-9a-f]+ writes");
  EXPECT_DEATH(FN(aclrtFree)(ad),
               "fake-ascend: aclrtFree\\(0x[0-9a-f]+\\): the 24-byte block is still used by "
               "queued work: aclnnReduceSum on stream 0x[0-9a-f]+ reads");
}

TEST_F(Fake, FreeingMemoryBeforeLaunchDies) {
  aclTensor* a = tf({2}, {1, 2});
  aclTensor* o = ef({2});
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(GET_WS(Neg, a, o, &ws, &ex), ACLNN_SUCCESS);
  void* ad = info[a].dev;
  aclrtStream s = stream;
  EXPECT_DEATH(
      {
        FN(aclrtFree)(ad);
        FN(aclnnNeg)(nullptr, 0, ex, s);
      },
      "fake-ascend: aclnnNeg: launched, but device memory .* is no longer inside a live aclrtMalloc block");
  ASSERT_EQ(FN(aclnnNeg)(nullptr, 0, ex, stream), ACLNN_SUCCESS);
}

TEST_F(Fake, DestroyingArgumentsBeforeLaunchDies) {
  aclTensor* a = tf({2}, {1, 2});
  aclTensor* o = ef({2});
  aclScalar* alpha = sf(2);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(GET_WS(Add, a, a, alpha, o, &ws, &ex), ACLNN_SUCCESS);
  EXPECT_DEATH(FN(aclDestroyTensor)(a),
               "fake-ascend: aclDestroyTensor: the aclTensor 0x[0-9a-f]+ is still used by "
               "an aclOpExecutor that was not launched yet \\(from "
               "aclnnAddGetWorkspaceSize\\)");
  EXPECT_DEATH(FN(aclDestroyScalar)(alpha), "fake-ascend: aclDestroyScalar: the aclScalar 0x[0-9a-f]+ is still used");
  ASSERT_EQ(FN(aclnnAdd)(nullptr, 0, ex, stream), ACLNN_SUCCESS);
  // After the launch the arguments may go: the queued kernel keeps what it needs.
  cleanup_objects();
  ASSERT_EQ(FN(aclrtSynchronizeStream)(stream), ACL_SUCCESS);
  std::vector<float> h(2);
  ASSERT_EQ(FN(aclrtMemcpy)(h.data(), 8, info[o].dev, 8, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_EQ(h, (std::vector<float>{3, 6}));
  // destroying twice
  aclTensor* t = tf({1}, {1});
  tensors.pop_back();
  ASSERT_EQ(FN(aclDestroyTensor)(t), ACLNN_SUCCESS);
  EXPECT_DEATH(FN(aclDestroyTensor)(t), "fake-ascend: aclDestroyTensor: 0x[0-9a-f]+ is not a live aclTensor");
}

// ================================ tensor arguments ================================

TEST_F(Fake, TensorDataMustBeInsideOneDeviceBlock) {
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  aclTensor* o = ef({4});
  const Shape shape{4}, st{1};
  std::vector<float> host(4, 1.0f);
  aclTensor* h =
      FN(aclCreateTensor)(shape.data(), 1, ACL_FLOAT, st.data(), 0, ACL_FORMAT_ND, shape.data(), 1, host.data());
  tensors.push_back(h);
  EXPECT_EQ(GET_WS(Neg, h, o, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("aclnnNeg: self: its data 0x"), std::string::npos);
  EXPECT_EQ(ex, nullptr);
  // 4 floats in a 12-byte block
  void* small = dmalloc(12);
  aclTensor* over =
      FN(aclCreateTensor)(shape.data(), 1, ACL_FLOAT, st.data(), 0, ACL_FORMAT_ND, shape.data(), 1, small);
  tensors.push_back(over);
  EXPECT_EQ(GET_WS(Neg, over, o, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("bytes past the end of its 12-byte aclrtMalloc block"), std::string::npos);
  // a view past its storage
  const Shape storage{4};
  void* d = dmalloc(64);
  aclTensor* past = FN(aclCreateTensor)(shape.data(), 1, ACL_FLOAT, st.data(), 2, ACL_FORMAT_ND, storage.data(), 1, d);
  tensors.push_back(past);
  EXPECT_EQ(GET_WS(Neg, past, o, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("past its storage of 4 elements"), std::string::npos);
  // tensorData not 32-byte aligned (a view's own address), and the same view as the storage's address + an offset
  aclTensor* unaligned = FN(aclCreateTensor)(shape.data(), 1, ACL_FLOAT, st.data(), 0, ACL_FORMAT_ND, shape.data(), 1,
                                             static_cast<char*>(d) + 4);
  tensors.push_back(unaligned);
  EXPECT_EQ(GET_WS(Neg, unaligned, o, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  const std::string why = recent();
  EXPECT_NE(why.find("aclnnNeg: self: its tensorData 0x"), std::string::npos) << why;
  EXPECT_NE(why.find("is not 32-byte aligned"), std::string::npos) << why;
  const Shape whole{16};
  aclTensor* offset = FN(aclCreateTensor)(shape.data(), 1, ACL_FLOAT, st.data(), 1, ACL_FORMAT_ND, whole.data(), 1, d);
  tensors.push_back(offset);
  EXPECT_EQ(GET_WS(Neg, offset, o, &ws, &ex), ACLNN_SUCCESS) << recent();
  ASSERT_EQ(FN(aclnnNeg)(nullptr, 0, ex, stream), ACLNN_SUCCESS) << recent();
  // nullptr arguments and outputs of the wrong shape or dtype
  EXPECT_EQ(GET_WS(Neg, nullptr, o, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_NE(recent().find("aclnnNeg: self is nullptr"), std::string::npos);
  aclTensor* a = tf({4}, {1, 2, 3, 4});
  EXPECT_EQ(GET_WS(Neg, a, o, nullptr, &ex), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(GET_WS(Neg, a, ef({5}), &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("aclnnNeg: out shape [5] should be [4]"), std::string::npos);
  EXPECT_EQ(GET_WS(Neg, a, empty({4}, ACL_INT32, 4), &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("out dtype INT32 should be FLOAT"), std::string::npos);
  EXPECT_EQ(GET_WS(Add, a, tf({3}, {1, 2, 3}), sf(1), o, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("self shape [4] and other shape [3] do not broadcast"), std::string::npos);
  // a stride-0 output
  const Shape z{0};
  aclTensor* bcast = FN(aclCreateTensor)(shape.data(), 1, ACL_FLOAT, z.data(), 0, ACL_FORMAT_ND, st.data(), 1, d);
  tensors.push_back(bcast);
  EXPECT_EQ(GET_WS(Neg, a, bcast, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("overlapping elements"), std::string::npos);
  // a destroyed tensor
  aclTensor* gone = tf({4}, {1, 2, 3, 4});
  tensors.pop_back();
  FN(aclDestroyTensor)(gone);
  EXPECT_EQ(GET_WS(Neg, gone, o, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("is not a live aclTensor"), std::string::npos);
}

TEST_F(Fake, StridedViewsAreHonoured) {
  std::vector<float> base(12);
  for (int i = 0; i < 12; ++i) base[i] = static_cast<float>(i);
  aclTensor* storage = tf({3, 4}, base);
  void* d = info[storage].dev;
  const Shape tshape{4, 3}, tstrides{1, 4}, sdims{12};
  aclTensor* t = FN(aclCreateTensor)(tshape.data(), 2, ACL_FLOAT, tstrides.data(), 0, ACL_FORMAT_ND, sdims.data(), 1,
                                     d);  // the transpose
  tensors.push_back(t);
  aclTensor* o = ef({4, 3});
  ASSERT_EQ(RUN(Adds, t, sf(100), sf(1), o), ACLNN_SUCCESS) << recent();
  std::vector<float> got = gf(o);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_EQ(got[i * 3 + j], 100 + base[j * 4 + i]);
  }
  const Shape vshape{2, 2}, vstrides{4, 1};
  aclTensor* v = FN(aclCreateTensor)(vshape.data(), 2, ACL_FLOAT, vstrides.data(), 5, ACL_FORMAT_ND, sdims.data(), 1,
                                     d);  // rows 1-2, columns 1-2
  tensors.push_back(v);
  aclTensor* o2 = ef({2, 2});
  ASSERT_EQ(RUN(Neg, v, o2), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(o2), (std::vector<float>{-5, -6, -9, -10}));
  // a strided output: write the negation into the transposed view itself
  ASSERT_EQ(RUN(Neg, o, t), ACLNN_SUCCESS) << recent();
  got = gf(storage);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(got[i], -(100 + base[i]));
}

// ================================ leaks ================================

TEST_F(Fake, LeaksAreReportedAtFinalize) {
  aclTensor* t = tf({2}, {1, 2});
  aclTensor* o = ef({2});
  dmalloc(100);
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(GET_WS(Neg, t, o, &ws, &ex), ACLNN_SUCCESS);  // never launched
  tensors.clear();                                        // t and o leak, and the three blocks
  buffers.clear();
  EXPECT_EQ(FN(aclrtDestroyStream)(stream), ACL_SUCCESS);
  EXPECT_EQ(FN(aclrtResetDevice)(0), ACL_SUCCESS);
  testing::internal::CaptureStderr();
  EXPECT_EQ(FN(aclFinalize)(), ACL_SUCCESS);
  const std::string err = testing::internal::GetCapturedStderr();
  finalized = true;
  EXPECT_NE(err.find("fake-ascend: leaks at aclFinalize:"), std::string::npos) << err;
  EXPECT_NE(err.find("3 device block(s) still allocated (116 bytes)"), std::string::npos) << err;
  EXPECT_NE(err.find("1 aclOpExecutor(s) never launched: aclnnNeg"), std::string::npos) << err;
  EXPECT_NE(err.find("2 aclTensor object(s) never destroyed"), std::string::npos) << err;
  EXPECT_EQ(FN(aclDestroyTensor)(t), ACLNN_SUCCESS);  // still destroyable after aclFinalize
  EXPECT_EQ(FN(aclDestroyTensor)(o), ACLNN_SUCCESS);
}

TEST_F(Fake, StrictLeaksAbort) {
  aclTensor* t = tf({2}, {1, 2});
  tensors.pop_back();
  aclrtStream s = stream;
  EXPECT_DEATH(
      {
        setenv("FAKE_ASCEND_STRICT_LEAKS", "1", 1);
        FN(aclrtDestroyStream)(s);
        FN(aclrtResetDevice)(0);
        FN(aclFinalize)();
      },
      "1 aclTensor object\\(s\\) never destroyed.*fake-ascend: FAKE_ASCEND_STRICT_LEAKS=1");
  FN(aclDestroyTensor)(t);
}

// ================================ operators: values ================================

TEST_F(Fake, ElementwiseArithmeticWithBroadcasting) {
  const std::vector<float> x = randf(6, 1), y = randf(3, 2), c = randf(2, 3, 0.5f, 2.0f);
  aclTensor* a = tf({2, 3}, x);
  aclTensor* b = tf({3}, y);
  aclTensor* col = tf({2, 1}, c);
  aclTensor* o = ef({2, 3});
  auto want = [&](auto f) {
    Vec w(6);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) w[i * 3 + j] = f(x[i * 3 + j], y[j], c[i]);
    return w;
  };
  ASSERT_EQ(RUN(Add, a, b, sf(2), o), ACLNN_SUCCESS) << recent();
  expect_near(gf(o), want([](double p, double q, double) { return p + 2 * q; }), 1e-6, "add");
  ASSERT_EQ(RUN(Sub, b, a, sf(0.5f), o), ACLNN_SUCCESS) << recent();
  expect_near(gf(o), want([](double p, double q, double) { return q - 0.5 * p; }), 1e-6, "sub");
  ASSERT_EQ(RUN(Mul, col, b, o), ACLNN_SUCCESS) << recent();
  expect_near(gf(o), want([](double, double q, double r) { return r * q; }), 1e-6, "mul");
  ASSERT_EQ(RUN(Div, a, col, o), ACLNN_SUCCESS) << recent();
  expect_near(gf(o), want([](double p, double, double r) { return p / r; }), 1e-6, "div");
  ASSERT_EQ(RUN(Adds, a, sf(3), sf(2), o), ACLNN_SUCCESS) << recent();
  expect_near(gf(o), want([](double p, double, double) { return p + 6; }), 1e-6, "adds");
  ASSERT_EQ(RUN(Subs, a, sf(3), sf(1), o), ACLNN_SUCCESS) << recent();
  expect_near(gf(o), want([](double p, double, double) { return p - 3; }), 1e-6, "subs");
  ASSERT_EQ(RUN(Muls, a, sd(-2.5), o), ACLNN_SUCCESS) << recent();
  expect_near(gf(o), want([](double p, double, double) { return -2.5 * p; }), 1e-6, "muls");
  ASSERT_EQ(RUN(Divs, a, si(4), o), ACLNN_SUCCESS) << recent();
  expect_near(gf(o), want([](double p, double, double) { return p / 4; }), 1e-6, "divs");
  // DOUBLE
  const std::vector<double> xd{1.5, -2.25};
  aclTensor* ad = tensor<double>({2}, xd, ACL_DOUBLE);
  aclTensor* od = empty({2}, ACL_DOUBLE, 8);
  ASSERT_EQ(RUN(Mul, ad, ad, od), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<double>(od), (std::vector<double>{2.25, 5.0625}));
}

TEST_F(Fake, IntegerAndBoolArithmetic) {
  aclTensor* a = tensor<int32_t>({3}, {1, -2, 2147483647}, ACL_INT32);
  aclTensor* b = tensor<int32_t>({3}, {10, 20, 1}, ACL_INT32);
  aclTensor* o = empty({3}, ACL_INT32, 4);
  ASSERT_EQ(RUN(Add, a, b, si(3), o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(o), (std::vector<int32_t>{31, 58, -2147483646}));  // wraps around
  EXPECT_EQ(RUN(Add, a, b, sf(0.5f), o), ACLNN_ERR_PARAM_INVALID);          // a fractional alpha for integers
  aclTensor* l = tensor<int64_t>({2}, {1ll << 40, -3}, ACL_INT64);
  aclTensor* ol = empty({2}, ACL_INT64, 8);
  ASSERT_EQ(RUN(Mul, l, l, ol), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int64_t>(ol), (std::vector<int64_t>{0, 9}));  // 2^80 wraps to 0
  aclTensor* p = tensor<uint8_t>({4}, {0, 1, 0, 1}, ACL_BOOL);
  aclTensor* q = tensor<uint8_t>({4}, {0, 0, 1, 1}, ACL_BOOL);
  aclTensor* ob = empty({4}, ACL_BOOL, 1);
  ASSERT_EQ(RUN(Mul, p, q, ob), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint8_t>(ob), (std::vector<uint8_t>{0, 0, 0, 1}));
  ASSERT_EQ(RUN(Add, p, q, si(1), ob), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint8_t>(ob), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(RUN(Sub, p, q, si(1), ob), ACLNN_ERR_PARAM_INVALID);
  // int / int is true division into FLOAT; int + float tensor promotes to FLOAT
  aclTensor* of = ef({3});
  ASSERT_EQ(RUN(Div, a, b, of), ACLNN_SUCCESS) << recent();
  expect_near(gf(of), {0.1, -0.1, 2147483647.0}, 1e-6, "int div");
  ASSERT_EQ(RUN(Add, a, tf({1}, {0.5f}), si(1), of), ACLNN_SUCCESS) << recent();
  expect_near(gf(of), {1.5, -1.5, 2147483647.5}, 1e-6, "int + float");
  EXPECT_EQ(RUN(Add, a, b, si(1), of), ACLNN_ERR_PARAM_INVALID);  // INT32 result into a FLOAT out
  EXPECT_NE(recent().find("out dtype FLOAT should be INT32"), std::string::npos);
}

TEST_F(Fake, UnaryFunctions) {
  const std::vector<float> x{-2.0f, -0.5f, 0.0f, 0.25f, 1.5f, 3.0f};
  const std::vector<float> pos{0.5f, 1.0f, 2.0f, 4.0f, 9.0f, 0.1f};
  aclTensor* a = tf({2, 3}, x);
  aclTensor* p = tf({2, 3}, pos);
  aclTensor* o = ef({2, 3});
  auto check = [&](const std::vector<float>& in, double (*f)(double), const char* what) {
    Vec w;
    for (float v : in) w.push_back(f(v));
    expect_near(gf(o), w, 1e-6, what);
  };
  ASSERT_EQ(RUN(Neg, a, o), ACLNN_SUCCESS);
  check(
      x, [](double v) { return -v; }, "neg");
  ASSERT_EQ(RUN(Exp, a, o), ACLNN_SUCCESS);
  check(
      x, [](double v) { return std::exp(v); }, "exp");
  ASSERT_EQ(RUN(Log, p, o), ACLNN_SUCCESS);
  check(
      pos, [](double v) { return std::log(v); }, "log");
  ASSERT_EQ(RUN(Sqrt, p, o), ACLNN_SUCCESS);
  check(
      pos, [](double v) { return std::sqrt(v); }, "sqrt");
  ASSERT_EQ(RUN(Tanh, a, o), ACLNN_SUCCESS);
  check(
      x, [](double v) { return std::tanh(v); }, "tanh");
  ASSERT_EQ(RUN(Sigmoid, a, o), ACLNN_SUCCESS);
  check(
      x, [](double v) { return 1 / (1 + std::exp(-v)); }, "sigmoid");
  ASSERT_EQ(RUN(Relu, a, o), ACLNN_SUCCESS);
  check(
      x, [](double v) { return v > 0 ? v : 0.0; }, "relu");
  ASSERT_EQ(RUN(PowTensorScalar, p, sf(1.5f), o), ACLNN_SUCCESS) << recent();
  check(
      pos, [](double v) { return std::pow(v, 1.5); }, "pow tensor scalar");
  aclTensor* e = tf({3}, {2.0f, 0.5f, -1.0f});
  ASSERT_EQ(RUN(PowTensorTensor, p, e, o), ACLNN_SUCCESS) << recent();
  expect_near(gf(o), {0.25, 1.0, 0.5, 16.0, 3.0, 10.0}, 1e-6, "pow tensor tensor");
  aclTensor* n = tensor<int64_t>({3}, {-4, 0, 7}, ACL_INT64);
  aclTensor* on = empty({3}, ACL_INT64, 8);
  ASSERT_EQ(RUN(Neg, n, on), ACLNN_SUCCESS);
  EXPECT_EQ(get<int64_t>(on), (std::vector<int64_t>{4, 0, -7}));
  ASSERT_EQ(RUN(Relu, n, on), ACLNN_SUCCESS);
  EXPECT_EQ(get<int64_t>(on), (std::vector<int64_t>{0, 0, 7}));
  aclTensor* dd = tensor<double>({2}, {0.0, 1.0}, ACL_DOUBLE);
  aclTensor* od = empty({2}, ACL_DOUBLE, 8);
  ASSERT_EQ(RUN(Exp, dd, od), ACLNN_SUCCESS);
  EXPECT_DOUBLE_EQ(get<double>(od)[1], std::exp(1.0));
}

Vec reduce_ref(const Vec& x, const Shape& s, std::vector<int> dims, bool mean) {
  Shape kept = s;
  for (int d : dims) kept[d] = 1;
  Vec r(numel(kept), 0.0);
  const Shape st = contiguous(s), kst = contiguous(kept);
  std::vector<bool> reduced(s.size(), false);
  for (int d : dims) reduced[d] = true;
  for (int64_t i = 0; i < numel(s); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < s.size(); ++d) {
      if (!reduced[d]) o += i / st[d] % s[d] * kst[d];
    }
    r[o] += x[i];
  }
  if (mean) {
    double n = 1;
    for (int d : dims) n *= s[d];
    for (double& v : r) v /= n;
  }
  return r;
}

TEST_F(Fake, ReductionsWithKeepDim) {
  const Shape s{2, 3, 4};
  const std::vector<float> x = randf(24, 7);
  aclTensor* a = tf(s, x);
  aclTensor* o1 = ef({2, 1, 4});
  ASSERT_EQ(RUN(ReduceSum, a, ia({1}), true, ACL_FLOAT, o1), ACLNN_SUCCESS) << recent();
  EXPECT_GT(last_ws, 0u);
  expect_near(gf(o1), reduce_ref(to_d(x), s, {1}, false), 1e-6, "sum dim 1 keepdim");
  aclTensor* o2 = ef({3});
  ASSERT_EQ(RUN(ReduceSum, a, ia({0, -1}), false, ACL_FLOAT, o2), ACLNN_SUCCESS) << recent();
  expect_near(gf(o2), reduce_ref(to_d(x), s, {0, 2}, false), 1e-6, "sum dims 0, -1");
  aclTensor* o3 = ef({});
  ASSERT_EQ(RUN(ReduceSum, a, ia({}), false, ACL_FLOAT, o3), ACLNN_SUCCESS) << recent();
  expect_near(gf(o3), reduce_ref(to_d(x), s, {0, 1, 2}, false), 1e-5, "sum all");
  aclTensor* m1 = ef({2, 3, 1});
  ASSERT_EQ(RUN(Mean, a, ia({2}), true, ACL_FLOAT, m1), ACLNN_SUCCESS) << recent();
  EXPECT_GT(last_ws, 0u);
  expect_near(gf(m1), reduce_ref(to_d(x), s, {2}, true), 1e-6, "mean dim 2 keepdim");
  aclTensor* m2 = ef({1, 1, 1});
  ASSERT_EQ(RUN(Mean, a, ia({}), true, ACL_FLOAT, m2), ACLNN_SUCCESS) << recent();
  expect_near(gf(m2), reduce_ref(to_d(x), s, {0, 1, 2}, true), 1e-6, "mean all keepdim");
  // integers summed into INT64
  aclTensor* ints = tensor<int32_t>({2, 2}, {1, 2, 3, 2147483647}, ACL_INT32);
  aclTensor* ol = empty({2}, ACL_INT64, 8);
  ASSERT_EQ(RUN(ReduceSum, ints, ia({0}), false, ACL_INT64, ol), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int64_t>(ol), (std::vector<int64_t>{4, 2147483649ll}));
  // bad dims
  EXPECT_EQ(RUN(ReduceSum, a, ia({3}), false, ACL_FLOAT, o2), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("aclnnReduceSum: dim 3 is out of range for a 3-d tensor"), std::string::npos);
  EXPECT_EQ(RUN(ReduceSum, a, ia({1, -2}), false, ACL_FLOAT, ef({2, 4})), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("appears twice"), std::string::npos);
  EXPECT_EQ(RUN(Mean, a, ia({1}), false, ACL_FLOAT, o1), ACLNN_ERR_PARAM_INVALID);  // keepDim shape for no keepDim
}

TEST_F(Fake, CastCopyFillZero) {
  aclTensor* f = tf({5}, {1.7f, -1.7f, 0.0f, 3e9f, NAN});
  aclTensor* i = empty({5}, ACL_INT32, 4);
  ASSERT_EQ(RUN(Cast, f, ACL_INT32, i), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(i), (std::vector<int32_t>{1, -1, 0, 2147483647, 0}));  // saturating, NaN -> 0
  aclTensor* b = empty({5}, ACL_BOOL, 1);
  ASSERT_EQ(RUN(Cast, f, ACL_BOOL, b), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint8_t>(b), (std::vector<uint8_t>{1, 1, 0, 1, 1}));
  aclTensor* l = tensor<int64_t>({2}, {-3, 1ll << 40}, ACL_INT64);
  aclTensor* d = empty({2}, ACL_DOUBLE, 8);
  ASSERT_EQ(RUN(Cast, l, ACL_DOUBLE, d), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<double>(d), (std::vector<double>{-3.0, 1099511627776.0}));
  EXPECT_EQ(RUN(Cast, l, ACL_FLOAT, d), ACLNN_ERR_PARAM_INVALID);  // out dtype is not dtype
  // InplaceCopy broadcasts and converts
  aclTensor* dst = ef({2, 3});
  ASSERT_EQ(RUN(InplaceCopy, dst, tensor<int32_t>({3}, {1, 2, 3}, ACL_INT32)), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(dst), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(RUN(InplaceCopy, dst, tf({2}, {1, 2})), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("src shape [2] cannot be broadcast to selfRef shape [2, 3]"), std::string::npos);
  ASSERT_EQ(RUN(InplaceFillScalar, dst, sd(2.5)), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(dst), std::vector<float>(6, 2.5f));
  ASSERT_EQ(RUN(InplaceFillScalar, i, sf(-7.9f)), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(i), std::vector<int32_t>(5, -7));
  ASSERT_EQ(RUN(InplaceZero, dst), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(dst), std::vector<float>(6, 0.0f));
  ASSERT_EQ(RUN(InplaceZero, b), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint8_t>(b), std::vector<uint8_t>(5, 0));
}

Vec matmul_ref(const std::vector<float>& a, const std::vector<float>& b, int64_t batch_a, int64_t batch_b, int64_t n,
               int64_t k, int64_t m) {
  // batch broadcasting of the test case: a has batch_a (or 1) matrices, b has batch_b (or 1)
  const int64_t batches = std::max(batch_a, batch_b);
  Vec r(batches * n * m, 0.0);
  for (int64_t t = 0; t < batches; ++t) {
    const int64_t ta = batch_a == 1 ? 0 : t, tb = batch_b == 1 ? 0 : t;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j)
        for (int64_t p = 0; p < k; ++p)
          r[(t * n + i) * m + j] += double(a[(ta * n + i) * k + p]) * b[(tb * k + p) * m + j];
  }
  return r;
}

TEST_F(Fake, MatmulShapes) {
  const std::vector<float> x = randf(2 * 3 * 4, 11), y = randf(3 * 4 * 5, 12);
  // [2, 1, 3, 4] x [3, 4, 5] -> [2, 3, 3, 5]
  aclTensor* a = tf({2, 1, 3, 4}, x);
  aclTensor* b = tf({3, 4, 5}, y);
  aclTensor* o = ef({2, 3, 3, 5});
  ASSERT_EQ(RUN(Matmul, a, b, o, int8_t{0}), ACLNN_SUCCESS) << recent();
  EXPECT_GT(last_ws, 0u);
  const std::vector<float> got = gf(o);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      const std::vector<float> xa(x.begin() + i * 12, x.begin() + (i + 1) * 12);
      const std::vector<float> yb(y.begin() + j * 20, y.begin() + (j + 1) * 20);
      const Vec want = matmul_ref(xa, yb, 1, 1, 3, 4, 5);
      const std::vector<float> part(got.begin() + (i * 3 + j) * 15, got.begin() + (i * 3 + j + 1) * 15);
      expect_near(part, want, 1e-5, "batched matmul");
    }
  }
  // 2-D x 2-D, 1-D x 2-D, 2-D x 1-D, 1-D x 1-D
  aclTensor* m = tf({3, 4}, std::vector<float>(x.begin(), x.begin() + 12));
  aclTensor* n = tf({4, 5}, std::vector<float>(y.begin(), y.begin() + 20));
  aclTensor* v4 = tf({4}, {1, 2, 3, 4});
  aclTensor* o35 = ef({3, 5});
  ASSERT_EQ(RUN(Matmul, m, n, o35, int8_t{1}), ACLNN_SUCCESS) << recent();
  expect_near(gf(o35),
              matmul_ref(std::vector<float>(x.begin(), x.begin() + 12), std::vector<float>(y.begin(), y.begin() + 20),
                         1, 1, 3, 4, 5),
              1e-5, "2-d");
  aclTensor* o5 = ef({5});
  ASSERT_EQ(RUN(Matmul, v4, n, o5, int8_t{0}), ACLNN_SUCCESS) << recent();
  expect_near(gf(o5), matmul_ref({1, 2, 3, 4}, std::vector<float>(y.begin(), y.begin() + 20), 1, 1, 1, 4, 5), 1e-5,
              "1-d x 2-d");
  aclTensor* o3 = ef({3});
  ASSERT_EQ(RUN(Matmul, m, v4, o3, int8_t{3}), ACLNN_SUCCESS) << recent();
  expect_near(gf(o3), matmul_ref(std::vector<float>(x.begin(), x.begin() + 12), {1, 2, 3, 4}, 1, 1, 3, 4, 1), 1e-5,
              "2-d x 1-d");
  aclTensor* o0 = ef({});
  ASSERT_EQ(RUN(Matmul, v4, v4, o0, int8_t{0}), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(o0), std::vector<float>{30});
  EXPECT_EQ(RUN(Matmul, m, m, o35, int8_t{0}), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("cannot be multiplied"), std::string::npos);
  EXPECT_EQ(RUN(Matmul, m, n, o35, int8_t{7}), ACLNN_ERR_PARAM_INVALID);
  // USE_FP16 rounds the inputs to half precision first
  aclTensor* h1 = tf({1, 2}, {1.0001f, 3.0f});
  aclTensor* h2 = tf({2, 1}, {1.0f, 1.0f});
  aclTensor* oh = ef({1, 1});
  ASSERT_EQ(RUN(Matmul, h1, h2, oh, int8_t{0}), ACLNN_SUCCESS);
  EXPECT_FLOAT_EQ(gf(oh)[0], 4.0001f);
  ASSERT_EQ(RUN(Matmul, h1, h2, oh, int8_t{2}), ACLNN_SUCCESS);
  EXPECT_EQ(gf(oh)[0], 4.0f);
}

Vec softmax_ref(const Vec& x, const Shape& s, int ax, bool log) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < static_cast<int>(s.size()); ++i) {
    if (i < ax) outer *= s[i];
    if (i > ax) inner *= s[i];
  }
  const int64_t len = s[ax];
  Vec r(x.size());
  for (int64_t p = 0; p < outer; ++p) {
    for (int64_t q = 0; q < inner; ++q) {
      double sum = 0;
      for (int64_t i = 0; i < len; ++i) sum += std::exp(x[(p * len + i) * inner + q]);
      for (int64_t i = 0; i < len; ++i) {
        const int64_t j = (p * len + i) * inner + q;
        r[j] = log ? x[j] - std::log(sum) : std::exp(x[j]) / sum;
      }
    }
  }
  return r;
}

TEST_F(Fake, SoftmaxLogSoftmaxAndBackward) {
  const Shape s{2, 3, 4};
  const std::vector<float> x = randf(24, 21, -2, 2), g = randf(24, 22);
  aclTensor* a = tf(s, x);
  aclTensor* go = tf(s, g);
  for (bool log : {false, true}) {
    for (int dim : {1, -1}) {
      const int ax = dim < 0 ? dim + 3 : dim;
      aclTensor* y = ef(s);
      aclTensor* gi = ef(s);
      if (log) {
        ASSERT_EQ(RUN(LogSoftmax, a, int64_t{dim}, y), ACLNN_SUCCESS) << recent();
      } else {
        ASSERT_EQ(RUN(Softmax, a, int64_t{dim}, y), ACLNN_SUCCESS) << recent();
      }
      EXPECT_GT(last_ws, 0u);
      expect_near(gf(y), softmax_ref(to_d(x), s, ax, log), 1e-6, log ? "log_softmax" : "softmax");
      if (log) {
        ASSERT_EQ(RUN(LogSoftmaxBackward, go, y, int64_t{dim}, gi), ACLNN_SUCCESS) << recent();
      } else {
        ASSERT_EQ(RUN(SoftmaxBackward, go, y, int64_t{dim}, gi), ACLNN_SUCCESS) << recent();
      }
      EXPECT_GT(last_ws, 0u);
      const Vec want = fd_grad([&](const Vec& v) { return softmax_ref(v, s, ax, log); }, to_d(x), to_d(g), 1e-5);
      expect_near(gf(gi), want, 1e-4, log ? "log_softmax backward" : "softmax backward");
    }
  }
  EXPECT_EQ(RUN(Softmax, a, int64_t{3}, ef(s)), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("aclnnSoftmax: dim 3 is out of range"), std::string::npos);
}

Vec nll_ref(const Vec& x, const std::vector<int64_t>& t, const Vec& w, int64_t c, int64_t red, int64_t ignore,
            double* total) {
  const int64_t n = static_cast<int64_t>(t.size());
  Vec l(n, 0.0);
  double sum = 0;
  *total = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (t[i] == ignore) continue;
    l[i] = -w[t[i]] * x[i * c + t[i]];
    sum += l[i];
    *total += w[t[i]];
  }
  if (red == 0) return l;
  return {red == 1 ? sum / *total : sum};
}

TEST_F(Fake, NllLossAndBackward) {
  const int64_t n = 5, c = 4, ignore = 2;
  const std::vector<float> x = randf(n * c, 31, -3, 0), wv = {0.5f, 1.0f, 2.0f, 1.5f};
  const std::vector<int64_t> t = {0, 2, 3, 1, 3};
  aclTensor* self = tf({n, c}, x);
  aclTensor* target = tensor<int64_t>({n}, t, ACL_INT64);
  aclTensor* target32 = tensor<int32_t>({n}, {0, 2, 3, 1, 3}, ACL_INT32);
  aclTensor* weight = tf({c}, wv);
  const Vec xd = to_d(x), wd = to_d(wv);
  for (int64_t red : {0, 1, 2}) {
    for (bool use_weight : {true, false}) {
      const Vec w = use_weight ? wd : Vec(c, 1.0);
      aclTensor* out = red == 0 ? ef({n}) : ef({});
      aclTensor* total = ef({});
      ASSERT_EQ(
          RUN(NLLLoss, self, red == 1 ? target32 : target, use_weight ? weight : nullptr, red, ignore, out, total),
          ACLNN_SUCCESS)
          << recent();
      EXPECT_GT(last_ws, 0u);
      double tw = 0;
      expect_near(gf(out), nll_ref(xd, t, w, c, red, ignore, &tw), 1e-6, "nll");
      expect_near(gf(total), {tw}, 1e-6, "total weight");
      const std::vector<float> g = red == 0 ? randf(n, 32) : std::vector<float>{0.7f};
      aclTensor* go = red == 0 ? tf({n}, g) : tf({}, g);
      aclTensor* gi = ef({n, c});
      ASSERT_EQ(RUN(NLLLossBackward, go, self, target, use_weight ? weight : nullptr, red, ignore, total, gi),
                ACLNN_SUCCESS)
          << recent();
      EXPECT_GT(last_ws, 0u);
      const Vec want = fd_grad(
          [&](const Vec& v) {
            double unused;
            return nll_ref(v, t, w, c, red, ignore, &unused);
          },
          xd, to_d(g), 0.5);
      expect_near(gf(gi), want, 1e-5, "nll backward");
    }
  }
  // a 1-D self with a 0-d target
  aclTensor* out = ef({});
  aclTensor* total = ef({});
  ASSERT_EQ(RUN(NLLLoss, tf({c}, std::vector<float>(x.begin(), x.begin() + c)), tensor<int64_t>({}, {3}, ACL_INT64),
                weight, int64_t{1}, ignore, out, total),
            ACLNN_SUCCESS)
      << recent();
  expect_near(gf(out), {-x[3]}, 1e-6, "nll 1-d");
  EXPECT_EQ(RUN(NLLLoss, self, target, weight, int64_t{3}, ignore, ef({}), total), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(RUN(NLLLoss, self, target, weight, int64_t{0}, ignore, ef({}), total), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("aclnnNLLLoss: out shape [] should be [5]"), std::string::npos);
}

TEST_F(Fake, NllLossTargetOutOfRangeDies) {
  aclTensor* self = tf({2, 3}, randf(6, 1));
  aclTensor* target = tensor<int64_t>({2}, {0, 7}, ACL_INT64);
  aclTensor* out = ef({});
  aclTensor* total = ef({});
  aclrtStream s = stream;
  // all in the child: the parent must not queue a kernel that dies when TearDown synchronises
  EXPECT_DEATH(
      {
        uint64_t ws = 0;
        aclOpExecutor* ex = nullptr;
        FN(aclnnNLLLossGetWorkspaceSize)(self, target, nullptr, 1, -100, out, total, &ws, &ex);
        void* w = nullptr;
        FN(aclrtMalloc)(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
        FN(aclnnNLLLoss)(w, ws, ex, s);
        FN(aclrtSynchronizeStream)(s);
      },
      "fake-ascend: aclnnNLLLoss kernel: target\\[1\\] = 7 is out of range \\[0, 3\\)");
}

struct Conv {
  int64_t n = 2, cin = 4, h = 7, w = 6, cout = 6, groups = 2, kh = 3, kw = 2, sh = 2, sw = 1, ph = 1, pw = 1, dh = 1,
          dw = 2;
  int64_t ho() const { return (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  int64_t wo() const { return (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
  Vec forward(const Vec& x, const Vec& wt, const Vec& b) const {
    const int64_t cin_g = cin / groups, cout_g = cout / groups;
    Vec y(n * cout * ho() * wo());
    for (int64_t in = 0; in < n; ++in)
      for (int64_t co = 0; co < cout; ++co)
        for (int64_t oh = 0; oh < ho(); ++oh)
          for (int64_t ow = 0; ow < wo(); ++ow) {
            double acc = b.empty() ? 0 : b[co];
            for (int64_t ci = 0; ci < cin_g; ++ci)
              for (int64_t a = 0; a < kh; ++a)
                for (int64_t c = 0; c < kw; ++c) {
                  const int64_t ih = oh * sh - ph + a * dh, iw = ow * sw - pw + c * dw;
                  if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
                  acc += x[((in * cin + co / cout_g * cin_g + ci) * h + ih) * w + iw] *
                         wt[((co * cin_g + ci) * kh + a) * kw + c];
                }
            y[((in * cout + co) * ho() + oh) * wo() + ow] = acc;
          }
    return y;
  }
};

TEST_F(Fake, Conv2dForwardAndBackward) {
  const Conv c;
  const Shape xs{c.n, c.cin, c.h, c.w}, ws{c.cout, c.cin / c.groups, c.kh, c.kw}, ys{c.n, c.cout, c.ho(), c.wo()};
  const std::vector<float> x = randf(numel(xs), 41), w = randf(numel(ws), 42), b = randf(c.cout, 43),
                           g = randf(numel(ys), 44);
  aclTensor* in = tf(xs, x);
  aclTensor* wt = tf(ws, w);
  aclTensor* bias = tf({c.cout}, b);
  aclTensor* y = ef(ys);
  aclIntArray* stride = ia({c.sh, c.sw});
  aclIntArray* pad = ia({c.ph, c.pw});
  aclIntArray* dil = ia({c.dh, c.dw});
  aclIntArray* opad = ia({0, 0});
  ASSERT_EQ(RUN(Convolution, in, wt, bias, stride, pad, dil, false, opad, c.groups, y, int8_t{0}), ACLNN_SUCCESS)
      << recent();
  EXPECT_GT(last_ws, 0u);
  expect_near(gf(y), c.forward(to_d(x), to_d(w), to_d(b)), 1e-5, "conv2d");
  ASSERT_EQ(RUN(Convolution, in, wt, nullptr, stride, pad, dil, false, opad, c.groups, y, int8_t{1}), ACLNN_SUCCESS);
  expect_near(gf(y), c.forward(to_d(x), to_d(w), {}), 1e-5, "conv2d without bias");
  aclTensor* go = tf(ys, g);
  aclTensor* gi = ef(xs);
  aclTensor* gw = ef(ws);
  aclTensor* gb = ef({c.cout});
  ASSERT_EQ(RUN(ConvolutionBackward, go, in, wt, ia({c.cout}), stride, pad, dil, false, opad,
                static_cast<int>(c.groups), ba({1, 1, 1}), int8_t{0}, gi, gw, gb),
            ACLNN_SUCCESS)
      << recent();
  EXPECT_GT(last_ws, 0u);
  const Vec xd = to_d(x), wd = to_d(w), gd = to_d(g);
  expect_near(gf(gi), fd_grad([&](const Vec& v) { return c.forward(v, wd, {}); }, xd, gd, 0.5), 1e-5, "conv dx");
  expect_near(gf(gw), fd_grad([&](const Vec& v) { return c.forward(xd, v, {}); }, wd, gd, 0.5), 1e-5, "conv dw");
  Vec db(c.cout, 0.0);
  for (size_t i = 0; i < g.size(); ++i) db[(i / (c.ho() * c.wo())) % c.cout] += g[i];
  expect_near(gf(gb), db, 1e-5, "conv db");
  // only the weight's gradient: the others may be nullptr
  aclTensor* gw2 = ef(ws);
  ASSERT_EQ(RUN(ConvolutionBackward, go, in, wt, nullptr, stride, pad, dil, false, opad, static_cast<int>(c.groups),
                ba({0, 1, 0}), int8_t{0}, nullptr, gw2, nullptr),
            ACLNN_SUCCESS)
      << recent();
  EXPECT_EQ(gf(gw2), gf(gw));
  // what the fake refuses
  EXPECT_EQ(RUN(Convolution, in, wt, bias, stride, pad, dil, true, opad, c.groups, y, int8_t{0}),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("aclnnConvolution: transposed convolution is not supported"), std::string::npos);
  EXPECT_EQ(RUN(Convolution, in, wt, bias, stride, pad, dil, false, opad, int64_t{3}, y, int8_t{0}),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(RUN(Convolution, in, wt, bias, ia({1}), pad, dil, false, opad, c.groups, y, int8_t{0}),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(RUN(Convolution, in, wt, bias, stride, pad, dil, false, opad, c.groups, ef({2, 6, 4, 5}), int8_t{0}),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("aclnnConvolution: output shape [2, 6, 4, 5] should be [2, 6, 4, 6]"), std::string::npos);
  // CANN checks the formats of the feature maps: a 4-D tensor must be NCHW (ND is refused), a 1-D one is none.
  EXPECT_EQ(RUN(Convolution, in, wt, bias, stride, pad, dil, false, opad, c.groups, ef({1}), int8_t{0}),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnConvolution: output format ND is not supported for a 1-D tensor (expected a 3-D (NCL), "
                      "4-D (NCHW) or 5-D (NCDHW) tensor)");
  aclTensor* nd = wrap({2, 6, 4, 6}, ACL_FLOAT, dmalloc(2 * 6 * 4 * 6 * 4), 4, ACL_FORMAT_ND);
  EXPECT_EQ(RUN(Convolution, in, wt, bias, stride, pad, dil, false, opad, c.groups, nd, int8_t{0}),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnConvolution: output format ND is not supported for a 4-D tensor (expected NCHW for a 4-D "
                      "tensor)");
}

// PyTorch's max_pool2d (with indices into H*W) on [planes, h, w].
void maxpool_ref(const std::vector<float>& x, int64_t planes, int64_t h, int64_t w, int64_t k, int64_t s, int64_t p,
                 bool ceil, Vec* out, std::vector<int64_t>* idx, int64_t* ho_out) {
  auto osz = [&](int64_t in) {
    int64_t o = (in + 2 * p - (k - 1) - 1 + (ceil ? s - 1 : 0)) / s + 1;
    if (ceil && (o - 1) * s >= in + p) --o;
    return o;
  };
  const int64_t ho = osz(h), wo = osz(w);
  *ho_out = ho;
  out->assign(planes * ho * wo, -INFINITY);
  idx->assign(planes * ho * wo, -1);
  for (int64_t q = 0; q < planes; ++q)
    for (int64_t oh = 0; oh < ho; ++oh)
      for (int64_t ow = 0; ow < wo; ++ow)
        for (int64_t a = 0; a < k; ++a)
          for (int64_t b = 0; b < k; ++b) {
            const int64_t ih = oh * s - p + a, iw = ow * s - p + b;
            if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
            const int64_t j = (q * ho + oh) * wo + ow;
            if (x[(q * h + ih) * w + iw] > (*out)[j]) {
              (*out)[j] = x[(q * h + ih) * w + iw];
              (*idx)[j] = ih * w + iw;
            }
          }
}

TEST_F(Fake, MaxPoolWithIndicesAndBackward) {
  const int64_t n = 2, c = 2, h = 6, w = 6;
  const std::vector<float> x = randf(n * c * h * w, 51);
  aclTensor* in = tf({n, c, h, w}, x);
  for (bool ceil : {false, true}) {
    Vec want;
    std::vector<int64_t> want_idx;
    int64_t ho = 0;
    maxpool_ref(x, n * c, h, w, 3, 2, 1, ceil, &want, &want_idx, &ho);
    ASSERT_EQ(ho, ceil ? 4 : 3);
    aclTensor* out = ef({n, c, ho, ho});
    aclTensor* idx = ceil ? empty({n, c, ho, ho}, ACL_INT32, 4) : empty({n, c, ho, ho}, ACL_INT64, 8);
    ASSERT_EQ(RUN(MaxPool2dWithIndices, in, ia({3, 3}), ia({2, 2}), ia({1, 1}), ia({1, 1}), ceil, out, idx),
              ACLNN_SUCCESS)
        << recent();
    expect_near(gf(out), want, 0, "max pool");
    std::vector<int64_t> got_idx;
    if (ceil) {
      for (int32_t v : get<int32_t>(idx)) got_idx.push_back(v);
    } else {
      got_idx = get<int64_t>(idx);
    }
    EXPECT_EQ(got_idx, want_idx);
    const std::vector<float> g = randf(want.size(), 52);
    aclTensor* go = tf({n, c, ho, ho}, g);
    aclTensor* gi = ef({n, c, h, w});
    if (!ceil) {  // the backward takes INT32 or INT8 indices only (ops-nn aclnn_max_pool2d_with_indices_backward.cpp)
      EXPECT_EQ(RUN(MaxPool2dWithIndicesBackward, go, in, idx, ia({3, 3}), ia({2, 2}), ia({1, 1}), ia({1, 1}), ceil, gi),
                ACLNN_ERR_PARAM_INVALID);
      EXPECT_EQ(recent(), "aclnnMaxPool2dWithIndicesBackward: indices dtype INT64 is not supported on Ascend910B1, "
                          "Atlas A2 training series (supported: INT8, INT32)");
      std::vector<int32_t> narrow(got_idx.begin(), got_idx.end());
      idx = tensor<int32_t>({n, c, ho, ho}, narrow, ACL_INT32);
    }
    ASSERT_EQ(RUN(MaxPool2dWithIndicesBackward, go, in, idx, ia({3, 3}), ia({2, 2}), ia({1, 1}), ia({1, 1}), ceil, gi),
              ACLNN_SUCCESS)
        << recent();
    Vec dx(x.size(), 0.0);
    for (size_t j = 0; j < g.size(); ++j) dx[j / (ho * ho) * h * w + want_idx[j]] += g[j];
    expect_near(gf(gi), dx, 1e-6, "max pool backward");
  }
  EXPECT_EQ(RUN(MaxPool2dWithIndices, in, ia({3, 3}), ia({2, 2}), ia({2, 2}), ia({1, 1}), false, ef({n, c, 3, 3}),
                empty({n, c, 3, 3}, ACL_INT64, 8)),
            ACLNN_ERR_PARAM_INVALID);  // padding above half the kernel
  EXPECT_EQ(RUN(MaxPool2dWithIndices, in, ia({3, 3}), ia({2, 2}), ia({1, 1}), ia({1, 1}), false, ef({n, c, 3, 3}),
                ef({n, c, 3, 3})),
            ACLNN_ERR_PARAM_INVALID);  // FLOAT indices
}

struct Bn {
  int64_t n = 3, c = 2, l = 4;
  double eps = 1e-5;
  // training-mode forward: y, and the batch statistics
  Vec forward(const Vec& x, const Vec& w, const Vec& b, Vec* mean = nullptr, Vec* var = nullptr) const {
    Vec y(x.size()), m(c, 0.0), v(c, 0.0);
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < l; ++j) m[ch] += x[(i * c + ch) * l + j] / (n * l);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < l; ++j) v[ch] += std::pow(x[(i * c + ch) * l + j] - m[ch], 2) / (n * l);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < l; ++j) {
          const int64_t k = (i * c + ch) * l + j;
          y[k] = (x[k] - m[ch]) / std::sqrt(v[ch] + eps) * w[ch] + b[ch];
        }
    }
    if (mean) *mean = m;
    if (var) *var = v;
    return y;
  }
};

TEST_F(Fake, BatchNormTrainingEvalAndBackward) {
  const Bn bn;
  const Shape xs{bn.n, bn.c, bn.l};
  const std::vector<float> x = randf(24, 61, -2, 3), g = randf(24, 62);
  const std::vector<float> w{1.5f, 0.5f}, b{0.1f, -0.3f}, rm0{0.2f, -0.1f}, rv0{1.2f, 0.8f};
  aclTensor* in = tf(xs, x);
  aclTensor* wt = tf({2}, w);
  aclTensor* bias = tf({2}, b);
  aclTensor* rm = tf({2}, rm0);
  aclTensor* rv = tf({2}, rv0);
  aclTensor* y = ef(xs);
  aclTensor* sm = ef({2});
  aclTensor* si = ef({2});
  const double momentum = 0.1;
  ASSERT_EQ(RUN(BatchNorm, in, wt, bias, rm, rv, true, momentum, bn.eps, y, sm, si), ACLNN_SUCCESS) << recent();
  EXPECT_GT(last_ws, 0u);
  Vec mean, var;
  const Vec xd = to_d(x), wd = to_d(w), bd = to_d(b), gd = to_d(g);
  expect_near(gf(y), bn.forward(xd, wd, bd, &mean, &var), 1e-5, "batch norm training");
  expect_near(gf(sm), mean, 1e-6, "save mean");
  expect_near(gf(si), {1 / std::sqrt(var[0] + bn.eps), 1 / std::sqrt(var[1] + bn.eps)}, 1e-5, "save invstd");
  const double m = bn.n * bn.l;
  expect_near(gf(rm), {0.9 * rm0[0] + 0.1 * mean[0], 0.9 * rm0[1] + 0.1 * mean[1]}, 1e-6, "running mean");
  expect_near(gf(rv), {0.9 * rv0[0] + 0.1 * var[0] * m / (m - 1), 0.9 * rv0[1] + 0.1 * var[1] * m / (m - 1)}, 1e-6,
              "running var (unbiased)");
  // backward, training: against finite differences of the double forward
  aclTensor* go = tf(xs, g);
  aclTensor* gi = ef(xs);
  aclTensor* gw = ef({2});
  aclTensor* gb = ef({2});
  ASSERT_EQ(RUN(BatchNormBackward, go, in, wt, rm, rv, sm, si, true, bn.eps, ba({1, 1, 1}), gi, gw, gb), ACLNN_SUCCESS)
      << recent();
  EXPECT_GT(last_ws, 0u);
  expect_near(gf(gi), fd_grad([&](const Vec& v) { return bn.forward(v, wd, bd); }, xd, gd, 1e-4), 1e-4, "bn dx");
  expect_near(gf(gw), fd_grad([&](const Vec& v) { return bn.forward(xd, v, bd); }, wd, gd, 1e-4), 1e-4, "bn dw");
  expect_near(gf(gb), fd_grad([&](const Vec& v) { return bn.forward(xd, wd, v); }, bd, gd, 1e-4), 1e-4, "bn db");
  // evaluation: the running statistics, which stay as they are
  const std::vector<float> rm1 = gf(rm), rv1 = gf(rv);
  ASSERT_EQ(RUN(BatchNorm, in, wt, bias, rm, rv, false, momentum, bn.eps, y, nullptr, nullptr), ACLNN_SUCCESS)
      << recent();
  Vec want(24);
  for (int64_t k = 0; k < 24; ++k) {
    const int64_t ch = k / bn.l % bn.c;
    want[k] = (x[k] - rm1[ch]) / std::sqrt(rv1[ch] + bn.eps) * w[ch] + b[ch];
  }
  expect_near(gf(y), want, 1e-5, "batch norm eval");
  EXPECT_EQ(gf(rm), rm1);
  EXPECT_EQ(gf(rv), rv1);
  ASSERT_EQ(RUN(BatchNormBackward, go, in, wt, rm, rv, nullptr, nullptr, false, bn.eps, ba({1, 1, 0}), gi, gw, nullptr),
            ACLNN_SUCCESS)
      << recent();
  Vec dx(24), dw(2, 0.0);
  for (int64_t k = 0; k < 24; ++k) {
    const int64_t ch = k / bn.l % bn.c;
    const double inv = 1 / std::sqrt(rv1[ch] + bn.eps);
    dx[k] = g[k] * w[ch] * inv;
    dw[ch] += g[k] * (x[k] - rm1[ch]) * inv;
  }
  expect_near(gf(gi), dx, 1e-5, "bn eval dx");
  expect_near(gf(gw), dw, 1e-5, "bn eval dw");
  // evaluation needs the running statistics
  EXPECT_EQ(RUN(BatchNorm, in, wt, bias, nullptr, rv, false, momentum, bn.eps, y, nullptr, nullptr),
            ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_NE(recent().find("aclnnBatchNorm: runningMean is nullptr"), std::string::npos);
}

TEST_F(Fake, MoreElementwiseFunctions) {
  const std::vector<float> x{-2.5f, -1.5f, -0.5f, 0.0f, 0.5f, 1.5f, 2.5f, 3.7f};
  const std::vector<float> pos{0.25f, 0.5f, 1.0f, 2.0f, 3.0f, 4.0f, 9.0f, 100.0f};
  aclTensor* a = tf({2, 4}, x);
  aclTensor* p = tf({2, 4}, pos);
  aclTensor* o = ef({2, 4});
  auto check = [&](const std::vector<float>& in, const std::function<double(double)>& f, const char* what) {
    Vec w;
    for (float v : in) w.push_back(f(v));
    expect_near(gf(o), w, 1e-6, what);
  };
  const auto gelu_tanh = [](double v) {
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  };
  const auto gelu_erf = [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); };
  ASSERT_EQ(RUN(Abs, a, o), ACLNN_SUCCESS) << recent();
  check(
      x, [](double v) { return std::fabs(v); }, "abs");
  ASSERT_EQ(RUN(Sin, a, o), ACLNN_SUCCESS) << recent();
  check(
      x, [](double v) { return std::sin(v); }, "sin");
  ASSERT_EQ(RUN(Cos, a, o), ACLNN_SUCCESS) << recent();
  check(
      x, [](double v) { return std::cos(v); }, "cos");
  ASSERT_EQ(RUN(Rsqrt, p, o), ACLNN_SUCCESS) << recent();
  check(
      pos, [](double v) { return 1 / std::sqrt(v); }, "rsqrt");
  ASSERT_EQ(RUN(Reciprocal, p, o), ACLNN_SUCCESS) << recent();
  check(
      pos, [](double v) { return 1 / v; }, "reciprocal");
  ASSERT_EQ(RUN(Sign, a, o), ACLNN_SUCCESS) << recent();
  check(
      x, [](double v) { return static_cast<double>((v > 0) - (v < 0)); }, "sign");
  ASSERT_EQ(RUN(Erf, a, o), ACLNN_SUCCESS) << recent();
  check(
      x, [](double v) { return std::erf(v); }, "erf");
  ASSERT_EQ(RUN(Log1p, p, o), ACLNN_SUCCESS) << recent();
  check(
      pos, [](double v) { return std::log1p(v); }, "log1p");
  ASSERT_EQ(RUN(Expm1, a, o), ACLNN_SUCCESS) << recent();
  check(
      x, [](double v) { return std::expm1(v); }, "expm1");
  ASSERT_EQ(RUN(Floor, a, o), ACLNN_SUCCESS) << recent();
  check(
      x, [](double v) { return std::floor(v); }, "floor");
  ASSERT_EQ(RUN(Ceil, a, o), ACLNN_SUCCESS) << recent();
  check(
      x, [](double v) { return std::ceil(v); }, "ceil");
  ASSERT_EQ(RUN(Round, a, o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(o), (std::vector<float>{-2, -2, -0.0f, 0, 0, 2, 2, 4}));  // half to even, as torch.round
  // aclnnGelu is CANN's tanh form; aclnnGeluV2 with approximate 0 ("none") is torch's default erf form
  ASSERT_EQ(RUN(Gelu, a, o), ACLNN_SUCCESS) << recent();
  check(x, gelu_tanh, "gelu (tanh)");
  ASSERT_EQ(RUN(GeluV2, a, int64_t{0}, o), ACLNN_SUCCESS) << recent();
  check(x, gelu_erf, "gelu v2 none (erf)");
  ASSERT_EQ(RUN(GeluV2, a, int64_t{1}, o), ACLNN_SUCCESS) << recent();
  check(x, gelu_tanh, "gelu v2 tanh");
  EXPECT_EQ(RUN(GeluV2, a, int64_t{2}, o), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnGeluV2: approximate 2 is not 0 (none: the erf form) or 1 (tanh)");
  // GeluBackwardV2(gradOutput, self, approximate): gradOutput times the derivative of either form at self
  {
    const std::vector<float> gvals = {1, -2, 0.5f, 3, 1, 1, -1, 0.25f};
    aclTensor* g = tf({2, 4}, gvals);
    char none[] = "none", tanh_mode[] = "tanh", other[] = "exact";
    const auto d_erf = [](double v) {
      return 0.5 * (1 + std::erf(v / std::sqrt(2.0))) + v * std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI);
    };
    const auto d_tanh = [](double v) {  // by central differences of the tanh form
      const auto f = [](double u) { return 0.5 * u * (1 + std::tanh(std::sqrt(2 / M_PI) * (u + 0.044715 * u * u * u))); };
      return (f(v + 1e-5) - f(v - 1e-5)) / 2e-5;
    };
    for (const auto& [mode, deriv] : {std::pair{none, std::function<double(double)>(d_erf)},
                                      std::pair{tanh_mode, std::function<double(double)>(d_tanh)}}) {
      ASSERT_EQ(RUN(GeluBackwardV2, g, a, mode, o), ACLNN_SUCCESS) << recent();
      Vec want;
      for (size_t i = 0; i < x.size(); ++i) want.push_back(gvals[i] * deriv(x[i]));
      expect_near(gf(o), want, 1e-6, mode);
    }
    EXPECT_EQ(RUN(GeluBackwardV2, g, a, other, o), ACLNN_ERR_PARAM_INVALID);
    EXPECT_EQ(recent(), "aclnnGeluBackwardV2: approximate 'exact' is not none (the erf form) or tanh");
    EXPECT_EQ(RUN(GeluBackwardV2, g, a, static_cast<char*>(nullptr), o), ACLNN_ERR_PARAM_NULLPTR);
    EXPECT_EQ(recent(), "aclnnGeluBackwardV2: approximate is nullptr");
  }
  ASSERT_EQ(RUN(Silu, a, o), ACLNN_SUCCESS) << recent();
  check(
      x, [](double v) { return v / (1 + std::exp(-v)); }, "silu");
  // softplus: x where beta * x > threshold (2.5 and 3.7 here; 1.5 * 2 = 3 is not above 3)
  ASSERT_EQ(RUN(Softplus, a, sf(2), si(3), o), ACLNN_SUCCESS) << recent();
  check(
      x, [](double v) { return 2 * v > 3 ? v : std::log1p(std::exp(2 * v)) / 2; }, "softplus");
  EXPECT_EQ(gf(o)[7], 3.7f);
  // integers: Abs wraps at the minimum as torch does; Round is the identity
  aclTensor* n = tensor<int32_t>({4}, {-7, 0, 5, INT32_MIN}, ACL_INT32);
  aclTensor* on = empty({4}, ACL_INT32, 4);
  ASSERT_EQ(RUN(Abs, n, on), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(on), (std::vector<int32_t>{7, 0, 5, INT32_MIN}));
  ASSERT_EQ(RUN(Sign, n, on), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(on), (std::vector<int32_t>{-1, 0, 1, -1}));
  ASSERT_EQ(RUN(Round, n, on), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(on), (std::vector<int32_t>{-7, 0, 5, INT32_MIN}));
  // DOUBLE
  aclTensor* d = tensor<double>({4}, {0.5, 1.5, 2.5, -2.5}, ACL_DOUBLE);
  aclTensor* od = empty({4}, ACL_DOUBLE, 8);
  ASSERT_EQ(RUN(Round, d, od), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<double>(od), (std::vector<double>{0, 2, 2, -2}));
  ASSERT_EQ(RUN(Erf, d, od), ACLNN_SUCCESS) << recent();
  EXPECT_DOUBLE_EQ(get<double>(od)[1], std::erf(1.5));
  EXPECT_EQ(RUN(Sin, n, on), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnSin: out dtype INT32 is not supported on Ascend910B1, Atlas A2 training series (supported: FLOAT, FLOAT16, "
            "BFLOAT16, DOUBLE)");
}

TEST_F(Fake, TanLeakyReluEluAndClamp) {
  aclTensor* a = tf({2, 3}, {-2, -0.5f, 0, 0.5f, 1, NAN});
  aclTensor* o = ef({2, 3});
  ASSERT_EQ(RUN(Tan, a, o), ACLNN_SUCCESS) << recent();
  const std::vector<float> t = gf(o);
  expect_near({t.begin(), t.begin() + 5}, {std::tan(-2.0), std::tan(-0.5), 0, std::tan(0.5), std::tan(1.0)}, 1e-6,
              "tan");
  EXPECT_TRUE(std::isnan(t[5]));
  aclTensor* d = tensor<double>({2}, {0.25, -1}, ACL_DOUBLE);
  aclTensor* od = empty({2}, ACL_DOUBLE, 8);
  ASSERT_EQ(RUN(Tan, d, od), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<double>(od), (std::vector<double>{std::tan(0.25), std::tan(-1.0)}));
  // leaky relu: slope 0.1 below 0 (0 stays 0), NaN stays NaN
  ASSERT_EQ(RUN(LeakyRelu, a, sf(0.1f), o), ACLNN_SUCCESS) << recent();
  expect_same(gf(o), {-0.2f, -0.05f, 0, 0.5f, 1, NAN}, "leaky relu");
  ASSERT_EQ(RUN(LeakyRelu, d, sf(0.1f), od), ACLNN_SUCCESS) << recent();  // DOUBLE too (ops-nn aclnn_leaky_relu.cpp)
  EXPECT_EQ(get<double>(od), (std::vector<double>{0.25, -static_cast<double>(0.1f)}));
  EXPECT_EQ(RUN(LeakyRelu, a, static_cast<aclScalar*>(nullptr), o), ACLNN_ERR_PARAM_NULLPTR);
  // elu: scale x above 0, alpha scale (e^(inputScale x) - 1) elsewhere
  ASSERT_EQ(RUN(Elu, a, sf(1.5f), sf(1), sf(1), o), ACLNN_SUCCESS) << recent();
  const std::vector<float> e = gf(o);
  expect_near({e.begin(), e.begin() + 5}, {1.5 * std::expm1(-2.0), 1.5 * std::expm1(-0.5), 0, 0.5, 1}, 1e-6, "elu");
  EXPECT_TRUE(std::isnan(e[5]));
  ASSERT_EQ(RUN(Elu, a, sf(1), sf(2), sf(0.5f), o), ACLNN_SUCCESS) << recent();
  EXPECT_NEAR(gf(o)[0], 2 * std::expm1(-1.0), 1e-6);
  EXPECT_EQ(gf(o)[3], 1.0f);
  // clamp: max(min(x, max), min); a bound may be absent; NaN stays NaN
  ASSERT_EQ(RUN(Clamp, a, sf(-1), sf(0.75f), o), ACLNN_SUCCESS) << recent();
  expect_same(gf(o), {-1, -0.5f, 0, 0.5f, 0.75f, NAN}, "clamp");
  ASSERT_EQ(RUN(Clamp, a, static_cast<aclScalar*>(nullptr), sf(0.25f), o), ACLNN_SUCCESS) << recent();
  expect_same(gf(o), {-2, -0.5f, 0, 0.25f, 0.25f, NAN}, "clamp max only");
  ASSERT_EQ(RUN(Clamp, a, sd(0.25), static_cast<aclScalar*>(nullptr), o), ACLNN_SUCCESS) << recent();
  expect_same(gf(o), {0.25f, 0.25f, 0.25f, 0.5f, 1, NAN}, "clamp min only");
  ASSERT_EQ(RUN(Clamp, a, sf(1), sf(-1), o), ACLNN_SUCCESS) << recent();  // min > max: min everywhere (CANN's formula)
  expect_same(gf(o), {1, 1, 1, 1, 1, NAN}, "clamp min > max");
  aclTensor* i = tensor<int32_t>({4}, {-5, 0, 3, 9}, ACL_INT32);
  aclTensor* oi = empty({4}, ACL_INT32, 4);
  ASSERT_EQ(RUN(Clamp, i, si(-2), sf(4), oi), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(oi), (std::vector<int32_t>{-2, 0, 3, 4}));
  EXPECT_EQ(RUN(Clamp, i, sf(0.5f), sf(4), oi), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnClamp: clipValueMin 0.500000 must be an integer for INT32 self");
  EXPECT_EQ(RUN(Clamp, a, static_cast<aclScalar*>(nullptr), static_cast<aclScalar*>(nullptr), o),
            ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(recent(), "aclnnClamp: clipValueMin and clipValueMax are both nullptr");
}

TEST_F(Fake, FlipReversesTheGivenDims) {
  aclTensor* a = tf({2, 3}, {1, 2, 3, 4, 5, 6});
  aclTensor* o = ef({2, 3});
  ASSERT_EQ(RUN(Flip, a, ia({1}), o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(o), (std::vector<float>{3, 2, 1, 6, 5, 4}));
  ASSERT_EQ(RUN(Flip, a, ia({0}), o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(o), (std::vector<float>{4, 5, 6, 1, 2, 3}));
  ASSERT_EQ(RUN(Flip, a, ia({-1, 0}), o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(o), (std::vector<float>{6, 5, 4, 3, 2, 1}));
  ASSERT_EQ(RUN(Flip, a, ia({}), o), ACLNN_SUCCESS) << recent();  // no dims: a copy
  EXPECT_EQ(gf(o), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  const std::vector<float> x = randf(24, 90);
  aclTensor* t = tf({2, 3, 4}, x);
  aclTensor* ot = ef({2, 3, 4});
  ASSERT_EQ(RUN(Flip, t, ia({0, 2}), ot), ACLNN_SUCCESS) << recent();
  std::vector<float> w;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) w.push_back(x[((1 - i) * 3 + j) * 4 + (3 - k)]);
  EXPECT_EQ(gf(ot), w);
  aclTensor* b = tensor<int32_t>({3}, {7, 8, 9}, ACL_INT32);
  aclTensor* ob = empty({3}, ACL_INT32, 4);
  ASSERT_EQ(RUN(Flip, b, ia({0}), ob), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(ob), (std::vector<int32_t>{9, 8, 7}));
  EXPECT_EQ(RUN(Flip, a, ia({1, -1}), o), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnFlip: dims [1, -1] names dimension 1 twice");
  EXPECT_EQ(RUN(Flip, a, ia({2}), o), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(RUN(Flip, a, ia({0}), ef({3, 2})), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnFlip: out shape [3, 2] should be [2, 3]");
}

TEST_F(Fake, StackRepeatAndConstantPadNd) {
  aclTensor* a = tf({2, 2}, {1, 2, 3, 4});
  aclTensor* b = tf({2, 2}, {5, 6, 7, 8});
  aclTensor* o0 = ef({2, 2, 2});
  ASSERT_EQ(RUN(Stack, tl({a, b}), int64_t{0}, o0), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(o0), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  aclTensor* o2 = ef({2, 2, 2});
  ASSERT_EQ(RUN(Stack, tl({tf({2, 2}, {1, 2, 3, 4}), tf({2, 2}, {5, 6, 7, 8})}), int64_t{-1}, o2), ACLNN_SUCCESS)
      << recent();
  EXPECT_EQ(gf(o2), (std::vector<float>{1, 5, 2, 6, 3, 7, 4, 8}));
  aclTensor* o1 = ef({2, 3, 2});
  ASSERT_EQ(RUN(Stack, tl({tf({2, 2}, {1, 2, 3, 4}), tf({2, 2}, {5, 6, 7, 8}), tf({2, 2}, {9, 10, 11, 12})}),
                int64_t{1}, o1),
            ACLNN_SUCCESS)
      << recent();
  EXPECT_EQ(gf(o1), (std::vector<float>{1, 2, 5, 6, 9, 10, 3, 4, 7, 8, 11, 12}));
  EXPECT_EQ(RUN(Stack, tl({tf({2}, {1, 2}), tf({3}, {1, 2, 3})}), int64_t{0}, ef({2, 2})), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnStack: tensors[1] shape [3] differs from tensors[0] shape [2]");
  EXPECT_EQ(RUN(Stack, tl({tf({2}, {1, 2})}), int64_t{2}, ef({1, 2})), ACLNN_ERR_PARAM_INVALID);
  // repeat: [[1, 2], [3, 4]] twice down, three times across; more repeats than dimensions add leading ones
  aclTensor* r = ef({4, 6});
  ASSERT_EQ(RUN(Repeat, tf({2, 2}, {1, 2, 3, 4}), ia({2, 3}), r), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(r), (std::vector<float>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  aclTensor* r3 = empty({2, 1, 4}, ACL_INT32, 4);
  ASSERT_EQ(RUN(Repeat, tensor<int32_t>({2}, {7, 8}, ACL_INT32), ia({2, 1, 2}), r3), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(r3), (std::vector<int32_t>{7, 8, 7, 8, 7, 8, 7, 8}));
  EXPECT_EQ(RUN(Repeat, tf({2, 2}, {1, 2, 3, 4}), ia({2}), ef({4, 2})), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnRepeat: repeats [2] has fewer entries than self [2, 2] has dimensions");
  // constant padding: pairs from the last dimension; negative entries crop
  aclTensor* x = tf({2, 3}, {1, 2, 3, 4, 5, 6});
  aclTensor* p = ef({3, 6});
  ASSERT_EQ(RUN(ConstantPadNd, x, ia({1, 2, 0, 1}), sf(-1), p), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(p), (std::vector<float>{-1, 1, 2, 3, -1, -1, -1, 4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1}));
  aclTensor* p1 = ef({2, 4});
  ASSERT_EQ(RUN(ConstantPadNd, x, ia({2, -1}), sd(0.5), p1), ACLNN_SUCCESS) << recent();  // the last dim only
  EXPECT_EQ(gf(p1), (std::vector<float>{0.5f, 0.5f, 1, 2, 0.5f, 0.5f, 4, 5}));
  aclTensor* pi = empty({4}, ACL_INT32, 4);
  ASSERT_EQ(RUN(ConstantPadNd, tensor<int32_t>({2}, {3, 4}, ACL_INT32), ia({0, 2}), si(9), pi), ACLNN_SUCCESS)
      << recent();
  EXPECT_EQ(get<int32_t>(pi), (std::vector<int32_t>{3, 4, 9, 9}));
  EXPECT_EQ(RUN(ConstantPadNd, x, ia({1}), sf(0), p), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnConstantPadNd: pad [1] must have an even length of at most twice self's rank 2");
  EXPECT_EQ(RUN(ConstantPadNd, x, ia({1, 1}), sf(0), ef({2, 4})), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnConstantPadNd: out shape [2, 4] should be [2, 5]");
}

TEST_F(Fake, LogSumExpIsStable) {
  aclTensor* a = tf({2, 3}, {1, 2, 3, 1000, 1000, -INFINITY});
  aclTensor* o = ef({2});
  ASSERT_EQ(RUN(LogSumExp, a, ia({1}), false, o), ACLNN_SUCCESS) << recent();
  expect_near(gf(o), {3 + std::log(std::exp(-2.0) + std::exp(-1.0) + 1), 1000 + std::log(2.0)}, 1e-6, "logsumexp");
  aclTensor* ok = ef({1, 3});
  ASSERT_EQ(RUN(LogSumExp, a, ia({0}), true, ok), ACLNN_SUCCESS) << recent();
  expect_near(gf(ok), {1000, 1000, 3}, 1e-6, "logsumexp keepDim");
  aclTensor* s = tf({2, 2}, {-INFINITY, -INFINITY, INFINITY, NAN});
  aclTensor* os = ef({2});
  ASSERT_EQ(RUN(LogSumExp, s, ia({-1}), false, os), ACLNN_SUCCESS) << recent();
  const std::vector<float> r = gf(os);
  EXPECT_EQ(r[0], -INFINITY);
  EXPECT_TRUE(std::isnan(r[1]));
  aclTensor* all = ef({});
  ASSERT_EQ(RUN(LogSumExp, tf({2}, {0, 0}), ia({0}), false, all), ACLNN_SUCCESS) << recent();
  EXPECT_NEAR(gf(all)[0], std::log(2.0), 1e-6);
  EXPECT_EQ(RUN(LogSumExp, a, ia({1, 1}), false, o), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(RUN(LogSumExp, tensor<double>({2}, {0, 0}, ACL_DOUBLE), ia({0}), false, empty({}, ACL_DOUBLE, 8)),
            ACLNN_ERR_PARAM_INVALID);
}

TEST_F(Fake, VarStdAndLayerNorm) {
  // rows {1, 2, 3, 6} and {2, 2, 2, 2}: mean 3 and 2, squared deviations 14 and 0
  aclTensor* a = tf({2, 4}, {1, 2, 3, 6, 2, 2, 2, 2});
  aclTensor* o = ef({2});
  ASSERT_EQ(RUN(Var, a, ia({1}), true, false, o), ACLNN_SUCCESS) << recent();
  expect_near(gf(o), {14.0 / 3, 0}, 1e-6, "var unbiased");
  ASSERT_EQ(RUN(Var, a, ia({-1}), false, false, o), ACLNN_SUCCESS) << recent();
  expect_near(gf(o), {14.0 / 4, 0}, 1e-6, "var biased");
  ASSERT_EQ(RUN(Std, a, ia({1}), int64_t{2}, false, o), ACLNN_SUCCESS) << recent();
  expect_near(gf(o), {std::sqrt(14.0 / 2), 0}, 1e-6, "std correction 2");
  aclTensor* ok = ef({1, 4});
  ASSERT_EQ(RUN(Var, a, ia({0}), true, true, ok), ACLNN_SUCCESS) << recent();
  expect_near(gf(ok), {0.5, 0, 0.5, 8}, 1e-6, "var over dim 0, keepdim");
  aclTensor* all = ef({});
  ASSERT_EQ(RUN(Std, a, ia({0, 1}), int64_t{0}, false, all), ACLNN_SUCCESS) << recent();
  EXPECT_NEAR(gf(all)[0], std::sqrt(16.0 / 8), 1e-6);  // mean 2.5: squared deviations 2.25 0.25 0.25 12.25, 4 x 0.25
  ASSERT_EQ(RUN(Std, a, ia({1}), int64_t{4}, false, o), ACLNN_SUCCESS) << recent();  // N - correction = 0
  EXPECT_EQ(gf(o)[0], INFINITY);
  EXPECT_TRUE(std::isnan(gf(o)[1]));  // 0 / 0
  EXPECT_EQ(RUN(Var, a, ia({1}), true, false, ef({2, 1})), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnVar: out shape [2, 1] should be [2]");
  // layer norm over the last dimension, with weight and bias, mean and rstd out
  aclTensor* y = ef({2, 4});
  aclTensor* w = tf({4}, {1, 2, 1, 0.5f});
  aclTensor* b = tf({4}, {0, 0, 1, 0});
  aclTensor* m = ef({2, 1});
  aclTensor* r = ef({2, 1});
  ASSERT_EQ(RUN(LayerNorm, a, ia({4}), w, b, 1e-5, y, m, r), ACLNN_SUCCESS) << recent();
  const double rs = 1 / std::sqrt(3.5 + 1e-5), rs2 = 1 / std::sqrt(1e-5);
  expect_near(gf(y), {-2 * rs, -1 * rs * 2, 0 * rs + 1, 3 * rs * 0.5, 0, 0, 1, 0}, 1e-5, "layer norm");
  expect_near(gf(m), {3, 2}, 1e-6, "layer norm mean");
  expect_near(gf(r), {rs, rs2}, 1e-5, "layer norm rstd");
  // over both dimensions, without weight, bias or statistics
  aclTensor* y2 = ef({2, 4});
  ASSERT_EQ(RUN(LayerNorm, a, ia({2, 4}), static_cast<aclTensor*>(nullptr), static_cast<aclTensor*>(nullptr), 0.0, y2,
                static_cast<aclTensor*>(nullptr), static_cast<aclTensor*>(nullptr)),
            ACLNN_SUCCESS)
      << recent();
  const double sd = std::sqrt(16.0 / 8);
  expect_near(gf(y2), {-1.5 / sd, -0.5 / sd, 0.5 / sd, 3.5 / sd, -0.5 / sd, -0.5 / sd, -0.5 / sd, -0.5 / sd}, 1e-6,
              "layer norm over all");
  EXPECT_EQ(RUN(LayerNorm, a, ia({2}), w, b, 1e-5, y, m, r), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnLayerNorm: normalizedShape [2] is not the trailing dimensions of input [2, 4]");
  EXPECT_EQ(RUN(LayerNorm, a, ia({4}), tf({2}, {1, 1}), b, 1e-5, y, m, r), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnLayerNorm: weightOptional shape [2] should be [4]");
}

TEST_F(Fake, ProdAndProdDim) {
  aclTensor* a = tf({2, 3}, {1, 2, 3, -1, 0.5f, 4});
  aclTensor* all = ef({});
  ASSERT_EQ(RUN(Prod, a, ACL_FLOAT, all), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(all), (std::vector<float>{-12}));
  aclTensor* rows = ef({2});
  ASSERT_EQ(RUN(ProdDim, a, int64_t{1}, false, ACL_FLOAT, rows), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(rows), (std::vector<float>{6, -2}));
  aclTensor* cols = ef({1, 3});
  ASSERT_EQ(RUN(ProdDim, a, int64_t{-2}, true, ACL_FLOAT, cols), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(cols), (std::vector<float>{-1, 1, 12}));
  aclTensor* i = tensor<int32_t>({3}, {65536, 65536, 3}, ACL_INT32);  // 2^32 * 3 wraps to 0
  aclTensor* oi = empty({}, ACL_INT32, 4);
  ASSERT_EQ(RUN(Prod, i, ACL_INT32, oi), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(oi), (std::vector<int32_t>{0}));
  EXPECT_EQ(RUN(Prod, a, ACL_DOUBLE, empty({}, ACL_DOUBLE, 8)), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnProd: dtype DOUBLE differs from self's FLOAT (the fake does not cast)");
  EXPECT_EQ(RUN(ProdDim, a, int64_t{2}, false, ACL_FLOAT, rows), ACLNN_ERR_PARAM_INVALID);
}

TEST_F(Fake, MaximumMinimumPropagateNaN) {
  aclTensor* a = tf({2, 3}, {1, NAN, -3, 4, 5, -INFINITY});
  aclTensor* b = tf({3}, {2, 0, NAN});
  aclTensor* o = ef({2, 3});
  ASSERT_EQ(RUN(Maximum, a, b, o), ACLNN_SUCCESS) << recent();
  expect_same(gf(o), {2, NAN, NAN, 4, 5, NAN}, "maximum");
  ASSERT_EQ(RUN(Minimum, a, b, o), ACLNN_SUCCESS) << recent();
  expect_same(gf(o), {1, NAN, NAN, 2, 0, NAN}, "minimum");
  ASSERT_EQ(RUN(Minimum, b, a, o), ACLNN_SUCCESS) << recent();  // NaN from either side
  expect_same(gf(o), {1, NAN, NAN, 2, 0, NAN}, "minimum, swapped");
  aclTensor* i = tensor<int32_t>({2, 3}, {3, -1, 7, 0, 9, -5}, ACL_INT32);
  aclTensor* j = tensor<int32_t>({1}, {2}, ACL_INT32);
  aclTensor* oi = empty({2, 3}, ACL_INT32, 4);
  ASSERT_EQ(RUN(Maximum, i, j, oi), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(oi), (std::vector<int32_t>{3, 2, 7, 2, 9, 2}));
  ASSERT_EQ(RUN(Minimum, i, j, oi), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(oi), (std::vector<int32_t>{2, -1, 2, 0, 2, -5}));
  // INT32 and FLOAT promote to FLOAT
  ASSERT_EQ(RUN(Maximum, i, b, o), ACLNN_SUCCESS) << recent();
  expect_same(gf(o), {3, 0, NAN, 2, 9, NAN}, "maximum int32/float");
  EXPECT_EQ(RUN(Maximum, i, b, oi), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnMaximum: out dtype INT32 should be FLOAT");
  EXPECT_EQ(RUN(Maximum, a, tf({2}, {1, 2}), o), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("aclnnMaximum: self shape [2, 3] and other shape [2] do not broadcast"), std::string::npos);
  aclTensor* d = tensor<double>({2}, {NAN, -1}, ACL_DOUBLE);
  aclTensor* od = empty({2}, ACL_DOUBLE, 8);
  ASSERT_EQ(RUN(Maximum, d, tensor<double>({1}, {0.5}, ACL_DOUBLE), od), ACLNN_SUCCESS) << recent();
  expect_same(get<double>(od), {NAN, 0.5}, "maximum double");
}

TEST_F(Fake, ComparisonsGiveBool) {
  const std::vector<float> x{1, 2, NAN, 4, 2, 0}, y{1, 3, NAN};
  aclTensor* a = tf({2, 3}, x);
  aclTensor* b = tf({3}, y);
  aclTensor* o = empty({2, 3}, ACL_BOOL, 1);
  auto want = [&](bool (*f)(float, float)) {
    std::vector<uint8_t> w;
    for (int i = 0; i < 6; ++i) w.push_back(f(x[i], y[i % 3]));
    return w;
  };
  ASSERT_EQ(RUN(EqTensor, a, b, o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint8_t>(o), want([](float p, float q) { return p == q; }));
  ASSERT_EQ(RUN(NeTensor, a, b, o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint8_t>(o), want([](float p, float q) { return p != q; }));  // NaN != NaN
  ASSERT_EQ(RUN(GtTensor, a, b, o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint8_t>(o), want([](float p, float q) { return p > q; }));
  ASSERT_EQ(RUN(GeTensor, a, b, o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint8_t>(o), want([](float p, float q) { return p >= q; }));
  ASSERT_EQ(RUN(LtTensor, a, b, o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint8_t>(o), want([](float p, float q) { return p < q; }));
  ASSERT_EQ(RUN(LeTensor, a, b, o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint8_t>(o), want([](float p, float q) { return p <= q; }));
  EXPECT_EQ(want([](float p, float q) { return p != q; }), (std::vector<uint8_t>{0, 1, 1, 1, 1, 1}));
  // INT32 (broadcast as a column), BOOL, and INT32 against DOUBLE
  aclTensor* i = tensor<int32_t>({2, 3}, {5, -1, 7, 0, 9, -5}, ACL_INT32);
  aclTensor* col = tensor<int32_t>({2, 1}, {5, 0}, ACL_INT32);
  ASSERT_EQ(RUN(GeTensor, i, col, o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint8_t>(o), (std::vector<uint8_t>{1, 0, 1, 1, 1, 0}));
  aclTensor* p = tensor<uint8_t>({3}, {0, 1, 1}, ACL_BOOL);
  aclTensor* q = tensor<uint8_t>({3}, {0, 0, 1}, ACL_BOOL);
  aclTensor* o3 = empty({3}, ACL_BOOL, 1);
  ASSERT_EQ(RUN(GtTensor, p, q, o3), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint8_t>(o3), (std::vector<uint8_t>{0, 1, 0}));
  ASSERT_EQ(RUN(EqTensor, p, q, o3), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint8_t>(o3), (std::vector<uint8_t>{1, 0, 1}));
  ASSERT_EQ(
      RUN(LtTensor, tensor<int32_t>({3}, {1, 2, 3}, ACL_INT32), tensor<double>({3}, {1.5, 2.0, 2.5}, ACL_DOUBLE), o3),
      ACLNN_SUCCESS)
      << recent();
  EXPECT_EQ(get<uint8_t>(o3), (std::vector<uint8_t>{1, 0, 0}));
  EXPECT_EQ(RUN(EqTensor, a, b, ef({2, 3})), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnEqTensor: out dtype FLOAT should be BOOL");
}

TEST_F(Fake, SWhereBroadcastsAllThree) {
  aclTensor* c = tensor<uint8_t>({2, 1}, {1, 0}, ACL_BOOL);
  aclTensor* a = tf({3}, {1, 2, 3});
  aclTensor* b = tf({2, 3}, {10, 20, NAN, 40, 50, 60});
  aclTensor* o = ef({2, 3});
  ASSERT_EQ(RUN(SWhere, c, a, b, o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(o), (std::vector<float>{1, 2, 3, 40, 50, 60}));  // a select: the NaN not chosen does not leak
  aclTensor* cm = tensor<uint8_t>({3}, {0, 1, 0}, ACL_BOOL);
  aclTensor* i = tensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}, ACL_INT32);
  aclTensor* z = tensor<int32_t>({1}, {-9}, ACL_INT32);
  aclTensor* oi = empty({2, 3}, ACL_INT32, 4);
  ASSERT_EQ(RUN(SWhere, cm, i, z, oi), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(oi), (std::vector<int32_t>{-9, 2, -9, -9, 5, -9}));
  ASSERT_EQ(RUN(SWhere, cm, i, b, o), ACLNN_SUCCESS) << recent();  // INT32 and FLOAT promote to FLOAT
  EXPECT_EQ(gf(o)[1], 2.0f);
  EXPECT_EQ(RUN(SWhere, a, a, b, o), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnSWhere: condition dtype FLOAT is not supported on Ascend910B1, Atlas A2 training series (supported: UINT8, "
            "BOOL)");
  EXPECT_EQ(RUN(SWhere, tensor<uint8_t>({2}, {1, 0}, ACL_BOOL), a, b, o), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnSWhere: condition shape [2], self shape [3] and other shape [2, 3] do not broadcast");
}

TEST_F(Fake, ActivationGradients) {
  // ThresholdBackward selects: an inf or NaN gradient where self <= threshold gives 0
  aclTensor* g = tf({2, 3}, {1, INFINITY, NAN, 2, -3, 4});
  aclTensor* x = tf({2, 3}, {-1, 0.5f, 0.5f, 1, 2, 0.25f});
  aclTensor* gi = ef({2, 3});
  ASSERT_EQ(RUN(ThresholdBackward, g, x, sf(0.5f), gi), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(gi), (std::vector<float>{0, 0, 0, 2, -3, 0}));
  aclTensor* gint = tensor<int32_t>({3}, {5, 6, 7}, ACL_INT32);
  aclTensor* xint = tensor<int32_t>({3}, {-1, 0, 3}, ACL_INT32);
  aclTensor* oint = empty({3}, ACL_INT32, 4);
  ASSERT_EQ(RUN(ThresholdBackward, gint, xint, si(0), oint), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(oint), (std::vector<int32_t>{0, 0, 7}));
  EXPECT_EQ(RUN(ThresholdBackward, tf({3}, {1, 2, 3}), x, sf(0), gi), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnThresholdBackward: gradOutput shape [3] should be [2, 3]");
  // TanhBackward and SigmoidBackward from the forward's output
  const std::vector<float> in = randf(6, 71, -2, 2), gr = randf(6, 72);
  std::vector<float> th, sg;
  for (float v : in) {
    th.push_back(std::tanh(v));
    sg.push_back(static_cast<float>(1 / (1 + std::exp(-static_cast<double>(v)))));
  }
  aclTensor* go = tf({2, 3}, gr);
  ASSERT_EQ(RUN(TanhBackward, go, tf({2, 3}, th), gi), ACLNN_SUCCESS) << recent();
  Vec want(6);
  for (int i = 0; i < 6; ++i) want[i] = gr[i] * (1.0 - double(th[i]) * th[i]);
  expect_near(gf(gi), want, 1e-6, "tanh backward");
  ASSERT_EQ(RUN(SigmoidBackward, go, tf({2, 3}, sg), gi), ACLNN_SUCCESS) << recent();
  for (int i = 0; i < 6; ++i) want[i] = gr[i] * double(sg[i]) * (1.0 - sg[i]);
  expect_near(gf(gi), want, 1e-6, "sigmoid backward");
  aclTensor* gd = tensor<double>({2}, {0.5, -2.0}, ACL_DOUBLE);
  aclTensor* yd = tensor<double>({2}, {0.25, 0.9}, ACL_DOUBLE);
  aclTensor* od = empty({2}, ACL_DOUBLE, 8);
  ASSERT_EQ(RUN(SigmoidBackward, gd, yd, od), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<double>(od), (std::vector<double>{0.5 * 0.25 * 0.75, -2.0 * 0.9 * (1 - 0.9)}));
  EXPECT_EQ(RUN(TanhBackward, go, tensor<double>({2, 3}, Vec(6, 0.5), ACL_DOUBLE), gi), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnTanhBackward: output dtype DOUBLE should be FLOAT");
}

TEST_F(Fake, ExpandAndPermute) {
  aclTensor* a = tf({3, 1}, {1, 2, 3});
  aclTensor* o = ef({2, 3, 4});
  ASSERT_EQ(RUN(Expand, a, ia({2, -1, 4}), o), ACLNN_SUCCESS) << recent();
  std::vector<float> want;
  for (int i = 0; i < 2; ++i)
    for (float v : {1.0f, 2.0f, 3.0f}) want.insert(want.end(), 4, v);
  EXPECT_EQ(gf(o), want);
  aclTensor* b = tensor<uint8_t>({2, 1}, {1, 0}, ACL_BOOL);
  aclTensor* ob = empty({2, 2}, ACL_BOOL, 1);
  ASSERT_EQ(RUN(Expand, b, ia({2, 2}), ob), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint8_t>(ob), (std::vector<uint8_t>{1, 1, 0, 0}));
  aclTensor* i = tensor<int32_t>({}, {7}, ACL_INT32);  // a 0-d tensor to [3]
  aclTensor* oi = empty({3}, ACL_INT32, 4);
  ASSERT_EQ(RUN(Expand, i, ia({3}), oi), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(oi), (std::vector<int32_t>{7, 7, 7}));
  EXPECT_EQ(RUN(Expand, a, ia({3, 2}), ef({3, 2})), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(RUN(Expand, a, ia({2, 2}), ef({2, 2})), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnExpand: self shape [3, 1] cannot be expanded to size [2, 2] (dimension 0: 3 to 2)");
  EXPECT_EQ(RUN(Expand, a, ia({-1, 3, 1}), o), ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("the new leading dimension 0 must be given"), std::string::npos);
  EXPECT_EQ(RUN(Expand, a, ia({3}), ef({3})), ACLNN_ERR_PARAM_INVALID);
  // permute
  const std::vector<float> x = randf(24, 81);
  aclTensor* t = tf({2, 3, 4}, x);
  aclTensor* p = ef({4, 2, 3});
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{2, 0, 1}, std::vector<int64_t>{-1, 0, -2}}) {
    ASSERT_EQ(RUN(Permute, t, ia(dims), p), ACLNN_SUCCESS) << recent();
    std::vector<float> w;
    for (int k = 0; k < 4; ++k)
      for (int i0 = 0; i0 < 2; ++i0)
        for (int j = 0; j < 3; ++j) w.push_back(x[(i0 * 3 + j) * 4 + k]);
    EXPECT_EQ(gf(p), w);
  }
  aclTensor* l = tensor<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6}, ACL_INT64);
  aclTensor* lt = empty({3, 2}, ACL_INT64, 8);
  ASSERT_EQ(RUN(Permute, l, ia({1, 0}), lt), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int64_t>(lt), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(RUN(Permute, t, ia({0, 0, 1}), p), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnPermute: dims [0, 0, 1] names dimension 0 twice");
  EXPECT_EQ(RUN(Permute, t, ia({1, 0}), p), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(RUN(Permute, t, ia({2, 0, 1}), ef({2, 3, 4})), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnPermute: out shape [2, 3, 4] should be [4, 2, 3]");
}

TEST_F(Fake, CatOfATensorList) {
  aclTensor* a = tf({2, 2}, {1, 2, 3, 4});
  aclTensor* b = tf({2, 1}, {5, 6});
  aclTensor* c = tf({2, 3}, {7, 8, 9, 10, 11, 12});
  aclTensor* o = ef({2, 6});
  ASSERT_EQ(RUN(Cat, tl({a, b, c}), int64_t{-1}, o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(o), (std::vector<float>{1, 2, 5, 7, 8, 9, 3, 4, 6, 10, 11, 12}));
  aclTensor* d = tf({1, 2}, {-1, -2});
  aclTensor* e = tensor<int32_t>({2, 2}, {10, 20, 30, 40}, ACL_INT32);
  aclTensor* o0 = ef({3, 2});
  ASSERT_EQ(RUN(Cat, tl({d, e}), int64_t{0}, o0), ACLNN_SUCCESS) << recent();  // FLOAT and INT32 give FLOAT
  EXPECT_EQ(gf(o0), (std::vector<float>{-1, -2, 10, 20, 30, 40}));
  aclTensor* i1 = tensor<int32_t>({2}, {1, 2}, ACL_INT32);
  aclTensor* i2 = tensor<int32_t>({0}, {}, ACL_INT32);
  aclTensor* i3 = tensor<int32_t>({1}, {3}, ACL_INT32);
  aclTensor* oi = empty({3}, ACL_INT32, 4);
  ASSERT_EQ(RUN(Cat, tl({i1, i2, i3}), int64_t{0}, oi), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(oi), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(RUN(Cat, tl({tf({2, 2}, {1, 2, 3, 4}), tf({3, 1}, {1, 2, 3})}), int64_t{1}, ef({2, 3})),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnCat: tensors[1] shape [3, 1] does not match tensors[0] shape [2, 2] outside dim 1");
  EXPECT_EQ(RUN(Cat, tl({tf({1}, {1}), nullptr}), int64_t{0}, ef({2})), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(recent(), "aclnnCat: tensors[1] is nullptr");
  EXPECT_EQ(RUN(Cat, tl({}), int64_t{0}, ef({2})), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnCat: tensors is an empty aclTensorList");
  EXPECT_EQ(RUN(Cat, static_cast<aclTensorList*>(nullptr), int64_t{0}, ef({2})), ACLNN_ERR_PARAM_NULLPTR);
}

TEST_F(Fake, TensorListLifetime) {
  aclTensor* a = tf({2, 2}, {1, 2, 3, 4});
  aclTensor* b = tf({2, 1}, {5, 6});
  aclTensorList* l = tl({a, b});
  aclTensor* o = ef({2, 3});
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  ASSERT_EQ(GET_WS(Cat, l, int64_t{1}, o, &ws, &ex), ACLNN_SUCCESS) << recent();
  EXPECT_DEATH(FN(aclDestroyTensorList)(l),
               "fake-ascend: aclDestroyTensorList: the aclTensorList 0x[0-9a-f]+ is still used by an aclOpExecutor "
               "that was not launched yet \\(from aclnnCatGetWorkspaceSize\\)");
  // the list owns its tensors (CANN: aclDestroyTensorList destroys them): destroying one on its own is a violation
  EXPECT_DEATH(FN(aclDestroyTensor)(a),
               "fake-ascend: aclDestroyTensor: the aclTensor 0x[0-9a-f]+ belongs to the aclTensorList 0x[0-9a-f]+");
  ASSERT_EQ(FN(aclnnCat)(nullptr, 0, ex, stream), ACLNN_SUCCESS) << recent();
  // after the launch the list may go, and its tensors with it
  ASSERT_EQ(FN(aclDestroyTensorList)(l), ACLNN_SUCCESS);
  tensor_lists.pop_back();
  ASSERT_EQ(FN(aclrtSynchronizeStream)(stream), ACL_SUCCESS);
  EXPECT_EQ(gf(o), (std::vector<float>{1, 2, 5, 3, 4, 6}));
  EXPECT_DEATH(FN(aclDestroyTensor)(a), "fake-ascend: aclDestroyTensor: 0x[0-9a-f]+ is not a live aclTensor");
  EXPECT_DEATH(FN(aclDestroyTensorList)(l),
               "fake-ascend: aclDestroyTensorList: 0x[0-9a-f]+ is not a live aclTensorList");
  // a destroyed tensor (checked before any new aclTensor could take its address)
  const aclTensor* dead[] = {a};
  EXPECT_EQ(FN(aclCreateTensorList)(dead, 1), nullptr);
  EXPECT_NE(recent().find("aclCreateTensorList: value[0] (0x"), std::string::npos);
  // a tensor in two lists, or twice in one, would be destroyed twice
  aclTensor* c = tf({1}, {1});
  tl({c});
  EXPECT_DEATH(
      {
        const aclTensor* v[] = {c};
        FN(aclCreateTensorList)(v, 1);
      },
      "fake-ascend: aclCreateTensorList: value\\[0\\] \\(the aclTensor 0x[0-9a-f]+\\) already belongs to the "
      "aclTensorList 0x[0-9a-f]+");
  aclTensor* d = tf({1}, {1});
  EXPECT_DEATH(
      {
        const aclTensor* v[2];
        v[0] = v[1] = d;
        FN(aclCreateTensorList)(v, 2);
      },
      "fake-ascend: aclCreateTensorList: value\\[0\\] and value\\[1\\] are the same aclTensor");
  // errors: nullptr with a size, a destroyed tensor
  EXPECT_EQ(FN(aclCreateTensorList)(nullptr, 2), nullptr);
  EXPECT_NE(recent().find("aclCreateTensorList: value is nullptr but size is 2"), std::string::npos);
  EXPECT_EQ(RUN(Cat, l, int64_t{1}, o), ACLNN_ERR_PARAM_INVALID);  // a destroyed list
  EXPECT_NE(recent().find("aclnnCat: tensors (0x"), std::string::npos);
}

Vec extremum_ref(const Vec& x, const Shape& s, const std::vector<int>& dims, bool max) {
  Shape kept = s;
  for (int d : dims) kept[d] = 1;
  Vec r(numel(kept), NAN);
  std::vector<bool> seen(r.size(), false);
  const Shape st = contiguous(s), kst = contiguous(kept);
  for (int64_t i = 0; i < numel(s); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < s.size(); ++d) {
      if (kept[d] != 1 || s[d] == 1) o += i / st[d] % s[d] * kst[d];
    }
    if (!seen[o] || std::isnan(x[i]) || (!std::isnan(r[o]) && (max ? x[i] > r[o] : x[i] < r[o]))) {
      if (!(seen[o] && std::isnan(r[o]))) r[o] = x[i];
    }
    seen[o] = true;
  }
  return r;
}

TEST_F(Fake, AmaxAminArgMax) {
  const Shape s{2, 3, 4};
  std::vector<float> x = randf(24, 91);
  x[20] = NAN;  // [1][2][0]
  aclTensor* a = tf(s, x);
  const Vec xd = to_d(x);
  auto close = [](const std::vector<float>& got, const Vec& want, const char* what) {
    std::vector<float> w(want.begin(), want.end());
    expect_same(got, w, what);
  };
  aclTensor* o1 = ef({2, 1, 4});
  ASSERT_EQ(RUN(Amax, a, ia({1}), true, o1), ACLNN_SUCCESS) << recent();
  EXPECT_GT(last_ws, 0u);
  close(gf(o1), extremum_ref(xd, s, {1}, true), "amax dim 1 keepdim");
  EXPECT_TRUE(std::isnan(gf(o1)[4]));  // NaN propagates
  aclTensor* o2 = ef({3});
  ASSERT_EQ(RUN(Amin, a, ia({0, -1}), false, o2), ACLNN_SUCCESS) << recent();
  EXPECT_GT(last_ws, 0u);
  close(gf(o2), extremum_ref(xd, s, {0, 2}, false), "amin dims 0, -1");
  aclTensor* o3 = ef({});
  ASSERT_EQ(RUN(Amax, a, ia({}), false, o3), ACLNN_SUCCESS) << recent();  // empty dim: every axis
  EXPECT_TRUE(std::isnan(gf(o3)[0]));
  x[20] = 0.5f;
  ASSERT_EQ(RUN(Amax, tf(s, x), ia({}), false, o3), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(o3)[0], *std::max_element(x.begin(), x.end()));
  aclTensor* i = tensor<int32_t>({2, 3}, {1, 5, 5, 7, -2, 7}, ACL_INT32);
  aclTensor* oi = empty({2}, ACL_INT32, 4);
  ASSERT_EQ(RUN(Amax, i, ia({1}), false, oi), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(oi), (std::vector<int32_t>{5, 7}));
  ASSERT_EQ(RUN(Amin, i, ia({1}), false, oi), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<int32_t>(oi), (std::vector<int32_t>{1, -2}));
  EXPECT_EQ(RUN(Amax, tf({2, 0}, {}), ia({1}), false, ef({2})), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnAmax: self [2, 0] has size 0 in dim 1, which it reduces (no identity)");
  EXPECT_EQ(RUN(Amax, a, ia({1}), false, oi), ACLNN_ERR_PARAM_INVALID);
  // ArgMax: the first of tied maxima; NaN counts as the maximum (the first NaN)
  aclTensor* t = tf({3, 4}, {1, 3, 3, 0, 5, 5, 5, 5, 1, NAN, 7, NAN});
  aclTensor* idx = empty({3}, ACL_INT64, 8);
  ASSERT_EQ(RUN(ArgMax, t, int64_t{1}, false, idx), ACLNN_SUCCESS) << recent();
  EXPECT_GT(last_ws, 0u);
  EXPECT_EQ(get<int64_t>(idx), (std::vector<int64_t>{1, 0, 1}));
  aclTensor* idx0 = empty({1, 4}, ACL_INT32, 4);
  ASSERT_EQ(RUN(ArgMax, t, int64_t{-2}, true, idx0), ACLNN_SUCCESS) << recent();  // INT32 out, keepdim
  EXPECT_EQ(get<int32_t>(idx0), (std::vector<int32_t>{1, 2, 2, 2}));
  aclTensor* li = tensor<int64_t>({3}, {(1ll << 60) + 1, (1ll << 60) + 2, (1ll << 60) + 2}, ACL_INT64);
  aclTensor* one = empty({}, ACL_INT64, 8);
  ASSERT_EQ(RUN(ArgMax, li, int64_t{0}, false, one), ACLNN_SUCCESS) << recent();  // exact for large INT64
  EXPECT_EQ(get<int64_t>(one), (std::vector<int64_t>{1}));
  ASSERT_EQ(RUN(ArgMax, tf({}, {4}), int64_t{0}, false, one), ACLNN_SUCCESS) << recent();  // a 0-d self
  EXPECT_EQ(get<int64_t>(one), (std::vector<int64_t>{0}));
  EXPECT_EQ(RUN(ArgMax, t, int64_t{2}, false, idx), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnArgMax: dim 2 is out of range for a 2-d tensor");
  EXPECT_EQ(RUN(ArgMax, t, int64_t{1}, false, ef({3})), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnArgMax: out dtype FLOAT is not supported on Ascend910B1, Atlas A2 training series (supported: INT32, "
            "INT64)");
  EXPECT_EQ(RUN(ArgMax, tf({2, 0}, {}), int64_t{1}, false, idx), ACLNN_ERR_PARAM_INVALID);
}

// PyTorch's avg_pool2d over `planes` [h, w] planes with a square kernel k, stride s, padding p.
Vec avgpool_ref(const Vec& x, int64_t planes, int64_t h, int64_t w, int64_t k, int64_t s, int64_t p, bool ceil,
                bool include_pad, int64_t divisor, int64_t* ho_out, int64_t* wo_out) {
  auto osz = [&](int64_t in) {
    int64_t o = (in + 2 * p - k + (ceil ? s - 1 : 0)) / s + 1;
    if (ceil && (o - 1) * s >= in + p) --o;
    return o;
  };
  const int64_t ho = osz(h), wo = osz(w);
  *ho_out = ho;
  *wo_out = wo;
  Vec y(planes * ho * wo);
  for (int64_t q = 0; q < planes; ++q)
    for (int64_t oh = 0; oh < ho; ++oh)
      for (int64_t ow = 0; ow < wo; ++ow) {
        const int64_t hs = oh * s - p, ws = ow * s - p;
        const int64_t he = std::min(hs + k, h + p), we = std::min(ws + k, w + p);
        const int64_t pool = (he - hs) * (we - ws);
        double sum = 0;
        int64_t n = 0;
        for (int64_t ih = std::max<int64_t>(hs, 0); ih < std::min(he, h); ++ih)
          for (int64_t iw = std::max<int64_t>(ws, 0); iw < std::min(we, w); ++iw, ++n) sum += x[(q * h + ih) * w + iw];
        y[(q * ho + oh) * wo + ow] = sum / double(divisor ? divisor : include_pad ? pool : n);
      }
  return y;
}

TEST_F(Fake, AvgPool2dForwardAndBackward) {
  const int64_t n = 2, c = 2, h = 6, w = 5;
  const std::vector<float> x = randf(n * c * h * w, 101);
  aclTensor* in = tf({n, c, h, w}, x);
  aclIntArray* k = ia({3});
  aclIntArray* st = ia({2, 2});
  aclIntArray* pad = ia({1, 1});
  for (bool ceil : {false, true}) {
    for (bool include_pad : {true, false}) {
      for (int64_t divisor : {int64_t{0}, int64_t{5}}) {
        int64_t ho = 0, wo = 0;
        const Vec want = avgpool_ref(to_d(x), n * c, h, w, 3, 2, 1, ceil, include_pad, divisor, &ho, &wo);
        ASSERT_EQ(ho, ceil ? 4 : 3);
        aclTensor* out = ef({n, c, ho, wo});
        ASSERT_EQ(RUN(AvgPool2d, in, k, st, pad, ceil, include_pad, divisor, int8_t{0}, out), ACLNN_SUCCESS)
            << recent();
        expect_near(gf(out), want, 1e-6, "avg pool");
        const std::vector<float> g = randf(want.size(), 102);
        aclTensor* gi = ef({n, c, h, w});
        ASSERT_EQ(
            RUN(AvgPool2dBackward, tf({n, c, ho, wo}, g), in, k, st, pad, ceil, include_pad, divisor, int8_t{0}, gi),
            ACLNN_SUCCESS)
            << recent();
        int64_t unused_h, unused_w;
        const Vec dx = fd_grad(
            [&](const Vec& v) {
              return avgpool_ref(v, n * c, h, w, 3, 2, 1, ceil, include_pad, divisor, &unused_h, &unused_w);
            },
            to_d(x), to_d(g), 0.5);
        expect_near(gf(gi), dx, 1e-5, "avg pool backward");
      }
    }
  }
  // [C, H, W], an empty stride (= the kernel), USE_FP16 rounding the input to half first
  aclTensor* in3 = tf({1, 2, 2}, {1.0001f, 3.0f, 5.0f, 7.0f});
  aclTensor* o3 = ef({1, 1, 1});
  ASSERT_EQ(RUN(AvgPool2d, in3, ia({2, 2}), ia({}), ia({0}), false, true, int64_t{0}, int8_t{0}, o3), ACLNN_SUCCESS)
      << recent();
  EXPECT_FLOAT_EQ(gf(o3)[0], 16.0001f / 4);
  ASSERT_EQ(RUN(AvgPool2d, in3, ia({2, 2}), ia({}), ia({0}), false, true, int64_t{0}, int8_t{2}, o3), ACLNN_SUCCESS)
      << recent();
  EXPECT_EQ(gf(o3)[0], 4.0f);
  // refused: padding above half the kernel, USE_HF32, a negative divisor, a wrong out shape
  EXPECT_EQ(RUN(AvgPool2d, in, k, st, ia({2}), false, true, int64_t{0}, int8_t{0}, ef({n, c, 4, 4})),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("aclnnAvgPool2d: paddings [2, 2] must be between 0 and half the kernel size"),
            std::string::npos);
  EXPECT_EQ(RUN(AvgPool2d, in, k, st, pad, false, true, int64_t{0}, int8_t{3}, ef({n, c, 3, 3})),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("aclnnAvgPool2d: cubeMathType 3 is not between 0 and 2"), std::string::npos) << recent();
  EXPECT_EQ(RUN(AvgPool2d, in, k, st, pad, false, true, int64_t{0}, int8_t{1}, ef({n, c, 3, 3})),
            ACLNN_ERR_PARAM_INVALID);  // ALLOW_FP32_DOWN_PRECISION (HF32) with FLOAT on the A2 series
  EXPECT_EQ(recent(), "aclnnAvgPool2d: cubeMathType 1 (ALLOW_FP32_DOWN_PRECISION) with FLOAT input is not supported "
                      "on Ascend910B1, Atlas A2 training series (average pooling cannot support HF32)");
  EXPECT_EQ(RUN(AvgPool2d, in, k, st, pad, false, true, int64_t{-1}, int8_t{0}, ef({n, c, 3, 3})),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(RUN(AvgPool2d, in, k, st, pad, false, true, int64_t{0}, int8_t{0}, ef({n, c, 3, 4})),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnAvgPool2d: out shape [2, 2, 3, 4] should be [2, 2, 3, 3]");
}

// ================================ operators: what the NPU does not support ================================

TEST_F(Fake, DoubleIsRejectedWhereTheNpuHasNone) {
  auto d = [&](const Shape& s) { return tensor<double>(s, std::vector<double>(numel(s), 1.0), ACL_DOUBLE); };
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  // (the messages name the SoC the fake plays: " on Ascend910B1, Atlas A2 training series" after "not supported")
  auto expect = [&](int rc, std::string message) {
    const std::string cut = " is not supported";
    message.insert(message.find(cut) + cut.size(), " on Ascend910B1, Atlas A2 training series");
    EXPECT_EQ(rc, ACLNN_ERR_PARAM_INVALID);
    EXPECT_EQ(recent(), message);
    EXPECT_EQ(ex, nullptr);
  };
  expect(GET_WS(Matmul, d({2, 2}), d({2, 2}), d({2, 2}), 0, &ws, &ex),
         "aclnnMatmul: self dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16)");
  expect(GET_WS(Relu, d({2}), d({2}), &ws, &ex),
         "aclnnRelu: self dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16, INT8, INT32, INT64, "
         "UINT8)");
  expect(GET_WS(Tanh, d({2}), d({2}), &ws, &ex),
         "aclnnTanh: self dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16, INT8, INT16, INT32, INT64, "
         "UINT8, BOOL)");
  aclIntArray* one = ia({1, 1});
  aclIntArray* zero = ia({0, 0});
  expect(GET_WS(Convolution, d({1, 1, 3, 3}), d({1, 1, 1, 1}), nullptr, one, zero, one, false, zero, 1, d({1, 1, 3, 3}),
                0, &ws, &ex),
         "aclnnConvolution: input dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16)");
  expect(GET_WS(ConvolutionBackward, d({1, 1, 3, 3}), d({1, 1, 3, 3}), d({1, 1, 1, 1}), nullptr, one, zero, one, false,
                zero, 1, ba({1, 1, 0}), 0, d({1, 1, 3, 3}), d({1, 1, 1, 1}), nullptr, &ws, &ex),
         "aclnnConvolutionBackward: gradOutput dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16)");
  expect(GET_WS(MaxPool2dWithIndices, d({1, 1, 4, 4}), ia({2, 2}), ia({2, 2}), zero, one, false, d({1, 1, 2, 2}),
                empty({1, 1, 2, 2}, ACL_INT64, 8), &ws, &ex),
         "aclnnMaxPool2dWithIndices: self dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16)");
  expect(GET_WS(MaxPool2dWithIndicesBackward, d({1, 1, 2, 2}), d({1, 1, 4, 4}), empty({1, 1, 2, 2}, ACL_INT64, 8),
                ia({2, 2}), ia({2, 2}), zero, one, false, d({1, 1, 4, 4}), &ws, &ex),
         "aclnnMaxPool2dWithIndicesBackward: gradOutput dtype DOUBLE is not supported (supported: FLOAT)");
  expect(GET_WS(BatchNorm, d({2, 2}), nullptr, nullptr, nullptr, nullptr, true, 0.1, 1e-5, d({2, 2}), d({2}), d({2}),
                &ws, &ex),
         "aclnnBatchNorm: input dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16)");
  expect(GET_WS(BatchNormBackward, d({2, 2}), d({2, 2}), nullptr, nullptr, nullptr, d({2}), d({2}), true, 1e-5,
                ba({1, 0, 0}), d({2, 2}), nullptr, nullptr, &ws, &ex),
         "aclnnBatchNormBackward: gradOut dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16)");
  expect(GET_WS(ThresholdBackward, d({2}), d({2}), sf(0), d({2}), &ws, &ex),
         "aclnnThresholdBackward: gradOutput dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16, "
         "INT8, INT32, UINT8)");
  expect(GET_WS(Gelu, d({2}), d({2}), &ws, &ex),
         "aclnnGelu: self dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16)");
  expect(GET_WS(GeluV2, d({2}), 0, d({2}), &ws, &ex),
         "aclnnGeluV2: x dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16)");
  {
    char none[] = "none";
    expect(GET_WS(GeluBackwardV2, d({2}), d({2}), none, d({2}), &ws, &ex),
           "aclnnGeluBackwardV2: gradOutput dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16)");
  }
  expect(GET_WS(Silu, d({2}), d({2}), &ws, &ex),
         "aclnnSilu: self dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16)");
  expect(GET_WS(Softplus, d({2}), sf(1), sf(20), d({2}), &ws, &ex),
         "aclnnSoftplus: self dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16)");
  expect(GET_WS(AvgPool2d, d({1, 1, 4, 4}), ia({2, 2}), ia({2, 2}), zero, false, true, 0, 0, d({1, 1, 2, 2}), &ws, &ex),
         "aclnnAvgPool2d: self dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16)");
  expect(GET_WS(AvgPool2dBackward, d({1, 1, 2, 2}), d({1, 1, 4, 4}), ia({2, 2}), ia({2, 2}), zero, false, true, 0, 0,
                d({1, 1, 4, 4}), &ws, &ex),
         "aclnnAvgPool2dBackward: gradOutput dtype DOUBLE is not supported (supported: FLOAT, FLOAT16, BFLOAT16)");
  // INT8 is CANN's, not the fake's
  aclTensor* i8 = empty({2}, ACL_INT8, 1);
  EXPECT_EQ(GET_WS(Relu, i8, i8, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(),
            "aclnnRelu: self dtype INT8 is supported by CANN but not by the fake (the fake supports: "
            "FLOAT, FLOAT16, BFLOAT16, INT32, INT64)");
  // while the other float operators take DOUBLE
  aclTensor* o = d({2, 3});
  ASSERT_EQ(RUN(Softmax, d({2, 3}), int64_t{1}, o), ACLNN_SUCCESS) << recent();
  EXPECT_NEAR(get<double>(o)[0], 1.0 / 3, 1e-15);
  ASSERT_EQ(RUN(SigmoidBackward, d({2, 3}), d({2, 3}), o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<double>(o)[0], 0.0);
  // aclnnTanhBackward has DOUBLE although aclnnTanh has not (CANN 8.0's dtype lists)
  ASSERT_EQ(RUN(TanhBackward, d({2, 3}), tensor<double>({2, 3}, Vec(6, 0.5), ACL_DOUBLE), o), ACLNN_SUCCESS)
      << recent();
  EXPECT_EQ(get<double>(o)[0], 0.75);
}

// ================================ float16 and bfloat16 ================================

// Bits of float16 / bfloat16 values worked out by hand from the formats (1 sign, 5 or 8 exponent, 10 or 7 fraction
// bits): rounding to nearest with ties to even, subnormals, overflow to infinity.
TEST_F(Fake, HalfDtypesRoundToNearestEvenOnce) {
  const std::vector<float> in = {1.0f / 3, 65504.0f, 65520.0f, 1.5f * 0x1p-24f, 0x1p-25f, -0.0f, 1.0f + 0x1p-11f,
                                 1.0f + 3 * 0x1p-11f, 1.0f + 0x1p-8f, 3e38f, -2.5f};
  const std::vector<uint16_t> want_f16 = {0x3555, 0x7BFF, 0x7C00, 0x0002, 0x0000, 0x8000, 0x3C00,
                                          0x3C02, 0x3C04, 0x7C00, 0xC100};
  const std::vector<uint16_t> want_bf16 = {0x3EAB, 0x4780, 0x4780, 0x33C0, 0x3300, 0x8000, 0x3F80,
                                           0x3F80, 0x3F80, 0x7F62, 0xC020};
  const Shape shape{static_cast<int64_t>(in.size())};
  aclTensor* x = tf(shape, in);
  aclTensor* h = empty(shape, ACL_FLOAT16, 2);
  aclTensor* b = empty(shape, ACL_BF16, 2);
  ASSERT_EQ(RUN(Cast, x, ACL_FLOAT16, h), ACLNN_SUCCESS) << recent();
  ASSERT_EQ(RUN(Cast, x, ACL_BF16, b), ACLNN_SUCCESS) << recent();
  expect_same(get<uint16_t>(h), want_f16, "float16 bits");
  expect_same(get<uint16_t>(b), want_bf16, "bfloat16 bits");
  // every pattern that is not a NaN: widened and rounded back unchanged
  for (aclDataType dt : {ACL_FLOAT16, ACL_BF16}) {
    std::vector<uint16_t> all, kept;
    for (uint32_t p = 0; p < 65536; ++p) {
      const bool nan = dt == ACL_FLOAT16 ? (p & 0x7C00) == 0x7C00 && (p & 0x3FF) : (p & 0x7F80) == 0x7F80 && (p & 0x7F);
      if (!nan) all.push_back(static_cast<uint16_t>(p));
    }
    const Shape n{static_cast<int64_t>(all.size())};
    aclTensor* src = tensor(n, all, dt);
    aclTensor* wide = ef(n);
    aclTensor* back = empty(n, dt, 2);
    ASSERT_EQ(RUN(Cast, src, ACL_FLOAT, wide), ACLNN_SUCCESS) << recent();
    ASSERT_EQ(RUN(Cast, wide, dt, back), ACLNN_SUCCESS) << recent();
    expect_same(get<uint16_t>(back), all, dt == ACL_FLOAT16 ? "float16 round trip" : "bfloat16 round trip");
  }
  // arithmetic in float, one rounding to the output: 1 + 2^-8 is a tie in bfloat16 (to even: 1)
  aclTensor* one = tensor(Shape{1}, std::vector<uint16_t>{0x3F80}, ACL_BF16);
  aclTensor* eps = tensor(Shape{1}, std::vector<uint16_t>{0x3B80}, ACL_BF16);  // 2^-8
  aclTensor* sum = empty({1}, ACL_BF16, 2);
  ASSERT_EQ(RUN(Add, one, eps, sf(1), sum), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint16_t>(sum)[0], 0x3F80);
  ASSERT_EQ(RUN(Add, one, eps, sf(3), sum), ACLNN_SUCCESS) << recent();  // 1 + 3 * 2^-8 -> 1 + 2^-6 (tie, even)
  EXPECT_EQ(get<uint16_t>(sum)[0], 0x3F82);
  // Matmul keeps the inputs' half dtype; mixed inputs promote (FLOAT16 with FLOAT: FLOAT), and out must be that
  aclTensor* a = tensor(Shape{1, 2}, std::vector<uint16_t>{0x3C00, 0x4000}, ACL_FLOAT16);  // [1, 2]
  aclTensor* m = tensor(Shape{2, 1}, std::vector<uint16_t>{0x3800, 0x3400}, ACL_FLOAT16);  // [0.5, 0.25]
  aclTensor* prod = empty({1, 1}, ACL_FLOAT16, 2);
  ASSERT_EQ(RUN(Matmul, a, m, prod, int8_t{0}), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(get<uint16_t>(prod)[0], 0x3C00);  // 1
  uint64_t ws = 0;
  aclOpExecutor* ex = nullptr;
  EXPECT_EQ(GET_WS(Matmul, a, tf({2, 1}, {1, 1}), prod, int8_t{0}, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnMatmul: out dtype FLOAT16 should be FLOAT");
  aclTensor* wide = ef({1, 1});
  ASSERT_EQ(RUN(Matmul, a, tf({2, 1}, {0.5f, 0.25f}), wide, int8_t{0}), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(wide)[0], 1.0f);
  // Convolution: USE_FP16 takes no BFLOAT16 (aclnnConvolution's cubeMathType constraints)
  aclTensor* bx = empty({1, 1, 3, 3}, ACL_BF16, 2);
  aclTensor* bw = empty({1, 1, 3, 3}, ACL_BF16, 2);
  aclTensor* by = empty({1, 1, 1, 1}, ACL_BF16, 2);
  EXPECT_EQ(GET_WS(Convolution, bx, bw, nullptr, ia({1, 1}), ia({0, 0}), ia({1, 1}), false, ia({0, 0}), 1, by,
                   int8_t{2}, &ws, &ex),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("cubeMathType 2 (USE_FP16) does not support BFLOAT16 input"), std::string::npos)
      << recent();
}

// ================================ SoC profiles ================================

// The fake playing the first Ascend 910 (FAKE_ASCEND_SOC, read at aclInit): CANN's operators check dtypes and
// cubeMathType per product line.
class AtlasTraining : public Fake {
 protected:
  void SetUp() override {
    setenv("FAKE_ASCEND_SOC", "Ascend910A", 1);
    Fake::SetUp();
  }
  void TearDown() override {
    Fake::TearDown();
    unsetenv("FAKE_ASCEND_SOC");
  }
};

TEST(Runtime, TheSocIsChosenAtAclInit) {
  setenv("FAKE_ASCEND_SOC", "Ascend910ProA", 1);
  ASSERT_EQ(FN(aclInit)(nullptr), ACL_SUCCESS) << recent();
  EXPECT_STREQ(FN(aclrtGetSocName)(), "Ascend910ProA");
  EXPECT_EQ(FN(aclFinalize)(), ACL_SUCCESS);
  setenv("FAKE_ASCEND_SOC", "Ascend310P3", 1);  // not a SoC the fake plays
  EXPECT_EQ(FN(aclInit)(nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recent().find("FAKE_ASCEND_SOC=Ascend310P3 is not a SoC the fake plays"), std::string::npos) << recent();
  unsetenv("FAKE_ASCEND_SOC");
  ASSERT_EQ(FN(aclInit)(nullptr), ACL_SUCCESS) << recent();
  EXPECT_STREQ(FN(aclrtGetSocName)(), "Ascend910B1");  // the default
  EXPECT_EQ(FN(aclFinalize)(), ACL_SUCCESS);
}

TEST_F(AtlasTraining, Float32CubeOperatorsNeedADownPrecisionCubeMathType) {
  aclTensor* a = tf({2, 2}, {1, 2, 3, 4});
  aclTensor* o = ef({2, 2});
  EXPECT_EQ(RUN(Matmul, a, a, o, int8_t{0}), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnMatmul: cubeMathType 0 with FLOAT input is not supported on Ascend910A, Atlas training "
                      "series, whose cube unit has no float32: pass 1 (ALLOW_FP32_DOWN_PRECISION) or 2 (USE_FP16) to "
                      "compute in float16");
  EXPECT_EQ(RUN(Matmul, a, a, o, int8_t{3}), ACLNN_ERR_PARAM_INVALID);
  ASSERT_EQ(RUN(Matmul, a, a, o, int8_t{2}), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(o), (std::vector<float>{7, 10, 15, 22}));
  aclTensor* x = tf({1, 1, 2, 2}, {1, 2, 3, 4});
  aclTensor* w = tf({1, 1, 1, 1}, {2});
  aclIntArray* one = ia({1, 1});
  aclIntArray* zero = ia({0, 0});
  EXPECT_EQ(RUN(Convolution, x, w, nullptr, one, zero, one, false, zero, int64_t{1}, ef({1, 1, 2, 2}), int8_t{0}),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("aclnnConvolution: cubeMathType 0 with FLOAT input is not supported on Ascend910A"),
            std::string::npos);
  EXPECT_EQ(RUN(AvgPool2d, x, ia({2, 2}), ia({}), zero, false, true, int64_t{0}, int8_t{0}, ef({1, 1, 1, 1})),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("aclnnAvgPool2d: cubeMathType 0 with FLOAT input is not supported on Ascend910A"),
            std::string::npos);
}

TEST_F(AtlasTraining, OperatorsAndDtypesTheLineLacksAreRefused) {
  aclTensor* x = tf({1, 1, 2, 2}, {1, 2, 3, 4});
  aclIntArray* two = ia({2, 2});
  aclIntArray* one = ia({1, 1});
  aclIntArray* zero = ia({0, 0});
  // no MaxPool2dWithIndices at all (ops-nn: an empty dtype list for the Atlas training series)
  EXPECT_EQ(RUN(MaxPool2dWithIndices, x, two, two, zero, one, false, ef({1, 1, 1, 1}), empty({1, 1, 1, 1}, ACL_INT32, 4)),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnMaxPool2dWithIndices: self: the operator is not supported on Ascend910A, Atlas training "
                      "series");
  // no BFLOAT16 (the A2 series has it: there the fake itself says it does not compute it)
  aclTensor* b = empty({2}, ACL_BF16, 2);
  EXPECT_EQ(RUN(Add, b, b, sf(1), empty({2}, ACL_BF16, 2)), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(recent(), "aclnnAdd: self dtype BFLOAT16 is not supported on Ascend910A, Atlas training series (supported: "
                      "FLOAT, FLOAT16, DOUBLE, INT8, INT16, INT32, INT64, UINT8, BOOL)");
  // what the line has runs as on the A2 series
  aclTensor* o = ef({1, 1, 2, 2});
  ASSERT_EQ(RUN(Neg, x, o), ACLNN_SUCCESS) << recent();
  EXPECT_EQ(gf(o), (std::vector<float>{-1, -2, -3, -4}));
}

// FlashAttentionScore (BNSD, B = N = 1, L = 2, S = 3, D = 2): the attention and the softmax statistics against a
// softmax by hand, the causal band, the Grad's dv, and the documented checks.
TEST_F(Fake, FlashAttentionScoreAndItsGrad) {
  // ND tensors (the operator documents ND), as torch_npu passes them
  const auto nd = [&](const Shape& shape, const std::vector<float>& v) {
    void* d = dmalloc(v.size() * sizeof(float));
    EXPECT_EQ(FN(aclrtMemcpy)(d, v.size() * 4, v.data(), v.size() * 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    return wrap(shape, ACL_FLOAT, d, 4, ACL_FORMAT_ND);
  };
  aclTensor* q = nd({1, 1, 2, 2}, {1, 0, 0, 1});
  aclTensor* k = nd({1, 1, 3, 2}, {1, 0, 0, 1, 1, 1});
  aclTensor* v = nd({1, 1, 3, 2}, {1, 2, 3, 4, 5, 6});
  aclTensor* out = nd({1, 1, 2, 2}, std::vector<float>(4, 0));
  aclTensor* mx = nd({1, 1, 2, 8}, std::vector<float>(16, 0));
  aclTensor* sm = nd({1, 1, 2, 8}, std::vector<float>(16, 0));
  char bnsd[] = "BNSD", bsh[] = "BSH";
  const aclTensor* none = nullptr;
  const int64_t all = 2147483647;
  ASSERT_EQ(RUN(FlashAttentionScore, q, k, v, none, none, none, none, nullptr, 1.0, 1.0, all, all, int64_t{1}, bnsd,
                int64_t{0}, int64_t{0}, mx, sm, none, out),
            ACLNN_SUCCESS)
      << recent();
  // row 0: scores (1, 0, 1), row 1: (0, 1, 1)
  const double e = std::exp(1.0);
  const double w0[] = {e, 1, e}, w1[] = {1, e, e};
  const double t0 = 2 * e + 1;
  const std::vector<float> o = gf(out);
  EXPECT_NEAR(o[0], (w0[0] * 1 + w0[1] * 3 + w0[2] * 5) / t0, 1e-6);
  EXPECT_NEAR(o[3], (w1[0] * 2 + w1[1] * 4 + w1[2] * 6) / t0, 1e-6);
  EXPECT_EQ(gf(mx)[0], 1.0f);
  EXPECT_EQ(gf(mx)[7], 1.0f);  // each value 8 times
  EXPECT_NEAR(gf(sm)[0], 2 + 1 / e, 1e-6);  // sum of exp(score - max)
  // causal as a band (nextTokens 0): row 0 sees key 0 only
  ASSERT_EQ(RUN(FlashAttentionScore, q, k, v, none, none, none, none, nullptr, 1.0, 1.0, all, int64_t{0}, int64_t{1},
                bnsd, int64_t{0}, int64_t{0}, mx, sm, none, out),
            ACLNN_SUCCESS)
      << recent();
  EXPECT_NEAR(gf(out)[0], 1.0, 1e-6);
  // Grad: dy = ones on row 0 of the causal case only gives dv = (1, 1) on key 0
  aclTensor* dy = nd({1, 1, 2, 2}, {1, 1, 0, 0});
  aclTensor* dq = nd({1, 1, 2, 2}, std::vector<float>(4, 0));
  aclTensor* dk = nd({1, 1, 3, 2}, std::vector<float>(6, 0));
  aclTensor* dv = nd({1, 1, 3, 2}, std::vector<float>(6, 0));
  ASSERT_EQ(RUN(FlashAttentionScoreGrad, q, k, v, dy, none, none, none, none, mx, sm, none, out, nullptr, 1.0, 1.0, all,
                int64_t{0}, int64_t{1}, bnsd, int64_t{0}, int64_t{0}, dq, dk, dv, none),
            ACLNN_SUCCESS)
      << recent();
  EXPECT_NEAR(gf(dv)[0], 1.0, 1e-6);
  EXPECT_NEAR(gf(dv)[1], 1.0, 1e-6);
  EXPECT_EQ(gf(dq)[0], 0.0f);  // one key: the softmax is constant
  // the documented checks
  EXPECT_EQ(RUN(FlashAttentionScore, q, k, v, none, none, none, none, nullptr, 1.0, 1.0, all, all, int64_t{2}, bnsd,
                int64_t{0}, int64_t{0}, mx, sm, none, out),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("headNum 2 must be the query's N 1"), std::string::npos) << recent();
  EXPECT_EQ(RUN(FlashAttentionScore, q, k, v, none, none, none, none, nullptr, 1.0, 1.0, all, all, int64_t{1}, bsh,
                int64_t{0}, int64_t{0}, mx, sm, none, out),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("the fake computes BSND and BNSD only"), std::string::npos) << recent();
  EXPECT_EQ(RUN(FlashAttentionScore, q, k, v, none, none, none, none, nullptr, 1.0, 1.0, all, all, int64_t{1}, bnsd,
                int64_t{0}, int64_t{2}, mx, sm, none, out),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("sparseMode 2"), std::string::npos) << recent();
  aclTensor* bad = nd({1, 1, 2, 4}, std::vector<float>(8, 0));
  EXPECT_EQ(RUN(FlashAttentionScore, q, k, v, none, none, none, none, nullptr, 1.0, 1.0, all, all, int64_t{1}, bnsd,
                int64_t{0}, int64_t{0}, bad, sm, none, out),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recent().find("softmaxMaxOut"), std::string::npos) << recent();
}

TEST_F(Fake, EveryOperatorHasARowInTheTable) {
  // (an operator without one is refused with ACLNN_ERR_INNER: each documented operator names its source)
  for (const char* op : {"aclnnAdd", "aclnnExpm1", "aclnnConvolution", "aclnnMaxPool2dWithIndicesBackward",
                         "aclnnInplaceCopy", "aclnnCat"}) {
    EXPECT_TRUE(FN(fake_ascend_documented)(op)) << op;
  }
  EXPECT_FALSE(FN(fake_ascend_documented)("aclnnIncreFlashAttention"));
}

}  // namespace
