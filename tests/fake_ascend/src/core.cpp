// libfake_ascend_core.so: the state the fake CANN libraries share, and the runtime's rules (README.md lists them).
#include "core.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace fake_ascend {
namespace {

// aclOpExecutor handles are addresses in a PROT_NONE reservation of their own, 16 bytes apart and never reused:
// an executor costs a byte and a pointer once launched, and a stale handle is always recognised.
constexpr uint64_t kExecutorSpace = 1ull << 32;
constexpr uint64_t kExecutorStride = 16;
constexpr uint64_t kAlign = 64;                // CANN documents 64-byte aligned aclrtMalloc addresses
constexpr uint64_t kPoisonAll = 256ull << 20;  // blocks up to this size are filled with 0xFF on aclrtMalloc
constexpr uint64_t kPoisonEdge = 16ull << 20;  // larger ones: their first and last 16 MiB

struct Block {
  uint64_t size;      // as requested
  uint64_t reserved;  // what the heap gave it: ALIGN_UP(size, 32) + 32, to 64 bytes
  int device;
};

struct Task {
  const char* name;
  bool kernel;
  std::vector<Range> ranges;
  std::function<void()> run;
};

enum ExecState : uint8_t { kPending, kLaunched, kAbandoned };

struct Executor {
  const char* op;
  uint64_t workspace;
  std::vector<const void*> refs;
  std::vector<Range> ranges;
  Kernel kernel;
};

struct Stream {
  Stream(int d, bool def) : device(d), is_default(def) {}
  int device;
  bool is_default;
  bool destroyed = false;
  bool dead = false;  // its device was reset (or aclFinalize ran): the stream no longer exists
  std::deque<Task> queue;
};

struct State {
  std::mutex mu;
  bool initialized = false;
  bool ever_finalized = false;
  uint64_t generation = 0;
  uint32_t device_count = 0;
  std::string soc_name = "Ascend910B1";
  SocProfile soc = SocProfile::AtlasA2Training;
  std::vector<int> device_refs;
  std::vector<Stream*> default_streams;
  std::vector<Stream*> streams;  // every stream ever made, in creation order; never freed (tombstones)
  std::unordered_set<const void*> user_streams;
  // the heap: device addresses [dev_base, dev_base + heap_size) are PROT_NONE; the fake reads and writes the same
  // offsets at rw_base
  uint8_t* dev_base = nullptr;
  uint8_t* rw_base = nullptr;
  uint64_t heap_size = 0;
  std::map<uint64_t, Block> blocks;          // by offset
  std::map<uint64_t, uint64_t> free_ranges;  // offset -> length
  uint64_t next_fit = 0;
  uint64_t live_bytes = 0;
  // objects and executors
  std::unordered_map<const void*, Kind> objects;
  std::unordered_map<const void*, const void*> owners;  // aclTensor -> the aclTensorList that destroys it
  std::unordered_map<const void*, int> pending_refs;    // references from executors not launched yet
  uint8_t* exec_base = nullptr;                         // the handles' address range
  std::vector<const char*> exec_ops;                    // by executor id: the operator that made it
  std::vector<uint8_t> exec_state;                      // by executor id: ExecState
  std::map<uint64_t, Executor> pending_executors;       // by id: made and not launched yet
  // counters
  uint64_t launches = 0, syncs = 0;
  const char* last_kernel = "";
  // the SIGSEGV handler that was there before ours
  struct sigaction old_segv {};
  bool handler_installed = false;
};

State& S() {
  static State* s = new State;  // never destroyed: the exit report below and late calls may still need it
  return *s;
}

thread_local std::string t_pending, t_returned;
thread_local bool t_has_error = false;
thread_local int t_device = -1;
thread_local uint64_t t_generation = 0;

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

aclError fail(aclError code, const std::string& message) {
  set_error(message);
  return code;
}

std::string bytes_str(uint64_t n) { return std::to_string(n) + "-byte"; }

const char* kind_str(int kind) {
  switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST: return "ACL_MEMCPY_HOST_TO_HOST";
    case ACL_MEMCPY_HOST_TO_DEVICE: return "ACL_MEMCPY_HOST_TO_DEVICE";
    case ACL_MEMCPY_DEVICE_TO_HOST: return "ACL_MEMCPY_DEVICE_TO_HOST";
    case ACL_MEMCPY_DEVICE_TO_DEVICE: return "ACL_MEMCPY_DEVICE_TO_DEVICE";
    default: return "an invalid aclrtMemcpyKind";
  }
}

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// ---- heap (all with the lock held) ----

bool in_device_range(uint64_t a) {
  State& s = S();
  const uint64_t base = reinterpret_cast<uint64_t>(s.dev_base);
  return s.dev_base && a >= base && a < base + s.heap_size;
}

bool block_containing_locked(uint64_t address, BlockInfo* out) {
  State& s = S();
  if (!in_device_range(address)) return false;
  const uint64_t base = reinterpret_cast<uint64_t>(s.dev_base);
  const uint64_t off = address - base;
  auto it = s.blocks.upper_bound(off);
  if (it == s.blocks.begin()) return false;
  --it;
  if (off >= it->first + it->second.size) return false;
  if (out) *out = BlockInfo{base + it->first, it->second.size, it->second.device};
  return true;
}

bool find_block_locked(uint64_t address, uint64_t length, BlockInfo* out) {
  BlockInfo b;
  if (!block_containing_locked(address, &b)) return false;
  if (length > b.size || address - b.begin > b.size - length) return false;
  if (out) *out = b;
  return true;
}

