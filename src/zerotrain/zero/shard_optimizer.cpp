// The optimizer of a ZeRO stage, on the device or offloaded; see shard_optimizer.h and
// [Note: optimizer offload].
#include "zerotrain/zero/shard_optimizer.h"

#include <utility>

#include "zerotrain/core/error.h"
#include "zerotrain/zero/group_run.h"
#include "zerotrain/zero/host_optimizer_groups.h"
#include "zerotrain/zero/lamb_norm_sum.h"
#include "zerotrain/zero/optimizer_state_parts.h"

namespace zt::zero {

namespace {

void refuse_offloaded_lamb(const optim::OptimizerConfig& config, const OptimizerOffload& offload) {
  if (config.kind == optim::OptimizerKind::lamb && offload.device != OffloadDevice::none)
    throw ValueError("zero",
                     str("optimizer Lamb with zero_optimization.offload_optimizer.device ",
                         config::offload_device_name(offload.device), ": the host sub-groups are ",
                         "stepped apart, and Lamb's trust ratio needs the norms of every ",
                         "piece of a parameter first; offload Adam, Lion or SGD"));
}

std::vector<int64_t> shard_numels(const std::vector<ParamGroup*>& groups) {
  std::vector<int64_t> out;
  for (const ParamGroup* g : groups)
    out.push_back(g->shard_numel());
  return out;
}

std::set<std::string> param_names(const std::vector<ParamGroup*>& groups) {
  std::set<std::string> out;
  for (const ParamGroup* g : groups)
    for (const nn::Parameter* p : g->params())
      out.insert(p->name);
  return out;
}

}  // namespace

ShardOptimizer::ShardOptimizer(const std::vector<ParamGroup*>& groups, RunExtent extent,
                               const OptimizerOptions& options, const OffloadPolicy& policy,
                               bool values_on_host, const optim::OptimizerState& initial,
                               const ZeroContext& ctx, Stream stream)
    : groups_(groups), extent_(extent), device_(ctx.device()) {
  refuse_offloaded_lamb(options.config, policy.optimizer);
  placement_ = place_optimizer_runs(shard_numels(groups_), policy.optimizer);
  // Each optimizer takes its part of the full state: its parameters' tensors (the first one also
  // any stray name, so that it is refused there).
  const std::set<std::string> all_params = param_names(groups_);
  make_device_optimizer(options, initial, all_params, ctx, stream);
  copy_mirrors_home(stream);  // a loaded state rounded the masters into them
  if (placement_.host_runs > 0)
    host_ = std::make_unique<HostOptimizerGroups>(
        groups_, placement_, extent_, options, policy, values_on_host,
        HostOptimizerGroups::Start{initial, all_params, placement_.device_runs == 0}, ctx, stream);
}

ShardOptimizer::~ShardOptimizer() = default;

void ShardOptimizer::make_device_optimizer(const OptimizerOptions& options,
                                           const optim::OptimizerState& initial,
                                           const std::set<std::string>& all_params,
                                           const ZeroContext& ctx, Stream stream) {
  std::vector<optim::FlatParam> params;
  std::vector<optim::FlatRun> runs;
  for (size_t g = 0; g < groups_.size(); ++g)
    if (placement_.place[g] == RunPlace::device)
      add_group_run(*groups_[g], extent_, device_run(g, stream), params, runs);
  const bool any_host = placement_.host_runs > 0;
  if (runs.empty() && any_host) return;
  // The precision guard samples one optimizer's state: the first host sub-group's when there is
  // one.
  device_optimizer_ = std::make_unique<optim::FlatOptimizer>(
      params, std::move(runs), options.config, options.precision,
      any_host ? nullptr : options.guard, state_part(initial, all_params, params, true), stream);
  // Lamb's norms add over the ranks that hold the other pieces of each parameter.
  if (!groups_.empty() && groups_.front()->world() > 1)
    device_optimizer_->set_norm_sum(norm_sum_over(ctx.comm(), device_));
}

Tensor ShardOptimizer::device_run(size_t g, Stream stream) {
  ParamGroup& group = *groups_[g];
  if (group.shard_swapped()) {  // stepped on a device copy of the swapped shard
    const Tensor home = Tensor::empty({run_numel(group, extent_)}, group.value_dtype());
    group.read_shard(home);
    Tensor run = home.to(device_, stream);
    device_mirrors_.push_back({run, Tensor(), &group});
    return run;
  }
  const Tensor value = run_value(group, extent_);
  if (value.device() == device_) return value;
  // offload_param alone: stepped on a device copy
  Tensor run = Tensor::empty({value.numel()}, value.dtype(), device_, stream);
  run.copy_from(value, stream);
  device_mirrors_.push_back({run, value, &group});
  return run;
}

void ShardOptimizer::gradient_ready(size_t g, const Tensor& grad, Stream ready) {
  if (placement_.place.at(g) != RunPlace::host) return;
  host_->gradient_ready(placement_.index[g], grad, ready);
}

std::vector<Tensor> ShardOptimizer::checked_device_grads(std::span<const Tensor> grads) const {
  if (grads.size() != groups_.size())
    throw ValueError("zero", str(grads.size(), " gradients for ", groups_.size(), " groups"));
  std::vector<Tensor> device_grads;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const Tensor& grad = grads[g];
    const int64_t n = run_numel(*groups_[g], extent_);
    if (!grad.defined() || grad.numel() != n || !grad.is_contiguous() || grad.device() != device_)
      throw ValueError("zero", str("block ", groups_[g]->block(), ": gradient ",
                                   grad.defined() ? grad.describe() : "undefined",
                                   " for a value run of ", n, " elements"));
    if (placement_.place[g] == RunPlace::device) device_grads.push_back(grad);
  }
  return device_grads;
}

