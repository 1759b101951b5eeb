// hf_config_json / write_hf_config: nn::ModelConfig -> config.json (see hf_config.h). The text is
// parsed back before it is returned; a field that does not survive (the model_type cannot express
// it) is a ValueError naming it.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/nn/architecture.h"
#include "zerotrain/nn/family_registry.h"

namespace zt::io {

namespace {
constexpr std::string_view kComponent = "hf_config";
using nlohmann::json;
using nn::Family;
using nn::ModelConfig;

json token(int64_t id) {
  return id < 0 ? json(nullptr) : json(id);
}

// Fields a family does not use, which the round trip may not preserve.
bool ignored(const ModelConfig& c, const std::string& field) {
  if (!nn::architecture_of(c).rotary && field.rfind("rope", 0) == 0) return true;
  return c.rope_scaling.factor == 0 && field.rfind("rope_scaling.", 0) == 0 &&
         field != "rope_scaling.factor";
}
}  // namespace

// HF's model_type strings are zerotrain's family names.
std::string hf_model_type(Family family) {
  return nn::family_name(family);
}

std::string hf_architecture(Family family) {
  return nn::family_traits(family).hf.causal_lm_class;
}

std::string hf_torch_dtype(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "float32";
    case DType::f16:
      return "float16";
    case DType::bf16:
      return "bfloat16";
    default:
      throw ValueError(kComponent, str("torch_dtype: ", dtype_name(dtype),
                                       " is not a model dtype (float32, float16, bfloat16)"));
  }
}

std::vector<std::string> config_differences(const ModelConfig& a, const ModelConfig& b) {
  std::vector<std::string> out;
  auto cmp = [&](const char* name, const auto& x, const auto& y) {
    if (!(x == y)) out.emplace_back(name);
  };
  cmp("family", a.family, b.family);
  cmp("vocab_size", a.vocab_size, b.vocab_size);
  cmp("hidden_size", a.hidden_size, b.hidden_size);
  cmp("intermediate_size", a.intermediate_size, b.intermediate_size);
  cmp("num_layers", a.num_layers, b.num_layers);
  cmp("num_heads", a.num_heads, b.num_heads);
  cmp("num_kv_heads", a.num_kv_heads, b.num_kv_heads);
  cmp("head_dim", a.head_dim, b.head_dim);
  cmp("max_position_embeddings", a.max_position_embeddings, b.max_position_embeddings);
  cmp("norm_eps", a.norm_eps, b.norm_eps);
  cmp("rope_theta", a.rope_theta, b.rope_theta);
  cmp("rope_scaling.factor", a.rope_scaling.factor, b.rope_scaling.factor);
  cmp("rope_scaling.low_freq_factor", a.rope_scaling.low_freq_factor,
      b.rope_scaling.low_freq_factor);
  cmp("rope_scaling.high_freq_factor", a.rope_scaling.high_freq_factor,
      b.rope_scaling.high_freq_factor);
  cmp("rope_scaling.original_max_position_embeddings",
      a.rope_scaling.original_max_position_embeddings,
      b.rope_scaling.original_max_position_embeddings);
  cmp("tie_word_embeddings", a.tie_word_embeddings, b.tie_word_embeddings);
  cmp("attention_bias", a.attention_bias, b.attention_bias);
  cmp("mlp_bias", a.mlp_bias, b.mlp_bias);
  cmp("sliding_window", a.sliding_window, b.sliding_window);
  cmp("hidden_act", a.hidden_act, b.hidden_act);
  cmp("torch_dtype", a.torch_dtype, b.torch_dtype);
  cmp("bos_token_id", a.bos_token_id, b.bos_token_id);
  cmp("eos_token_id", a.eos_token_id, b.eos_token_id);
  return out;
}

std::string hf_config_json(const ModelConfig& config) {
  json j = nn::family_traits(config.family).config_json.write(config);
  j["architectures"] = {hf_architecture(config.family)};
  j["model_type"] = hf_model_type(config.family);
  j["torch_dtype"] = config.torch_dtype;
  j["bos_token_id"] = token(config.bos_token_id);
  j["eos_token_id"] = token(config.eos_token_id);
  const std::string text = j.dump(2) + "\n";

  const ModelConfig back = parse_hf_config(text, str(hf_model_type(config.family), " config"));
  std::vector<std::string> lost = config_differences(config, back);
  lost.erase(std::remove_if(lost.begin(), lost.end(),
                            [&](const std::string& f) { return ignored(config, f); }),
             lost.end());
  if (!lost.empty()) {
    std::string list;
    for (const std::string& f : lost)
      list += (list.empty() ? "" : ", ") + f;
    throw ValueError(kComponent, str("a ", hf_model_type(config.family),
                                     " config.json cannot express this model's ", list));
  }
  return text;
}

void write_hf_config(const ModelConfig& config, const std::filesystem::path& path) {
  const auto file = std::filesystem::is_directory(path) ? path / "config.json" : path;
  write_file_atomic(file, hf_config_json(config));
}

}  // namespace zt::io