void free_range(uint64_t off, uint64_t len) {
  State& s = S();
  auto next = s.free_ranges.lower_bound(off);
  if (next != s.free_ranges.end() && off + len == next->first) {
    len += next->second;
    next = s.free_ranges.erase(next);
  }
  if (next != s.free_ranges.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      prev->second += len;
      return;
    }
  }
  s.free_ranges[off] = len;
}

bool reserve_heap(std::string* why) {
  State& s = S();
  if (s.dev_base) return true;
  uint64_t mb = 4096;
  if (const char* v = std::getenv("FAKE_ASCEND_MEMORY_MB"); v && *v) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (*end || n == 0 || n > (1ull << 24)) {
      *why = std::string("FAKE_ASCEND_MEMORY_MB=") + v + " is not a size in MiB (1 .. 16777216)";
      return false;
    }
    mb = n;
  }
  const uint64_t size = mb << 20;
  void* dev = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (dev == MAP_FAILED) {
    *why = "cannot reserve " + std::to_string(mb) + " MiB of address space for device memory: " + std::strerror(errno);
    return false;
  }
  void* rw = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (rw == MAP_FAILED) {
    munmap(dev, size);
    *why = "cannot map " + std::to_string(mb) + " MiB for device memory: " + std::strerror(errno);
    return false;
  }
  void* exec = mmap(nullptr, kExecutorSpace, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (exec == MAP_FAILED) {
    munmap(dev, size);
    munmap(rw, size);
    *why = std::string("cannot reserve address space for executor handles: ") + std::strerror(errno);
    return false;
  }
  s.exec_base = static_cast<uint8_t*>(exec);
  s.dev_base = static_cast<uint8_t*>(dev);
  s.rw_base = static_cast<uint8_t*>(rw);
  s.heap_size = size;
  s.free_ranges.clear();
  s.free_ranges[0] = size;
  return true;
}

// ---- the SIGSEGV handler: host reads and writes of device addresses ----

void segv_handler(int sig, siginfo_t* info, void* context) {
  State& s = S();
  const uint64_t a = reinterpret_cast<uint64_t>(info->si_addr);
  const uint64_t base = reinterpret_cast<uint64_t>(s.dev_base);
  if (s.dev_base && a >= base && a < base + s.heap_size) {
    char where[160] = "not inside any live aclrtMalloc block: freed, or never allocated";
    if (s.mu.try_lock()) {
      BlockInfo b;
      if (block_containing_locked(a, &b)) {
        std::snprintf(where, sizeof where,
                      "inside a %" PRIu64 "-byte aclrtMalloc block at 0x%" PRIx64 ", offset %" PRIu64, b.size, b.begin,
                      a - b.begin);
      }
      s.mu.unlock();
    }
    char msg[400];
    const int n = std::snprintf(msg, sizeof msg,
                                "fake-ascend: the host accessed device memory at 0x%" PRIx64
                                " (%s); device memory is only reachable through aclrtMemcpy and the aclnn operators\n",
                                a, where);
    if (n > 0) {
      ssize_t ignored = write(STDERR_FILENO, msg, static_cast<size_t>(n) < sizeof msg ? n : sizeof msg - 1);
      (void)ignored;
    }
    abort();
  }
  const uint64_t exec = reinterpret_cast<uint64_t>(s.exec_base);
  if (s.exec_base && a >= exec && a < exec + kExecutorSpace) {
    char msg[200];
    const int n = std::snprintf(msg, sizeof msg,
                                "fake-ascend: the host dereferenced 0x%" PRIx64
                                ", inside an aclOpExecutor handle: aclOpExecutor is opaque\n",
                                a);
    if (n > 0) {
      ssize_t ignored = write(STDERR_FILENO, msg, static_cast<size_t>(n) < sizeof msg ? n : sizeof msg - 1);
      (void)ignored;
    }
    abort();
  }
  // Not ours: whoever handled SIGSEGV before (ASan, a debugger's, ...), else the default action.
  const struct sigaction& old = s.old_segv;
  if (old.sa_flags & SA_SIGINFO) {
    if (old.sa_sigaction) {
      old.sa_sigaction(sig, info, context);
      return;
    }
  } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN && old.sa_handler != nullptr) {
    old.sa_handler(sig);
    return;
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  if (info->si_code <= 0) raise(sig);  // sent by kill(): nothing re-executes, so send it again
  // else returning re-executes the faulting instruction, which now gets the default action
}

void install_handler() {
  State& s = S();
  if (s.handler_installed) return;
  struct sigaction sa {};
  sa.sa_sigaction = segv_handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, &s.old_segv) == 0) s.handler_installed = true;
}

// ---- devices and streams ----

int current_device() {
  State& s = S();
  if (!s.initialized || t_generation != s.generation || t_device < 0 || t_device >= static_cast<int>(s.device_count) ||
      s.device_refs[t_device] == 0) {
    return -1;
  }
  return t_device;
}

std::string stream_name(const Stream* st) {
  if (st->is_default) return "the default stream of device " + std::to_string(st->device);
  return "stream " + hex(st);
}

// The stream a call means: nullptr is the current device's default stream. Unknown handles are errors;
// destroyed streams, and streams of a device that was reset, are violations.
aclError resolve_stream(const std::string& fn, aclrtStream handle, Stream** out, aclError no_device_code,
                        aclError unknown_code) {
  State& s = S();
  if (!handle) {
    const int d = current_device();
    if (d < 0) {
      return fail(no_device_code, fn + ": the stream is nullptr (the default stream), but no device is set on this "
                                       "thread (call aclrtSetDevice first)");
    }
    *out = s.default_streams[d];
    return ACL_SUCCESS;
  }
  if (!s.user_streams.count(handle)) {
    return fail(unknown_code, fn + ": " + hex(handle) + " is not a stream made by aclrtCreateStream");
  }
  Stream* st = static_cast<Stream*>(handle);
  if (st->destroyed) violation(fn + ": stream " + hex(handle) + " was destroyed by aclrtDestroyStream");
  if (st->dead) {
    violation(fn + ": stream " + hex(handle) + " belongs to device " + std::to_string(st->device) +
              ", which aclrtResetDevice reset (or aclFinalize ran): its streams no longer exist");
  }
  *out = st;
  return ACL_SUCCESS;
}

