// bprop::dist: picks the implementation, sends device tensors to it or through the host, and waits on every
// collective under one watchdog.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "ascend/backend.h"
#include "bprop/context.h"
#include "bprop/device.h"
#include "bprop/ops.h"
#include "dist/communicator.h"

namespace bprop::dist {

namespace detail {
std::unique_ptr<Request> Communicator::iallreduce_device(Device device, void*, int64_t, DType, ReduceOp) {
  throw ValueError("For 'dist.allreduce', the " + name() + " implementation cannot reduce memory of " + device.str());
}
std::unique_ptr<Request> Communicator::ibroadcast_device(Device device, void*, int64_t, int) {
  throw ValueError("For 'dist.broadcast', the " + name() + " implementation cannot broadcast memory of " +
                   device.str());
}
}  // namespace detail

namespace {

struct State {
  std::unique_ptr<detail::Communicator> comm;
  Backend chosen = Backend::Auto;
  bool finalized = false;
  double timeout = -1.0;  // unset: BPROP_DIST_TIMEOUT or 300 s
};
State& state() {
  static State s;
  return s;
}

detail::Communicator& comm(const char* op) {
  State& s = state();
  if (!s.comm || s.finalized) {
    throw ValueError(std::string("For 'dist.") + op + "', bprop::dist is not initialised (call dist::init() first)" +
                     (s.finalized ? ": it was finalised" : ""));
  }
  return *s.comm;
}

class CommWork : public Work {
 public:
  CommWork(std::unique_ptr<detail::Request> r, std::string what) : req_(std::move(r)), what_(std::move(what)) {}
  bool test() override { return done_ || (done_ = req_->test()); }
  std::string what() const override { return what_; }

 private:
  std::unique_ptr<detail::Request> req_;
  std::string what_;
  bool done_ = false;
};

void wait_request(std::unique_ptr<detail::Request> r, std::string what) {
  CommWork(std::move(r), std::move(what)).wait();
}

// A device tensor the implementation cannot reach: a host copy travels, and is copied back once it has arrived.
class StagedWork : public Work {
 public:
  StagedWork(Tensor device, Tensor host, std::unique_ptr<Work> inner)
      : device_(std::move(device)), host_(std::move(host)), inner_(std::move(inner)) {}
  bool test() override {
    if (done_) return true;
    if (!inner_->test()) return false;
    copy_into(device_, host_);
    return done_ = true;
  }
  std::string what() const override { return inner_->what() + " (through the host, from " + device_.device().str() + ")"; }

 private:
  Tensor device_, host_;
  std::unique_ptr<Work> inner_;
  bool done_ = false;
};

bool on_host(const Tensor& t) { return t.on_host(); }

void check_tensors(const std::vector<Tensor>& tensors, const char* op) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (!t.defined()) throw ValueError(std::string("For 'dist.") + op + "', tensor " + std::to_string(i) + " is undefined");
    if (t.is_abstract()) {
      throw ValueError(std::string("For 'dist.") + op + "', tensor " + std::to_string(i) +
                       " is a traced value (collectives run eagerly, outside jit)");
    }
  }
}

}  // namespace

void Work::wait() {
  const double limit = timeout();
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t spins = 0;; ++spins) {
    if (test()) return;
    // Spin briefly (a collective between busy ranks finishes soon), then sleep between polls: ranks often share
    // cores with each other or other work, and a spinning rank would take the core from the rank it waits for.
    // MPI moves the operation only inside test(), so the sleeps stay short.
    if (spins > 4096) std::this_thread::sleep_for(std::chrono::microseconds(spins > 65536 ? 200 : 20));
    if ((spins & 255) == 0 && limit > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > limit) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.0f", limit);
      abort(3, what() + " made no progress for " + buf +
                   " s: another rank stopped, hung or took a different path (BPROP_DIST_TIMEOUT sets the limit)");
    }
  }
}

bool mpi_built() {
#ifdef BPROP_WITH_MPI
  return true;
#else
  return false;
#endif
}

std::string launcher_variable() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(v)) return v;
  }
  return {};
}

void init(Backend backend) {
  State& s = state();
  Backend use = backend;
  if (use == Backend::Auto) {
    // As MindSpore and torch_npu do: on an NPU the job's collectives are HCCL's, launched like MPI's.
    const bool npu = get_context().device.backend == bprop::ascend::backend();
    use = launcher_variable().empty() ? Backend::Local : npu ? Backend::HCCL : Backend::MPI;
  }
  if (use == Backend::MPI && !mpi_built()) detail::make_mpi_communicator();  // says how to get MPI
  if (use == Backend::HCCL && !mpi_built()) detail::make_hccl_communicator();  // says HCCL needs MPI
  if (use == Backend::HCCL && launcher_variable().empty()) {
    throw ValueError("For 'dist.init', HCCL runs one process per NPU, started by mpirun (mpirun -np 8 ...), and "
                     "no launcher started this one (none of OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK, PMI_RANK is "
                     "set)");
  }
  if (s.comm && !s.finalized) {
    if (backend == Backend::Auto || backend == s.chosen) return;
    throw ValueError(std::string("For 'dist.init', bprop::dist already runs the ") + s.comm->name() +
                     " implementation");
  }
  if (s.finalized) throw ValueError("For 'dist.init', bprop::dist was finalised and cannot start again");
  s.comm = use == Backend::MPI    ? detail::make_mpi_communicator()
           : use == Backend::HCCL ? detail::make_hccl_communicator()
                                  : detail::make_local_communicator();
  s.chosen = use;
}

