// The two residual branches of a decoder layer, of the kinds its family's Architecture names
// (AttentionKind, MlpKind): the one place that maps a kind to its Sublayer, so a family that reuses
// known kinds only names them in its nn/family_<name>.cpp, and a new kind adds a case here beside
// its layer. Generation's cached attention maps the same kinds (nn/cached_attention.h). Tested by
// tests/nn/test_family_registry.cpp.
#pragma once

#include <memory>
#include <string>

#include "zerotrain/nn/model_config.h"
#include "zerotrain/nn/sublayer.h"

namespace zt::nn {

// prefix: the sublayer's Hugging Face name within its layer ("model.layers.3.self_attn").
std::unique_ptr<Sublayer> make_attention(const std::string& prefix, const ModelConfig& config);
// prefix: "model.layers.3.mlp".
std::unique_ptr<Sublayer> make_mlp(const std::string& prefix, const ModelConfig& config);

}  // namespace zt::nn
