// libhccl.so (fake): HCCL's root-info communicators and AllReduce / Broadcast between the processes of one host,
// through POSIX shared memory named from the root info. Every collective is queued on its stream with the fake
// CANN's host-task hook and runs there, in stream order, at synchronisation (README.md lists the rules).
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "fake_ascend/host_task.h"
#include "fake_hccl/hccl.h"

#define FH_EXPORT __attribute__((visibility("default")))

namespace {

constexpr char kMagic[8] = {'F', 'A', 'K', 'E', 'H', 'C', 'C', 'L'};
constexpr uint32_t kMaxRanks = 64;
constexpr uint64_t kStageBytes = 256 * 1024;  // each rank's slot of a chunk in the shared segment
// What the synchronisation that ran a failed collective returns (ACL_ERROR_RT_INTERNAL_ERROR, the runtime's
// "internal error" class 507xxx; CANN reports failed HCCL tasks in that class).
constexpr aclError kTaskFailed = 507000;

enum Kind : int32_t { kAllReduce = 1, kBroadcast = 2 };

// One collective as a rank queued it: what every rank must agree on.
struct Desc {
  uint64_t seq;
  int32_t kind, dtype, op;
  uint32_t root;
  uint64_t count;
};

struct Shared {
  std::atomic<uint32_t> nranks;
  std::atomic<uint32_t> failed;  // a rank timed out or saw a disagreement: the communicator is broken everywhere
  std::atomic<uint32_t> joined[kMaxRanks];
  std::atomic<uint64_t> arrived[kMaxRanks];  // barrier generations
  Desc desc[kMaxRanks];
  alignas(64) unsigned char stage[kMaxRanks][kStageBytes];
};

struct Comm {
  uint32_t rank = 0, nranks = 0;
  int32_t device = -1;
  Shared* shared = nullptr;
  std::string name;
  uint64_t next_seq = 0;     // collectives queued (call order)
  uint64_t generation = 0;   // barriers passed (stream order)
  bool broken = false;
  bool destroyed = false;
};

std::mutex g_mutex;
std::unordered_map<const void*, Comm*> g_comms;  // every communicator ever made (destroyed ones stay: tombstones)

HcclResult fail(HcclResult code, const std::string& message) {
  std::fprintf(stderr, "fake-hccl: %s\n", message.c_str());
  std::fflush(stderr);
  return code;
}

double timeout_seconds() {
  const char* v = std::getenv("FAKE_HCCL_TIMEOUT");
  const double t = v ? std::atof(v) : 0.0;
  return t > 0 ? t : 60.0;
}

std::string hex(const void* p) {
  char b[32];
  std::snprintf(b, sizeof b, "%p", p);
  return b;
}

const char* dtype_name(int32_t t) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: return "INT8";
    case HCCL_DATA_TYPE_INT16: return "INT16";
    case HCCL_DATA_TYPE_INT32: return "INT32";
    case HCCL_DATA_TYPE_FP16: return "FP16";
    case HCCL_DATA_TYPE_FP32: return "FP32";
    case HCCL_DATA_TYPE_INT64: return "INT64";
    case HCCL_DATA_TYPE_UINT64: return "UINT64";
    case HCCL_DATA_TYPE_UINT8: return "UINT8";
    case HCCL_DATA_TYPE_UINT16: return "UINT16";
    case HCCL_DATA_TYPE_UINT32: return "UINT32";
    case HCCL_DATA_TYPE_FP64: return "FP64";
    case HCCL_DATA_TYPE_BFP16: return "BFP16";
    default: return "an invalid HcclDataType";
  }
}

size_t dtype_size(int32_t t) {
  switch (t) {
    case HCCL_DATA_TYPE_INT8: case HCCL_DATA_TYPE_UINT8: return 1;
    case HCCL_DATA_TYPE_INT16: case HCCL_DATA_TYPE_UINT16: case HCCL_DATA_TYPE_FP16: case HCCL_DATA_TYPE_BFP16: return 2;
    case HCCL_DATA_TYPE_INT32: case HCCL_DATA_TYPE_UINT32: case HCCL_DATA_TYPE_FP32: return 4;
    case HCCL_DATA_TYPE_INT64: case HCCL_DATA_TYPE_UINT64: case HCCL_DATA_TYPE_FP64: return 8;
    default: return 0;
  }
}