void ShardOptimizer::step(std::span<const Tensor> grads, float lr, float grad_scale,
                          Stream stream) {
  drain();  // the last step's host update is complete
  // Every gradient is checked before anything is stepped.
  const std::vector<Tensor> device_grads = checked_device_grads(grads);
  // Every optimizer counts the step after the same checks of lr and grad_scale.
  if (device_optimizer_) device_optimizer_->begin_step(lr, grad_scale);
  if (host_) {
    try {
      host_->begin_step(lr, grad_scale);
    } catch (...) {
      if (device_optimizer_) device_optimizer_->cancel_step();
      throw;
    }
  }
  if (device_optimizer_) {
    device_optimizer_->step_runs(0, device_grads.size(), device_grads, stream);
    device_optimizer_->finish_step(stream);
    copy_mirrors_home(stream);
  }
  if (host_) host_->start_update(grads, stream);
}

void ShardOptimizer::copy_mirrors_home(Stream stream) {
  if (device_mirrors_.empty()) return;
  for (auto& m : device_mirrors_)
    if (m.group->shard_swapped())
      m.group->write_shard(m.run, stream);
    else
      m.home.copy_from(m.run, stream);
  synchronize(stream);  // the next gathers read the host shards
}

void ShardOptimizer::drain() {
  if (host_) host_->drain();
}

void ShardOptimizer::await_values(size_t g, Stream stream) {
  if (placement_.place.at(g) != RunPlace::host) return;
  host_->await_values(placement_.index[g], stream);
}

void ShardOptimizer::set_betas(double beta1, double beta2) {
  drain();
  if (device_optimizer_) device_optimizer_->set_betas(beta1, beta2);
  if (host_) host_->set_betas(beta1, beta2);
}

int64_t ShardOptimizer::step_count() const {
  return device_optimizer_ ? device_optimizer_->step_count() : host_->step_count();
}

void ShardOptimizer::gather_state(comm::Communicator& comm, bool keep, Stream stream,
                                  const ParamGroup& g, const optim::FlatOptimizer::SlotTensor& t,
                                  optim::OptimizerState& st) const {
  const Tensor mine = t.tensor.to(device_, stream);  // the collectives work on the device
  Tensor full = Tensor::empty({g.padded_numel()}, mine.dtype(), device_, stream);
  comm.all_gather(mine.data(), full.data(), static_cast<size_t>(g.shard_numel()), mine.dtype(),
                  stream);
  if (!keep) return;
  const Tensor host = full.to(Device::cpu(), stream);
  synchronize(stream);
  for (size_t k = 0; k < g.params().size(); ++k) {
    const nn::Parameter& p = *g.params()[k];
    const int64_t o = g.offsets()[k], n = numel_of(p.shape);
    st.tensors.emplace(p.name + t.slot.suffix, host.slice(0, o, o + n).clone().view(p.shape));
  }
}

optim::OptimizerState ShardOptimizer::full_state(comm::Communicator& comm, bool keep,
                                                 Stream stream) {
  drain();
  optim::OptimizerState st;
  st.step = step_count();
  // A world of one: every parameter whole in one run; views of the state unless it is swapped.
  if (groups_.empty() || groups_.front()->world() == 1) {
    const bool copy = host_ && host_->state_swapped();
    const auto take = [&](optim::FlatOptimizer& a) {
      optim::OptimizerState part = a.full_state();
      for (auto& [name, t] : part.tensors)
        st.tensors.emplace(name, copy ? t.clone() : t);
    };
    if (device_optimizer_) take(*device_optimizer_);
    if (host_) host_->for_each_sub_group(take);
    return st;
  }
  if (st.step == 0) return st;
  // Every rank walks the groups in the same order, so the collectives match.
  for (size_t g = 0; g < groups_.size(); ++g) {
    const auto gather = [&](const std::vector<optim::FlatOptimizer::SlotTensor>& slots) {
      for (const optim::FlatOptimizer::SlotTensor& t : slots)
        gather_state(comm, keep, stream, *groups_[g], t, st);
    };
    if (placement_.place[g] == RunPlace::device)
      gather(device_optimizer_->run_state(placement_.index[g]));
    else
      host_->with_run_state(placement_.index[g], gather);
  }
  synchronize(stream);
  return st;
}

void ShardOptimizer::for_each_piece(
    bool fill, const std::function<void(optim::FlatOptimizer::PieceTensor&)>& use) {
  drain();
  if (device_optimizer_)
    for (optim::FlatOptimizer::PieceTensor& t : device_optimizer_->piece_tensors())
      use(t);
  if (host_) host_->for_each_piece(fill, use);
}

void ShardOptimizer::shard_loaded(int64_t step, Stream stream) {
  drain();
  copy_mirrors_home(stream);
  if (device_optimizer_) device_optimizer_->set_step_count(step);
  if (host_) {
    host_->set_step_count(step);
    host_->push_all_values(stream);
  }
}

int64_t ShardOptimizer::device_state_bytes() const {
  int64_t b = device_optimizer_ ? device_optimizer_->bytes() : 0;
  for (const auto& m : device_mirrors_)
    b += static_cast<int64_t>(m.run.nbytes());  // the optimizer's copy of offloaded values
  return b;
}

int64_t ShardOptimizer::host_state_bytes() const {
  return host_ ? host_->state_bytes() : 0;
}

int64_t ShardOptimizer::nvme_bytes() const {
  return host_ ? host_->nvme_bytes() : 0;
}

int64_t ShardOptimizer::host_value_bytes() const {
  return host_ ? host_->value_bytes() : 0;
}

int64_t ShardOptimizer::host_grad_bytes() const {
  return host_ ? host_->grad_bytes() : 0;
}

}  // namespace zt::zero