bool initialized() { return state().comm != nullptr && !state().finalized; }
std::string backend_name() { return comm("backend_name").name(); }
std::string describe() { return comm("describe").description(); }
int rank() { return comm("rank").rank(); }
int size() { return comm("size").size(); }

std::unique_ptr<Work> allreduce_async(void* data, int64_t count, DType dtype, ReduceOp op) {
  if (op == ReduceOp::Mean) throw ValueError("For 'dist.allreduce_async', use Sum and divide: Mean is not a wire op");
  detail::Communicator& c = comm("allreduce");
  std::string what = "allreduce of " +
                     std::to_string(count * static_cast<int64_t>(dtype_size(dtype))) + " bytes";
  return std::make_unique<CommWork>(c.iallreduce(data, count, dtype, op), std::move(what));
}

std::unique_ptr<Work> allreduce_async(const Tensor& buffer, ReduceOp op) {
  if (op == ReduceOp::Mean) throw ValueError("For 'dist.allreduce_async', use Sum and divide: Mean is not a wire op");
  detail::Communicator& c = comm("allreduce");
  Tensor x = buffer;
  if (on_host(x)) return allreduce_async(x.raw_data(), x.numel(), x.dtype(), op);
  if (c.on_device(x.device(), x.dtype(), /*reduce=*/true)) {
    std::string what = "allreduce of " + std::to_string(x.nbytes()) + " bytes on " + x.device().str();
    return std::make_unique<CommWork>(c.iallreduce_device(x.device(), x.raw_data(), x.numel(), x.dtype(), op),
                                      std::move(what));
  }
  Tensor host = x.cpu();  // waits for the queued work that computes it
  auto inner = allreduce_async(host.raw_data(), host.numel(), host.dtype(), op);
  return std::make_unique<StagedWork>(x, host, std::move(inner));
}

void allreduce(const std::vector<Tensor>& tensors, ReduceOp op) {
  detail::Communicator& c = comm("allreduce");
  check_tensors(tensors, "allreduce");
  if (op == ReduceOp::Mean) {
    for (const auto& t : tensors) {
      if (!is_float(t.dtype())) {
        throw DTypeError(std::string("For 'dist.allreduce', Mean needs float tensors, got ") + dtype_name(t.dtype()));
      }
    }
  }
  std::vector<std::unique_ptr<Work>> works;
  for (const auto& t : tensors) works.push_back(allreduce_async(t, op == ReduceOp::Mean ? ReduceOp::Sum : op));
  for (auto& w : works) w->wait();
  if (op == ReduceOp::Mean && c.size() > 1) {
    const double inv = 1.0 / c.size();
    for (const auto& t : tensors) {
      Tensor x = t;
      if (!on_host(x)) {
        copy_into(x, x.detach() * inv);  // on the device, in its stream order
      } else if (x.dtype() == DType::Float32) {
        float* p = x.data<float>();
        for (int64_t i = 0; i < x.numel(); ++i) p[i] = static_cast<float>(p[i] * inv);
      } else {
        double* p = x.data<double>();
        for (int64_t i = 0; i < x.numel(); ++i) p[i] *= inv;
      }
    }
  }
}

void broadcast(const std::vector<Tensor>& tensors, int root) {
  detail::Communicator& c = comm("broadcast");
  check_tensors(tensors, "broadcast");
  if (root < 0 || root >= c.size()) {
    throw ValueError("For 'dist.broadcast', root " + std::to_string(root) + " is not a rank of " +
                     std::to_string(c.size()));
  }
  for (const auto& t : tensors) {
    Tensor x = t;
    const int64_t bytes = static_cast<int64_t>(x.nbytes());
    const std::string what = "broadcast of " + std::to_string(bytes) + " bytes from rank " + std::to_string(root);
    if (on_host(x)) {
      wait_request(c.ibroadcast(x.raw_data(), bytes, root), what);
    } else if (c.on_device(x.device(), x.dtype(), /*reduce=*/false)) {
      wait_request(c.ibroadcast_device(x.device(), x.raw_data(), bytes, root), what + " on " + x.device().str());
    } else {
      Tensor host = x.cpu();
      wait_request(c.ibroadcast(host.raw_data(), bytes, root), what + " (through the host)");
      if (c.rank() != root) copy_into(x, host);
    }
  }
}

void barrier() {
  detail::Communicator& c = comm("barrier");
  wait_request(c.ibarrier(), "barrier");
}

void finalize() {
  State& s = state();
  if (s.comm && !s.finalized) s.comm->finalize();
  s.finalized = s.comm != nullptr;
}

void abort(int code, const std::string& why) {
  State& s = state();
  const int r = s.comm && !s.finalized ? s.comm->rank() : 0;
  std::fprintf(stderr, "bprop dist: rank %d: %s\n", r, why.c_str());
  std::fflush(stderr);
  if (s.comm && !s.finalized) s.comm->abort(code);
  std::_Exit(code);
}

void set_timeout(double seconds) { state().timeout = seconds; }

double timeout() {
  State& s = state();
  if (s.timeout < 0) {
    s.timeout = 300.0;
    if (const char* env = std::getenv("BPROP_DIST_TIMEOUT")) {
      char* end = nullptr;
      const double v = std::strtod(env, &end);
      if (end != env) s.timeout = v;
    }
  }
  return s.timeout;
}

}  // namespace bprop::dist
