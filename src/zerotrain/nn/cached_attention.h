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

// The llama family's attention, parameters "<prefix>.q_proj" ... "<prefix>.o_proj".
std::unique_ptr<CachedAttention> make_cached_self_attention(const std::string& prefix,
                                                            const ModelConfig& config);
// GPT-2's attention, parameters "<prefix>.c_attn" and "<prefix>.c_proj".
std::unique_ptr<CachedAttention> make_cached_gpt2_attention(const std::string& prefix,
                                                            const ModelConfig& config);

}  // namespace zt::nn
