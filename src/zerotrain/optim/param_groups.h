// Which weight decay each parameter gets: the ZeRO engine asks once per parameter while laying out
// its flat buffers, then gives each run (see [Note: flat shards] in shard.h) its group's value. By
// default, as the HF Trainer does, only weights decay: norms, biases and embeddings get none.
// Tested by tests/optim/test_param_groups.cpp.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zerotrain/nn/parameter.h"

namespace zt::optim {

struct WeightDecayPolicy {
  float weight_decay = 0.0f;
  // Kinds that decay (default: weights only).
  std::vector<nn::ParamKind> decay_kinds = {nn::ParamKind::weight};
  // A parameter whose name contains one of these never decays, whatever its kind.
  std::vector<std::string> no_decay_names;
};

// policy.weight_decay when the parameter decays, else 0.
float weight_decay_for(const nn::Parameter& p, const WeightDecayPolicy& policy);

// Reads {"weight_decay": 0.01, "decay_kinds": ["weight", "embedding"], "no_decay_names":
// ["lm_head"]} (every key optional; kinds: weight, bias, norm, embedding). Throws ValueError naming
// a bad key or value.
WeightDecayPolicy parse_weight_decay_policy(const nlohmann::json& j);

}  // namespace zt::optim