void run_queue(Stream* st) {
  State& s = S();
  while (!st->queue.empty()) {
    Task t = std::move(st->queue.front());
    st->queue.pop_front();
    t.run();
    if (t.kernel) {
      ++s.launches;
      s.last_kernel = t.name;
    }
  }
}

size_t queued_tasks(const Task** first = nullptr, const Stream** first_stream = nullptr) {
  size_t n = 0;
  for (const Stream* st : S().streams) {
    if (!st->queue.empty() && n == 0) {
      if (first) *first = &st->queue.front();
      if (first_stream) *first_stream = st;
    }
    n += st->queue.size();
  }
  return n;
}

std::string range_str(uint64_t b, uint64_t e) {
  std::string r(1, '[');
  r += hex(b);
  r += ", ";
  r += hex(e);
  r += ')';
  return r;
}

// A synchronous call touching device memory that queued work still reads or writes: the real NPU would race.
void check_hazard(const std::string& fn, const std::vector<Range>& mine) {
  for (const Stream* st : S().streams) {
    for (const Task& t : st->queue) {
      for (const Range& r : t.ranges) {
        for (const Range& m : mine) {
          if (r.begin < m.end && m.begin < r.end && (r.write || m.write)) {
            violation(fn + " " + (m.write ? "writes" : "reads") + " device memory " + range_str(m.begin, m.end) +
                      " that queued work still " + (r.write ? "writes" : "reads") + ": " + t.name + " on " +
                      stream_name(st) +
                      " has not run yet (synchronous copies do not wait for streams: call "
                      "aclrtSynchronizeStream first)");
          }
        }
      }
    }
  }
}

void report_leaks(const char* when) {
  State& s = S();
  std::ostringstream m;
  bool strict_leak = false;
  if (!s.blocks.empty()) {
    uint64_t bytes = 0;
    for (const auto& [off, b] : s.blocks) bytes += b.size;
    m << "\n  " << s.blocks.size() << " device block(s) still allocated (" << bytes << " bytes):";
    int shown = 0;
    for (const auto& [off, b] : s.blocks) {
      if (shown++ == 8) {
        m << " ...";
        break;
      }
      m << " " << hex(reinterpret_cast<uint64_t>(s.dev_base) + off) << " (" << b.size << " bytes)";
    }
  }
  if (!s.pending_executors.empty()) {
    strict_leak = true;
    m << "\n  " << s.pending_executors.size() << " aclOpExecutor(s) never launched:";
    int shown = 0;
    for (const auto& [id, e] : s.pending_executors) {
      if (shown++ == 8) {
        m << " ...";
        break;
      }
      m << " " << e.op;
    }
  }
  size_t counts[5] = {0, 0, 0, 0, 0};
  for (const auto& [p, k] : s.objects) ++counts[static_cast<int>(k)];
  for (int k = 0; k < 5; ++k) {
    if (counts[k]) {
      strict_leak = true;
      m << "\n  " << counts[k] << " " << kind_name(static_cast<Kind>(k)) << " object(s) never destroyed";
    }
  }
  const std::string text = m.str();
  if (text.empty()) return;
  std::fprintf(stderr, "fake-ascend: leaks at %s:%s\n", when, text.c_str());
  if (strict_leak && env_flag("FAKE_ASCEND_STRICT_LEAKS")) {
    std::fprintf(stderr,
                 "fake-ascend: FAKE_ASCEND_STRICT_LEAKS=1: leaked executors or aclTensor/aclScalar/"
                 "aclIntArray/aclBoolArray/aclTensorList objects are errors\n");
    std::fflush(stderr);
    abort();
  }
  std::fflush(stderr);
}

struct ExitReport {
  ~ExitReport() {
    State& s = S();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.initialized) report_leaks("process exit (aclFinalize never ran)");
  }
} g_exit_report;

#define REQUIRE_INIT(fn)                                                                       \
  do {                                                                                         \
    if (!s.initialized) {                                                                      \
      return fail(ACL_ERROR_UNINITIALIZE, std::string(fn) +                                    \
                                              ": aclInit has not been called (or aclFinalize " \
                                              "already ran)");                                 \
    }                                                                                          \
  } while (0)

}  // namespace

// ---- messages ----

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Tensor: return "aclTensor";
    case Kind::Scalar: return "aclScalar";
    case Kind::IntArray: return "aclIntArray";
    case Kind::BoolArray: return "aclBoolArray";
    case Kind::TensorList: return "aclTensorList";
  }
  return "?";
}

void set_error(const std::string& message) {
  t_pending = message;
  t_has_error = true;
  if (env_flag("FAKE_ASCEND_LOG")) std::fprintf(stderr, "fake-ascend: error: %s\n", message.c_str());
}

void violation(const std::string& message) {
  std::fprintf(stderr, "fake-ascend: %s\n", message.c_str());
  std::fflush(stderr);
  abort();
}

std::string hex(uint64_t address) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%" PRIx64, address);
  return b;
}
std::string hex(const void* address) { return hex(reinterpret_cast<uint64_t>(address)); }

const char* rt_take_error() {
  if (!t_has_error) return nullptr;
  t_returned = std::move(t_pending);
  t_pending.clear();
  t_has_error = false;
  return t_returned.c_str();
}

// ---- runtime ----

