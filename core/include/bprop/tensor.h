// Tensor: a shape, a dtype and a reference-counted contiguous row-major buffer on one device.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "bprop/dtype.h"
#include "bprop/errors.h"
#include "bprop/shape.h"
#include "bprop/small_vector.h"

namespace bprop {

/// A device backend: an index into the registered set (bprop/device.h's register_backend). The CPU is always 0;
/// other backends (the Ascend NPU in native builds) get theirs when they register, so a new backend edits none of
/// the core's types.
struct Backend {
  uint8_t id = 0;
  static const Backend CPU;
  constexpr bool operator==(const Backend&) const = default;
};
inline constexpr Backend Backend::CPU{0};
/// At most this many backends are registered in one process (the CPU included).
inline constexpr int kMaxBackends = 8;
/// The registered name ("cpu", "ascend").
const char* backend_name(Backend b);

/// One device of a backend: the CPU, or device `index` of another backend ("ascend:1").
struct Device {
  Backend backend{};
  int index = 0;
  static Device cpu() { return {}; }
  bool operator==(const Device&) const = default;
  bool is_cpu() const { return backend == Backend::CPU; }
  /// "cpu", "ascend:0"
  std::string str() const;
};
/// "cpu", or a registered backend's name (or alias) with an optional ":N" ("ascend", "ascend:1", "npu:0"),
/// case-insensitive; ValueError naming the text and the devices this build has otherwise.
Device parse_device(const std::string& text);

/// A raw buffer. Host storages (the CPU's) hold elements the host reads: up to 64 bytes inside the object,
/// max_align_t aligned (no second allocation for scalars and tiny tensors: Storage::make sizes the object to them),
/// larger ones 64-byte aligned. A device storage's `data()` is a device address from that backend's allocator
/// (bprop/device.h), never dereferenced on the host. An abstract storage (a traced value: JAX's ShapedArray,
/// PyTorch's meta tensors) has a size and no memory at all. Live host storages are counted so bindings can report
/// memory use.
class Storage {
 public:
  /// Where the elements are: which of the three a storage is decides every "can the host read it" question.
  enum class Kind : uint8_t { Host, Device, Abstract };
  /// A storage of `bytes` on `device`, with the elements inside the object when they fit.
  static std::shared_ptr<Storage> make(size_t bytes, Device device);
  /// A storage of `bytes` with no memory: the value of a traced tensor.
  static std::shared_ptr<Storage> make_abstract(size_t bytes);
  /// A storage whose elements are allocated apart (any size).
  Storage(size_t bytes, Device device) : Storage(bytes, device, nullptr) {}
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Backend backend() const { return device_.backend; }
  Device device() const { return device_; }
  Kind kind() const { return kind_; }

 protected:
  /// `inline_data`: room for `bytes` host bytes inside the (derived) object, or null.
  Storage(size_t bytes, Device device, void* inline_data);

 private:
  struct AbstractTag {};
  Storage(size_t bytes, AbstractTag);
  void* data_;
  size_t bytes_;
  Device device_;
  Kind kind_ = Kind::Host;
  bool inline_ = false;
};

struct MemoryStats {
  int64_t storages;
  int64_t bytes;
  int64_t peak_bytes = 0;  // the most bytes live at once since reset_peak_memory(); 0 before the first call
};
/// Live host storages and their bytes in this process (or WASM heap).
MemoryStats memory_stats();
/// Starts (or restarts) the peak: from now on memory_stats().peak_bytes is the most host bytes live at once
/// (PyTorch's reset_peak_memory_stats). Off until first asked for: while on, every storage also updates one
/// counter shared by all threads.
void reset_peak_memory();

namespace autodiff {
struct Node;
/// A tensor's membership in one open grad level: the node that produced it there.
struct TraceEntry {
  int level;
  std::shared_ptr<Node> node;
};
}  // namespace autodiff

struct KernelResidual;

struct TensorImpl {
  // User-provided, so that make_shared's value-initialisation runs the member initialisers below instead of first
  // zeroing the whole object with a string store (a sixth of the cost of allocating a scalar's TensorImpl).
  TensorImpl() noexcept {}  // NOLINT(modernize-use-equals-default)
  Shape shape;
  int64_t numel = 0;
  std::shared_ptr<Storage> storage;
  size_t offset = 0;  // bytes from the start of the storage (views into a bucket or an arena)
  SmallVector<autodiff::TraceEntry, 2> trace;  // one entry per grad level this value is differentiated at
  DType dtype = DType::Float32;
  // Parameter fields (a Parameter is a Tensor whose impl carries a name). The name is out of line: every op's
  // output is a TensorImpl, and what a recorded op keeps decides how long a tape still fits in cache.
  bool requires_grad = false;
  bool is_parameter = false;
  std::unique_ptr<const std::string> name;
  /// What the kernel that computed this value kept beside it for its op's backward (FlashAttention's row
  /// log-sum-exp); null for almost every tensor. Never part of the value: a backward that finds none, or one
  /// made from other inputs, recomputes it.
  std::shared_ptr<const KernelResidual> residual;
  const std::string& param_name() const {
    static const std::string kNone;
    return name ? *name : kNone;
  }
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  /// Uninitialised tensor of shape/dtype on `device`. The shape is checked against bprop/limits.h (checked_numel)
  /// and a failed allocation is a MemoryError naming the shape and the bytes; `for_op`, when given, is the op
  /// whose output this is, named in those errors.
  static Tensor empty(const Shape& shape, DType dtype, Device device = {}, const std::string& for_op = {});
  /// A traced value: a shape and a dtype with no elements (is_abstract()); reading it is an error naming the trace.
  static Tensor abstract(const Shape& shape, DType dtype, const std::string& for_op = {});

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl_->shape; }
  int64_t dim() const { return static_cast<int64_t>(impl_->shape.size()); }
  int64_t numel() const { return impl_->numel; }
  DType dtype() const { return impl_->dtype; }
  Backend backend() const { return impl_->storage->backend(); }
  /// Where the elements are (the CPU for abstract tensors, which have none: ask is_abstract()).
  Device device() const { return impl_->storage->device(); }
  /// The three kinds of value a tensor can be, asked one way: its elements are in host memory (data<T>() reads
  /// them), in a device's memory (copy them with cpu() / to_vector()), or it has none (a traced value).
  bool on_host() const { return impl_->storage->kind() == Storage::Kind::Host; }
  bool on_device() const { return impl_->storage->kind() == Storage::Kind::Device; }
  bool is_abstract() const { return impl_->storage->kind() == Storage::Kind::Abstract; }
  size_t nbytes() const { return static_cast<size_t>(impl_->numel) * dtype_size(impl_->dtype); }

