// The per-family rows of config.json reading and writing (see hf_config_families.h): llama,
// mistral and qwen2 share the llama keys and add their own; gpt2 has its own spelling.
#include "zerotrain/io/hf_config_families.h"

#include <algorithm>

#include "zerotrain/core/error.h"

namespace zt::io {

namespace {
using nlohmann::json;
using nn::Family;
using nn::ModelConfig;

constexpr HfConfigKeys kLlamaKeys = {
    "hidden_size",       "num_hidden_layers",       "num_attention_heads",
    "intermediate_size", "max_position_embeddings", "rms_norm_eps"};
constexpr HfConfigKeys kGpt2Keys = {"n_embd",  "n_layer",     "n_head",
                                    "n_inner", "n_positions", "layer_norm_epsilon"};

// A token id: an integer, a list (the first is kept), or null (-1).
int64_t token_id(const HfConfigFields& f, const char* key, int64_t def) {
  if (!f.present(key)) return def;
  const json& v = f.at(key);
  if (v.is_null()) return -1;
  if (v.is_array()) {
    if (v.empty()) return -1;
    if (!v[0].is_number_integer()) f.bad_type(key, "an integer or a list of integers");
    return v[0].get<int64_t>();
  }
  return f.req_int(key);
}

void read_token_ids(const HfConfigFields& f, ModelConfig& c, int64_t bos, int64_t eos) {
  c.bos_token_id = token_id(f, "bos_token_id", bos);
  c.eos_token_id = token_id(f, "eos_token_id", eos);
}

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

// The keys llama, mistral and qwen2 share; `max_positions` is the family's default.
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

json rope_scaling(const ModelConfig& c) {
  if (c.rope_scaling.factor == 0) return nullptr;
  return {{"rope_type", "llama3"},
          {"factor", c.rope_scaling.factor},
          {"low_freq_factor", c.rope_scaling.low_freq_factor},
          {"high_freq_factor", c.rope_scaling.high_freq_factor},
          {"original_max_position_embeddings", c.rope_scaling.original_max_position_embeddings}};
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

// mistral: a sliding window of 4096 unless config.json says otherwise (null: none).
void read_mistral(const HfConfigFields& f, ModelConfig& c) {
  read_llama_like(f, c, 4096 * 32);
  c.sliding_window = f.present("sliding_window") ? f.opt_int("sliding_window", 0) : 4096;
  read_token_ids(f, c, 1, 2);
}

json write_mistral(const ModelConfig& c) {
  json j = write_llama_like(c);
  j["head_dim"] = c.head_dim;
  j["sliding_window"] = c.sliding_window > 0 ? json(c.sliding_window) : json(nullptr);
  return j;
}

// Qwen2 slides the window over layers i >= max_window_layers, and only with use_sliding_window.
int64_t qwen2_sliding_window(const HfConfigFields& f, int64_t num_layers) {
  if (!f.opt_bool("use_sliding_window", false)) return 0;
  if (f.present("sliding_window") && !f.has("sliding_window")) return 0;  // null: no window
  const int64_t window = f.opt_int("sliding_window", 4096);
  int64_t sliding_layers = 0;
  if (f.has("layer_types")) {
    const json& types = f.at("layer_types");
    if (!types.is_array()) f.bad_type("layer_types", "a list of strings");
    for (const json& t : types) {
      if (!t.is_string()) f.bad_type("layer_types", "a list of strings");
      sliding_layers += t.get<std::string>() == "sliding_attention";
    }
  } else {
    const int64_t first = f.opt_int("max_window_layers", 28);
    sliding_layers = std::max<int64_t>(0, num_layers - std::max<int64_t>(0, first));
  }
  if (sliding_layers == 0) return 0;
  if (sliding_layers != num_layers)
    f.unsupported(f.has("layer_types") ? "layer_types" : "max_window_layers",
                  str("a sliding window on ", sliding_layers, " of ", num_layers,
                      " layers is not supported (only on all layers or none)"));
  return window;
}

// qwen2: q/k/v biases always; no bos/eos ids by default.
void read_qwen2(const HfConfigFields& f, ModelConfig& c) {
  read_llama_like(f, c, 32768);
  c.attention_bias = true;  // q/k/v projections always carry biases in Qwen2
  c.sliding_window = qwen2_sliding_window(f, c.num_layers);
  read_token_ids(f, c, -1, -1);
}

json write_qwen2(const ModelConfig& c) {
  json j = write_llama_like(c);
  // Qwen2 reads head_dim when present and derives it otherwise; published configs omit it.
  if (c.head_dim != c.hidden_size / c.num_heads) j["head_dim"] = c.head_dim;
  j["use_sliding_window"] = c.sliding_window > 0;
  j["sliding_window"] = c.sliding_window > 0 ? json(c.sliding_window) : json(nullptr);
  j["max_window_layers"] = c.sliding_window > 0 ? 0 : c.num_layers;
  return j;
}

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

// One row per family.
constexpr HfConfigFamily kFamilies[] = {
    {Family::llama, kLlamaKeys, true, read_llama, write_llama},
    {Family::mistral, kLlamaKeys, true, read_mistral, write_mistral},
    {Family::qwen2, kLlamaKeys, true, read_qwen2, write_qwen2},
    {Family::gpt2, kGpt2Keys, false, read_gpt2, write_gpt2},
};
}  // namespace

const HfConfigFamily& hf_config_family(Family family) {
  for (const HfConfigFamily& row : kFamilies)
    if (row.family == family) return row;
  throw ValueError(kHfConfigComponent,
                   str(nn::family_name(family), ": no config.json reader for this family"));
}

}  // namespace zt::io