namespace {
bool parse_soc(const std::string& name, SocProfile* out) {
  for (const char* n : {"Ascend910B1", "Ascend910B2", "Ascend910B3", "Ascend910B4"}) {
    if (name == n) return *out = SocProfile::AtlasA2Training, true;
  }
  for (const char* n : {"Ascend910A", "Ascend910ProA", "Ascend910PremiumA", "Ascend910ProB"}) {
    if (name == n) return *out = SocProfile::AtlasTraining, true;
  }
  return false;
}
}  // namespace

const char* rt_soc_name() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.soc_name.c_str();
}

SocProfile rt_soc_profile() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.soc;
}

const char* soc_profile_name(SocProfile p) {
  return p == SocProfile::AtlasTraining ? "Atlas training series" : "Atlas A2 training series";
}

bool rt_initialized() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.initialized;
}

aclError rt_init(const char* config_path, uint32_t driver_device_count) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.initialized) {
    return fail(ACL_ERROR_REPEAT_INITIALIZE,
                "aclInit: already initialized (aclInit was called twice without "
                "aclFinalize)");
  }
  if (const char* f = std::getenv("FAKE_ASCEND_FAIL_INIT"); f && *f) {
    const int code = std::atoi(f);
    if (code != 0) {
      return fail(code, "aclInit: failed with code " + std::to_string(code) + " because FAKE_ASCEND_FAIL_INIT=" + f +
                            " asks the fake to (a simulated initialisation failure)");
    }
  }
  if (config_path && *config_path) {
    std::ifstream in(config_path);
    if (!in) {
      return fail(ACL_ERROR_INVALID_FILE, std::string("aclInit: cannot read the configuration file ") + config_path);
    }
  }
  std::string soc_name = "Ascend910B1";
  if (const char* v = std::getenv("FAKE_ASCEND_SOC"); v && *v) soc_name = v;
  SocProfile soc;
  if (!parse_soc(soc_name, &soc)) {
    return fail(ACL_ERROR_INVALID_PARAM,
                "aclInit: FAKE_ASCEND_SOC=" + soc_name +
                    " is not a SoC the fake plays (Ascend910B1..Ascend910B4: Atlas A2 training series; Ascend910A, "
                    "Ascend910ProA, Ascend910PremiumA, Ascend910ProB: Atlas training series)");
  }
  std::string why;
  if (!reserve_heap(&why)) return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclInit: " + why);
  s.soc_name = soc_name;
  s.soc = soc;
  install_handler();
  s.initialized = true;
  ++s.generation;
  s.device_count = driver_device_count;
  s.device_refs.assign(driver_device_count, 0);
  s.default_streams.assign(driver_device_count, nullptr);
  return ACL_SUCCESS;
}

aclError rt_finalize() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.initialized) {
    if (s.ever_finalized) return fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize: aclFinalize already ran");
    return fail(ACL_ERROR_UNINITIALIZE, "aclFinalize: aclInit has not been called");
  }
  std::string alive;
  size_t n_alive = 0;
  for (const Stream* st : s.streams) {
    if (!st->is_default && !st->destroyed && !st->dead) {
      ++n_alive;
      if (n_alive <= 4) alive += " " + hex(st);
    }
  }
  if (n_alive) {
    violation("aclFinalize: " + std::to_string(n_alive) + " stream(s) made by aclrtCreateStream are still alive (" +
              alive.substr(1) + "): synchronize and destroy them (aclrtDestroyStream) before aclFinalize");
  }
  const Task* first = nullptr;
  const Stream* first_stream = nullptr;
  if (const size_t n = queued_tasks(&first, &first_stream)) {
    violation("aclFinalize: " + std::to_string(n) + " queued task(s) never ran (the first: " + first->name + " on " +
              stream_name(first_stream) + "): synchronize the streams before aclFinalize");
  }
  report_leaks("aclFinalize");
  for (Stream* st : s.streams) st->dead = true;
  s.device_refs.assign(s.device_count, 0);
  s.default_streams.assign(s.device_count, nullptr);
  s.blocks.clear();
  s.free_ranges.clear();
  s.free_ranges[0] = s.heap_size;
  s.next_fit = 0;
  s.live_bytes = 0;
  for (const auto& [id, e] : s.pending_executors) s.exec_state[id] = kAbandoned;
  s.pending_executors.clear();
  s.pending_refs.clear();
  s.initialized = false;
  s.ever_finalized = true;
  ++s.generation;
  return ACL_SUCCESS;
}

aclError rt_set_device(int32_t id) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  REQUIRE_INIT("aclrtSetDevice");
  if (id < 0 || id >= static_cast<int32_t>(s.device_count)) {
    return fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtSetDevice: device id " + std::to_string(id) +
                                                   " is invalid: there are " + std::to_string(s.device_count) +
                                                   " device(s), ids 0 .. " + std::to_string(s.device_count - 1) +
                                                   " (the fake's FAKE_ASCEND_DEVICES)");
  }
  if (s.device_refs[id]++ == 0) {
    Stream* st = new Stream(id, true);
    s.streams.push_back(st);
    s.default_streams[id] = st;
  }
  t_device = id;
  t_generation = s.generation;
  return ACL_SUCCESS;
}

aclError rt_reset_device(int32_t id) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  REQUIRE_INIT("aclrtResetDevice");
  if (id < 0 || id >= static_cast<int32_t>(s.device_count)) {
    return fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtResetDevice: device id " + std::to_string(id) +
                                                   " is invalid: there are " + std::to_string(s.device_count) +
                                                   " device(s)");
  }
  if (s.device_refs[id] == 0) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtResetDevice: device " + std::to_string(id) +
                                             " is not set (no aclrtSetDevice for it, or it was reset already)");
  }
  if (--s.device_refs[id] > 0) return ACL_SUCCESS;  // reference counted, as CANN's aclrtSetDevice
  for (Stream* st : s.streams) {
    if (st->device == id && !st->dead && !st->destroyed) {
      run_queue(st);  // the reset waits for the device's queued work
      st->dead = true;
    }
  }
  s.default_streams[id] = nullptr;
  return ACL_SUCCESS;
}

