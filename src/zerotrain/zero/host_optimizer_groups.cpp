// The host side of optimizer offload; see host_optimizer_groups.h and [Note: optimizer offload]
// in shard_optimizer.h.
#include "zerotrain/zero/host_optimizer_groups.h"

#include <cstddef>
#include <exception>

#include "zerotrain/core/error.h"
#include "zerotrain/zero/group_run.h"
#include "zerotrain/zero/nvme_state_swap.h"
#include "zerotrain/zero/nvme_value_staging.h"
#include "zerotrain/zero/optimizer_state_parts.h"

namespace zt::zero {

HostOptimizerGroups::HostOptimizerGroups(const std::vector<ParamGroup*>& groups,
                                         const OptimizerPlacement& placement, RunExtent extent,
                                         const OptimizerOptions& options,
                                         const OffloadPolicy& policy, bool values_on_host,
                                         const Start& start, const ZeroContext& ctx, Stream stream)
    : groups_(groups),
      extent_(extent),
      values_on_host_(values_on_host),
      copies_(ctx, policy.optimizer.pin_memory ? "offload_optimizer.pin_memory" : "") {
  for (const ParamGroup* g : groups_)
    values_swapped_ = values_swapped_ || g->shard_swapped();
  make_host_groups(placement, stream);
  ZT_ASSERT(!host_.empty(), "zero", "host optimizer groups without a host group");
  std::vector<int64_t> numels;
  for (const auto& h : host_)
    numels.push_back(run_numel(*groups_[h->group], extent_));
  sub_groups_ = split_sub_groups(numels, policy.sub_group_size);
  if (values_swapped_) lend_swapped_values();
  make_optimizers(options, start);
  if (policy.optimizer.device == OffloadDevice::nvme) make_state_swap(policy);
  push_all_values(stream);  // a loaded state rounded the masters into them
  if (!copies_.async()) synchronize(stream);
}

HostOptimizerGroups::~HostOptimizerGroups() = default;

void HostOptimizerGroups::make_host_groups(const OptimizerPlacement& placement, Stream stream) {
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (placement.place[g] != RunPlace::host) continue;
    auto h = std::make_unique<HostGroup>();
    h->group = g;
    if (groups_[g]->shard_swapped()) {
      // a view of swapped_values_, set by lend_swapped_values
    } else if (values_on_host_) {  // offload_param: the CPU optimizer steps the host shard itself
      h->value = run_value(*groups_[g], extent_);
    } else {
      h->value = copies_.host_copy(run_value(*groups_[g], extent_), stream);
    }
    copies_.add_events(*h);
    host_.push_back(std::move(h));
  }
  synchronize(stream);  // the host values are complete before the host optimizers read them
}

void HostOptimizerGroups::make_optimizers(const OptimizerOptions& options, const Start& start) {
  for (size_t s = 0; s < sub_groups_.size(); ++s) {
    std::vector<optim::FlatParam> params;
    std::vector<optim::FlatRun> runs;
    for (size_t i = sub_groups_[s].first; i < sub_groups_[s].last; ++i)
      add_group_run(*groups_[host_[i]->group], extent_, host_[i]->value, params, runs);
    read_swapped_values(s);  // the masters start from them
    const optim::OptimizerState part =
        state_part(start.initial, start.all_params, params, s == 0 && start.strays);
    // The precision guard samples one optimizer's state: the first host sub-group's.
    optimizers_.push_back(std::make_unique<optim::FlatOptimizer>(
        params, std::move(runs), options.config, options.precision,
        s == 0 ? options.guard : nullptr, part));
    write_swapped_values(s);  // a loaded state rounded the masters into them
  }
}

void HostOptimizerGroups::make_state_swap(const OffloadPolicy& policy) {
  // Each sub-group's state goes to its region of the swap file.
  std::vector<std::vector<StateSwap::Slot>> layout;
  for (const auto& o : optimizers_)
    layout.push_back(swap_slots(*o));
  const OptimizerOffload& offload = policy.optimizer;
  swap_ = std::make_unique<StateSwap>(offload.nvme_path, layout, offload.buffer_count, policy.aio);
  for (size_t s = 0; s < optimizers_.size(); ++s)
    swap_->store(s, optimizers_[s]->evict_state());
}

void HostOptimizerGroups::lend_swapped_values() {
  // Every sub-group's runs view the front of one buffer, read in before its update and written
  // back after: only one sub-group's values are in host memory at a time.
  std::vector<int64_t> bytes;
  for (const auto& h : host_) {
    const ParamGroup& g = *groups_[h->group];
    bytes.push_back(run_numel(g, extent_) * static_cast<int64_t>(dtype_size(g.value_dtype())));
  }
  const ValueStaging staging = stage_values(bytes, sub_groups_);
  swapped_values_ = Tensor::empty({staging.bytes}, DType::u8, Device::cpu());
  for (size_t i = 0; i < host_.size(); ++i) {
    const ParamGroup& g = *groups_[host_[i]->group];
    host_[i]->value =
        Tensor::wrap(static_cast<std::byte*>(swapped_values_.data()) + staging.offset[i],
                     {run_numel(g, extent_)}, g.value_dtype(), Device::cpu());
  }
}

void HostOptimizerGroups::read_swapped_values(size_t s) {
  if (!values_swapped_) return;
  for (size_t i = sub_groups_[s].first; i < sub_groups_[s].last; ++i)
    groups_[host_[i]->group]->read_shard(host_[i]->value);
}

void HostOptimizerGroups::write_swapped_values(size_t s) {
  if (!values_swapped_) return;
  for (size_t i = sub_groups_[s].first; i < sub_groups_[s].last; ++i)
    groups_[host_[i]->group]->write_shard(host_[i]->value, {});
}

