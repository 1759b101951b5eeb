// Parameter counts of a model from its config, read off zerotrain's own model builder
// (nn::Transformer with allocate = false: shapes and names, no storage): the total (tied
// embeddings counted once), the largest layer as DeepSpeed counts it
// (most parameters held directly by one Hugging Face module: max over model.modules() of
// sum(p.numel() for p in m.parameters(recurse=False)); a tied lm_head still holds its [V, C]
// table), and the parameters of each zerotrain block (embedding, decoder layers, head): the
// all-gather / reduce-scatter units of ZeRO (see ../shared/DESIGN.md "The unit of sharding").
// The model is the causal LM zerotrain trains (lm_head counted unless tied); DeepSpeed's
// documented examples load AutoModel, which has no lm_head, so their totals can be smaller.
// Tested by tests/estimate/test_param_count.cpp (published counts of Llama-3-8B, Llama-3.2-1B,
// GPT-2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zerotrain/nn/model_config.h"

namespace zt::estimate {

struct ParamUnit {
  std::string name;  // the block's name: "model.embed_tokens", "model.layers.i", "lm_head"
  int64_t params = 0;
};

struct ParamCount {
  int64_t total = 0;          // == ModelConfig::num_params()
  int64_t largest_layer = 0;  // DeepSpeed's largest_layer_params
  std::vector<ParamUnit> units;
  // The largest and second-largest unit (a ZeRO-3 gather in flight plus its prefetch).
  int64_t largest_unit() const;
  int64_t second_largest_unit() const;
};

// Validates the config (ValueError naming the field) and counts. A module is a parameter's name
// without its last component ("model.layers.0.mlp.gate_proj"); a tied head's shared table counts
// for the module "lm_head", as Hugging Face's lm_head holds it.
ParamCount count_params(const nn::ModelConfig& config);

}  // namespace zt::estimate