aclError rt_get_device_count(uint32_t* count) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  REQUIRE_INIT("aclrtGetDeviceCount");
  if (!count) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is nullptr");
  *count = s.device_count;
  return ACL_SUCCESS;
}

aclError rt_get_device(int32_t* id) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  REQUIRE_INIT("aclrtGetDevice");
  if (!id) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is nullptr");
  const int d = current_device();
  if (d < 0) return fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetDevice: no device is set on this thread");
  *id = d;
  return ACL_SUCCESS;
}

aclError rt_create_stream(aclrtStream* stream) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  REQUIRE_INIT("aclrtCreateStream");
  if (!stream) return fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: stream is nullptr");
  const int d = current_device();
  if (d < 0) {
    return fail(ACL_ERROR_RT_CONTEXT_NULL,
                "aclrtCreateStream: no device is set on this thread (call aclrtSetDevice "
                "first)");
  }
  Stream* st = new Stream(d, false);
  s.streams.push_back(st);
  s.user_streams.insert(st);
  *stream = st;
  return ACL_SUCCESS;
}

aclError rt_destroy_stream(aclrtStream stream) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  REQUIRE_INIT("aclrtDestroyStream");
  if (!stream) {
    return fail(ACL_ERROR_INVALID_PARAM,
                "aclrtDestroyStream: stream is nullptr (the default stream cannot be "
                "destroyed)");
  }
  if (!s.user_streams.count(stream)) {
    return fail(ACL_ERROR_INVALID_PARAM,
                "aclrtDestroyStream: " + hex(stream) + " is not a stream made by aclrtCreateStream");
  }
  Stream* st = static_cast<Stream*>(stream);
  if (st->destroyed) violation("aclrtDestroyStream: stream " + hex(stream) + " was destroyed already");
  if (st->dead) {
    violation("aclrtDestroyStream: stream " + hex(stream) + " belongs to device " + std::to_string(st->device) +
              ", which aclrtResetDevice already reset (or aclFinalize ran): destroy streams before resetting their "
              "device");
  }
  if (!st->queue.empty()) {
    violation("aclrtDestroyStream: stream " + hex(stream) + " still has " + std::to_string(st->queue.size()) +
              " queued task(s) (the first: " + st->queue.front().name +
              "): call aclrtSynchronizeStream before destroying it");
  }
  st->destroyed = true;
  return ACL_SUCCESS;
}

aclError rt_synchronize_stream(aclrtStream stream) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  REQUIRE_INIT("aclrtSynchronizeStream");
  Stream* st = nullptr;
  if (aclError e =
          resolve_stream("aclrtSynchronizeStream", stream, &st, ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_INVALID_PARAM)) {
    return e;
  }
  run_queue(st);
  ++s.syncs;
  return ACL_SUCCESS;
}

aclError rt_synchronize_device() {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  REQUIRE_INIT("aclrtSynchronizeDevice");
  const int d = current_device();
  if (d < 0) return fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtSynchronizeDevice: no device is set on this thread");
  for (Stream* st : s.streams) {
    if (st->device == d && !st->dead && !st->destroyed) run_queue(st);
  }
  ++s.syncs;
  return ACL_SUCCESS;
}

aclError rt_malloc(void** ptr, size_t size, int /*policy: every value is accepted, as CANN does*/) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  REQUIRE_INIT("aclrtMalloc");
  if (!ptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: devPtr is nullptr");
  if (size == 0) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: size is 0 (CANN rejects empty allocations)");
  const int d = current_device();
  if (d < 0) {
    return fail(ACL_ERROR_RT_CONTEXT_NULL,
                "aclrtMalloc: no device is set on this thread (call aclrtSetDevice "
                "first)");
  }
  const uint64_t reserved = size > s.heap_size ? UINT64_MAX : align_up(align_up(size, 32) + 32, kAlign);
  uint64_t found = UINT64_MAX;
  auto fits = [&](std::map<uint64_t, uint64_t>::iterator it) { return it->second >= reserved; };
  for (auto it = s.free_ranges.lower_bound(s.next_fit); it != s.free_ranges.end(); ++it) {
    if (fits(it)) {
      found = it->first;
      break;
    }
  }
  if (found == UINT64_MAX) {
    for (auto it = s.free_ranges.begin(); it != s.free_ranges.end(); ++it) {
      if (fits(it)) {
        found = it->first;
        break;
      }
    }
  }
  if (found == UINT64_MAX) {
    uint64_t free_bytes = 0;
    for (const auto& [o, l] : s.free_ranges) free_bytes += l;
    return fail(
        ACL_ERROR_RT_MEMORY_ALLOCATION,
        "aclrtMalloc: out of device memory: " + std::to_string(size) + " bytes asked for, " +
            std::to_string(free_bytes) + " of " + std::to_string(s.heap_size) +
            " bytes free (in pieces); the fake device has FAKE_ASCEND_MEMORY_MB=" + std::to_string(s.heap_size >> 20));
  }
  auto it = s.free_ranges.find(found);
  const uint64_t len = it->second;
  s.free_ranges.erase(it);
  if (len > reserved) s.free_ranges[found + reserved] = len - reserved;
  s.next_fit = found + reserved;
  s.blocks[found] = Block{size, reserved, d};
  s.live_bytes += size;
  // Real device memory is not initialised: fill it with 0xFF (NaN as FLOAT and DOUBLE, -1 as integers).
  uint8_t* rw = s.rw_base + found;
  if (size <= kPoisonAll) {
    std::memset(rw, 0xFF, size);
  } else {
    std::memset(rw, 0xFF, kPoisonEdge);
    std::memset(rw + size - kPoisonEdge, 0xFF, kPoisonEdge);
  }
  *ptr = s.dev_base + found;
  return ACL_SUCCESS;
}

