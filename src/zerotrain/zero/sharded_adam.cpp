// AdamW on flat shards; see sharded_adam.h.
#include "zerotrain/zero/sharded_adam.h"

#include <cmath>

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/cast.h"
#include "zerotrain/optim/low_precision.h"
#include "zerotrain/optim/optimizers.h"
#include "zerotrain/train/precision_guard.h"

namespace zt::zero {

namespace {

constexpr std::string_view kComponent = "zero";

// Copies the shard's part of one full per-parameter state tensor into `shard_state` (cast to its
// dtype when they differ: an f32 checkpoint into bf16 moments).
void copy_in(const Tensor& full, const ShardPiece& piece, int64_t shard_offset,
             const Tensor& shard_state, Stream stream) {
  const Tensor src =
      full.flatten().slice(0, piece.begin - piece.param_offset, piece.end - piece.param_offset);
  Tensor dst = shard_state.slice(0, piece.begin - shard_offset, piece.end - shard_offset);
  if (src.dtype() == dst.dtype()) {
    dst.copy_from(src.to(dst.device(), stream), stream);
  } else {
    const Tensor on_device = src.contiguous(stream).to(dst.device(), stream);
    kernels::cast(on_device, dst, stream);
  }
}

}  // namespace

ShardedAdam::ShardedAdam(std::vector<ParamGroup*> groups, train::AdamWOptions options,
                         const train::OptimizerState& initial, Stream stream)
    : options_(std::move(options)), step_(initial.step) {
  for (ParamGroup* g : groups) {
    Slot s{g, {}, {}, {}, {}};
    const Tensor& v = g->value_shard();
    s.low = options_.precision == optim::Precision::low && g->value_dtype() == DType::bf16;
    if (s.low && options_.amsgrad)
      throw ValueError(kComponent, str("block ", g->block(), ": amsgrad needs an f32 ",
                                       "max_exp_avg_sq, which low precision does not keep"));
    const DType state = s.low ? DType::bf16 : DType::f32;
    s.exp_avg = Tensor::zeros({g->shard_numel()}, state, v.device(), stream);
    s.exp_avg_sq = Tensor::zeros({g->shard_numel()}, state, v.device(), stream);
    if (options_.amsgrad)
      s.max_exp_avg_sq = Tensor::zeros({g->shard_numel()}, DType::f32, v.device(), stream);
    if (g->value_dtype() != DType::f32 && !s.low) {
      s.master = Tensor::empty({g->shard_numel()}, DType::f32, v.device(), stream);
      kernels::cast(v, s.master, stream);
    }
    if (initial.step > 0)
      for (const ShardPiece& piece : g->shard_pieces()) {
        const std::string& name = piece.param->name;
        auto get = [&](const std::string& key) -> const Tensor& {
          auto it = initial.tensors.find(name + key);
          if (it == initial.tensors.end())
            throw ValueError(kComponent, str(name, key, ": missing from the optimizer state"));
          return it->second;
        };
        copy_in(get(".exp_avg"), piece, g->shard_offset(), s.exp_avg, stream);
        copy_in(get(".exp_avg_sq"), piece, g->shard_offset(), s.exp_avg_sq, stream);
        if (s.max_exp_avg_sq.defined())
          copy_in(get(".max_exp_avg_sq"), piece, g->shard_offset(), s.max_exp_avg_sq, stream);
        if (s.master.defined()) copy_in(get(".master"), piece, g->shard_offset(), s.master, stream);
      }
    slots_.push_back(std::move(s));
  }
}

Tensor ShardedAdam::master_of(const Slot& s) const {
  return s.master.defined() ? s.master : s.group->value_shard();
}

void ShardedAdam::step(float lr, float grad_scale, Stream stream) {
  if (!std::isfinite(lr) || lr < 0)
    throw ValueError(kComponent, str("lr = ", lr, ": must be finite and >= 0"));
  if (!std::isfinite(grad_scale))
    throw ValueError(kComponent, str("grad_scale = ", grad_scale, ": not finite"));
  ++step_;
  const optim::AdamParams hp = train::adam_params(options_, lr);
  const optim::StepArgs args{step_, grad_scale};
  std::vector<optim::AdamShard> runs;
  std::vector<optim::AdamShardLowp> low_runs;
  Device device = Device::cpu();
  for (const Slot& s : slots_) {
    const ParamGroup& g = *s.group;
    if (!g.grad_shard().defined())
      throw ValueError(kComponent, str("block ", g.block(), ": step without a reduced gradient"));
    device = g.value_shard().device();
    const Tensor master = master_of(s);
    const int64_t base = g.shard_offset();
    for (const ShardPiece& piece : g.shard_pieces()) {
      const int64_t at = piece.begin - base;
      const float wd = options_.decays(*piece.param) ? options_.weight_decay : 0.0f;
      const void* grad = static_cast<const char*>(g.grad_shard().data()) +
                         at * static_cast<int64_t>(g.grad_shard().element_size());
      if (s.low) {
        optim::AdamShardLowp r;
        r.param = static_cast<bf16*>(g.value_shard().data()) + at;
        r.exp_avg = static_cast<bf16*>(s.exp_avg.data()) + at;
        r.exp_avg_sq = static_cast<bf16*>(s.exp_avg_sq.data()) + at;
        r.grad = grad;
        r.grad_dtype = g.grad_shard().dtype();
        r.n = piece.end - piece.begin;
        r.weight_decay = wd;
        low_runs.push_back(r);
        continue;
      }
      optim::AdamShard r;
      r.master = static_cast<float*>(master.data()) + at;
      r.exp_avg = static_cast<float*>(s.exp_avg.data()) + at;
      r.exp_avg_sq = static_cast<float*>(s.exp_avg_sq.data()) + at;
      if (s.max_exp_avg_sq.defined())
        r.max_exp_avg_sq = static_cast<float*>(s.max_exp_avg_sq.data()) + at;
      r.grad = grad;
      r.grad_dtype = g.grad_shard().dtype();
      r.param_copy = s.master.defined()
                         ? static_cast<char*>(g.value_shard().data()) +
                               at * static_cast<int64_t>(g.value_shard().element_size())
                         : nullptr;
      r.param_dtype = g.value_dtype();
      r.n = piece.end - piece.begin;
      r.weight_decay = wd;
      runs.push_back(r);
    }
  }
  if (!runs.empty()) optim::adam_step(runs, hp, args, device, stream);
  if (!low_runs.empty()) optim::adam_step_lowp(low_runs, hp, args, device, stream);
  check_updates(lr, stream);
}

void ShardedAdam::check_updates(float lr, Stream stream) {
  if (!options_.guard || !options_.guard->due(step_)) return;
  std::vector<train::GuardTensors> tensors;
  for (const Slot& s : slots_) {
    const Tensor master = master_of(s);
    const int64_t base = s.group->shard_offset();
    for (const ShardPiece& piece : s.group->shard_pieces()) {
      const int64_t a = piece.begin - base, b = piece.end - base;
      const Tensor& v = s.max_exp_avg_sq.defined() ? s.max_exp_avg_sq : s.exp_avg_sq;
      tensors.push_back({master.slice(0, a, b), s.exp_avg.slice(0, a, b), v.slice(0, a, b),
                         options_.decays(*piece.param) ? options_.weight_decay : 0.0f});
    }
  }
  options_.guard->check(step_, train::adam_params(options_, lr), tensors, stream);
}

train::OptimizerState ShardedAdam::full_state(comm::Communicator* comm, bool keep,
                                              Stream stream) const {
  train::OptimizerState st;
  st.step = step_;
  if (step_ == 0) return st;
  for (const Slot& s : slots_) {
    const ParamGroup& g = *s.group;
    // Gathers one state tensor of the group and, when kept, copies each parameter's part out.
    auto gather = [&](const Tensor& shard, const char* suffix) {
      Tensor full = Tensor::empty({g.padded_numel()}, shard.dtype(), shard.device(), stream);
      if (comm == nullptr || comm->size() == 1)
        full.copy_from(shard, stream);
      else
        comm->all_gather(shard.data(), full.data(), static_cast<size_t>(g.shard_numel()),
                         shard.dtype(), stream);
      if (!keep) return;
      const Tensor host = full.to(Device::cpu(), stream);
      synchronize(stream);
      for (size_t i = 0; i < g.params().size(); ++i) {
        const nn::Parameter& p = *g.params()[i];
        const int64_t o = g.offsets()[i], n = numel_of(p.shape);
        st.tensors.emplace(p.name + suffix, host.slice(0, o, o + n).clone().view(p.shape));
      }
    };
    gather(s.exp_avg, ".exp_avg");
    gather(s.exp_avg_sq, ".exp_avg_sq");
    if (s.max_exp_avg_sq.defined()) gather(s.max_exp_avg_sq, ".max_exp_avg_sq");
    if (s.master.defined()) gather(s.master, ".master");
  }
  synchronize(stream);
  return st;
}

int64_t ShardedAdam::bytes() const {
  int64_t b = 0;
  for (const Slot& s : slots_) {
    b += static_cast<int64_t>(s.exp_avg.nbytes() + s.exp_avg_sq.nbytes());
    if (s.max_exp_avg_sq.defined()) b += static_cast<int64_t>(s.max_exp_avg_sq.nbytes());
    if (s.master.defined()) b += static_cast<int64_t>(s.master.nbytes());
  }
  return b;
}

}  // namespace zt::zero
