// The flat Adam over ParamGroups; see group_adam.h.
#include "zerotrain/zero/group_adam.h"

#include "zerotrain/core/error.h"

namespace zt::zero {

bool decays(const nn::Parameter& p) {
  return p.kind == nn::ParamKind::weight;
}

std::unique_ptr<optim::FlatAdam> make_group_adam(const std::vector<ParamGroup*>& groups,
                                                 RunExtent extent, const AdamOptions& options,
                                                 const optim::OptimizerState& initial,
                                                 Stream stream) {
  std::vector<optim::FlatParam> params;
  std::vector<optim::FlatRun> runs;
  for (const ParamGroup* g : groups) {
    const size_t first = params.size();
    for (const nn::Parameter* p : g->params())
      params.push_back({p->name, p->shape, g->value_dtype(), decays(*p)});
    optim::FlatRun run;
    const int64_t base = g->shard_offset();
    run.value =
        extent == RunExtent::params ? g->value_shard().slice(0, 0, g->numel()) : g->value_shard();
    ZT_ASSERT(extent == RunExtent::shard || (g->world() == 1 && g->replicated()), "zero",
              "whole-parameter runs need a replicated group of a world of one");
    for (const ShardPiece& piece : g->shard_pieces()) {
      size_t i = 0;
      while (g->params()[i] != piece.param)
        ++i;
      run.pieces.push_back({first + i, piece.begin - piece.param_offset,
                            piece.end - piece.param_offset, piece.begin - base});
    }
    runs.push_back(std::move(run));
  }
  return std::make_unique<optim::FlatAdam>(std::move(params), std::move(runs), options.adam,
                                           options.precision, options.guard, initial, stream);
}

optim::OptimizerState gather_full_state(const optim::FlatAdam& adam,
                                        const std::vector<ParamGroup*>& groups,
                                        comm::Communicator& comm, bool keep, Stream stream) {
  if (groups.empty() || groups.front()->world() == 1) return adam.full_state();
  optim::OptimizerState st;
  st.step = adam.step_count();
  if (st.step == 0) return st;
  for (size_t i = 0; i < groups.size(); ++i) {
    const ParamGroup& g = *groups[i];
    for (const optim::FlatAdam::SlotTensor& t : adam.run_state(i)) {
      // Gathers one state tensor of the group and, when kept, copies each parameter's part out.
      Tensor full = Tensor::empty({g.padded_numel()}, t.tensor.dtype(), t.tensor.device(), stream);
      comm.all_gather(t.tensor.data(), full.data(), static_cast<size_t>(g.shard_numel()),
                      t.tensor.dtype(), stream);
      if (!keep) continue;
      const Tensor host = full.to(Device::cpu(), stream);
      synchronize(stream);
      for (size_t k = 0; k < g.params().size(); ++k) {
        const nn::Parameter& p = *g.params()[k];
        const int64_t o = g.offsets()[k], n = numel_of(p.shape);
        st.tensors.emplace(p.name + t.slot.suffix, host.slice(0, o, o + n).clone().view(p.shape));
      }
    }
  }
  synchronize(stream);
  return st;
}

}  // namespace zt::zero