aclError rt_free(void* ptr) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  REQUIRE_INIT("aclrtFree");
  if (!ptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtFree: devPtr is nullptr");
  const uint64_t a = reinterpret_cast<uint64_t>(ptr);
  if (!in_device_range(a)) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtFree: " + hex(a) + " is not device memory (a host pointer?)");
  }
  const uint64_t off = a - reinterpret_cast<uint64_t>(s.dev_base);
  auto it = s.blocks.find(off);
  if (it == s.blocks.end()) {
    BlockInfo b;
    if (block_containing_locked(a, &b)) {
      return fail(ACL_ERROR_INVALID_PARAM, "aclrtFree: " + hex(a) + " is inside the " + bytes_str(b.size) +
                                               " block at " + hex(b.begin) + ", not its start");
    }
    return fail(ACL_ERROR_INVALID_PARAM,
                "aclrtFree: " + hex(a) + " is not a live aclrtMalloc block (freed already, or never allocated)");
  }
  const uint64_t end = a + it->second.size;
  for (const Stream* st : s.streams) {
    for (const Task& t : st->queue) {
      for (const Range& r : t.ranges) {
        if (r.begin < end && a < r.end) {
          violation("aclrtFree(" + hex(a) + "): the " + bytes_str(it->second.size) +
                    " block is still used by queued work: " + t.name + " on " + stream_name(st) + " " +
                    (r.write ? "writes" : "reads") + " " + range_str(r.begin, r.end) +
                    " and has not run yet (synchronize the stream before freeing memory it uses)");
        }
      }
    }
  }
  const Block b = it->second;
  s.blocks.erase(it);
  s.live_bytes -= b.size;
  if (b.reserved >= (1u << 20)) {
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t from = align_up(off, page), to = (off + b.reserved) / page * page;
    if (to > from) madvise(s.rw_base + from, to - from, MADV_DONTNEED);
  }
  free_range(off, b.reserved);
  return ACL_SUCCESS;
}

aclError rt_memcpy(void* dst, size_t dest_max, const void* src, size_t count, int kind, bool async,
                   aclrtStream stream) {
  State& s = S();
  const std::string fn = async ? "aclrtMemcpyAsync" : "aclrtMemcpy";
  std::lock_guard<std::mutex> lock(s.mu);
  REQUIRE_INIT(fn);
  if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_DEVICE_TO_DEVICE) {
    return fail(ACL_ERROR_INVALID_PARAM, fn + ": kind " + std::to_string(kind) +
                                             " is not an aclrtMemcpyKind "
                                             "(0 .. 3)");
  }
  const std::string call = fn + "(" + kind_str(kind) + ")";
  if (!dst) return fail(ACL_ERROR_INVALID_PARAM, call + ": dst is nullptr");
  if (!src) return fail(ACL_ERROR_INVALID_PARAM, call + ": src is nullptr");
  if (count > dest_max) {
    return fail(ACL_ERROR_INVALID_PARAM,
                call + ": count " + std::to_string(count) + " is larger than destMax " + std::to_string(dest_max));
  }
  const bool src_dev = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  const bool dst_dev = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  std::vector<Range> ranges;
  auto check = [&](const char* which, const void* p, bool want_device, bool write) -> aclError {
    const uint64_t a = reinterpret_cast<uint64_t>(p);
    BlockInfo b;
    if (want_device) {
      if (!in_device_range(a)) {
        return fail(ACL_ERROR_INVALID_PARAM, call + ": " + which + " " + hex(a) + " is a host pointer, but " +
                                                 kind_str(kind) + " needs device memory there");
      }
      if (!block_containing_locked(a, &b)) {
        return fail(ACL_ERROR_INVALID_PARAM, call + ": " + which + " " + hex(a) +
                                                 " is not inside a live aclrtMalloc block (freed, or never allocated)");
      }
      if (count > b.size - (a - b.begin)) {
        return fail(ACL_ERROR_INVALID_PARAM, call + ": " + which + " " + range_str(a, a + count) +
                                                 " runs past the end of the " + bytes_str(b.size) +
                                                 " aclrtMalloc block at " + hex(b.begin) + " by " +
                                                 std::to_string(count - (b.size - (a - b.begin))) + " bytes");
      }
      if (count) ranges.push_back(Range{a, a + count, write});
    } else if (in_device_range(a)) {
      std::string where = "device memory";
      if (block_containing_locked(a, &b))
        where += " (inside the " + bytes_str(b.size) + " block at " + hex(b.begin) + ")";
      return fail(ACL_ERROR_INVALID_PARAM, call + ": " + which + " " + hex(a) + " is " + where + ", but " +
                                               kind_str(kind) + " needs a host pointer there");
    }
    return ACL_SUCCESS;
  };
  if (aclError e = check("src", src, src_dev, false)) return e;
  if (aclError e = check("dst", dst, dst_dev, true)) return e;
  uint8_t* rw = s.rw_base;
  const uint64_t base = reinterpret_cast<uint64_t>(s.dev_base);
  auto perform = [=] {
    if (!count) return;
    const uint8_t* from = src_dev ? rw + (reinterpret_cast<uint64_t>(src) - base) : static_cast<const uint8_t*>(src);
    uint8_t* to = dst_dev ? rw + (reinterpret_cast<uint64_t>(dst) - base) : static_cast<uint8_t*>(dst);
    std::memmove(to, from, count);
  };
  if (!async) {
    check_hazard(fn, ranges);
    perform();
    return ACL_SUCCESS;
  }
  Stream* st = nullptr;
  if (aclError e = resolve_stream(fn, stream, &st, ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_INVALID_PARAM)) return e;
  st->queue.push_back(Task{"aclrtMemcpyAsync", false, std::move(ranges), perform});
  return ACL_SUCCESS;
}

