// The HCCL implementation, as MindSpore and torch_npu run it: one process per NPU started by mpirun; rank 0 makes
// HCCL's root info and MPI carries it to the others (no rank table file); each rank binds NPU (local rank mod the
// device count) and makes it the context's device. Collectives on that NPU's memory are HCCL's, queued in place
// on the device's stream; host memory (and float64, which HCCL does not reduce) goes through MPI.
//
// Completion: the runtime wrapper has no events, so a device collective's test() synchronises the device's stream
// (it returns once the collective, and the work queued before it, has run). That wait happens inside HCCL and the
// runtime, which stop a collective that makes no progress themselves (HCCL_EXEC_TIMEOUT on a real NPU).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "ascend/backend.h"
#include "ascend/hccl_library.h"
#include "ascend/runtime.h"
#include "bprop/context.h"
#include "bprop/device.h"
#include "dist/communicator.h"

namespace bprop::dist::detail {
namespace {

using namespace bprop::ascend;

// This process's index among the ranks on its host: the launcher's variable, else MPI's shared-memory split.
int local_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    if (const char* s = std::getenv(v); s && *s) return std::atoi(s);
  }
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int r = 0;
  MPI_Comm_rank(local, &r);
  MPI_Comm_free(&local);
  return r;
}

void wait_here(Request& r) {
  while (!r.test()) std::this_thread::sleep_for(std::chrono::microseconds(50));
}

// A collective queued on the device's stream: finished once the stream has run it.
class StreamRequest : public Request {
 public:
  StreamRequest(DeviceState& device, std::string what) : device_(device), what_(std::move(what)) {}
  bool test() override {
    if (done_) return true;
    try {
      device_.synchronize();
    } catch (const Error& e) {
      throw ValueError("For 'dist', the HCCL " + what_ + " failed on ascend:" + std::to_string(device_.index()) +
                       ": " + e.what());
    }
    return done_ = true;
  }

 private:
  DeviceState& device_;
  std::string what_;
  bool done_ = false;
};

class HcclCommunicator : public Communicator {
 public:
  HcclCommunicator() : mpi_(make_mpi_communicator()) {
    HcclLibrary& lib = HcclLibrary::get();
    Runtime& rt = Runtime::get();
    if (rt.device_count() < 1) throw ValueError("For 'dist.init', HCCL needs an Ascend NPU, and this host has none");
    device_count_ = rt.device_count();
    const int index = local_rank() % device_count_;
    device_ = &rt.device(index);
    device_->bind();
    Context ctx = get_context();
    ctx.device = ascend::device(index);
    set_context(ctx);

    hccl::HcclRootInfo info{};
    if (mpi_->rank() == 0) check(lib.fn().HcclGetRootInfo(&info), "HcclGetRootInfo");
    auto shared = mpi_->ibroadcast(&info, sizeof info, 0);
    wait_here(*shared);
    check(lib.fn().HcclCommInitRootInfo(static_cast<uint32_t>(mpi_->size()), &info,
                                        static_cast<uint32_t>(mpi_->rank()), &comm_),
          "HcclCommInitRootInfo");
    library_ = lib.path();
  }

  std::string name() const override { return "hccl"; }
  std::string description() const override {
    const std::string mpi = mpi_->description();  // "MPI (library), rank r of n": the rank is said once, here
    return "HCCL (" + library_ + ") on ascend:" + std::to_string(device_->index()) + " (" +
           std::to_string(device_count_) + " devices on this host), rank " + std::to_string(rank()) + " of " +
           std::to_string(size()) + "; host tensors and float64 over " + mpi.substr(0, mpi.find(", rank"));
  }
  int rank() const override { return mpi_->rank(); }
  int size() const override { return mpi_->size(); }

  std::unique_ptr<Request> iallreduce(void* data, int64_t count, DType dtype, ReduceOp op) override {
    return mpi_->iallreduce(data, count, dtype, op);
  }
  std::unique_ptr<Request> ibroadcast(void* data, int64_t bytes, int root) override {
    return mpi_->ibroadcast(data, bytes, root);
  }
  std::unique_ptr<Request> ibarrier() override { return mpi_->ibarrier(); }

  bool on_device(Device device, DType dtype, bool reduce) const override {
    if (!comm_ || device != ascend::device(device_->index())) return false;
    return !reduce || dtype == DType::Float32 || dtype == DType::Int32;
  }

  std::unique_ptr<Request> iallreduce_device(Device device, void* data, int64_t count, DType dtype,
                                             ReduceOp op) override {
    require(device, "allreduce");
    const hccl::HcclDataType type = dtype == DType::Float32 ? hccl::HCCL_DATA_TYPE_FP32 : hccl::HCCL_DATA_TYPE_INT32;
    const hccl::HcclReduceOp hop = op == ReduceOp::Max   ? hccl::HCCL_REDUCE_MAX
                                   : op == ReduceOp::Min ? hccl::HCCL_REDUCE_MIN
                                                         : hccl::HCCL_REDUCE_SUM;
    device_->bind();
    check(HcclLibrary::get().fn().HcclAllReduce(data, data, static_cast<uint64_t>(count), type, hop, comm_,
                                                device_->stream()),
          "HcclAllReduce");
    return std::make_unique<StreamRequest>(*device_, "allreduce of " + std::to_string(count) + " elements");
  }

  std::unique_ptr<Request> ibroadcast_device(Device device, void* data, int64_t bytes, int root) override {
    require(device, "broadcast");
    device_->bind();
    // Bytes, whatever the dtype: a broadcast copies them unchanged.
    check(HcclLibrary::get().fn().HcclBroadcast(data, static_cast<uint64_t>(bytes), hccl::HCCL_DATA_TYPE_INT8,
                                                static_cast<uint32_t>(root), comm_, device_->stream()),
          "HcclBroadcast");
    return std::make_unique<StreamRequest>(*device_, "broadcast of " + std::to_string(bytes) + " bytes");
  }

  void finalize() override {
    if (comm_) {
      // Queued collectives finish before their communicator goes (and before the runtime resets the device).
      try {
        device_->synchronize();
      } catch (const Error&) {
      }
      HcclLibrary::get().fn().HcclCommDestroy(comm_);
      comm_ = nullptr;
    }
    mpi_->finalize();
  }

  [[noreturn]] void abort(int code) override {
    mpi_->abort(code);
    std::_Exit(code);  // (not reached)
  }

 private:
  void check(hccl::HcclResult rc, const char* call) const {
    if (rc == hccl::HCCL_SUCCESS) return;
    throw ValueError(std::string("For 'dist', ") + call + " failed on rank " + std::to_string(mpi_->rank()) +
                     " (ascend:" + std::to_string(device_->index()) + ") with " +
                     HcclLibrary::get().describe(rc));
  }
  void require(Device device, const char* op) const {
    if (!comm_) throw ValueError(std::string("For 'dist.") + op + "', the HCCL communicator was finalised");
    if (device != ascend::device(device_->index())) {
      throw ValueError(std::string("For 'dist.") + op + "', the tensor lives on " + device.str() +
                       ", but this rank's HCCL communicator is on ascend:" + std::to_string(device_->index()));
    }
  }

  std::unique_ptr<Communicator> mpi_;
  DeviceState* device_ = nullptr;
  int device_count_ = 0;
  hccl::HcclComm comm_ = nullptr;
  std::string library_;
};

}  // namespace

std::unique_ptr<Communicator> make_hccl_communicator() { return std::make_unique<HcclCommunicator>(); }

}  // namespace bprop::dist::detail
