// Float64 reference of a whole causal LM, written straight from Hugging Face's modeling_llama.py /
// modeling_mistral.py / modeling_qwen2.py / modeling_gpt2.py math over parameters looked up by
// their HF names: embeddings (+ gpt2 positions), pre-norm layers (RMSNorm or LayerNorm), attention
// with RoPE (Llama-3 scaling computed here in float64), grouped-query heads, causal mask and
// sliding window, SwiGLU or GELU-tanh MLP, final norm, (tied) lm_head, mean cross-entropy over
// targets
// != -100. Independent of src/zerotrain/nn: it shares only the parameter names.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "zerotrain/nn/model_config.h"

namespace zt::test {

using RefParams = std::map<std::string, std::vector<double>>;

struct RefOutput {
  std::vector<double> logits;  // [B, S, V]
  double loss = 0;
};

RefOutput reference_forward(const nn::ModelConfig& c, const RefParams& p,
                            const std::vector<int64_t>& tokens, const std::vector<int64_t>& targets,
                            int64_t batch, int64_t seq);

// The inverse RoPE frequencies in float64, Llama-3-scaled when c.rope_scaling.factor != 0.
std::vector<double> reference_inv_freq(const nn::ModelConfig& c);

}  // namespace zt::test
