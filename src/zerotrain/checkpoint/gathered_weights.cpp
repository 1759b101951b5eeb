// See gathered_weights.h.
#include "zerotrain/checkpoint/gathered_weights.h"

#include <algorithm>
#include <map>

#include "zerotrain/core/error.h"
#include "zerotrain/io/hf_model.h"
#include "zerotrain/io/tensor_copy.h"

namespace zt::checkpoint {

uint64_t GatheredWeights::bytes() const {
  uint64_t b = 0;
  for (const io::NamedTensor& t : tensors)
    b += t.tensor.nbytes();
  return b;
}

GatheredWeights gather_weights(zero::ZeroStage& engine, const nn::ModelConfig& config,
                               const std::vector<nn::Parameter*>& params, DType dtype, bool keep,
                               Stream stream) {
  GatheredWeights out{config, dtype, {}};
  const std::vector<const nn::Parameter*> saved = io::saved_parameters(config, params);
  std::map<const nn::Parameter*, Tensor> copies;
  engine.for_each_full_group([&](const zero::ParamGroup& group) {
    if (!keep) return;
    for (const nn::Parameter* p : group.params())
      if (std::find(saved.begin(), saved.end(), p) != saved.end() && !copies.contains(p))
        copies[p] = io::host_copy_as(p->value, dtype, "checkpoint", p->name, stream);
  });
  if (!keep) return out;
  for (const nn::Parameter* p : saved) {
    const auto it = copies.find(p);
    if (it == copies.end())
      throw ValueError("checkpoint", str(p->name, ": no ZeRO group holds this parameter"));
    out.tensors.emplace_back(p->name, std::move(it->second));
  }
  return out;
}

void write_weights(const GatheredWeights& weights, const std::filesystem::path& dir,
                   uint64_t max_shard_bytes) {
  io::write_pretrained(weights.config, weights.tensors, dir, weights.dtype, max_shard_bytes);
}

}  // namespace zt::checkpoint