  /// The elements' address: host memory on the CPU, a device address on a device (read those with to_vector(),
  /// item() or cpu(), which copy).
  void* raw_data() { return static_cast<unsigned char*>(impl_->storage->data()) + impl_->offset; }
  const void* raw_data() const { return static_cast<const unsigned char*>(impl_->storage->data()) + impl_->offset; }
  /// The elements on the host; a ValueError for any other tensor: one on a device (read it with cpu() or
  /// to_vector()) or a traced one (no values).
  template <typename T> T* data() {
    if (!on_host()) [[unlikely]] refuse_host_access();
    return static_cast<T*>(raw_data());
  }
  template <typename T> const T* data() const {
    if (!on_host()) [[unlikely]] refuse_host_access();
    return static_cast<const T*>(raw_data());
  }

  /// Element values converted to T (any dtype to any arithmetic type).
  template <typename T> std::vector<T> to_vector() const;
  /// The only element of a one-element tensor, as double; ValueError otherwise.
  double item() const;

  /// A new tensor sharing this one's storage, with no autodiff history (used by kernels and the tape).
  Tensor detach() const;
  /// Same storage, another shape of the same element count (no autodiff: use ops::reshape for that).
  Tensor view(const Shape& shape) const;
  /// A copy with its own storage on the same device, no autodiff history.
  Tensor clone() const;
  /// This tensor's values on `device`: itself when already there, else a copy (no autodiff history; use
  /// ops for differentiable transfers). Copies to the host wait for the device's queued work.
  Tensor to(Device device) const;
  /// to(Device::cpu()): how the host reads a device tensor.
  Tensor cpu() const { return to(Device::cpu()); }

  std::string to_string(int max_elements = 64) const;

  TensorImpl* impl() const { return impl_.get(); }
  /// The residual the kernel computing this tensor kept (TensorImpl::residual), or null.
  const KernelResidual* residual() const { return impl_->residual.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool same(const Tensor& o) const { return impl_ == o.impl_; }

 private:
  [[noreturn]] void refuse_host_access() const;
  std::shared_ptr<TensorImpl> impl_;
};

/// Values a kernel computed beside its output for the op's backward, and the inputs they were computed from (weak
/// references: they keep no storage alive, and no other tensor can take their place while held), so that a backward
/// uses them only when its own inputs are those same tensors.
struct KernelResidual {
  std::string op;  // the op and the attributes the values depend on
  std::vector<std::weak_ptr<TensorImpl>> inputs;
  Tensor values;
  /// True when `ts` are the inputs the values were computed from (undefined ones matching undefined ones).
  bool computed_from(const std::vector<Tensor>& ts) const {
    if (ts.size() != inputs.size()) return false;
    for (size_t i = 0; i < ts.size(); ++i) {
      const std::shared_ptr<TensorImpl> held = inputs[i].lock();
      if (held.get() != (ts[i].defined() ? ts[i].impl() : nullptr)) return false;
    }
    return true;
  }
};

// ---- creation -------------------------------------------------------------------------------------------
Tensor tensor(const std::vector<double>& data, const Shape& shape, DType dtype = DType::Float32);
Tensor tensor_i32(const std::vector<int32_t>& data, const Shape& shape);
Tensor tensor_bool(const std::vector<bool>& data, const Shape& shape);
/// A 0-d tensor.
Tensor scalar(double value, DType dtype = DType::Float32);
Tensor full(const Shape& shape, double value, DType dtype = DType::Float32);
Tensor zeros(const Shape& shape, DType dtype = DType::Float32);
Tensor ones(const Shape& shape, DType dtype = DType::Float32);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
/// [start, stop) by step, like numpy.arange.
Tensor arange(double start, double stop, double step = 1.0, DType dtype = DType::Float32);
/// `num` evenly spaced points from start to stop inclusive.
Tensor linspace(double start, double stop, int64_t num, DType dtype = DType::Float32);
Tensor eye(int64_t n, DType dtype = DType::Float32);
/// Standard normal / uniform [low, high) from `seed`; the stream is identical on every platform.
Tensor randn(const Shape& shape, uint64_t seed, DType dtype = DType::Float32);
Tensor rand(const Shape& shape, uint64_t seed, double low = 0.0, double high = 1.0,
            DType dtype = DType::Float32);

/// Raw conversion between dtypes (no autodiff); use ops::cast for a differentiable one.
Tensor convert(const Tensor& t, DType dtype);

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace bprop
