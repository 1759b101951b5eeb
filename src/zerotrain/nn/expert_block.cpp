// ExpertBlock's experts and the check that they form one ZeRO unit (see expert_block.h).
#include "zerotrain/nn/expert_block.h"

#include <map>

#include "zerotrain/core/error.h"

namespace zt::nn {

ExpertBlock::ExpertBlock(std::vector<std::unique_ptr<Sublayer>> experts)
    : experts_(std::move(experts)) {
  if (experts_.empty()) throw ValueError("expert_block", "a block of experts needs an expert");
  for (size_t e = 0; e < experts_.size(); ++e)
    if (!experts_[e]) throw ValueError("expert_block", str("expert ", e, " is null"));
}

Sublayer& ExpertBlock::expert(int64_t e) {
  if (e < 0 || e >= num_experts())
    throw ValueError("expert_block", str("expert ", e, " of ", num_experts()));
  return *experts_[static_cast<size_t>(e)];
}

std::vector<Parameter*> ExpertBlock::expert_parameters(int64_t e) {
  std::vector<Parameter*> out;
  expert(e).append_parameters(out);
  return out;
}

void ExpertBlock::append_expert_parameters(std::vector<Parameter*>& out) {
  for (auto& e : experts_)
    e->append_parameters(out);
}

void check_expert_unit(ExpertBlock& block) {
  std::map<const Parameter*, int> listed;
  for (const Parameter* p : block.parameters())
    ++listed[p];
  for (int64_t e = 0; e < block.num_experts(); ++e)
    for (const Parameter* p : block.expert_parameters(e)) {
      const int n = listed.count(p) ? listed[p] : 0;
      if (n != 1)
        throw ValueError("expert_block", str(block.name(), ": expert ", e, "'s ", p->name,
                                             " is listed ", n, " times among its parameters"));
    }
}

}  // namespace zt::nn
