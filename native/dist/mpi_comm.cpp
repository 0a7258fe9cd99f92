// The MPI implementation over MPI_COMM_WORLD: non-blocking collectives (MPI_Iallreduce, MPI_Ibcast,
// MPI_Ibarrier) that dist.cpp waits on by polling MPI_Test, so a rank that stops can never hang the others.
// The C API only: not the deprecated C++ bindings (whose symbols live in another library).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <vector>

#include "dist/communicator.h"

namespace bprop::dist::detail {
namespace {

// MPI counts are ints: larger buffers go as several operations.
constexpr int64_t kMaxCount = INT_MAX / 2;

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw ValueError(std::string("For 'dist', ") + call + " failed: " + std::string(text, static_cast<size_t>(len)));
}

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::Float32: return MPI_FLOAT;
    case DType::Float64: return MPI_DOUBLE;
    case DType::Int32: return MPI_INT32_T;
    default: throw DTypeError(std::string("For 'dist.allreduce', dtype ") + dtype_name(dtype) + " cannot be reduced");
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Max: return MPI_MAX;
    case ReduceOp::Min: return MPI_MIN;
    default: return MPI_SUM;
  }
}

class MpiRequests : public Request {
 public:
  std::vector<MPI_Request> reqs;
  bool test() override {
    int done = 0;
    check(MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
    return done != 0;
  }
};

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator() {
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
      // Open MPI's non-blocking allreduce (libnbc) picks, for large buffers, algorithms that take 2-3x as long
      // as its blocking MPI_Allreduce; Rabenseifner's reduce-scatter + allgather matches it (measured in
      // docs/distributed.md). An explicit setting in the environment or on the mpirun line wins.
      setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "3", /*overwrite=*/0);
      // Only the thread that called init talks to MPI (bprop's kernel threads never do).
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    }
    // Errors come back as codes (turned into bprop errors) rather than aborting inside the library.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    library_.assign(version, static_cast<size_t>(len));
    library_ = library_.substr(0, library_.find(','));  // "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4"
    while (!library_.empty() && (library_.back() == '\n' || library_.back() == ' ')) library_.pop_back();
  }

  std::string name() const override { return "mpi"; }
  std::string description() const override {
    return "MPI (" + library_ + "), rank " + std::to_string(rank_) + " of " + std::to_string(size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::unique_ptr<Request> iallreduce(void* data, int64_t count, DType dtype, ReduceOp op) override {
    auto r = std::make_unique<MpiRequests>();
    const MPI_Datatype type = mpi_type(dtype);
    const size_t elem = dtype_size(dtype);
    for (int64_t start = 0; start < count; start += kMaxCount) {
      const int n = static_cast<int>(std::min(kMaxCount, count - start));
      r->reqs.emplace_back();
      check(MPI_Iallreduce(MPI_IN_PLACE, static_cast<char*>(data) + static_cast<size_t>(start) * elem, n, type,
                           mpi_op(op), MPI_COMM_WORLD, &r->reqs.back()),
            "MPI_Iallreduce");
    }
    return r;
  }

  std::unique_ptr<Request> ibroadcast(void* data, int64_t bytes, int root) override {
    auto r = std::make_unique<MpiRequests>();
    for (int64_t start = 0; start < bytes; start += kMaxCount) {
      const int n = static_cast<int>(std::min(kMaxCount, bytes - start));
      r->reqs.emplace_back();
      check(MPI_Ibcast(static_cast<char*>(data) + start, n, MPI_BYTE, root, MPI_COMM_WORLD, &r->reqs.back()),
            "MPI_Ibcast");
    }
    return r;
  }

  std::unique_ptr<Request> ibarrier() override {
    auto r = std::make_unique<MpiRequests>();
    r->reqs.emplace_back();
    check(MPI_Ibarrier(MPI_COMM_WORLD, &r->reqs.back()), "MPI_Ibarrier");
    return r;
  }

  void finalize() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }

  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; this keeps the compiler and a broken launcher honest
  }

 private:
  int rank_ = 0;
  int size_ = 1;
  std::string library_;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator() { return std::make_unique<MpiCommunicator>(); }

}  // namespace bprop::dist::detail
