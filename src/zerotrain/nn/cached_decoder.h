// A causal language model for generation: the layers of nn::Transformer's blocks, with the same
// Hugging Face parameter names, run forward only over a KV cache (kv_cache.h): a prefill of the
// prompt, then one token at a time, each new token attending to the cached keys and values of
// every earlier position. It owns no parameter storage: use_values_of() points each parameter at
// the value of the same name in a Transformer (loaded by io::load_pretrained or trained), so the
// two never disagree. Reuses the training layers (Linear, Norm::apply, GatedMlp / GeluMlp,
// Embedding); only the attention differs (cached_attention.h). Tested by
// tests/nn/test_cached_decoder.cpp: the logits of a prefill and of token-by-token steps equal the
// full forward's at every position.
#pragma once

#include <memory>
#include <vector>

#include "zerotrain/nn/cached_attention.h"
#include "zerotrain/nn/embedding.h"
#include "zerotrain/nn/kv_cache.h"
#include "zerotrain/nn/model_config.h"
#include "zerotrain/nn/norm.h"
#include "zerotrain/nn/sublayer.h"
#include "zerotrain/nn/transformer.h"

namespace zt::nn {

class CachedDecoder {
 public:
  explicit CachedDecoder(const ModelConfig& config);
  ~CachedDecoder();
  CachedDecoder(const CachedDecoder&) = delete;
  CachedDecoder& operator=(const CachedDecoder&) = delete;

  const ModelConfig& config() const { return config_; }
  // The positions a sequence may reach: max_position_embeddings for learned positions (gpt2),
  // 0 for no limit (RoPE).
  int64_t position_limit() const { return wpe_ ? config_.max_position_embeddings : 0; }
  // Every parameter once, with its Hugging Face name (a tied head lists none of its own).
  std::vector<Parameter*> parameters();
  // Points every parameter's value at `model`'s parameter of the same name (shared storage, the
  // model's dtype and device). ValueError naming a parameter the model lacks.
  void use_values_of(Transformer& model);

  // An empty cache for `batch` sequences of up to `capacity` positions, in the values' dtype on
  // their device.
  KvCache make_cache(int64_t batch, int64_t capacity, Stream stream = {}) const;

  // tokens: i32/i64 [B, T] on the values' device, the tokens of positions cache.length() ..
  // cache.length() + T - 1. Runs them through every layer, appends their keys and values to the
  // cache and returns the logits in the compute dtype: [B, T, V], or [B, 1, V] for the last
  // position only (what generation needs).
  Tensor forward(const Tensor& tokens, KvCache& cache, bool last_only, Stream stream = {});

 private:
  struct Layer;

  ModelConfig config_;
  bool learned_positions_;
  Embedding wte_;
  std::unique_ptr<Embedding> wpe_;  // gpt2 only
  std::vector<std::unique_ptr<Layer>> layers_;
  Norm final_norm_;
  Parameter lm_head_;  // [V, C]; unused when the embedding is tied
};

}  // namespace zt::nn
