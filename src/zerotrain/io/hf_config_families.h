// How each family's config.json spells, defaults and checks its fields, one row per family
// (nn/family_traits.h holds the rest of what a family is; this part needs io/). Read by
// hf_config_read.cpp and hf_config_write.cpp. Tested by tests/io/test_hf_config_families.cpp,
// tests/io/test_hf_config.cpp and tests/io/test_hf_config_transformers.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include "zerotrain/io/hf_config_fields.h"
#include "zerotrain/nn/model_config.h"

namespace zt::io {

// The config.json keys of the shape fields whose names differ between families, for messages.
struct HfConfigKeys {
  const char* hidden;
  const char* layers;
  const char* heads;
  const char* inter;
  const char* max_pos;
  const char* eps;
};

struct HfConfigFamily {
  nn::Family family;
  HfConfigKeys keys;
  // config.json may set num_key_value_heads and head_dim (gpt2's may not).
  bool reads_kv_heads;
  // Every field but torch_dtype into `c` (c.family already set), with transformers' defaults for
  // omitted keys; an unsupported value is a ValueError naming its key. The shape is checked after.
  void (*read)(const HfConfigFields& f, nn::ModelConfig& c);
  // The family's own keys as transformers writes them; architectures, model_type, torch_dtype and
  // the token ids are added by hf_config_json.
  nlohmann::json (*write)(const nn::ModelConfig& c);
};

const HfConfigFamily& hf_config_family(nn::Family family);

}  // namespace zt::io
