#include "dist/grad_buckets.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace bprop::dist::detail {

GradBuckets::GradBuckets(const std::vector<Parameter>& params, int64_t bucket_bytes)
    : params_(params), bucket_of_(params.size()), offset_of_(params.size()), added_(params.size(), false) {
  // Reverse order: the backward finishes the last layers' gradients first.
  for (size_t k = params.size(); k-- > 0;) {
    const Parameter& p = params[k];
    const int64_t bytes = p.numel() * static_cast<int64_t>(dtype_size(p.dtype()));
    const bool fits = !buckets_.empty() && buckets_.back().dtype == p.dtype() &&
                      (buckets_.back().numel * static_cast<int64_t>(dtype_size(p.dtype())) + bytes <= bucket_bytes);
    if (!fits) buckets_.push_back(Bucket{p.dtype(), {}, 0, Tensor(), 0, nullptr, 0});
    Bucket& b = buckets_.back();
    bucket_of_[k] = buckets_.size() - 1;
    offset_of_[k] = b.numel;
    b.params.push_back(k);
    b.numel += p.numel();
  }
  for (auto& b : buckets_) b.buffer = Tensor::empty({b.numel}, b.dtype);
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
  const Tensor g = grad.dtype() == b.dtype ? grad : convert(grad, b.dtype);
  const size_t elem = dtype_size(b.dtype);
  std::memcpy(static_cast<char*>(b.buffer.raw_data()) + static_cast<size_t>(offset_of_[i]) * elem, g.raw_data(),
              g.nbytes());
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
    b.work = allreduce_async(b.buffer.raw_data(), b.numel, b.dtype, ReduceOp::Sum);
  }
}

// MPI moves a non-blocking collective forward only inside MPI calls: testing the buckets in flight whenever a
// gradient arrives keeps them moving during the backward.
void GradBuckets::poll() {
  for (size_t k = 0; k < next_launch_; ++k) {
    Bucket& b = buckets_[k];
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

std::vector<Tensor> GradBuckets::gradients() const {
  std::vector<Tensor> out;
  out.reserve(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    const Bucket& b = buckets_[bucket_of_[i]];
    Tensor g = Tensor::empty(params_[i].shape(), b.dtype);
    std::memcpy(g.raw_data(),
                static_cast<const char*>(b.buffer.raw_data()) + static_cast<size_t>(offset_of_[i]) * dtype_size(b.dtype),
                g.nbytes());
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace bprop::dist::detail
