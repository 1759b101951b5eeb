// parse_hf_config / read_hf_config: config.json -> nn::ModelConfig (see hf_config.h).
#include <cmath>
#include <limits>

#include "zerotrain/core/files.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/core/json_util.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/nn/family_registry.h"
#include "zerotrain/nn/model_size.h"

namespace zt::io {

namespace {
constexpr std::string_view kComponent = "hf_config";
using nlohmann::json;
using nn::Family;
using nn::ModelConfig;

// Typed access to the keys of one JSON object; errors name the source and the full key.
class Fields {
 public:
  Fields(const json& obj, std::string source, std::string prefix = "")
      : obj_(obj), source_(std::move(source)), prefix_(std::move(prefix)) {}

  // Present and not null.
  bool has(const char* key) const { return obj_.contains(key) && !obj_[key].is_null(); }
  bool present(const char* key) const { return obj_.contains(key); }
  const json& at(const char* key) const { return obj_.at(key); }
  std::string key_name(const char* key) const { return prefix_ + key; }
  Fields sub(const char* key) const {
    if (!at(key).is_object()) bad_type(key, "an object");
    return Fields(at(key), source_, key_name(key) + ".");
  }

  int64_t req_int(const char* key) const {
    require(key);
    return as_int(key);
  }
  int64_t opt_int(const char* key, int64_t def) const { return has(key) ? as_int(key) : def; }
  double req_num(const char* key) const {
    require(key);
    return as_num(key);
  }
  double opt_num(const char* key, double def) const { return has(key) ? as_num(key) : def; }
  bool opt_bool(const char* key, bool def) const {
    if (!has(key)) return def;
    if (!at(key).is_boolean()) bad_type(key, "true or false");
    return at(key).get<bool>();
  }
  std::string req_str(const char* key) const {
    require(key);
    return as_str(key);
  }
  std::string opt_str(const char* key, const std::string& def) const {
    return has(key) ? as_str(key) : def;
  }

  [[noreturn]] void bad_type(const char* key, const char* expected) const {
    throw FormatError(kComponent, str(source_, ": ", key_name(key), ": expected ", expected,
                                      ", got ", describe_json(at(key))));
  }
  [[noreturn]] void unsupported(const char* key, const std::string& what) const {
    throw ValueError(kComponent, str(source_, ": ", key_name(key), ": ", what));
  }
  const std::string& source() const { return source_; }

 private:
  void require(const char* key) const {
    if (!obj_.contains(key))
      throw FormatError(kComponent, str(source_, ": missing required key \"", key_name(key), "\""));
    if (obj_[key].is_null())
      throw FormatError(kComponent, str(source_, ": ", key_name(key), " must not be null"));
  }
  int64_t as_int(const char* key) const {
    const json& v = at(key);
    if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<int64_t>();
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max()))
      return static_cast<int64_t>(v.get<uint64_t>());
    bad_type(key, "an integer");
  }
  double as_num(const char* key) const {
    if (!at(key).is_number()) bad_type(key, "a number");
    return at(key).get<double>();
  }
  std::string as_str(const char* key) const {
    if (!at(key).is_string()) bad_type(key, "a string");
    return at(key).get<std::string>();
  }

  const json& obj_;
  std::string source_;
  std::string prefix_;
};

// The HF key of each shape field, per family, for messages.
struct KeyNames {
  const char* hidden;
  const char* layers;
  const char* heads;
  const char* inter;
  const char* max_pos;
  const char* eps;
};
KeyNames key_names(Family f) {
  if (f == Family::gpt2)
    return {"n_embd", "n_layer", "n_head", "n_inner", "n_positions", "layer_norm_epsilon"};
  return {"hidden_size",       "num_hidden_layers",       "num_attention_heads",
          "intermediate_size", "max_position_embeddings", "rms_norm_eps"};
}

Family parse_family(const Fields& f) {
  const std::string t = f.req_str("model_type");
  if (const nn::FamilyTraits* family = nn::find_family(t)) return family->family;
  f.unsupported("model_type",
                str(quote_excerpt(t), " is not supported (supported: ", nn::family_names(), ")"));
}

