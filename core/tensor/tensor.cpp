#include "bprop/tensor.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <ostream>
#include <vector>

#include "bprop/device.h"
#include "bprop/limits.h"
#include "bprop/pool.h"
#include "tensor/buffer_cache.h"
#include "tensor/format.h"
#include "bprop/random.h"
#include "graph/trace.h"

namespace bprop {
namespace {

// Live host storages, counted per thread: a small op creates and frees a couple of storages, and a locked
// read-modify-write of shared counters for each cost about a tenth of such a call. A thread's counters are
// atomics written only by that thread (plain loads and stores, no lock prefix), so memory_stats() may read them
// from any thread; an exiting thread folds its counts into `retired`. Counts can go negative on one thread when
// another frees its storages; the sum is what is live.
struct StorageCounts {
  std::atomic<int64_t> storages{0};
  std::atomic<int64_t> bytes{0};
};

struct CountRegistry {
  std::mutex mu;
  std::vector<const StorageCounts*> threads;
  StorageCounts retired;  // exited threads, and storages freed after their thread's counters are gone
};

CountRegistry& count_registry() {
  static auto* registry = new CountRegistry;  // never destroyed: storages outlive static destructors
  return *registry;
}

// This thread's counts. Constant-initialised, so reading them needs no guard; what has a constructor and a
// destructor is the registration below, touched once, on the thread's first storage.
thread_local StorageCounts t_counts;
// True while t_counts is registered. Cleared again when the thread's registration is destroyed: storages freed
// after that (thread-exit and static destructors) are counted in `retired`. Plain bools have no destructor, so
// they stay readable to the end.
thread_local bool t_counts_registered = false;
thread_local bool t_counts_gone = false;

struct ThreadRegistration {
  ThreadRegistration() {
    CountRegistry& r = count_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.threads.push_back(&t_counts);
    t_counts_registered = true;
  }
  ~ThreadRegistration() {
    t_counts_registered = false;
    t_counts_gone = true;
    CountRegistry& r = count_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.retired.storages.fetch_add(t_counts.storages.load(std::memory_order_relaxed), std::memory_order_relaxed);
    r.retired.bytes.fetch_add(t_counts.bytes.load(std::memory_order_relaxed), std::memory_order_relaxed);
    std::erase(r.threads, &t_counts);
  }
};
thread_local ThreadRegistration t_registration;

// The peak, counted only after reset_peak_memory(): live bytes in one shared counter (the per-thread counts above
// cannot give the maximum of their sum), and the most it has held.
std::atomic<bool> g_peak_tracking{false};
std::atomic<int64_t> g_tracked_bytes{0};
std::atomic<int64_t> g_peak_bytes{0};

void track_peak(int64_t bytes) {
  const int64_t live = g_tracked_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  int64_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (live > peak && !g_peak_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

void count_storage(int64_t n, int64_t bytes) {
  if (g_peak_tracking.load(std::memory_order_relaxed)) [[unlikely]] track_peak(bytes);
  if (!t_counts_registered) [[unlikely]] {
    if (t_counts_gone) {
      StorageCounts& r = count_registry().retired;
      r.storages.fetch_add(n, std::memory_order_relaxed);
      r.bytes.fetch_add(bytes, std::memory_order_relaxed);
      return;
    }
    [[maybe_unused]] const ThreadRegistration& registered = t_registration;  // constructs it: registers t_counts
  }
  StorageCounts& c = t_counts;
  c.storages.store(c.storages.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  c.bytes.store(c.bytes.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
}

}  // namespace

namespace {

// A storage with room for N bytes of elements inside it. Scalars and tiny tensors are most of what a long chain of
// small ops allocates, so they get the smallest object that holds them (48 bytes for up to 16).
template <size_t N>
struct InlineStorage final : Storage {
  InlineStorage(size_t bytes, Device device) : Storage(bytes, device, room) {}
  alignas(std::max_align_t) unsigned char room[N];
};

}  // namespace

std::shared_ptr<Storage> Storage::make(size_t bytes, Device device) {
  if (device.is_cpu()) {
    if (bytes <= 16) return pool::make_shared<InlineStorage<16>>(bytes, device);
    if (bytes <= 64) return pool::make_shared<InlineStorage<64>>(bytes, device);
  }
  return pool::make_shared<Storage>(bytes, device);
}

std::shared_ptr<Storage> Storage::make_abstract(size_t bytes) {
  return std::shared_ptr<Storage>(new Storage(bytes, AbstractTag{}));
}

Storage::Storage(size_t bytes, AbstractTag) : data_(nullptr), bytes_(bytes), kind_(Kind::Abstract) {}

Storage::Storage(size_t bytes, Device device, void* inline_data) : bytes_(bytes), device_(device) {
  if (inline_data) {  // (only host storages are made with room inside)
    data_ = inline_data;
    inline_ = true;
  } else {
    DeviceBackend& backend = device_backend(device.backend);
    data_ = backend.allocate(device.index, bytes);
    if (!backend.host_memory()) {  // device memory, not counted with the host's
      kind_ = Kind::Device;
      detail::note_device_use();
      return;
    }
  }
  count_storage(1, static_cast<int64_t>(bytes));
}

Storage::~Storage() {
  if (kind_ == Kind::Abstract) return;
  if (!inline_) device_backend(device_.backend).release(device_.index, data_, bytes_);
  if (kind_ == Kind::Host) count_storage(-1, -static_cast<int64_t>(bytes_));
}

MemoryStats memory_stats() {
  CountRegistry& r = count_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  MemoryStats total{r.retired.storages.load(std::memory_order_relaxed), r.retired.bytes.load(std::memory_order_relaxed)};
  for (const StorageCounts* c : r.threads) {
    total.storages += c->storages.load(std::memory_order_relaxed);
    total.bytes += c->bytes.load(std::memory_order_relaxed);
  }
  if (g_peak_tracking.load(std::memory_order_relaxed)) total.peak_bytes = g_peak_bytes.load(std::memory_order_relaxed);
  return total;
}

void reset_peak_memory() {
  g_peak_tracking.store(false, std::memory_order_relaxed);
  const int64_t live = memory_stats().bytes;
  g_tracked_bytes.store(live, std::memory_order_relaxed);
  g_peak_bytes.store(live, std::memory_order_relaxed);
  g_peak_tracking.store(true, std::memory_order_seq_cst);
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device, const std::string& for_op) {
  const int64_t numel = checked_numel(shape, dtype, for_op);
  const size_t bytes = static_cast<size_t>(numel) * dtype_size(dtype);  // within kMaxTensorBytes: no wrap
  auto impl = pool::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->dtype = dtype;
  impl->numel = numel;
  try {
    impl->storage = Storage::make(bytes, device);
  } catch (const std::bad_alloc&) {
    throw MemoryError((for_op.empty() ? std::string("A tensor") : "For '" + for_op + "', the output") + " of shape " +
                      shape_str(shape) + " " + dtype_name(dtype) + ": cannot allocate " + std::to_string(bytes) +
                      " bytes (out of memory)");
  }
  return Tensor(std::move(impl));
}

Tensor Tensor::abstract(const Shape& shape, DType dtype, const std::string& for_op) {
  const int64_t numel = checked_numel(shape, dtype, for_op);
  auto impl = pool::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->dtype = dtype;
  impl->numel = numel;
  impl->storage = Storage::make_abstract(static_cast<size_t>(numel) * dtype_size(dtype));
  return Tensor(std::move(impl));
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  if (is_abstract()) graph::throw_no_value("to_vector()");
  if (on_device()) return cpu().to_vector<T>();
  std::vector<T> out(static_cast<size_t>(numel()));
  visit_storage_dtype(dtype(), [&]<typename S>() {
    const S* p = data<S>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = convert_element<T>(p[i]);
  });
  return out;
}
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<int32_t> Tensor::to_vector<int32_t>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
template std::vector<uint8_t> Tensor::to_vector<uint8_t>() const;

double Tensor::item() const {
  if (is_abstract()) graph::throw_no_value("item()");
  if (numel() != 1) {
    throw ValueError("item: the tensor has " + std::to_string(numel()) + " elements of shape " + shape_str(shape()) +
                     ", expected exactly one");
  }
  if (on_device()) return cpu().item();
  return visit_storage_dtype(dtype(), [&]<typename S>() { return convert_element<double>(data<S>()[0]); });
}

Tensor Tensor::detach() const {
  auto impl = pool::make_shared<TensorImpl>();
  impl->shape = impl_->shape;
  impl->dtype = impl_->dtype;
  impl->numel = impl_->numel;
  impl->storage = impl_->storage;
  impl->offset = impl_->offset;
  return Tensor(std::move(impl));
}

Tensor Tensor::view(const Shape& shape) const {
  if (shape_numel(shape) != numel()) {
    throw ShapeError("view: cannot view " + shape_str(this->shape()) + " as " + shape_str(shape));
  }
  Tensor t = detach();
  t.impl_->shape = shape;
  return t;
}

Tensor Tensor::clone() const {
  if (is_abstract()) graph::throw_no_value("clone()");
  Tensor t = empty(shape(), dtype(), device());
  if (on_host()) std::memcpy(t.raw_data(), raw_data(), nbytes());
  else device_backend(backend()).copy_on_device(device().index, t.raw_data(), raw_data(), nbytes());
  return t;
}

namespace {
void format_value(std::string& out, DType dt, const void* p, int64_t i) {
  switch (dt) {
    case DType::Float32: out += format_g(static_cast<const float*>(p)[i]); break;
    case DType::Float64: out += format_g(static_cast<const double*>(p)[i]); break;
    case DType::Int32: out += std::to_string(static_cast<const int32_t*>(p)[i]); break;
    case DType::Bool: out += static_cast<const bool*>(p)[i] ? "true" : "false"; break;
    case DType::Float16: out += format_g(static_cast<float>(static_cast<const Half*>(p)[i])); break;
    case DType::BFloat16: out += format_g(static_cast<float>(static_cast<const BFloat16*>(p)[i])); break;
  }
}

// Nested brackets, eliding the middle of long tensors.
void format_nested(std::string& out, const Tensor& t, size_t dim, int64_t offset, const std::vector<int64_t>& strides,
                   int64_t edge) {
  if (dim == t.shape().size()) {
    format_value(out, t.dtype(), t.raw_data(), offset);
    return;
  }
  out += '[';
  const int64_t n = t.shape()[dim];
  for (int64_t i = 0; i < n; ++i) {
    if (n > 2 * edge && i == edge) {
      out += ", ...";
      i = n - edge - 1;
      continue;
    }
    if (i) out += ", ";
    format_nested(out, t, dim + 1, offset + i * strides[dim], strides, edge);
  }
  out += ']';
}
}  // namespace

std::string Tensor::to_string(int max_elements) const {
  if (!defined()) return "Tensor(undefined)";
  std::string out = "Tensor(shape=" + shape_str(shape()) + ", dtype=" + dtype_name(dtype()) + ", ";
  if (is_abstract()) return out + "traced)";  // (no values while tracing)
  if (on_device()) {
    std::string host = cpu().to_string(max_elements);
    host.insert(host.size() - 1, ", device=" + device().str());
    return host;
  }
  const int64_t edge = numel() > max_elements ? 3 : max_elements;
  format_nested(out, *this, 0, 0, row_major_strides(shape()), edge);
  out += ')';
  return out;
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

// ---- creation -------------------------------------------------------------------------------------------

namespace {
template <typename Gen>
Tensor fill_with(const Shape& shape, DType dtype, Gen gen) {
  Tensor t = Tensor::empty(shape, dtype);
  visit_storage_dtype(dtype, [&]<typename T>() {
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = convert_element<T>(gen(i));
  });
  return t;
}
}  // namespace

Tensor tensor(const std::vector<double>& data, const Shape& shape, DType dtype) {
  if (static_cast<int64_t>(data.size()) != shape_numel(shape)) {
    throw ShapeError("tensor: " + std::to_string(data.size()) + " values do not fill shape " + shape_str(shape) +
                     " (" + std::to_string(shape_numel(shape)) + " elements)");
  }
  return fill_with(shape, dtype, [&](int64_t i) { return data[static_cast<size_t>(i)]; });
}

Tensor tensor_i32(const std::vector<int32_t>& data, const Shape& shape) {
  if (static_cast<int64_t>(data.size()) != shape_numel(shape)) {
    throw ShapeError("tensor: " + std::to_string(data.size()) + " values do not fill shape " + shape_str(shape));
  }
  return fill_with(shape, DType::Int32, [&](int64_t i) { return data[static_cast<size_t>(i)]; });
}

Tensor tensor_bool(const std::vector<bool>& data, const Shape& shape) {
  if (static_cast<int64_t>(data.size()) != shape_numel(shape)) {
    throw ShapeError("tensor: " + std::to_string(data.size()) + " values do not fill shape " + shape_str(shape));
  }
  return fill_with(shape, DType::Bool, [&](int64_t i) { return data[static_cast<size_t>(i)]; });
}

Tensor scalar(double value, DType dtype) { return full({}, value, dtype); }
Tensor full(const Shape& shape, double value, DType dtype) {
  return fill_with(shape, dtype, [&](int64_t) { return value; });
}
Tensor zeros(const Shape& shape, DType dtype) { return full(shape, 0.0, dtype); }
Tensor ones(const Shape& shape, DType dtype) { return full(shape, 1.0, dtype); }
Tensor zeros_like(const Tensor& t) { return on_device_of(t, zeros(t.shape(), t.dtype())); }
Tensor ones_like(const Tensor& t) { return on_device_of(t, ones(t.shape(), t.dtype())); }

Tensor arange(double start, double stop, double step, DType dtype) {
  if (step == 0.0) throw ValueError("arange: 'step' must not be zero");
  if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step)) {
    throw ValueError("arange: start, stop and step must be finite, got " + format_number(start) + ", " +
                     format_number(stop) + ", " + format_number(step));
  }
  const double n = std::ceil((stop - start) / step);
  // Compared as a double before converting: a count past int64 has no int64 value.
  if (n > static_cast<double>(kMaxElements)) {
    throw MemoryError("arange: [" + format_number(start) + ", " + format_number(stop) + ") by " + format_number(step) +
                      " holds " + format_number(n) + " values, more than the limit of " + std::to_string(kMaxElements) +
                      " elements in this build");
  }
  const int64_t count = n > 0 ? static_cast<int64_t>(n) : 0;
  return fill_with({count}, dtype, [&](int64_t i) { return start + static_cast<double>(i) * step; });
}

Tensor linspace(double start, double stop, int64_t num, DType dtype) {
  if (num < 0) throw ValueError("linspace: 'num' must be non-negative, got " + std::to_string(num));
  const double step = num > 1 ? (stop - start) / static_cast<double>(num - 1) : 0.0;
  return fill_with({num}, dtype, [&](int64_t i) { return i == num - 1 ? stop : start + static_cast<double>(i) * step; });
}

Tensor eye(int64_t n, DType dtype) {
  return fill_with({n, n}, dtype, [&](int64_t i) { return i / n == i % n ? 1.0 : 0.0; });
}

namespace {
// Random tensors made while tracing would be frozen into the graph as constants: every replay would repeat them.
void refuse_while_tracing(const char* fn) {
  if (graph::tracing()) {
    throw ValueError(std::string("For 'jit', ") + fn + " inside a traced function would be frozen into the graph "
                     "(every call would repeat the same numbers): make the random tensor outside and pass it in, or draw it "
                     "with ops::random_normal / ops::random_uniform from a key tensor (drawn anew at every call)");
  }
}
}  // namespace

Tensor randn(const Shape& shape, uint64_t seed, DType dtype) {
  refuse_while_tracing("randn");
  if (!is_float(dtype)) throw DTypeError("randn: dtype must be float32 or float64, got " + std::string(dtype_name(dtype)));
  Random rng(seed);
  return fill_with(shape, dtype, [&](int64_t) { return rng.normal(); });
}

Tensor rand(const Shape& shape, uint64_t seed, double low, double high, DType dtype) {
  refuse_while_tracing("rand");
  if (!is_float(dtype)) throw DTypeError("rand: dtype must be float32 or float64, got " + std::string(dtype_name(dtype)));
  Random rng(seed);
  return fill_with(shape, dtype, [&](int64_t) { return low + (high - low) * rng.uniform(); });
}

Tensor convert(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t.detach();
  if (t.is_abstract()) graph::throw_no_value("a raw conversion (convert)");
  if (t.on_device()) return convert(t.cpu(), dtype).to(t.device());
  Tensor out = Tensor::empty(t.shape(), dtype);
  visit_storage_dtype(t.dtype(), [&]<typename S>() {
    visit_storage_dtype(dtype, [&]<typename D>() {
      const S* src = t.data<S>();
      D* dst = out.data<D>();
      for (int64_t i = 0; i < t.numel(); ++i) dst[i] = convert_element<D>(src[i]);
    });
  });
  return out;
}

}  // namespace bprop
