// The stage factory and what every stage shares; see zero_stage.h.
#include "zerotrain/zero/zero_stage.h"

#include <cstring>

#include "zerotrain/core/error.h"
#include "zerotrain/zero/grad_comm.h"
#include "zerotrain/zero/sharded_stage.h"
#include "zerotrain/zero/stage0.h"
#include "zerotrain/zero/stage3.h"

namespace zt::zero {

double ZeroStage::sum_over_ranks(double value) {
  if (world_size() == 1) return value;
  const int world = world_size();
  Tensor mine = Tensor::empty({1}, DType::i64, Device::cpu());
  std::memcpy(mine.data(), &value, sizeof value);
  const Tensor send = mine.to(device_, stream_);
  Tensor all = Tensor::empty({world}, DType::i64, device_, stream_);
  comm_.all_gather(send.data(), all.data(), 1, DType::i64, stream_);
  const Tensor host = all.to(Device::cpu(), stream_);
  synchronize(stream_);
  double sum = 0;
  for (int r = 0; r < world; ++r) {
    double v;
    std::memcpy(&v, static_cast<const char*>(host.data()) + r * sizeof(double), sizeof v);
    sum += v;
  }
  return sum;
}

void ZeroStage::check_identical(const std::vector<nn::Parameter*>& params) {
  if (world_size() == 1) return;
  uint64_t h = 14695981039346656037ull;  // FNV-1a offset basis
  for (const nn::Parameter* p : params) {
    const Tensor host = p->value.to(Device::cpu(), stream_);
    synchronize(stream_);
    const auto* bytes = static_cast<const unsigned char*>(host.data());
    for (size_t i = 0; i < host.nbytes(); ++i)
      h = (h ^ bytes[i]) * 1099511628211ull;
  }
  Tensor mine = Tensor::empty({1}, DType::i64, Device::cpu());
  std::memcpy(mine.data(), &h, sizeof h);
  const Tensor send = mine.to(device_, stream_);
  Tensor all = Tensor::empty({world_size()}, DType::i64, device_, stream_);
  comm_.all_gather(send.data(), all.data(), 1, DType::i64, stream_);
  const std::vector<int64_t> sums = all.to_ints(stream_);
  std::string differ;
  for (size_t r = 1; r < sums.size(); ++r)
    if (sums[r] != sums[0]) differ += (differ.empty() ? "" : ", ") + std::to_string(r);
  if (!differ.empty())
    throw ValueError("zero", str("stage ", stage(), ": parameters of rank(s) ", differ,
                                 " differ from rank 0's (checksums)"));
}

optim::OptimizerState ZeroStage::full_optimizer_state() {
  return optimizer_->full_state(shards_.shard(), comm_.rank() == 0, stream_);
}

bool ZeroStage::shard_is_replica() const {
  if (shards_.replica() > 0) return true;
  return comm_.rank() != 0 && !groups_.empty() && groups_.front()->world() == 1;
}

void ZeroStage::for_each_full_group(const std::function<void(const ParamGroup&)>& visit) {
  begin_full_parameters();
  for (const auto& g : groups_)
    visit(*g);
  end_full_parameters();
}

void ZeroStage::save_shard(ShardWriter& out) {
  out.write_step(optimizer_->step_count());
  optimizer_->for_each_piece(false, [&](optim::FlatOptimizer::PieceTensor& t) {
    out.write({t.name, t.full_shape, t.begin, t.end}, t.tensor, stream_);
  });
  synchronize(stream_);
}

void ZeroStage::load_shard(ShardReader& in) {
  optimizer_->for_each_piece(true, [&](optim::FlatOptimizer::PieceTensor& t) {
    in.read({t.name, t.full_shape, t.begin, t.end}, t.tensor, stream_);
  });
  optimizer_->shard_loaded(in.read_step(), stream_);
  after_shard_load();
  synchronize(stream_);
}

std::vector<ParamGroup*> ZeroStage::group_pointers() const {
  std::vector<ParamGroup*> out;
  for (const auto& g : groups_)
    out.push_back(g.get());
  return out;
}

std::unique_ptr<ZeroStage> make_zero_stage(const ZeroOptions& options,
                                           std::vector<std::unique_ptr<nn::Block>>& blocks,
                                           const ZeroContext& ctx,
                                           const optim::OptimizerState& initial) {
  validate_zero_config(options.config);  // the one check of the user's values
  hybrid_sharding(options.config, ctx.comm().size());  // and of the shard group against the world
  if (options.grad_dtype) check_grad_dtype("gradient accumulation dtype", *options.grad_dtype);
  if (options.comm_dtype) check_grad_dtype("communication dtype", *options.comm_dtype);
  switch (options.config.stage) {
    case 0:
      return std::make_unique<Stage0>(blocks, ctx, options, initial);
    case 1:
      return std::make_unique<Stage1>(blocks, ctx, options, initial);
    case 2:
      return std::make_unique<Stage2>(blocks, ctx, options, initial);
    case 3:
      return std::make_unique<Stage3>(blocks, ctx, options, initial);
  }
  throw Error("zero", str("internal check failed: stage ", options.config.stage,
                          " passed validate_zero_config"));
}

}  // namespace zt::zero
