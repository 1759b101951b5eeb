// This rank's reduced gradients by parameter; see owned_gradients.h.
#include "zerotrain/train/owned_gradients.h"

#include <unordered_map>

namespace zt::train {

std::vector<OwnedGradient> owned_gradients(const zero::ZeroStage& engine) {
  std::vector<OwnedGradient> out;
  int64_t first_index = 0;
  for (const auto& group : engine.groups()) {
    const std::vector<nn::Parameter*>& params = group->params();
    if (group->grad_shard().defined()) {
      std::unordered_map<const nn::Parameter*, int64_t> index;
      for (size_t i = 0; i < params.size(); ++i)
        index[params[i]] = first_index + static_cast<int64_t>(i);
      for (const zero::ShardPiece& piece : group->shard_pieces()) {
        const int64_t at = piece.begin - group->shard_offset();
        out.push_back({piece.param, index.at(piece.param),
                       group->grad_shard().slice(0, at, at + piece.end - piece.begin)});
      }
    } else {
      // Stage 0: every rank holds each parameter's whole reduced gradient.
      for (size_t i = 0; i < params.size(); ++i)
        if (params[i]->grad.defined())
          out.push_back(
              {params[i], first_index + static_cast<int64_t>(i), params[i]->grad.flatten()});
    }
    first_index += static_cast<int64_t>(params.size());
  }
  return out;
}

}  // namespace zt::train
