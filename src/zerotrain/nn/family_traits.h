// What one model family is, in one value: its name (also its Hugging Face model_type), how its
// config.json is read and written, the architecture it builds from a ModelConfig, the names
// Hugging Face gives its weights, and what its init does differently. Each family defines its
// traits in nn/family_<name>.cpp and is listed once in nn/family_registry.cpp. Tested by
// tests/nn/test_family_registry.cpp and tests/io/test_hf_config_families.cpp.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "zerotrain/nn/architecture.h"
#include "zerotrain/nn/hf_config_fields.h"
#include "zerotrain/nn/model_config.h"

namespace zt::nn {

// The Hugging Face module names (transformers' modeling_<name>.py) of the parts every family has.
struct HfNames {
  const char* base_prefix;          // transformers' base_model_prefix and its dot: "model."
  const char* embed_tokens;         // the input embedding: "model.embed_tokens"
  const char* positions;            // the learned position table: "transformer.wpe"; "" when none
  const char* layer_prefix;         // layer i is layer_prefix + i: "model.layers."
  const char* input_norm;           // the norm before attention, within a layer: ".input_layernorm"
  const char* attention;            // the attention, within a layer: ".self_attn"
  const char* post_attention_norm;  // the norm before the MLP, within a layer
  const char* final_norm;           // after the last layer: "model.norm"
  const char* causal_lm_class;      // config.json "architectures": "LlamaForCausalLM"
};

// The config.json keys of the shape fields whose names differ between families, for messages.
struct HfConfigKeys {
  const char* hidden;
  const char* layers;
  const char* heads;
  const char* inter;
  const char* max_pos;
  const char* eps;
};

// How the family's config.json spells, defaults and checks its fields (transformers'
// configuration_<name>.py), for io/hf_config_read.cpp and io/hf_config_write.cpp.
struct HfConfigRules {
  HfConfigKeys keys;
  // config.json may set num_key_value_heads and head_dim (gpt2's may not).
  bool reads_kv_heads;
  // Every field but torch_dtype into `c` (c.family already set), with transformers' defaults for
  // omitted keys; an unsupported value is a ValueError naming its key. The shape is checked after.
  void (*read)(const HfConfigFields& f, ModelConfig& c);
  // The family's own keys as transformers writes them; architectures, model_type, torch_dtype and
  // the token ids are added by io's hf_config_json.
  nlohmann::json (*write)(const ModelConfig& c);
};

struct FamilyTraits {
  Family family;
  const char* name;  // zerotrain's name for it and its config.json model_type: "llama"
  HfConfigRules config_json;
  Architecture (*architecture)(const ModelConfig&);
  HfNames hf;
  // Weights whose init std is divided by sqrt(2 * num_layers) (GPT-2's residual projections),
  // matched by name suffix; "" when none.
  const char* scaled_init_suffix;
};

}  // namespace zt::nn
