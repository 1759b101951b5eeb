// The shape of a transformer, as a Hugging Face config.json describes it (io/hf_config.h reads it).
// Families: llama, mistral, qwen2 (RMSNorm, SwiGLU, RoPE, grouped-query attention) and gpt2
// (LayerNorm, GELU-tanh, learned positions, tied embeddings, biases everywhere).
#pragma once

#include <cstdint>
#include <string>

namespace zt::nn {

enum class Family { llama, mistral, qwen2, gpt2 };
std::string family_name(Family f);

// Llama-3 "rope_scaling": {"rope_type": "llama3", ...}; factor 0 means no scaling.
struct RopeScaling {
  double factor = 0;
  double low_freq_factor = 1;
  double high_freq_factor = 4;
  int64_t original_max_position_embeddings = 8192;
};

struct ModelConfig {
  Family family = Family::llama;
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;  // == num_heads without grouped-query attention
  int64_t head_dim = 0;      // hidden_size / num_heads unless the config says otherwise
  int64_t max_position_embeddings = 0;
  double norm_eps = 1e-5;     // rms_norm_eps or layer_norm_epsilon
  double rope_theta = 10000;  // unused by gpt2
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  bool attention_bias = false;      // llama: q/k/v/o biases. The other families fix their biases
  bool mlp_bias = false;            // (qwen2 q/k/v, gpt2 all, mistral none): nn/architecture.h
  int64_t sliding_window = 0;       // 0 = full causal attention
  std::string hidden_act = "silu";  // silu | gelu_new | gelu_pytorch_tanh
  std::string torch_dtype = "float32";
  int64_t bos_token_id = -1;
  int64_t eos_token_id = -1;

  // Throws ValueError naming the field for an inconsistent shape (heads not dividing, ...).
  void validate() const;
  // Parameters in the model (tied embeddings counted once) and without the embeddings
  // (input embedding, gpt2 positions; the head counts unless tied), the N of MFU's 6N.
  int64_t num_params() const;
  int64_t num_non_embedding_params() const;
};

}  // namespace zt::nn
