// Llama (transformers' modeling_llama.py): RMSNorm, SwiGLU, RoPE, grouped-query attention; biases
// only as config.json asks (attention_bias on q/k/v/o, mlp_bias). See nn/family_traits.h.
#include "zerotrain/nn/family_llama.h"

#include "zerotrain/core/error.h"

namespace zt::nn {

using nlohmann::json;

namespace {
// rope_scaling (transformers 4) or rope_parameters (transformers 5): "default" or "llama3".
void parse_rope_type(const HfConfigFields& r, ModelConfig& c) {
  const char* type_key = r.present("rope_type") ? "rope_type" : "type";
  const std::string type = r.has(type_key) ? r.req_str(type_key) : "default";
  if (type == "default") return;
  if (type != "llama3")
    r.unsupported(type_key,
                  str(quote_excerpt(type), " is not supported (supported: default, llama3)"));
  c.rope_scaling.factor = r.req_num("factor");
  c.rope_scaling.low_freq_factor = r.req_num("low_freq_factor");
  c.rope_scaling.high_freq_factor = r.req_num("high_freq_factor");
  c.rope_scaling.original_max_position_embeddings = r.req_int("original_max_position_embeddings");
  if (!(c.rope_scaling.factor > 0))
    r.unsupported("factor", str("must be positive, got ", c.rope_scaling.factor));
  if (!(c.rope_scaling.high_freq_factor > c.rope_scaling.low_freq_factor))
    r.unsupported("high_freq_factor", "must exceed low_freq_factor");
  if (c.rope_scaling.original_max_position_embeddings <= 0)
    r.unsupported("original_max_position_embeddings", "must be positive");
}

void parse_rope(const HfConfigFields& f, ModelConfig& c) {
  c.rope_theta = f.opt_num("rope_theta", 10000.0);
  if (f.has("rope_parameters")) {
    const HfConfigFields r = f.sub("rope_parameters");
    c.rope_theta = r.opt_num("rope_theta", c.rope_theta);
    parse_rope_type(r, c);
  } else if (f.has("rope_scaling")) {
    parse_rope_type(f.sub("rope_scaling"), c);
  }
  if (!(c.rope_theta > 0)) f.unsupported("rope_theta", str("must be positive, got ", c.rope_theta));
}

json rope_scaling(const ModelConfig& c) {
  if (c.rope_scaling.factor == 0) return nullptr;
  return {{"rope_type", "llama3"},
          {"factor", c.rope_scaling.factor},
          {"low_freq_factor", c.rope_scaling.low_freq_factor},
          {"high_freq_factor", c.rope_scaling.high_freq_factor},
          {"original_max_position_embeddings", c.rope_scaling.original_max_position_embeddings}};
}

}  // namespace

void read_llama_like(const HfConfigFields& f, ModelConfig& c, int64_t max_positions) {
  c.vocab_size = f.req_int("vocab_size");
  c.hidden_size = f.req_int("hidden_size");
  c.intermediate_size = f.req_int("intermediate_size");
  c.num_layers = f.req_int("num_hidden_layers");
  c.num_heads = f.req_int("num_attention_heads");
  c.num_kv_heads = f.opt_int("num_key_value_heads", c.num_heads);
  c.head_dim = f.opt_int("head_dim", 0);
  c.max_position_embeddings = f.opt_int("max_position_embeddings", max_positions);
  c.norm_eps = f.opt_num("rms_norm_eps", 1e-6);
  parse_rope(f, c);
  c.tie_word_embeddings = f.opt_bool("tie_word_embeddings", false);
  c.hidden_act = f.opt_str("hidden_act", "silu");
  if (c.hidden_act != "silu")
    f.unsupported("hidden_act",
                  str(quote_excerpt(c.hidden_act), " is not supported (supported: silu)"));
}

json write_llama_like(const ModelConfig& c) {
  return {{"vocab_size", c.vocab_size},
          {"hidden_size", c.hidden_size},
          {"intermediate_size", c.intermediate_size},
          {"num_hidden_layers", c.num_layers},
          {"num_attention_heads", c.num_heads},
          {"num_key_value_heads", c.num_kv_heads},
          {"max_position_embeddings", c.max_position_embeddings},
          {"rms_norm_eps", c.norm_eps},
          {"rope_theta", c.rope_theta},
          {"rope_scaling", rope_scaling(c)},
          {"hidden_act", c.hidden_act},
          {"tie_word_embeddings", c.tie_word_embeddings},
          {"initializer_range", 0.02},
          {"attention_dropout", 0.0},
          {"use_cache", true}};
}

namespace {
// llama: biases as attention_bias and mlp_bias say.
void read_llama(const HfConfigFields& f, ModelConfig& c) {
  read_llama_like(f, c, 2048);
  c.attention_bias = f.opt_bool("attention_bias", false);
  c.mlp_bias = f.opt_bool("mlp_bias", false);
  read_token_ids(f, c, 1, 2);
}

json write_llama(const ModelConfig& c) {
  json j = write_llama_like(c);
  j["head_dim"] = c.head_dim;
  j["attention_bias"] = c.attention_bias;
  j["mlp_bias"] = c.mlp_bias;
  j["pretraining_tp"] = 1;
  return j;
}

Architecture architecture(const ModelConfig& c) {
  Architecture a;
  a.rotary = true;
  a.qkv_bias = a.o_bias = c.attention_bias;
  a.mlp_bias = c.mlp_bias;
  return a;
}
}  // namespace

HfNames llama_layout_names(const char* causal_lm_class) {
  return {.base_prefix = "model.",
          .embed_tokens = "model.embed_tokens",
          .positions = "",
          .layer_prefix = "model.layers.",
          .input_norm = ".input_layernorm",
          .attention = ".self_attn",
          .post_attention_norm = ".post_attention_layernorm",
          .final_norm = "model.norm",
          .causal_lm_class = causal_lm_class};
}

const FamilyTraits& llama_family() {
  static const FamilyTraits traits = {
      .family = Family::llama,
      .name = "llama",
      .config_json = {kLlamaKeys, true, read_llama, write_llama},
      .architecture = architecture,
      .hf = llama_layout_names("LlamaForCausalLM"),
      .scaled_init_suffix = "",
  };
  return traits;
}

}  // namespace zt::nn
