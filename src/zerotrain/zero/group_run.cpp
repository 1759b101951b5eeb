// One group's parameters and run for the flat optimizer; see group_run.h.
#include "zerotrain/zero/group_run.h"

#include <utility>

#include "zerotrain/core/error.h"

namespace zt::zero {

int64_t run_numel(const ParamGroup& g, RunExtent extent) {
  return extent == RunExtent::shard ? g.shard_numel() : g.numel();
}

Tensor run_value(const ParamGroup& g, RunExtent extent) {
  if (extent == RunExtent::shard) return g.value_shard();
  return g.value_shard().slice(0, 0, g.numel());
}

void add_group_run(const ParamGroup& g, RunExtent extent, Tensor value,
                   std::vector<optim::FlatParam>& params, std::vector<optim::FlatRun>& runs) {
  const size_t first = params.size();
  for (const nn::Parameter* p : g.params())
    params.push_back({p->name, p->shape, g.value_dtype(), decays(*p)});
  ZT_ASSERT(extent == RunExtent::shard || (g.world() == 1 && g.replicated()), "zero",
            "whole-parameter runs need a replicated group of a world of one");
  optim::FlatRun run;
  run.value = std::move(value);
  const int64_t base = g.shard_offset();
  for (const ShardPiece& piece : g.shard_pieces()) {
    size_t i = 0;
    while (g.params()[i] != piece.param)
      ++i;
    run.pieces.push_back({first + i, piece.begin - piece.param_offset,
                          piece.end - piece.param_offset, piece.begin - base});
  }
  runs.push_back(std::move(run));
}

}  // namespace zt::zero
