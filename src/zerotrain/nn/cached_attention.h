// The attention sublayer of a decoder layer during generation: the projections of
// self_attention.h (llama family) or gpt2_attention.h (GPT-2), with the same Hugging Face
// parameter names, but forward only and over a KV cache: the new tokens' keys and values are
// written to the cache and their queries attend to every cached position
// (kernels/cached_attention.h). Tested by tests/nn/test_cached_decoder.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "zerotrain/nn/kv_cache.h"
#include "zerotrain/nn/model_config.h"
#include "zerotrain/nn/parameter.h"
#include "zerotrain/nn/sublayer.h"

namespace zt::nn {

// Where the new tokens sit: positions past .. past + T - 1 of every batch row.
struct NewPositions {
  int64_t past = 0;
  Tensor ids;  // i32 [T] on the model's device: past .. past + T - 1 (RoPE's positions)
};

class CachedAttention {
 public:
  virtual ~CachedAttention() = default;
  // x: [N = B * T, C] normed hidden states of the new tokens -> [N, C]. Writes their keys and
  // values to `cache` for `layer` (the caller advances the cache after the last layer).
  virtual Tensor forward(const Tensor& x, TokenDims dims, const NewPositions& positions,
                         KvCache& cache, int64_t layer, Stream stream) = 0;
  virtual void append_parameters(std::vector<Parameter*>& out) = 0;
};

// The attention of the kind config's Architecture names (nn/layer_parts.h makes the training one):
// parameters "<prefix>.q_proj" ... (AttentionKind::projected) or "<prefix>.c_attn/c_proj" (gpt2).
std::unique_ptr<CachedAttention> make_cached_attention(const std::string& prefix,
                                                       const ModelConfig& config);

}  // namespace zt::nn
