// The fake libhccl.so against the fake CANN: each test forks its ranks (one fake device each, as one process per
// NPU on a real host) from a root info made in the parent, and every rank must exit 0.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "fake_ascend/fake_acl.h"
#include "fake_hccl/hccl.h"

namespace {

// A failed check in a rank: its message on stderr, exit status 1.
#define RANK_CHECK(cond, ...)                                 \
  do {                                                        \
    if (!(cond)) {                                            \
      std::fprintf(stderr, "rank check failed: " __VA_ARGS__); \
      std::fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__); \
      return 1;                                               \
    }                                                         \
  } while (0)

struct Rank {
  int rank = 0;
  aclrtStream stream = nullptr;
  HcclComm comm = nullptr;
};

// Forks `n` ranks running body(rank) (after aclInit, aclrtSetDevice(rank) and a stream); the exit statuses.
std::vector<int> run_ranks(int n, const std::function<int(Rank&, const HcclRootInfo&)>& body, bool init_comm = true,
                           double limit_s = 30.0) {
  HcclRootInfo info;
  EXPECT_EQ(HcclGetRootInfo(&info), HCCL_SUCCESS);
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      setenv("FAKE_ASCEND_DEVICES", "2", 1);
      Rank self;
      self.rank = r;
      int rc = aclInit(nullptr) == ACL_SUCCESS && aclrtSetDevice(r % 2) == ACL_SUCCESS &&
                       aclrtCreateStream(&self.stream) == ACL_SUCCESS
                   ? 0
                   : 1;
      if (rc == 0 && init_comm && HcclCommInitRootInfo(n, &info, r, &self.comm) != HCCL_SUCCESS) rc = 1;
      if (rc == 0) rc = body(self, info);
      std::fflush(stderr);
      _exit(rc);  // no exit-time reports from the fake: each body checks what it needs
    }
    pids.push_back(pid);
  }
  std::vector<int> status(n, -1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  for (int left = n; left > 0;) {
    for (int r = 0; r < n; ++r) {
      int st = 0;
      if (status[r] == -1 && waitpid(pids[r], &st, WNOHANG) == pids[r]) {
        status[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        --left;
      }
    }
    if (left && std::chrono::steady_clock::now() > deadline) {
      for (int r = 0; r < n; ++r) {
        if (status[r] == -1) {
          kill(pids[r], SIGKILL);
          waitpid(pids[r], nullptr, 0);
          status[r] = 124;  // hung
        }
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status;
}

template <typename T>
void* upload(const std::vector<T>& host) {
  void* dev = nullptr;
  if (aclrtMalloc(&dev, host.size() * sizeof(T), ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return nullptr;
  if (aclrtMemcpy(dev, host.size() * sizeof(T), host.data(), host.size() * sizeof(T), ACL_MEMCPY_HOST_TO_DEVICE)) {
    return nullptr;
  }
  return dev;
}

template <typename T>
std::vector<T> download(const void* dev, size_t n) {
  std::vector<T> host(n);
  aclrtMemcpy(host.data(), n * sizeof(T), dev, n * sizeof(T), ACL_MEMCPY_DEVICE_TO_HOST);
  return host;
}

std::string recent_error() {
  const char* m = aclGetRecentErrMsg();
  return m ? m : "";
}

TEST(FakeHccl, AllReduceAndBroadcastBetweenTwoProcesses) {
  const auto st = run_ranks(2, [](Rank& self, const HcclRootInfo&) -> int {
    const int r = self.rank;
    // More than one 256 KiB chunk of the shared segment.
    const size_t n = 70000;
    std::vector<float> a(n);
    for (size_t i = 0; i < n; ++i) a[i] = static_cast<float>(i % 97) * (r == 0 ? 1.0f : -2.0f) + static_cast<float>(r);
    void* sum = upload(a);
    void* mx = upload(a);
    void* mn = upload(a);
    void* out = upload(std::vector<float>(n, 0.0f));
    void* ints = upload(std::vector<int32_t>{10 * r + 1, 10 * r + 2, 10 * r + 3});
    RANK_CHECK(sum && mx && mn && out && ints, "upload");
    RANK_CHECK(HcclAllReduce(sum, sum, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, self.comm, self.stream) == 0, "sum");
    RANK_CHECK(HcclAllReduce(mx, mx, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, self.comm, self.stream) == 0, "max");
    RANK_CHECK(HcclAllReduce(mn, out, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MIN, self.comm, self.stream) == 0, "min");
    RANK_CHECK(HcclBroadcast(ints, 3, HCCL_DATA_TYPE_INT32, 1, self.comm, self.stream) == 0, "broadcast");
    RANK_CHECK(aclrtSynchronizeStream(self.stream) == ACL_SUCCESS, "sync: %s", recent_error().c_str());
    const auto s = download<float>(sum, n), x = download<float>(mx, n), m = download<float>(out, n);
    const auto in_place_min = download<float>(mn, n);
    for (size_t i = 0; i < n; ++i) {
      const float v0 = static_cast<float>(i % 97), v1 = static_cast<float>(i % 97) * -2.0f + 1.0f;
      RANK_CHECK(s[i] == v0 + v1 && x[i] == std::max(v0, v1) && m[i] == std::min(v0, v1), "element %zu", i);
      RANK_CHECK(in_place_min[i] == a[i], "an out-of-place allreduce wrote its send buffer");
    }
    RANK_CHECK(download<int32_t>(ints, 3) == (std::vector<int32_t>{11, 12, 13}), "broadcast values");
    RANK_CHECK(HcclCommDestroy(self.comm) == HCCL_SUCCESS, "destroy");
    return 0;
  });
  EXPECT_EQ(st, (std::vector<int>{0, 0}));
}

TEST(FakeHccl, CollectivesRunOnlyAtStreamSynchronisation) {
  const auto st = run_ranks(2, [](Rank& self, const HcclRootInfo&) -> int {
    void* d = upload(std::vector<float>{1.0f, 2.0f});
    RANK_CHECK(HcclAllReduce(d, d, 2, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, self.comm, self.stream) == 0, "queue");
    // The task is queued: the other rank's values are not there yet (an unsynchronised read would be a hazard
    // the fake aborts on, so the stream is synchronised, after a pause that would let an eager fake run).
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    RANK_CHECK(aclrtSynchronizeStream(self.stream) == ACL_SUCCESS, "sync");
    RANK_CHECK(download<float>(d, 2) == (std::vector<float>{2.0f, 4.0f}), "values");
    return 0;
  });
  EXPECT_EQ(st, (std::vector<int>{0, 0}));
}

TEST(FakeHccl, RanksThatDisagreeFailOnEveryRankInsteadOfHanging) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto st = run_ranks(2, [](Rank& self, const HcclRootInfo&) -> int {
    const uint64_t count = self.rank == 0 ? 4 : 5;
    void* d = upload(std::vector<float>(5, 1.0f));
    RANK_CHECK(HcclAllReduce(d, d, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, self.comm, self.stream) == 0,
               "the call itself is accepted (the peer's count is not known yet)");
    RANK_CHECK(aclrtSynchronizeStream(self.stream) == 507000, "the synchronisation fails");
    const std::string msg = recent_error();
    RANK_CHECK(msg.find("the ranks disagree") != std::string::npos && msg.find("of 4 FP32") != std::string::npos &&
                   msg.find("of 5 FP32") != std::string::npos,
               "message: %s", msg.c_str());
    RANK_CHECK(download<float>(d, 5) == std::vector<float>(5, 1.0f), "no wrong answer was written");
    // The communicator is broken from then on: the next collective fails at once.
    RANK_CHECK(HcclAllReduce(d, d, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, self.comm, self.stream) == 0, "queue");
    RANK_CHECK(aclrtSynchronizeStream(self.stream) == 507000, "a broken communicator fails");
    return 0;
  });
  EXPECT_EQ(st, (std::vector<int>{0, 0}));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
}

TEST(FakeHccl, ARankThatNeverRunsItsPartTimesOut) {
  setenv("FAKE_HCCL_TIMEOUT", "1", 1);
  const auto st = run_ranks(2, [](Rank& self, const HcclRootInfo&) -> int {
    if (self.rank == 1) {
      std::this_thread::sleep_for(std::chrono::seconds(3));  // alive, but never queues the collective
      return 0;
    }
    void* d = upload(std::vector<float>(3, 1.0f));
    RANK_CHECK(HcclAllReduce(d, d, 3, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, self.comm, self.stream) == 0, "queue");
    RANK_CHECK(aclrtSynchronizeStream(self.stream) == 507000, "the synchronisation fails");
    const std::string msg = recent_error();
    RANK_CHECK(msg.find("timed out after 1 s waiting for rank 1") != std::string::npos, "message: %s", msg.c_str());
    return 0;
  });
  unsetenv("FAKE_HCCL_TIMEOUT");
  EXPECT_EQ(st, (std::vector<int>{0, 0}));
}

TEST(FakeHccl, RanksThatDisagreeOnTheSizeFailToInitialise) {
  const auto st = run_ranks(
      2,
      [](Rank& self, const HcclRootInfo& info) -> int {
        HcclComm comm = nullptr;
        const HcclResult r = HcclCommInitRootInfo(self.rank == 0 ? 2 : 3, &info, self.rank, &comm);
        RANK_CHECK(r == HCCL_E_PARA || r == HCCL_E_TIMEOUT, "got %d", static_cast<int>(r));
        return 0;
      },
      /*init_comm=*/false);
  EXPECT_EQ(st, (std::vector<int>{0, 0}));
}

TEST(FakeHccl, RefusesWhatARealHcclRefuses) {
  const auto st = run_ranks(
      1,
      [](Rank& self, const HcclRootInfo& info) -> int {
        void* d = upload(std::vector<float>(4, 1.0f));
        float host[4] = {1, 2, 3, 4};
        const auto ar = [&](void* buf, HcclDataType t, HcclComm c) {
          return HcclAllReduce(buf, buf, 4, t, HCCL_REDUCE_SUM, c, self.stream);
        };
        RANK_CHECK(ar(d, HCCL_DATA_TYPE_FP32, nullptr) == HCCL_E_PTR, "a communicator before initialisation");
        HcclRootInfo bogus;
        std::memset(&bogus, 0, sizeof bogus);
        HcclComm comm = nullptr;
        RANK_CHECK(HcclCommInitRootInfo(1, &bogus, 0, &comm) == HCCL_E_PARA, "a root info HCCL did not make");
        RANK_CHECK(HcclCommInitRootInfo(1, &info, 0, &comm) == HCCL_SUCCESS, "init");
        RANK_CHECK(ar(host, HCCL_DATA_TYPE_FP32, comm) == HCCL_E_PARA, "host memory");
        RANK_CHECK(ar(nullptr, HCCL_DATA_TYPE_FP32, comm) == HCCL_E_PTR, "nullptr");
        RANK_CHECK(ar(d, HCCL_DATA_TYPE_FP64, comm) == HCCL_E_NOT_SUPPORT, "FP64");
        RANK_CHECK(HcclBroadcast(d, 4, HCCL_DATA_TYPE_FP32, 1, comm, self.stream) == HCCL_E_PARA, "root 1 of 1");
        RANK_CHECK(HcclAllReduce(d, d, 5, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, self.stream) == HCCL_E_PARA,
                   "past the block's end");
        RANK_CHECK(aclrtSetDevice(1) == ACL_SUCCESS, "device 1");
        void* other = upload(std::vector<float>(4, 1.0f));
        RANK_CHECK(ar(other, HCCL_DATA_TYPE_FP32, comm) == HCCL_E_PARA, "memory of another device");
        RANK_CHECK(aclrtSetDevice(0) == ACL_SUCCESS, "device 0");
        RANK_CHECK(ar(d, HCCL_DATA_TYPE_FP32, comm) == HCCL_SUCCESS, "one rank");
        RANK_CHECK(aclrtSynchronizeStream(self.stream) == ACL_SUCCESS, "sync");
        RANK_CHECK(download<float>(d, 4) == std::vector<float>(4, 1.0f), "one rank's sum is its own values");
        RANK_CHECK(HcclCommDestroy(comm) == HCCL_SUCCESS, "destroy");
        RANK_CHECK(ar(d, HCCL_DATA_TYPE_FP32, comm) == HCCL_E_PARA, "after HcclCommDestroy");
        RANK_CHECK(HcclCommDestroy(comm) == HCCL_E_PARA, "destroyed twice");
        return 0;
      },
      /*init_comm=*/false);
  EXPECT_EQ(st, (std::vector<int>{0}));
}

}  // namespace