void HostOptimizerGroups::gradient_ready(size_t i, const Tensor& grad, Stream ready) {
  worker_.wait_stepped(i);  // the host update of the last step has read this group's gradient
  copies_.gradient_to_host(*host_[i], grad, ready);
}

void HostOptimizerGroups::begin_step(float lr, float grad_scale) {
  for (size_t k = 0; k < optimizers_.size(); ++k) {
    try {
      optimizers_[k]->begin_step(lr, grad_scale);
    } catch (...) {
      for (size_t j = 0; j < k; ++j)
        optimizers_[j]->cancel_step();
      throw;
    }
  }
}

void HostOptimizerGroups::start_update(std::span<const Tensor> grads, Stream stream) {
  for (auto& h : host_) {
    if (!h->has_grad) copies_.gradient_to_host(*h, grads[h->group], stream);
    // Later compute work (stage 1's zero_grad of the buffer the shard views) waits for the copy.
    copies_.gradient_copied_before(*h, stream);
  }
  copies_.values_after(stream);  // the copies back come after the compute work queued so far
  // offload_param: gathers copy the host shards to the device; they are done once the compute
  // stream that waited for them is, and only then may the CPU optimizer write the shards.
  if (values_on_host_) synchronize(stream);
  worker_.start(host_.size(), [this, stream] { update(stream); });
}

void HostOptimizerGroups::update(Stream stream) {
  for (size_t s = 0; s < sub_groups_.size(); ++s) {
    if (swap_) {  // the next sub-groups' reads overlap this one's update
      for (size_t ahead = s + 1; ahead < sub_groups_.size() && ahead < s + swap_->buffers();
           ++ahead)
        swap_->prefetch(ahead);
      optimizers_[s]->restore_state(swap_->load(s));
    }
    update_sub_group(s, stream);
    worker_.mark_stepped(sub_groups_[s].first, sub_groups_[s].last);
  }
  if (swap_) swap_->finish();
}

void HostOptimizerGroups::update_sub_group(size_t s, Stream stream) {
  const auto [first, last] = sub_groups_[s];
  optim::FlatOptimizer& sub_group = *optimizers_[s];
  std::vector<Tensor> host_grads;
  for (size_t i = first; i < last; ++i) {
    copies_.await_host_side(*host_[i]);
    host_grads.push_back(host_[i]->grad);
  }
  read_swapped_values(s);
  sub_group.step_runs(0, last - first, host_grads);
  sub_group.finish_step();
  write_swapped_values(s);
  if (swap_) {
    sub_group.evict_state();
    swap_->write_back(s);
  }
  for (size_t i = first; i < last; ++i) {
    host_[i]->has_grad = false;
    push_values(i, stream);
  }
}

void HostOptimizerGroups::push_values(size_t i, Stream after) {
  if (values_on_host_) return;  // the host shard is the group's value shard
  HostGroup& h = *host_[i];
  copies_.values_to_device(h, run_value(*groups_[h.group], extent_), after);
}

void HostOptimizerGroups::push_all_values(Stream stream) {
  copies_.values_after(stream);
  for (size_t i = 0; i < host_.size(); ++i)
    push_values(i, stream);
}

void HostOptimizerGroups::await_values(size_t i, Stream stream) {
  worker_.wait_stepped(i);
  if (!values_on_host_) copies_.values_copied_before(*host_[i], stream);
}

void HostOptimizerGroups::set_betas(double beta1, double beta2) {
  for (auto& o : optimizers_)
    o->set_betas(beta1, beta2);
}

void HostOptimizerGroups::set_step_count(int64_t step) {
  for (auto& o : optimizers_)
    o->set_step_count(step);
}

void HostOptimizerGroups::for_each_sub_group(
    const std::function<void(optim::FlatOptimizer&)>& use) {
  for (size_t s = 0; s < optimizers_.size(); ++s)
    with_swapped_state(*optimizers_[s], swap_.get(), s, false, use);
}

void HostOptimizerGroups::with_run_state(
    size_t i,
    const std::function<void(const std::vector<optim::FlatOptimizer::SlotTensor>&)>& use) {
  const size_t s = sub_group_of(sub_groups_, i);
  with_swapped_state(*optimizers_[s], swap_.get(), s, false,
                     [&](optim::FlatOptimizer& o) { use(o.run_state(i - sub_groups_[s].first)); });
}

void HostOptimizerGroups::for_each_piece(
    bool fill, const std::function<void(optim::FlatOptimizer::PieceTensor&)>& use) {
  for (size_t s = 0; s < optimizers_.size(); ++s)
    with_swapped_state(*optimizers_[s], swap_.get(), s, fill, [&](optim::FlatOptimizer& o) {
      read_swapped_values(s);
      for (optim::FlatOptimizer::PieceTensor& t : o.piece_tensors())
        use(t);
      if (fill) write_swapped_values(s);
    });
}

int64_t HostOptimizerGroups::state_bytes() const {
  int64_t b = swap_ ? swap_->buffer_bytes() : 0;
  for (const auto& o : optimizers_)
    b += o->bytes();
  return b;
}

int64_t HostOptimizerGroups::value_bytes() const {
  if (values_on_host_)  // the groups' own shards, counted by them; swapped: one sub-group's
    return swapped_values_.defined() ? static_cast<int64_t>(swapped_values_.nbytes()) : 0;
  int64_t b = 0;
  for (const auto& h : host_)
    b += static_cast<int64_t>(h->value.nbytes());
  return b;
}

int64_t HostOptimizerGroups::grad_bytes() const {
  int64_t b = 0;
  for (const auto& h : host_)
    if (h->grad.defined()) b += static_cast<int64_t>(h->grad.nbytes());
  return b;
}

}  // namespace zt::zero
