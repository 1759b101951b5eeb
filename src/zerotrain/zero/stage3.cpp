// ZeRO stage 3 with bounded prefetch; see stage3.h and [Note: stage 3 prefetch].
#include "zerotrain/zero/stage3.h"

#include <algorithm>

#include "zerotrain/core/error.h"

namespace zt::zero {

Stage3::Stage3(std::vector<std::unique_ptr<nn::Block>>& blocks, const ZeroContext& ctx,
               const ZeroOptions& options, const optim::OptimizerState& initial)
    : ShardedStage(blocks, ctx, options, initial, false),
      options_(options),
      blocks_(blocks.size()),
      prefetched_(groups_.size(), false),
      in_flight_(groups_.size(), false) {
  if (options.config.overlap_comm) gather_stream_ = ctx_.streams().gather();
  if (gather_stream_) {
    for (size_t g = 0; g < groups_.size(); ++g) {
      alloc_done_.emplace_back(device_);
      gathered_.emplace_back(device_);
    }
  }
}

size_t Stage3::position(size_t block, bool backward) const {
  return backward ? 2 * blocks_ - 1 - block : block;
}

const std::vector<size_t>& Stage3::groups_at(size_t pos) const {
  return uses_[pos < blocks_ ? pos : 2 * blocks_ - 1 - pos];
}

void Stage3::fetch(size_t g) {
  ParamGroup& group = *groups_[g];
  optimizer_->await_values(g, stream_);  // an offloaded group's last update is done
  if (gather_stream_) {
    group.begin_gather(stream_);
    alloc_done_[g].record(stream_);
    alloc_done_[g].wait(*gather_stream_);
    group.finish_gather(shards_.shard(), *gather_stream_);
    gathered_[g].record(*gather_stream_);
    in_flight_[g] = true;
  } else {
    group.gather(shards_.shard(), stream_);
  }
  live_ += group.numel();
  peak_live_ = std::max(peak_live_, live_);
}

void Stage3::await(size_t g) {
  if (!in_flight_[g]) return;
  gathered_[g].wait(stream_);
  in_flight_[g] = false;
}

void Stage3::drop(size_t g) {
  await(g);  // never free a buffer the gather stream may still write
  groups_[g]->release();
  live_ -= groups_[g]->numel();
}

void Stage3::prefetch_after(size_t pos) {
  int64_t ahead = 0;
  for (size_t g = 0; g < groups_.size(); ++g)
    if (prefetched_[g]) ahead += groups_[g]->numel();
  for (size_t u = pos + 1; u < uses_end(); ++u)
    for (size_t g : groups_at(u)) {
      if (groups_[g]->state() == ParamState::gathered) continue;
      const int64_t n = groups_[g]->numel();
      if (ahead + n > options_.config.prefetch_bucket_size ||
          live_ + n > options_.config.max_live_parameters)
        return;
      fetch(g);
      prefetched_[g] = true;
      ahead += n;
    }
}

void Stage3::before_use(size_t block, bool backward) {
  const size_t pos = position(block, backward);
  for (size_t g : groups_at(pos)) {
    if (groups_[g]->state() != ParamState::gathered) fetch(g);
    await(g);
    prefetched_[g] = false;
  }
  prefetch_after(pos);
}

void Stage3::after_use(size_t block, bool backward) {
  const size_t pos = position(block, backward);
  const std::vector<size_t>* next = pos + 1 < uses_end() ? &groups_at(pos + 1) : nullptr;
  for (size_t g : groups_at(pos)) {
    if (groups_[g]->state() != ParamState::gathered || persistent(*groups_[g]) || prefetched_[g])
      continue;
    if (next && std::find(next->begin(), next->end(), g) != next->end()) continue;
    drop(g);
  }
}

void Stage3::after_step() {
  // A persistent group still holds the values from before the step: gather the updated shards
  // (an offloaded group's at its next use, so the host steps it meanwhile).
  for (size_t g = 0; g < groups_.size(); ++g)
    if (groups_[g]->state() == ParamState::gathered) {
      drop(g);
      if (optimizer_->place(g) == RunPlace::host) continue;
      fetch(g);
      await(g);
    }
}

void Stage3::begin_full_parameters() {
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (groups_[g]->state() != ParamState::gathered) fetch(g);
    await(g);
  }
}

void Stage3::end_full_parameters() {
  for (size_t g = 0; g < groups_.size(); ++g)
    if (groups_[g]->state() == ParamState::gathered && !persistent(*groups_[g])) drop(g);
}

void Stage3::for_each_full_group(const std::function<void(const ParamGroup&)>& visit) {
  for (size_t g = 0; g < groups_.size(); ++g) {
    const bool was_gathered = groups_[g]->state() == ParamState::gathered;
    if (!was_gathered) fetch(g);
    await(g);
    visit(*groups_[g]);
    if (!was_gathered && !persistent(*groups_[g])) drop(g);
  }
}

void Stage3::begin_forward_only() {
  if (forward_only_) throw ValueError("zero", "begin_forward_only: already in a forward-only pass");
  forward_only_ = true;
}

void Stage3::end_forward_only() {
  if (!forward_only_) throw ValueError("zero", "end_forward_only: no forward-only pass to end");
  forward_only_ = false;
  for (size_t g = 0; g < groups_.size(); ++g)
    if (prefetched_[g])
      throw ValueError("zero", str("end_forward_only: the group of block ", groups_[g]->block(),
                                   " is still gathered ahead of a use"));
}

}  // namespace zt::zero