aclError rt_memset(void* ptr, size_t max_count, int32_t value, size_t count) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  REQUIRE_INIT("aclrtMemset");
  if (!ptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemset: devPtr is nullptr");
  if (count > max_count) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemset: count " + std::to_string(count) + " is larger than maxCount " +
                                             std::to_string(max_count));
  }
  const uint64_t a = reinterpret_cast<uint64_t>(ptr);
  BlockInfo b;
  if (!in_device_range(a)) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemset: " + hex(a) +
                                             " is a host pointer; aclrtMemset needs device "
                                             "memory");
  }
  if (!block_containing_locked(a, &b)) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemset: " + hex(a) + " is not inside a live aclrtMalloc block");
  }
  if (count > b.size - (a - b.begin)) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemset: " + range_str(a, a + count) + " runs past the end of the " +
                                             bytes_str(b.size) + " aclrtMalloc block at " + hex(b.begin));
  }
  if (!count) return ACL_SUCCESS;
  check_hazard("aclrtMemset", {Range{a, a + count, true}});
  std::memset(s.rw_base + (a - reinterpret_cast<uint64_t>(s.dev_base)), value & 0xFF, count);
  return ACL_SUCCESS;
}

aclError rt_get_mem_info(int attr, size_t* free_bytes, size_t* total_bytes) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  REQUIRE_INIT("aclrtGetMemInfo");
  if (attr < ACL_DDR_MEM || attr > ACL_HBM_MEM_P2P_NORMAL) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo: attr " + std::to_string(attr) + " is not an aclrtMemAttr");
  }
  if (!free_bytes || !total_bytes) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo: free or total is nullptr");
  if (current_device() < 0) return fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetMemInfo: no device is set on this thread");
  uint64_t used = 0;
  for (const auto& [o, b] : s.blocks) used += b.reserved;
  *total_bytes = s.heap_size;
  *free_bytes = s.heap_size - used;
  return ACL_SUCCESS;
}

// ---- counters ----

uint64_t counter_kernel_launches() {
  std::lock_guard<std::mutex> lock(S().mu);
  return S().launches;
}
uint64_t counter_live_bytes() {
  std::lock_guard<std::mutex> lock(S().mu);
  return S().live_bytes;
}
uint64_t counter_syncs() {
  std::lock_guard<std::mutex> lock(S().mu);
  return S().syncs;
}
const char* counter_last_kernel() {
  std::lock_guard<std::mutex> lock(S().mu);
  return S().last_kernel;
}
void counter_reset() {
  std::lock_guard<std::mutex> lock(S().mu);
  S().launches = 0;
  S().syncs = 0;
  S().last_kernel = "";
}

// ---- objects ----

void register_object(Kind kind, const void* object) {
  std::lock_guard<std::mutex> lock(S().mu);
  S().objects[object] = kind;
}

void unregister_object(Kind kind, const void* object, const char* function, const void* owner) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.objects.find(object);
  if (it == s.objects.end() || it->second != kind) {
    violation(std::string(function) + ": " + hex(object) + " is not a live " + kind_name(kind) +
              " (destroyed already, or never created)");
  }
  if (auto o = s.owners.find(object); o != s.owners.end() && o->second != owner) {
    violation(std::string(function) + ": the " + kind_name(kind) + " " + hex(object) +
              " belongs to the aclTensorList " + hex(o->second) +
              ", and aclDestroyTensorList destroys the tensors of its list (CANN: they are not destroyed again); "
              "destroying it here too would destroy it twice");
  }
  if (auto r = s.pending_refs.find(object); r != s.pending_refs.end() && r->second > 0) {
    const char* op = "?";
    for (const auto& [id, e] : s.pending_executors) {
      for (const void* p : e.refs) {
        if (p == object) op = e.op;
      }
    }
    violation(std::string(function) + ": the " + kind_name(kind) + " " + hex(object) +
              " is still used by an aclOpExecutor that was not launched yet (from " + op +
              "GetWorkspaceSize): launch it (" + op + ") before destroying its arguments");
  }
  s.objects.erase(it);
  s.owners.erase(object);
}

void adopt_objects(const void* owner, const std::vector<const void*>& members, const char* function) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  for (size_t i = 0; i < members.size(); ++i) {
    const void* m = members[i];
    if (!m) continue;
    if (auto o = s.owners.find(m); o != s.owners.end()) {
      violation(std::string(function) + ": value[" + std::to_string(i) + "] (the aclTensor " + hex(m) +
                ") already belongs to the aclTensorList " + hex(o->second) +
                ": aclDestroyTensorList destroys the tensors of its list, so both lists would destroy it");
    }
    for (size_t j = 0; j < i; ++j) {
      if (members[j] == m) {
        violation(std::string(function) + ": value[" + std::to_string(j) + "] and value[" + std::to_string(i) +
                  "] are the same aclTensor " + hex(m) +
                  ": aclDestroyTensorList destroys the tensors of its list, so it would be destroyed twice");
      }
    }
  }
  for (const void* m : members) {
    if (m) s.owners[m] = owner;
  }
}

bool object_live(Kind kind, const void* object) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.objects.find(object);
  return it != s.objects.end() && it->second == kind;
}