const char* op_name(int32_t op) {
  switch (op) {
    case HCCL_REDUCE_SUM: return "SUM";
    case HCCL_REDUCE_PROD: return "PROD";
    case HCCL_REDUCE_MAX: return "MAX";
    case HCCL_REDUCE_MIN: return "MIN";
    default: return "an invalid HcclReduceOp";
  }
}

std::string describe(const Desc& d) {
  std::string s = d.kind == kAllReduce ? "HcclAllReduce" : "HcclBroadcast";
  s += " #" + std::to_string(d.seq) + " of " + std::to_string(d.count) + " " + dtype_name(d.dtype);
  if (d.kind == kAllReduce) s += std::string(" ") + op_name(d.op);
  else s += " from root " + std::to_string(d.root);
  return s;
}

// The communicator behind a handle, or an error naming what is wrong with it.
HcclResult lookup(const char* fn, HcclComm handle, Comm** out) {
  if (!handle) return fail(HCCL_E_PTR, std::string(fn) + ": comm is nullptr (no HcclCommInitRootInfo made it)");
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_comms.find(handle);
  if (it == g_comms.end()) {
    return fail(HCCL_E_PARA, std::string(fn) + ": " + hex(handle) + " is not a communicator from HcclCommInitRootInfo");
  }
  if (it->second->destroyed) {
    return fail(HCCL_E_PARA, std::string(fn) + ": communicator " + hex(handle) + " was destroyed by HcclCommDestroy");
  }
  *out = it->second;
  return HCCL_SUCCESS;
}

void backoff(uint64_t spins) {
  if (spins < 2000) return;
  if (spins < 4000) sched_yield();
  else std::this_thread::sleep_for(std::chrono::microseconds(50));
}

// Waits until every rank reached this barrier; false (with `why`) on a timeout or a broken communicator.
bool barrier(Comm& c, std::string* why) {
  Shared& s = *c.shared;
  const uint64_t g = ++c.generation;
  s.arrived[c.rank].store(g, std::memory_order_release);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds());
  for (uint32_t r = 0; r < c.nranks; ++r) {
    for (uint64_t spins = 0; s.arrived[r].load(std::memory_order_acquire) < g; ++spins) {
      if (s.failed.load()) {
        *why = "another rank of the communicator failed a collective";
        return false;
      }
      if ((spins & 1023) == 0 && std::chrono::steady_clock::now() > deadline) {
        *why = "timed out after " + std::to_string(static_cast<int>(timeout_seconds())) + " s waiting for rank " +
               std::to_string(r) + " (it never ran its part: FAKE_HCCL_TIMEOUT sets the limit)";
        s.failed.store(1);
        return false;
      }
      backoff(spins);
    }
  }
  return true;
}

template <typename T>
void reduce_chunk(Shared& s, uint32_t nranks, int32_t op, uint64_t offset, uint64_t n, T* out) {
  for (uint64_t i = 0; i < n; ++i) {
    T acc = reinterpret_cast<const T*>(s.stage[0] + offset)[i];
    for (uint32_t r = 1; r < nranks; ++r) {  // rank order: every rank computes the same bits
      const T v = reinterpret_cast<const T*>(s.stage[r] + offset)[i];
      switch (op) {
        case HCCL_REDUCE_SUM: acc = static_cast<T>(acc + v); break;
        case HCCL_REDUCE_PROD: acc = static_cast<T>(acc * v); break;
        case HCCL_REDUCE_MAX: acc = v > acc ? v : acc; break;
        default: acc = v < acc ? v : acc; break;
      }
    }
    out[i] = acc;
  }
}

struct Task {
  Comm* comm;
  Desc desc;
  const void* send;
  void* recv;
};

aclError task_failed(Comm& c, const Desc& d, const std::string& why) {
  c.broken = true;
  c.shared->failed.store(1);
  const std::string msg = "fake-hccl: rank " + std::to_string(c.rank) + ": " + describe(d) + " failed: " + why;
  std::fprintf(stderr, "%s\n", msg.c_str());
  std::fflush(stderr);
  fake_ascend_task_error_message(msg.c_str());
  return kTaskFailed;
}

