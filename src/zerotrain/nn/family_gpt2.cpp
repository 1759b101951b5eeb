// GPT-2 (transformers' modeling_gpt2.py): LayerNorm, GELU-tanh MLP, learned positions, Conv1D
// projections with q/k/v fused, biases everywhere, and the residual projections' init scaled by
// 1/sqrt(2 * num_layers). See nn/family_traits.h.
#include "zerotrain/nn/family_traits.h"

#include <nlohmann/json.hpp>

#include "zerotrain/core/error.h"

namespace zt::nn {

namespace {
using nlohmann::json;

constexpr HfConfigKeys kGpt2Keys = {"n_embd",  "n_layer",     "n_head",
                                    "n_inner", "n_positions", "layer_norm_epsilon"};

// gpt2: its own spelling of the shape keys, tied embeddings unless told otherwise, biases
// everywhere.
void read_gpt2(const HfConfigFields& f, ModelConfig& c) {
  c.vocab_size = f.req_int("vocab_size");
  c.hidden_size = f.req_int("n_embd");
  c.num_layers = f.req_int("n_layer");
  c.num_heads = f.req_int("n_head");
  c.num_kv_heads = c.num_heads;
  c.intermediate_size = f.opt_int("n_inner", 4 * c.hidden_size);
  c.max_position_embeddings = f.opt_int("n_positions", 1024);
  c.norm_eps = f.opt_num("layer_norm_epsilon", 1e-5);
  c.hidden_act = f.opt_str("activation_function", "gelu_new");
  if (c.hidden_act != "gelu_new" && c.hidden_act != "gelu_pytorch_tanh")
    f.unsupported("activation_function",
                  str(quote_excerpt(c.hidden_act),
                      " is not supported (supported: gelu_new, gelu_pytorch_tanh)"));
  c.tie_word_embeddings = f.opt_bool("tie_word_embeddings", true);
  c.attention_bias = true;
  c.mlp_bias = true;
  if (!f.opt_bool("scale_attn_weights", true))
    f.unsupported("scale_attn_weights", "false is not supported");
  if (f.opt_bool("scale_attn_by_inverse_layer_idx", false))
    f.unsupported("scale_attn_by_inverse_layer_idx", "true is not supported");
  if (f.opt_bool("add_cross_attention", false))
    f.unsupported("add_cross_attention", "true is not supported");
  read_token_ids(f, c, 50256, 50256);
}

json write_gpt2(const ModelConfig& c) {
  return {{"vocab_size", c.vocab_size},
          {"n_embd", c.hidden_size},
          {"n_layer", c.num_layers},
          {"n_head", c.num_heads},
          {"n_inner", c.intermediate_size},
          {"n_positions", c.max_position_embeddings},
          {"n_ctx", c.max_position_embeddings},
          {"layer_norm_epsilon", c.norm_eps},
          {"activation_function", c.hidden_act},
          {"tie_word_embeddings", c.tie_word_embeddings},
          {"initializer_range", 0.02},
          {"resid_pdrop", 0.1},
          {"embd_pdrop", 0.1},
          {"attn_pdrop", 0.1},
          {"scale_attn_weights", true},
          {"use_cache", true}};
}

Architecture architecture(const ModelConfig&) {
  Architecture a;
  a.layer_norm = a.learned_positions = a.norms_interleaved = true;
  a.attention = AttentionKind::gpt2;
  a.mlp = MlpKind::gpt2_gelu;
  a.qkv_bias = a.o_bias = a.mlp_bias = true;
  return a;
}
}  // namespace

const FamilyTraits& gpt2_family() {
  static const FamilyTraits traits = {
      .family = Family::gpt2,
      .name = "gpt2",
      .config_json = {kGpt2Keys, false, read_gpt2, write_gpt2},
      .architecture = architecture,
      .hf = {.base_prefix = "transformer.",
             .embed_tokens = "transformer.wte",
             .positions = "transformer.wpe",
             .layer_prefix = "transformer.h.",
             .input_norm = ".ln_1",
             .attention = ".attn",
             .post_attention_norm = ".ln_2",
             .final_norm = "transformer.ln_f",
             .causal_lm_class = "GPT2LMHeadModel"},
      .scaled_init_suffix = ".c_proj.weight",
  };
  return traits;
}

}  // namespace zt::nn