// ---- device memory ----

bool find_block(uint64_t address, uint64_t length, BlockInfo* block) {
  std::lock_guard<std::mutex> lock(S().mu);
  return find_block_locked(address, length, block);
}

bool block_containing(uint64_t address, BlockInfo* block) {
  std::lock_guard<std::mutex> lock(S().mu);
  return block_containing_locked(address, block);
}

uint8_t* host_view(uint64_t device_address) {
  State& s = S();
  return s.rw_base + (device_address - reinterpret_cast<uint64_t>(s.dev_base));
}

// ---- executors ----

aclOpExecutor* create_executor(ExecutorSpec&& spec) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  const uint64_t id = s.exec_ops.size();
  if ((id + 1) * kExecutorStride > kExecutorSpace) violation("more aclOpExecutors than the fake has handles for");
  s.exec_ops.push_back(spec.op);
  s.exec_state.push_back(kPending);
  for (const void* p : spec.refs) ++s.pending_refs[p];
  s.pending_executors.emplace(
      id, Executor{spec.op, spec.workspace, std::move(spec.refs), std::move(spec.ranges), std::move(spec.kernel)});
  return reinterpret_cast<aclOpExecutor*>(s.exec_base + id * kExecutorStride);
}

aclnnStatus launch(const char* op, void* workspace, uint64_t workspace_size, aclOpExecutor* executor,
                   aclrtStream stream) {
  State& s = S();
  const std::string name = op;
  std::lock_guard<std::mutex> lock(s.mu);
  REQUIRE_INIT(name);
  if (!executor) return fail(ACLNN_ERR_PARAM_NULLPTR, name + ": executor is nullptr");
  const uint64_t handle = reinterpret_cast<uint64_t>(executor), base = reinterpret_cast<uint64_t>(s.exec_base);
  const uint64_t id = (handle - base) / kExecutorStride;
  if (handle < base || handle - base >= kExecutorSpace || (handle - base) % kExecutorStride ||
      id >= s.exec_ops.size()) {
    return fail(ACLNN_ERR_PARAM_INVALID,
                name + ": " + hex(executor) + " is not an aclOpExecutor from an aclnn*GetWorkspaceSize call");
  }
  if (s.exec_state[id] == kLaunched) {
    return fail(ACLNN_ERR_PARAM_INVALID, name + ": this aclOpExecutor (from " + s.exec_ops[id] +
                                             "GetWorkspaceSize) was launched already: an executor runs once; call " +
                                             s.exec_ops[id] + "GetWorkspaceSize again for another run");
  }
  if (s.exec_state[id] == kAbandoned) {
    return fail(ACLNN_ERR_PARAM_INVALID, name + ": this aclOpExecutor (from " + s.exec_ops[id] +
                                             "GetWorkspaceSize) was made before aclFinalize and is gone");
  }
  Executor& e = s.pending_executors.at(id);
  if (name != e.op) {
    return fail(ACLNN_ERR_PARAM_INVALID, name + ": this aclOpExecutor was made by " + e.op + "GetWorkspaceSize, not " +
                                             name + "GetWorkspaceSize");
  }
  if (workspace_size < e.workspace) {
    return fail(ACLNN_ERR_PARAM_INVALID, name + ": workspaceSize " + std::to_string(workspace_size) +
                                             " is smaller than the " + std::to_string(e.workspace) + " bytes " + e.op +
                                             "GetWorkspaceSize asked for");
  }
  const uint64_t ws = reinterpret_cast<uint64_t>(workspace);
  if (e.workspace > 0) {
    if (!workspace) {
      return fail(ACLNN_ERR_PARAM_INVALID, name + ": workspace is nullptr, but " + e.op +
                                               "GetWorkspaceSize asked for " + std::to_string(e.workspace) + " bytes");
    }
    if (!find_block_locked(ws, e.workspace, nullptr)) {
      return fail(ACLNN_ERR_PARAM_INVALID, name + ": the workspace " + range_str(ws, ws + e.workspace) +
                                               " is not inside one live aclrtMalloc block");
    }
  }
  Stream* st = nullptr;
  if (aclError err = resolve_stream(name, stream, &st, ACLNN_ERR_RUNTIME_ERROR, ACLNN_ERR_PARAM_INVALID)) return err;
  for (const Range& r : e.ranges) {
    BlockInfo b;
    if (!find_block_locked(r.begin, r.end - r.begin, &b)) {
      violation(name + ": launched, but device memory " + range_str(r.begin, r.end) +
                " of one of its tensors is no "
                "longer inside a live aclrtMalloc block (freed after " +
                name + "GetWorkspaceSize?)");
    }
    if (b.device != st->device) {
      return fail(ACLNN_ERR_PARAM_INVALID, name + ": tensor memory at " + hex(r.begin) + " belongs to device " +
                                               std::to_string(b.device) + ", the stream to device " +
                                               std::to_string(st->device));
    }
  }
  std::vector<Range> ranges = std::move(e.ranges);
  if (e.workspace > 0) ranges.push_back(Range{ws, ws + e.workspace, true});
  const uint64_t need = e.workspace;
  Kernel kernel = std::move(e.kernel);
  st->queue.push_back(
      Task{e.op, true, std::move(ranges), [kernel, ws, need] { kernel(need ? host_view(ws) : nullptr, need); }});
  s.exec_state[id] = kLaunched;
  for (const void* p : e.refs) {
    if (auto it = s.pending_refs.find(p); it != s.pending_refs.end() && --it->second <= 0) s.pending_refs.erase(it);
  }
  s.pending_executors.erase(id);
  return ACLNN_SUCCESS;
}

}  // namespace fake_ascend