// The collective itself, on the synchronising thread: the ranks compare what they queued, then move the data
// through their slots of the shared segment chunk by chunk.
aclError run_task(void* user) {
  Task& t = *static_cast<Task*>(user);
  Comm& c = *t.comm;
  const Desc& d = t.desc;
  if (c.broken) return task_failed(c, d, "the communicator failed an earlier collective");
  Shared& s = *c.shared;
  std::string why;
  s.desc[c.rank] = d;
  if (!barrier(c, &why)) return task_failed(c, d, why);
  std::string disagree;
  for (uint32_t r = 0; r < c.nranks; ++r) {
    const Desc o = s.desc[r];
    if (o.seq != d.seq || o.kind != d.kind || o.count != d.count || o.dtype != d.dtype ||
        (d.kind == kAllReduce && o.op != d.op) || (d.kind == kBroadcast && o.root != d.root)) {
      disagree += "; rank " + std::to_string(r) + " queued " + describe(o);
    }
  }
  if (!disagree.empty()) {
    return task_failed(c, d, "the ranks disagree (every rank must queue the same collectives in the same order "
                             "with the same count, dtype, op and root)" + disagree);
  }
  const size_t elem = dtype_size(d.dtype);
  const uint64_t total = d.count * elem, chunk = kStageBytes / elem * elem;
  const uint8_t* src = static_cast<const uint8_t*>(fake_ascend_host_view(t.send));
  uint8_t* dst = static_cast<uint8_t*>(fake_ascend_host_view(t.recv));
  for (uint64_t off = 0; off < total; off += chunk) {
    const uint64_t bytes = std::min(chunk, total - off);
    if (d.kind == kAllReduce) {
      std::memcpy(s.stage[c.rank], src + off, bytes);
      if (!barrier(c, &why)) return task_failed(c, d, why);
      const uint64_t n = bytes / elem;
      if (d.dtype == HCCL_DATA_TYPE_FP32) reduce_chunk(s, c.nranks, d.op, 0, n, reinterpret_cast<float*>(dst + off));
      else if (d.dtype == HCCL_DATA_TYPE_INT32) reduce_chunk(s, c.nranks, d.op, 0, n, reinterpret_cast<int32_t*>(dst + off));
      else reduce_chunk(s, c.nranks, d.op, 0, n, reinterpret_cast<int64_t*>(dst + off));
    } else {
      if (c.rank == d.root) std::memcpy(s.stage[d.root], src + off, bytes);
      if (!barrier(c, &why)) return task_failed(c, d, why);
      if (c.rank != d.root) std::memcpy(dst + off, s.stage[d.root], bytes);
    }
    // nobody refills the slots before everyone has read them
    if (!barrier(c, &why)) return task_failed(c, d, why);
  }
  if (total == 0 && !barrier(c, &why)) return task_failed(c, d, why);
  return ACL_SUCCESS;
}

// The checks a real HCCL makes when a collective is called, then the task on the stream.
HcclResult enqueue(const char* fn, Comm& c, Desc d, void* send, void* recv, aclrtStream stream) {
  const size_t elem = dtype_size(d.dtype);
  const uint64_t bytes = d.count * elem;
  for (const auto& [which, p] : {std::pair<const char*, void*>{"sendBuf", send}, {"recvBuf", recv}}) {
    if (!p) return fail(HCCL_E_PTR, std::string(fn) + ": " + which + " is nullptr");
    int32_t device = -1;
    if (bytes && !fake_ascend_device_memory(p, bytes, &device)) {
      return fail(HCCL_E_PARA, std::string(fn) + ": " + which + " " + hex(p) + " (" + std::to_string(bytes) +
                                   " bytes) is not inside one aclrtMalloc block of device memory (a host pointer, "
                                   "freed memory, or past the block's end)");
    }
    if (bytes && device != c.device) {
      return fail(HCCL_E_PARA, std::string(fn) + ": " + which + " " + hex(p) + " is memory of device " +
                                   std::to_string(device) + ", the communicator's device is " +
                                   std::to_string(c.device));
    }
  }
  d.seq = c.next_seq++;
  Task* task = new Task{&c, d, send, recv};
  const void* buffers[2] = {send, recv};
  const uint64_t sizes[2] = {bytes, bytes};
  const aclError rc = fake_ascend_enqueue_host_task(stream, fn, buffers, sizes, 2, run_task, task,
                                                    [](void* u) { delete static_cast<Task*>(u); });
  if (rc != ACL_SUCCESS) {
    delete task;
    return fail(HCCL_E_RUNTIME, std::string(fn) + ": the runtime refused the task on stream " + hex(stream) +
                                    " (code " + std::to_string(rc) + ")");
  }
  return HCCL_SUCCESS;
}

}  // namespace

