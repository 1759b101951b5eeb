// ZeRO stages 1-3; see sharded_stage.h and [Note: ZeRO stages] in zero_stage.h.
#include "zerotrain/zero/sharded_stage.h"

#include <map>

#include "zerotrain/core/error.h"
#include "zerotrain/zero/grad_norm.h"
#include "zerotrain/zero/shard_init.h"

namespace zt::zero {

ShardedStage::ShardedStage(std::vector<std::unique_ptr<nn::Block>>& blocks, const ZeroContext& ctx,
                           const ZeroOptions& options, const optim::OptimizerState& initial,
                           bool replicated_values)
    : ZeroStage(ctx), uses_(blocks.size()), own_group_(blocks.size(), -1) {
  shards_ = ShardComms(comm_, options.config);  // collective: hybrid sharding splits the world
  const int world = shards_.shard().size();
  const int rank = shards_.shard().rank();
  const Device device = device_;
  const Stream stream = stream_;
  std::map<const nn::Parameter*, size_t> group_of;
  const ParamOffload& params = options.config.offload.params;
  const bool params_offloaded = params.device != OffloadDevice::none;
  ZT_ASSERT(!params_offloaded || !replicated_values, "zero",
            "offload_param needs sharded values (stage 3)");
  for (size_t b = 0; b < blocks.size(); ++b) {
    std::vector<nn::Parameter*> ps = blocks[b]->parameters();
    if (ps.empty()) continue;
    if (ps.front()->grad.defined()) grad_dtype_ = ps.front()->grad.dtype();
    for (nn::Parameter* p : ps) {
      if (comm_.size() > 1 && !options.initial_values)  // every rank starts from rank 0's values
        comm_.broadcast(p->value.data(), static_cast<size_t>(p->value.numel()), p->value.dtype(), 0,
                        stream);
      group_of[p] = groups_.size();
      p->grad = Tensor();  // the group's gradient buffers replace the model's
    }
    own_group_[b] = static_cast<int>(groups_.size());
    uses_[b].push_back(groups_.size());
    groups_.push_back(std::make_unique<ParamGroup>(b, std::move(ps), world, rank));
    ParamGroup& group = *groups_.back();
    if (!options.initial_values)
      group.materialize(replicated_values, stream);
    else if (replicated_values)  // [Note: values built in place] in shard_init.h
      group.materialize_full(build_full_values(group, *options.initial_values,
                                               options.initial_values_dtype, device, stream));
    else  // zero.Init: only this rank's shard, see shard_init.h
      group.materialize_shard(build_value_shard(group, *options.initial_values,
                                                options.initial_values_dtype, device, stream));
    if (params.device == OffloadDevice::cpu)
      groups_.back()->offload_shard(params.pin_memory ? "offload_param.pin_memory" : "", stream);
  }
  if (groups_.empty()) throw ValueError("zero", "the model has no parameters");
  if (params.device == OffloadDevice::nvme) {
    std::vector<ParamSwap::Shard> shards;
    for (const auto& g : groups_)
      shards.push_back({g->shard_numel(), g->value_dtype()});
    param_swap_ = std::make_unique<ParamSwap>(std::move(shards), params,
                                              options.config.offload.aio, device);
    for (size_t g = 0; g < groups_.size(); ++g)
      groups_[g]->swap_out_shard(*param_swap_, g, stream);
  }
  grad_dtype_ = options.grad_dtype.value_or(grad_dtype_);
  comm_dtype_ = options.comm_dtype.value_or(grad_dtype_);
  for (size_t b = 0; b < blocks.size(); ++b)
    for (nn::Parameter* p : blocks[b]->shared_parameters()) {
      auto it = group_of.find(p);
      if (it == group_of.end())
        throw ValueError("zero",
                         str(blocks[b]->name(), " shares ", p->name, ", which no block owns"));
      uses_[b].push_back(it->second);
    }
  reduced_.assign(groups_.size(), false);
  stale_.assign(groups_.size(), false);
  int64_t chunks = 0;
  for (auto& g : groups_)
    chunks += g->shard_numel() / kNormChunk;
  optimizer_ = std::make_unique<ShardOptimizer>(
      group_pointers(), RunExtent::shard, options.optimizer, options.config.offload,
      params_offloaded, initial, ctx_.over(shards_.shard()), stream);
  partials_ = Tensor::zeros({chunks}, DType::f32, device, stream);
  in_flight_.resize(groups_.size());
  if (options.config.overlap_comm) comm_stream_ = ctx_.streams().reduce();
  if (comm_stream_) {
    for (size_t g = 0; g < groups_.size(); ++g) {
      grad_ready_.emplace_back(device);
      grad_reduced_.emplace_back(device);
    }
  }
  synchronize(stream);
}

nn::BlockHooks ShardedStage::hooks() {
  nn::BlockHooks h;
  h.before_forward = [this](size_t b) {
    refresh(b);
    before_use(b, false);
  };
  h.after_forward = [this](size_t b) { after_use(b, false); };
  h.before_backward = [this](size_t b) {
    retire_reductions(true);  // bounds the full gradient buffers in flight to about two
    refresh(b);
    before_use(b, true);
    for (size_t g : uses_[b])
      groups_[g]->acquire_grad(grad_dtype_, stream_);
  };
  h.after_backward = [this](size_t b) { after_backward(b); };
  return h;
}

void ShardedStage::begin_micro_step(bool boundary) {
  for (size_t g = 0; g < reduced_.size(); ++g)
    if (reduced_[g])
      throw ValueError("zero", str("group of block ", groups_[g]->block(),
                                   " is still reduced: finish_gradient_sync() was not called "
                                   "after the last boundary micro-step"));
  boundary_ = boundary;
}

void ShardedStage::after_backward(size_t block) {
  after_use(block, true);
  const int g = own_group_[block];
  if (!boundary_ || g < 0) return;
  // The owner runs backward last among the group's users: its gradient is complete.
  reduce_group(static_cast<size_t>(g));
  reduced_[static_cast<size_t>(g)] = true;
}

// [Note: sharded reduce overlap]
// On a GPU with overlap_comm, a group's reduce-scatter runs on comm_stream_ after an event from
// the compute stream, so it overlaps the backward of earlier blocks. The full gradient buffer it
// reads (stages 2, 3 drop it) stays referenced in in_flight_ until the compute stream has waited
// for the reduce-scatter's event: only then may the stream-ordered allocator hand the memory to
// compute work. That wait happens before the next block's backward but one (retire_reductions
// keeps the latest in flight), and for all groups in finish_gradient_sync. The result is the same
// reduce-scatter, so the bits do not change; host backends reduce on the compute stream.
void ShardedStage::reduce_group(size_t g) {
  ParamGroup& group = *groups_[g];
  if (!comm_stream_) {
    group.reduce_grad(shards_, keeps_full_grads(), stream_, comm_dtype_);
    optimizer_->gradient_ready(g, group.grad_shard(), stream_);
    return;
  }
  if (!keeps_full_grads()) group.prepare_grad_shard(stream_);
  grad_ready_[g].record(stream_);
  grad_ready_[g].wait(*comm_stream_);
  in_flight_[g] = group.reduce_grad(shards_, keeps_full_grads(), *comm_stream_, comm_dtype_);
  grad_reduced_[g].record(*comm_stream_);
  optimizer_->gradient_ready(g, group.grad_shard(), *comm_stream_);
  pending_.push_back(g);
}

void ShardedStage::retire_reductions(bool keep_latest) {
  const size_t keep = keep_latest && !pending_.empty() ? 1 : 0;
  for (size_t i = 0; i + keep < pending_.size(); ++i) {
    grad_reduced_[pending_[i]].wait(stream_);
    in_flight_[pending_[i]] = Tensor();
  }
  pending_.erase(pending_.begin(), pending_.end() - static_cast<std::ptrdiff_t>(keep));
}

void ShardedStage::finish_gradient_sync() {
  if (!boundary_) throw ValueError("zero", "finish_gradient_sync() outside a boundary micro-step");
  for (size_t g = 0; g < reduced_.size(); ++g)
    if (!reduced_[g])
      throw ValueError("zero", str("group of block ", groups_[g]->block(),
                                   " was never reduced: the backward hook did not run for it"));
  retire_reductions(false);
  reduced_.assign(reduced_.size(), false);
  boundary_ = false;
}

double ShardedStage::grad_norm() {
  std::vector<int64_t> per_shard;
  int64_t at = 0;
  for (auto& g : groups_) {
    const int64_t c = g->shard_numel() / kNormChunk;
    norm_partials(g->grad_shard(), partials_.slice(0, at, at + c), stream_);
    per_shard.push_back(c);
    at += c;
  }
  // With hybrid sharding over the shard group: it holds the whole model ([Note: hybrid sharding]).
  comm::Communicator& shard = shards_.shard();
  const int world = shard.size();
  if (world == 1)
    return norm_from_gathered(partials_on_host(partials_, host_partials_, stream_), per_shard, 1);
  Tensor all = Tensor::empty({at * world}, DType::f32, device_, stream_);
  shard.all_gather(partials_.data(), all.data(), static_cast<size_t>(at), DType::f32, stream_);
  return norm_from_gathered(partials_on_host(all, host_partials_, stream_), per_shard, world);
}

void ShardedStage::step(float lr, float grad_scale) {
  std::vector<Tensor> grads;
  for (auto& g : groups_) {
    if (!g->grad_shard().defined())
      throw ValueError("zero", str("block ", g->block(), ": step without a reduced gradient"));
    grads.push_back(g->grad_shard());
  }
  optimizer_->step(grads, lr, grad_scale, stream_);
  after_step();
}

void ShardedStage::zero_grad() {
  for (auto& g : groups_)
    g->zero_full_grad(stream_);
}

MemoryBytes ShardedStage::memory() const {
  MemoryBytes m;
  for (const auto& g : groups_) {
    m.params += g->value_bytes();
    m.host_params += g->host_value_bytes();
    m.grads += g->grad_bytes();
  }
  m.optimizer = optimizer_->device_state_bytes();
  m.host_optimizer = optimizer_->host_state_bytes();
  m.host_params += optimizer_->host_value_bytes();
  m.host_grads = optimizer_->host_grad_bytes();
  m.nvme = optimizer_->nvme_bytes();
  if (param_swap_) {
    m.host_params += param_swap_->buffer_bytes() + param_swap_->cache_bytes();
    m.nvme += param_swap_->file_bytes();
  }
  return m;
}

void ShardedStage::refresh(size_t block) {
  for (size_t g : uses_[block])
    if (stale_[g]) {
      optimizer_->await_values(g, stream_);
      groups_[g]->all_gather_in_place(shards_.shard(), stream_);
      stale_[g] = false;
    }
}

void ShardedStage::refresh_all() {
  for (size_t b = 0; b < uses_.size(); ++b)
    refresh(b);
}

void ShardedStage::check_parameters_identical() {
  refresh_all();
  std::vector<nn::Parameter*> params;
  for (auto& g : groups_)
    if (g->state() == ParamState::gathered)
      params.insert(params.end(), g->params().begin(), g->params().end());
  check_identical(params);
}

void Stage1::after_step() {
  for (size_t g = 0; g < groups_.size(); ++g)
    if (optimizer_->place(g) == RunPlace::host)
      stale_[g] = true;  // gathered before its next use, while the host steps the others
    else
      groups_[g]->all_gather_in_place(shards_.shard(), stream_);
}

}  // namespace zt::zero
