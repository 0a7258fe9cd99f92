#include "bprop/dist/data_parallel.h"
#include "bprop/nn/train.h"

#include <cstdint>
#include <string>

#include "bprop/dist.h"
#include "dist/grad_buckets.h"

namespace bprop::dist {

struct DataParallel::Buckets : detail::GradBuckets {
  using GradBuckets::GradBuckets;
};

namespace {

// "name shape dtype" of every parameter and state tensor, then the optimizer's parameter count.
std::string signature(const Cell& model, const optim::Optimizer& opt, int64_t* count) {
  std::string s;
  const auto named = model.parameters_and_names();
  for (const auto& [name, p] : named) s += name + " " + shape_str(p.shape()) + " " + dtype_name(p.dtype()) + "; ";
  s += "optimizer " + std::to_string(opt.parameters().size());
  *count = static_cast<int64_t>(named.size());
  return s;
}

// FNV-1a, cut into two 31-bit halves that travel as int32.
std::pair<int32_t, int32_t> hash_halves(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return {static_cast<int32_t>(h & 0x7fffffff), static_cast<int32_t>((h >> 31) & 0x7fffffff)};
}

}  // namespace

DataParallel::DataParallel(std::shared_ptr<Cell> model, std::shared_ptr<optim::Optimizer> optimizer,
                           DataParallelOptions options)
    : model_(std::move(model)), optimizer_(std::move(optimizer)), options_(options) {
  if (!model_) throw ValueError("For 'DataParallel', no model was given");
  if (!optimizer_) throw ValueError("For 'DataParallel', no optimizer was given");
  if (!(options_.bucket_mb > 0.0)) {
    throw ValueError("For 'DataParallel', bucket_mb must be positive, got " + std::to_string(options_.bucket_mb));
  }
  if (!initialized()) throw ValueError("For 'DataParallel', call dist::init() first");
  rank_ = dist::rank();
  world_ = dist::size();
  check_same_parameters();
  broadcast_parameters();
  buckets_ = std::make_unique<Buckets>(optimizer_->parameters(),
                                       static_cast<int64_t>(options_.bucket_mb * 1024.0 * 1024.0));
}

DataParallel::~DataParallel() = default;

size_t DataParallel::bucket_count() const { return buckets_->size(); }

// Two tiny collectives of fixed size, whatever the models: rank 0's signature hash goes out, and every rank
// says whether its own matches and how many tensors it has. Only then do model-sized buffers travel.
void DataParallel::check_same_parameters() {
  int64_t count = 0;
  const std::string sig = signature(*model_, *optimizer_, &count);
  const auto [h1, h2] = hash_halves(sig);
  Tensor root_hash = tensor_i32({h1, h2}, {2});
  broadcast({root_hash}, 0);
  const bool same = root_hash.data<int32_t>()[0] == h1 && root_hash.data<int32_t>()[1] == h2;
  Tensor report = zeros({2, static_cast<int64_t>(world_)}, DType::Int32);
  report.data<int32_t>()[rank_] = same ? 0 : 1;
  report.data<int32_t>()[world_ + rank_] = static_cast<int32_t>(count);
  allreduce({report}, ReduceOp::Sum);
  const int32_t* r = report.data<int32_t>();
  std::string differ;
  for (int k = 0; k < world_; ++k) {
    if (r[k]) differ += (differ.empty() ? "" : ", ") + std::to_string(k) + " (" + std::to_string(r[world_ + k]) + " tensors)";
  }
  if (differ.empty()) return;
  throw ValueError("For 'DataParallel', the ranks do not hold the same model: the parameters (names, shapes, "
                   "dtypes, count) of rank(s) " + differ + " differ from rank 0's (" + std::to_string(r[world_]) +
                   " tensors); nothing was exchanged. This is rank " + std::to_string(rank_) + ": " + sig);
}

void DataParallel::broadcast_parameters() {
  std::vector<Tensor> all;
  for (const auto& [name, p] : model_->parameters_and_names()) all.push_back(p);
  if (scaler_) {  // the loss scale too (a resumed run's, say): every rank scales alike
    for (const Tensor& t : scaler_->state_tensors()) all.push_back(t);
  }
  broadcast(all, 0);
}

Value DataParallel::step(const Fn& fn, const std::vector<Tensor>& inputs, int64_t local_count, int64_t global_count) {
  if (global_count < 1 || local_count < 0 || local_count > global_count) {
    throw ValueError("For 'DataParallel.step', local_count " + std::to_string(local_count) + " and global_count " +
                     std::to_string(global_count) + " must satisfy 0 <= local <= global, global >= 1");
  }
  const auto t0 = detail::GradBuckets::Clock::now();
  Buckets& buckets = *buckets_;
  buckets.begin_step(t0);
  Value result;
  if (local_count > 0) {
    const double weight = static_cast<double>(local_count) / static_cast<double>(global_count);
    // The weighted loss is what gets differentiated; the caller gets the local mean back (as aux).
    const amp::LossScaler* scaler = scaler_.get();
    const Fn weighted = [&fn, weight, scaler](const std::vector<Tensor>& in) -> Value {
      const Value v = fn(in);
      if (v.is_tensor()) throw ValueError("For 'DataParallel.step', fn must return (loss, aux...), got one tensor");
      std::vector<Value> items = v.items();
      const Tensor loss = items[0].tensor();
      const Tensor share = weight == 1.0 ? loss : loss * weight;
      std::vector<Value> out{scaler ? scaler->scale(share) : share};
      for (auto& item : items) out.push_back(item);
      return Value(out);
    };
    OnGradReady hook([&buckets](size_t i, const Tensor& g) { buckets.add(i, g); });
    const Value r = value_and_grad(weighted, nullptr, optimizer_->parameters(), /*has_aux=*/true)(inputs);
    // r = ((weighted loss, loss, aux...), grads)
    const auto& items = r[0].items();
    result = Value(std::vector<Value>(items.begin() + 1, items.end()));
  }
  timing_.backward_end = std::chrono::duration<double>(detail::GradBuckets::Clock::now() - t0).count();
  buckets.add_missing_zeros();
  buckets.finish();
  timing_.reduced = std::chrono::duration<double>(detail::GradBuckets::Clock::now() - t0).count();
  timing_.buckets = buckets.timings();
  if (scaler_) {
    const nn::UnscaledGradients g = nn::unscale_and_check(*scaler_, buckets.gradients());
    overflowed_ = g.finite.item() == 0.0;
    optimizer_->step(g.grads, g.finite);
    scaler_->adjust(g.finite);
  } else {
    optimizer_->step(buckets.gradients());
  }
  if (options_.average_state) average_state();
  return result;
}

void DataParallel::average_state() {
  std::vector<Tensor> state;
  for (const auto& [name, p] : model_->parameters_and_names()) {
    if (!p.requires_grad() && is_float(p.dtype())) state.push_back(p);
  }
  if (!state.empty() && world_ > 1) allreduce(state, ReduceOp::Mean);
}

}  // namespace bprop::dist
