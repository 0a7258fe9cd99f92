#include "dist/grad_buckets.h"

#include <algorithm>
#include <string>

#include "bprop/device.h"

namespace bprop::dist::detail {

GradBuckets::GradBuckets(const std::vector<Parameter>& params, int64_t bucket_bytes)
    : params_(params), bucket_of_(params.size()), views_(params.size()), added_(params.size(), false) {
  std::vector<int64_t> offset_of(params.size());  // element offset in its bucket
  // Reverse order: the backward finishes the last layers' gradients first.
  for (size_t k = params.size(); k-- > 0;) {
    const Parameter& p = params[k];
    const int64_t bytes = p.numel() * static_cast<int64_t>(dtype_size(p.dtype()));
    const bool fits = !buckets_.empty() && buckets_.back().dtype == p.dtype() && buckets_.back().device == p.device() &&
                      (buckets_.back().numel * static_cast<int64_t>(dtype_size(p.dtype())) + bytes <= bucket_bytes);
    if (!fits) buckets_.push_back(Bucket{p.dtype(), p.device(), {}, 0, Tensor(), 0, nullptr, 0});
    Bucket& b = buckets_.back();
    bucket_of_[k] = buckets_.size() - 1;
    offset_of[k] = b.numel;
    b.params.push_back(k);
    b.numel += p.numel();
  }
  for (auto& b : buckets_) b.buffer = Tensor::empty({b.numel}, b.dtype, b.device);
  // Views share the bucket's storage at their byte offset (TensorImpl::offset): no copy out after the reduction.
  for (size_t i = 0; i < params.size(); ++i) {
    const Bucket& b = buckets_[bucket_of_[i]];
    auto impl = std::make_shared<TensorImpl>();
    impl->shape = params[i].shape();
    impl->dtype = b.dtype;
    impl->numel = params[i].numel();
    impl->storage = b.buffer.impl()->storage;
    impl->offset = b.buffer.impl()->offset + static_cast<size_t>(offset_of[i]) * dtype_size(b.dtype);
    views_[i] = Tensor(std::move(impl));
  }
}

void GradBuckets::begin_step(Clock::time_point t0) {
  t0_ = t0;
  std::fill(added_.begin(), added_.end(), false);
  for (auto& b : buckets_) {
    b.pending = b.params.size();
    b.work.reset();
  }
  next_launch_ = 0;
  timings_.clear();
}

void GradBuckets::add(size_t i, const Tensor& grad) {
  if (i >= params_.size() || added_[i]) return;
  const Parameter& p = params_[i];
  if (grad.shape() != p.shape()) {
    throw ShapeError("For 'DataParallel', the gradient of '" + p.name() + "' has shape " + shape_str(grad.shape()) +
                     " but the parameter has " + shape_str(p.shape()));
  }
  Bucket& b = buckets_[bucket_of_[i]];
  copy_into(views_[i], grad);  // converts the dtype; on a device, a copy queued on its stream
  added_[i] = true;
  --b.pending;
  launch_ready();
  poll();
}

void GradBuckets::add_missing_zeros() {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!added_[i]) add(i, zeros(params_[i].shape(), params_[i].dtype()));
  }
}

void GradBuckets::launch_ready() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    Bucket& b = buckets_[next_launch_++];
    b.timing = timings_.size();
    timings_.push_back({b.numel * static_cast<int64_t>(dtype_size(b.dtype)), now(), 0.0});
    b.work = allreduce_async(b.buffer, ReduceOp::Sum);
  }
}

// MPI moves a non-blocking collective forward only inside MPI calls: testing the buckets in flight whenever a
// gradient arrives keeps them moving during the backward. Buckets on a device are not tested here: their
// collective runs on the device's stream by itself, and testing it would wait for the stream.
void GradBuckets::poll() {
  for (size_t k = 0; k < next_launch_; ++k) {
    Bucket& b = buckets_[k];
    if (!b.device.is_cpu()) continue;
    if (b.work && timings_[b.timing].finished == 0.0 && b.work->test()) timings_[b.timing].finished = now();
  }
}

void GradBuckets::finish() {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!added_[i]) {
      throw ValueError("For 'DataParallel', the backward produced no gradient for parameter '" + params_[i].name() +
                       "'");
    }
  }
  launch_ready();
  for (size_t k = 0; k < buckets_.size(); ++k) {
    Bucket& b = buckets_[k];
    b.work->wait();
    if (timings_[b.timing].finished == 0.0) timings_[b.timing].finished = now();
  }
}

}  // namespace bprop::dist::detail
