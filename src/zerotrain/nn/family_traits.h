// What one model family is, in one value: its name (also its Hugging Face model_type), the
// architecture it builds from a ModelConfig, the names Hugging Face gives its weights, and what its
// init does differently. Each family defines its traits in nn/family_<name>.cpp and is listed once
// in nn/family_registry.cpp; how its config.json is read and written lives in
// io/hf_config_families.cpp (io/ is above nn/). Tested by tests/nn/test_family_registry.cpp.
#pragma once

#include "zerotrain/nn/architecture.h"
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

struct FamilyTraits {
  Family family;
  const char* name;  // zerotrain's name for it and its config.json model_type: "llama"
  Architecture (*architecture)(const ModelConfig&);
  HfNames hf;
  // Weights whose init std is divided by sqrt(2 * num_layers) (GPT-2's residual projections),
  // matched by name suffix; "" when none.
  const char* scaled_init_suffix;
};

// The module names of transformers' Llama layout ("model.embed_tokens",
// "model.layers.<i>.self_attn", "model.norm", ...), which Mistral and Qwen2 share; only the causal
// LM class differs.
HfNames llama_layout_names(const char* causal_lm_class);

}  // namespace zt::nn
