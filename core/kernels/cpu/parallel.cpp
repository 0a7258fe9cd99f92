#include "kernels/cpu/parallel.h"

#include <exception>
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace bprop::cpu {

#if defined(__EMSCRIPTEN__)

int num_threads() { return 1; }
void set_num_threads(int) {}
void parallel_for_chunks(int64_t n, int64_t, const std::function<void(int64_t, int64_t)>& body) {
  if (n > 0) body(0, n);
}

#else

namespace {

// A small persistent pool: workers wait for a job, each takes one chunk, the caller runs chunk 0.
class Pool {
 public:
  explicit Pool(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this, i] { loop(i + 1); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      ++generation_;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int size() const { return static_cast<int>(threads_.size()) + 1; }

  void run(int chunks, const std::function<void(int)>& job) {
    std::unique_lock<std::mutex> run_lock(run_mu_);  // one parallel region at a time
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &job;
      chunks_ = chunks;
      pending_ = chunks - 1;
      ++generation_;
    }
    cv_.notify_all();
    job(0);
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  void loop(int index) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int)>* job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stop_) return;
        if (index >= chunks_) continue;
        job = job_;
      }
      (*job)(index);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_, run_mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int)>* job_ = nullptr;
  int chunks_ = 0;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

std::atomic<int> g_threads{std::max(1, static_cast<int>(std::thread::hardware_concurrency()))};
thread_local bool t_in_parallel = false;

Pool& pool() {
  static Pool p(std::max(0, static_cast<int>(std::thread::hardware_concurrency()) - 1));
  return p;
}

}  // namespace

int num_threads() { return g_threads.load(); }
void set_num_threads(int n) { g_threads.store(std::max(1, n)); }

void parallel_for_chunks(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  const int threads = std::min(num_threads(), pool().size());
  const int64_t chunks = std::min<int64_t>(threads, (n + grain - 1) / std::max<int64_t>(grain, 1));
  if (chunks <= 1 || t_in_parallel) {
    body(0, n);
    return;
  }
  const int64_t step = (n + chunks - 1) / chunks;
  // A chunk that throws (a scratch buffer out of memory) must neither escape a worker thread (terminate) nor
  // leave the caller while other chunks still run: the first error is kept and rethrown once all are done.
  std::exception_ptr error;
  std::mutex error_mu;
  pool().run(static_cast<int>(chunks), [&](int c) {
    t_in_parallel = true;
    const int64_t b = c * step, e = std::min(n, b + step);
    try {
      if (b < e) body(b, e);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mu);
      if (!error) error = std::current_exception();
    }
    t_in_parallel = false;
  });
  if (error) std::rethrow_exception(error);
}

#endif

}  // namespace bprop::cpu