// A token id: an integer, a list (the first is kept), or null (-1).
int64_t token_id(const Fields& f, const char* key, int64_t def) {
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

// rope_scaling (transformers 4) or rope_parameters (transformers 5): "default" or "llama3".
void parse_rope_type(const Fields& r, ModelConfig& c) {
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

void parse_rope(const Fields& f, ModelConfig& c) {
  c.rope_theta = f.opt_num("rope_theta", 10000.0);
  if (f.has("rope_parameters")) {
    const Fields r = f.sub("rope_parameters");
    c.rope_theta = r.opt_num("rope_theta", c.rope_theta);
    parse_rope_type(r, c);
  } else if (f.has("rope_scaling")) {
    parse_rope_type(f.sub("rope_scaling"), c);
  }
  if (!(c.rope_theta > 0)) f.unsupported("rope_theta", str("must be positive, got ", c.rope_theta));
}

// Qwen2 slides the window over layers i >= max_window_layers, and only with use_sliding_window.
int64_t qwen2_sliding_window(const Fields& f, int64_t num_layers) {
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

void parse_llama_like(const Fields& f, ModelConfig& c) {
  c.vocab_size = f.req_int("vocab_size");
  c.hidden_size = f.req_int("hidden_size");
  c.intermediate_size = f.req_int("intermediate_size");
  c.num_layers = f.req_int("num_hidden_layers");
  c.num_heads = f.req_int("num_attention_heads");
  c.num_kv_heads = f.opt_int("num_key_value_heads", c.num_heads);
  c.head_dim = f.opt_int("head_dim", 0);
  const int64_t default_max_pos = c.family == Family::llama     ? 2048
                                  : c.family == Family::mistral ? 4096 * 32
                                                                : 32768;
  c.max_position_embeddings = f.opt_int("max_position_embeddings", default_max_pos);
  c.norm_eps = f.opt_num("rms_norm_eps", 1e-6);
  parse_rope(f, c);
  c.tie_word_embeddings = f.opt_bool("tie_word_embeddings", false);
  c.hidden_act = f.opt_str("hidden_act", "silu");
  if (c.hidden_act != "silu")
    f.unsupported("hidden_act",
                  str(quote_excerpt(c.hidden_act), " is not supported (supported: silu)"));
  switch (c.family) {
    case Family::llama:
      c.attention_bias = f.opt_bool("attention_bias", false);
      c.mlp_bias = f.opt_bool("mlp_bias", false);
      break;
    case Family::mistral:
      c.sliding_window = f.present("sliding_window") ? f.opt_int("sliding_window", 0) : 4096;
      break;
    case Family::qwen2:
      c.attention_bias = true;  // q/k/v projections always carry biases in Qwen2
      c.sliding_window = qwen2_sliding_window(f, c.num_layers);
      break;
    case Family::gpt2:
      break;
  }
  const bool qwen2 = c.family == Family::qwen2;
  c.bos_token_id = token_id(f, "bos_token_id", qwen2 ? -1 : 1);
  c.eos_token_id = token_id(f, "eos_token_id", qwen2 ? -1 : 2);
}

void parse_gpt2(const Fields& f, ModelConfig& c) {
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
  c.bos_token_id = token_id(f, "bos_token_id", 50256);
  c.eos_token_id = token_id(f, "eos_token_id", 50256);
}

void check_shape(const Fields& f, ModelConfig& c) {
  const KeyNames k = key_names(c.family);
  const bool gpt2 = c.family == Family::gpt2;
  auto positive = [&](const char* key, int64_t v) {
    if (v <= 0) f.unsupported(key, str("must be positive, got ", v));
  };
  positive("vocab_size", c.vocab_size);
  positive(k.hidden, c.hidden_size);
  positive(k.inter, c.intermediate_size);
  positive(k.layers, c.num_layers);
  positive(k.heads, c.num_heads);
  positive(k.max_pos, c.max_position_embeddings);
  if (!gpt2) positive("num_key_value_heads", c.num_kv_heads);
  if (c.head_dim == 0) {
    if (c.hidden_size % c.num_heads != 0)
      f.unsupported(k.hidden, str(c.hidden_size, " is not a multiple of ", k.heads, " (",
                                  c.num_heads, ")", gpt2 ? "" : " and head_dim is not given"));
    c.head_dim = c.hidden_size / c.num_heads;
  }
  positive("head_dim", c.head_dim);
  if (c.num_heads % c.num_kv_heads != 0)
    f.unsupported("num_key_value_heads",
                  str(c.num_kv_heads, " does not divide ", k.heads, " (", c.num_heads, ")"));
  if (!(c.norm_eps > 0)) f.unsupported(k.eps, str("must be positive, got ", c.norm_eps));
  if (c.sliding_window < 0)
    f.unsupported("sliding_window", str("must not be negative, got ", c.sliding_window));
  if (const std::optional<nn::SizeProblem> p = nn::find_size_problem(c))
    f.unsupported(hf_config_key(c.family, p->field), p->message);
}

std::string parse_torch_dtype(const Fields& f) {
  const char* key = f.has("torch_dtype") ? "torch_dtype" : "dtype";
  const std::string d = f.opt_str(key, "float32");
  if (d != "float32" && d != "float16" && d != "bfloat16")
    f.unsupported(
        key, str(quote_excerpt(d), " is not supported (supported: float32, float16, bfloat16)"));
  return d;
}
}  // namespace

ModelConfig parse_hf_config(std::string_view json_text, const std::string& source) {
  const json j = parse_json(json_text, kComponent, source);
  if (!j.is_object())
    throw FormatError(kComponent, str(source, ": expected a JSON object, got ", describe_json(j)));
  const Fields f(j, source);
  ModelConfig c;
  c.family = parse_family(f);
  if (c.family == Family::gpt2)
    parse_gpt2(f, c);
  else
    parse_llama_like(f, c);
  c.torch_dtype = parse_torch_dtype(f);
  check_shape(f, c);
  return c;
}

const char* hf_config_key(Family family, std::string_view field) {
  const KeyNames k = key_names(family);
  if (field == "hidden_size") return k.hidden;
  if (field == "intermediate_size") return k.inter;
  if (field == "num_layers") return k.layers;
  if (field == "num_heads") return k.heads;
  if (field == "max_position_embeddings") return k.max_pos;
  if (field == "num_kv_heads") return "num_key_value_heads";
  if (field == "head_dim") return "head_dim";
  return "vocab_size";
}

ModelConfig read_hf_config(const std::filesystem::path& path) {
  const auto file = std::filesystem::is_directory(path) ? path / "config.json" : path;
  return parse_hf_config(read_text_file(file, kComponent), file.string());
}

}  // namespace zt::io
