// What the families of transformers' Llama layout (llama, mistral, qwen2) share, defined in
// nn/family_llama.cpp: the module names and the config.json keys, their reading and writing. Tested
// by tests/nn/test_family_registry.cpp and tests/io/test_hf_config_families.cpp.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "zerotrain/nn/family_traits.h"

namespace zt::nn {

// "model.embed_tokens", "model.layers.<i>.self_attn", "model.norm", ...; only the causal LM class
// differs between the three.
HfNames llama_layout_names(const char* causal_lm_class);

inline constexpr HfConfigKeys kLlamaKeys = {
    "hidden_size",       "num_hidden_layers",       "num_attention_heads",
    "intermediate_size", "max_position_embeddings", "rms_norm_eps"};

// The keys the three share (shape, norm eps, RoPE with its llama3 scaling, tied embeddings,
// hidden_act "silu"); `max_positions` is the family's default max_position_embeddings.
void read_llama_like(const HfConfigFields& f, ModelConfig& c, int64_t max_positions);
nlohmann::json write_llama_like(const ModelConfig& c);

}  // namespace zt::nn