extern "C" {

FH_EXPORT HcclResult HcclGetRootInfo(HcclRootInfo* rootInfo) {
  if (!rootInfo) return fail(HCCL_E_PTR, "HcclGetRootInfo: rootInfo is nullptr");
  std::memset(rootInfo->internal, 0, sizeof rootInfo->internal);
  std::memcpy(rootInfo->internal, kMagic, sizeof kMagic);
  std::random_device rd;
  const uint64_t id = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(getpid());
  std::memcpy(rootInfo->internal + 8, &id, sizeof id);
  return HCCL_SUCCESS;
}

FH_EXPORT HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank,
                                          HcclComm* comm) {
  const char* fn = "HcclCommInitRootInfo";
  if (!rootInfo || !comm) return fail(HCCL_E_PTR, std::string(fn) + ": rootInfo or comm is nullptr");
  if (std::memcmp(rootInfo->internal, kMagic, sizeof kMagic) != 0) {
    return fail(HCCL_E_PARA, std::string(fn) + ": rootInfo was not filled by HcclGetRootInfo (or not received whole)");
  }
  if (nRanks == 0 || nRanks > kMaxRanks || rank >= nRanks) {
    return fail(HCCL_E_PARA, std::string(fn) + ": rank " + std::to_string(rank) + " of nRanks " +
                                 std::to_string(nRanks) + " (the fake allows 1 to " + std::to_string(kMaxRanks) + ")");
  }
  int32_t device = -1;
  if (aclrtGetDevice(&device) != ACL_SUCCESS) {
    return fail(HCCL_E_RUNTIME, std::string(fn) + ": no device is set on this thread (call aclrtSetDevice first)");
  }
  uint64_t id = 0;
  std::memcpy(&id, rootInfo->internal + 8, sizeof id);
  char name[64];
  std::snprintf(name, sizeof name, "/fake_hccl_%016" PRIx64, id);
  const int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
  if (fd < 0) return fail(HCCL_E_SYSCALL, std::string(fn) + ": shm_open(" + name + "): " + std::strerror(errno));
  if (ftruncate(fd, sizeof(Shared)) != 0) {
    close(fd);
    return fail(HCCL_E_SYSCALL, std::string(fn) + ": ftruncate(" + name + "): " + std::strerror(errno));
  }
  void* mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (mem == MAP_FAILED) return fail(HCCL_E_SYSCALL, std::string(fn) + ": mmap: " + std::strerror(errno));
  Shared* s = static_cast<Shared*>(mem);  // zero-filled by ftruncate: every atomic starts at 0
  uint32_t expected = 0;
  if (!s->nranks.compare_exchange_strong(expected, nRanks) && expected != nRanks) {
    s->failed.store(1);
    munmap(mem, sizeof(Shared));
    return fail(HCCL_E_PARA, std::string(fn) + ": rank " + std::to_string(rank) + " says nRanks " +
                                 std::to_string(nRanks) + ", another rank said " + std::to_string(expected));
  }
  if (s->joined[rank].exchange(1) != 0) {
    s->failed.store(1);
    munmap(mem, sizeof(Shared));
    return fail(HCCL_E_PARA, std::string(fn) + ": rank " + std::to_string(rank) + " joined this root info twice");
  }
  // Initialisation is collective: it returns when every rank has joined.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds());
  for (uint32_t r = 0; r < nRanks; ++r) {
    for (uint64_t spins = 0; s->joined[r].load() == 0; ++spins) {
      if (s->failed.load() || std::chrono::steady_clock::now() > deadline) {
        s->failed.store(1);
        munmap(mem, sizeof(Shared));
        return fail(HCCL_E_TIMEOUT, std::string(fn) + ": rank " + std::to_string(r) + " of " +
                                        std::to_string(nRanks) + " never joined (or another rank failed to)");
      }
      backoff(spins + 2000);
    }
  }
  shm_unlink(name);  // everyone has it mapped; the name is not needed any more
  Comm* c = new Comm;
  c->rank = rank;
  c->nranks = nRanks;
  c->device = device;
  c->shared = s;
  c->name = name;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_comms[c] = c;
  *comm = c;
  return HCCL_SUCCESS;
}

