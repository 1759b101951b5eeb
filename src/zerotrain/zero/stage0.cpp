// ZeRO stage 0 as a ZeroStage; see stage0.h.
#include "zerotrain/zero/stage0.h"

#include "zerotrain/core/error.h"
#include "zerotrain/zero/grad_norm.h"
#include "zerotrain/zero/shard_init.h"

namespace zt::zero {

Stage0::Stage0(std::vector<std::unique_ptr<nn::Block>>& blocks, const ZeroContext& ctx,
               const ZeroOptions& options, const optim::OptimizerState& initial)
    : ZeroStage(ctx) {
  const Stream stream = stream_;
  // The values move into each block's group (a world of one: the whole block on every rank), or
  // are built there from the source ([Note: values built in place] in shard_init.h).
  for (size_t b = 0; b < blocks.size(); ++b) {
    std::vector<nn::Parameter*> ps = blocks[b]->parameters();
    if (ps.empty()) continue;
    groups_.push_back(std::make_unique<ParamGroup>(b, std::move(ps), 1, 0));
    ParamGroup& group = *groups_.back();
    if (options.initial_values)
      group.materialize_full(build_full_values(group, *options.initial_values,
                                               options.initial_values_dtype, device_, stream));
    else
      group.materialize(true, stream);
  }
  DataParallelOptions dpo;  // broadcasts rank 0's values into the groups, unless built alike
  dpo.broadcast_values = !options.initial_values;
  dpo.bucket_elements = options.config.reduce_bucket_size;
  dpo.overlap_comm = options.config.overlap_comm;
  dpo.grad_dtype = options.grad_dtype;
  dpo.comm_dtype = options.comm_dtype;
  dp_ = std::make_unique<DataParallel>(
      blocks, comm_, device_, stream, dpo,
      options.config.overlap_comm ? ctx_.streams().reduce() : nullptr);
  // Each block's gradients are consecutive in one bucket ([Note: bucket order]): its flat group.
  int64_t total_chunks = 0;
  for (auto& block : blocks) {
    const std::vector<nn::Parameter*> ps = block->parameters();
    if (ps.empty()) continue;
    for (const GradBucket& b : buckets().buckets()) {
      int64_t offset = 0;
      size_t i = 0;
      while (i < b.params.size() && b.params[i] != ps.front())
        offset += numel_of(b.params[i++]->shape);
      if (i == b.params.size()) continue;
      int64_t n = 0;
      for (size_t k = 0; k < ps.size(); ++k) {
        ZT_ASSERT(i + k < b.params.size() && b.params[i + k] == ps[k], "zero", "block ",
                  block->name(), " is not contiguous in its gradient bucket");
        n += numel_of(ps[k]->shape);
      }
      group_grads_.push_back(b.flat.slice(0, offset, offset + n));
      total_chunks += norm_chunks(n);
      break;
    }
  }
  partials_ = Tensor::zeros({total_chunks}, DType::f32, device_, stream);
  ZT_ASSERT(group_grads_.size() == groups_.size(), "zero", "a group without its gradient slice");
  optimizer_ = std::make_unique<ShardOptimizer>(group_pointers(), RunExtent::params,
                                                options.optimizer, options.config.offload, false,
                                                initial, ctx_, stream);
}

nn::BlockHooks Stage0::hooks() {
  nn::BlockHooks h;
  h.after_backward = [this](size_t block) { dp_->after_block_backward(block); };
  return h;
}

void Stage0::begin_micro_step(bool boundary) {
  dp_->begin_micro_step(boundary);
}

void Stage0::finish_gradient_sync() {
  dp_->finish_gradient_sync();
}

double Stage0::grad_norm() {
  int64_t at = 0;
  for (const Tensor& g : group_grads_) {
    const int64_t c = norm_chunks(g.numel());
    norm_partials(g, partials_.slice(0, at, at + c), stream_);
    at += c;
  }
  return norm_from_partials(partials_on_host(partials_, host_partials_, stream_));
}

void Stage0::step(float lr, float grad_scale) {
  optimizer_->step(group_grads_, lr, grad_scale, stream_);
}

void Stage0::zero_grad() {
  dp_->zero_grad();
}

void Stage0::check_parameters_identical() {
  dp_->check_parameters_identical();  // DataParallel's own checksum, the same check
}

MemoryBytes Stage0::memory() const {
  MemoryBytes m;
  for (const GradBucket& b : buckets().buckets()) {
    m.grads += static_cast<int64_t>(b.flat.nbytes());
    for (const nn::Parameter* p : b.params)
      m.params += static_cast<int64_t>(p->value.nbytes());
  }
  m.optimizer = optimizer_->device_state_bytes();
  return m;
}

}  // namespace zt::zero