FH_EXPORT HcclResult HcclAllReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType,
                                   HcclReduceOp op, HcclComm comm, aclrtStream stream) {
  const char* fn = "HcclAllReduce";
  Comm* c = nullptr;
  if (HcclResult r = lookup(fn, comm, &c)) return r;
  const int32_t t = dataType;
  if (dtype_size(t) == 0) return fail(HCCL_E_PARA, std::string(fn) + ": dataType " + std::to_string(t) + " is not an HcclDataType");
  if (t == HCCL_DATA_TYPE_FP64 || t == HCCL_DATA_TYPE_UINT64 || t == HCCL_DATA_TYPE_UINT16 || t == HCCL_DATA_TYPE_UINT32 ||
      t == HCCL_DATA_TYPE_UINT8) {
    return fail(HCCL_E_NOT_SUPPORT, std::string(fn) + ": HCCL reduces no " + dtype_name(t) +
                                        " (INT8, INT16, INT32, INT64, FP16, FP32, BFP16)");
  }
  if (t != HCCL_DATA_TYPE_FP32 && t != HCCL_DATA_TYPE_INT32 && t != HCCL_DATA_TYPE_INT64) {
    return fail(HCCL_E_NOT_SUPPORT, std::string(fn) + ": " + dtype_name(t) +
                                        " is supported by HCCL but not by the fake (FP32, INT32, INT64)");
  }
  if (op < HCCL_REDUCE_SUM || op > HCCL_REDUCE_MIN) {
    return fail(HCCL_E_PARA, std::string(fn) + ": op " + std::to_string(static_cast<int>(op)) + " is not an HcclReduceOp");
  }
  return enqueue(fn, *c, Desc{0, kAllReduce, t, op, 0, count}, sendBuf, recvBuf, stream);
}

FH_EXPORT HcclResult HcclBroadcast(void* buf, uint64_t count, HcclDataType dataType, uint32_t root, HcclComm comm,
                                   aclrtStream stream) {
  const char* fn = "HcclBroadcast";
  Comm* c = nullptr;
  if (HcclResult r = lookup(fn, comm, &c)) return r;
  if (dtype_size(dataType) == 0) {
    return fail(HCCL_E_PARA, std::string(fn) + ": dataType " + std::to_string(static_cast<int>(dataType)) +
                                 " is not an HcclDataType");
  }
  if (root >= c->nranks) {
    return fail(HCCL_E_PARA, std::string(fn) + ": root " + std::to_string(root) + " is not a rank of " +
                                 std::to_string(c->nranks));
  }
  return enqueue(fn, *c, Desc{0, kBroadcast, dataType, 0, root, count}, buf, buf, stream);
}

FH_EXPORT HcclResult HcclCommDestroy(HcclComm comm) {
  Comm* c = nullptr;
  if (HcclResult r = lookup("HcclCommDestroy", comm, &c)) return r;
  std::lock_guard<std::mutex> lock(g_mutex);
  c->destroyed = true;  // the handle stays known, so a later use is recognised; queued tasks keep the mapping
  return HCCL_SUCCESS;
}

FH_EXPORT const char* HcclGetErrorString(HcclResult code) {
  switch (code) {
    case HCCL_SUCCESS: return "success";
    case HCCL_E_PARA: return "parameter error";
    case HCCL_E_PTR: return "empty pointer";
    case HCCL_E_MEMORY: return "memory error";
    case HCCL_E_INTERNAL: return "internal error";
    case HCCL_E_NOT_SUPPORT: return "not support feature";
    case HCCL_E_NOT_FOUND: return "not found specific resource";
    case HCCL_E_UNAVAIL: return "resource unavailable";
    case HCCL_E_SYSCALL: return "call system interface error";
    case HCCL_E_TIMEOUT: return "timeout";
    case HCCL_E_RUNTIME: return "call runtime api fail";
    default: return "unknown error";
  }
}

}  // extern "C"
