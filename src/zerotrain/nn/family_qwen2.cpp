// Qwen2 (transformers' modeling_qwen2.py): the llama architecture with biases on q, k and v
// always, none elsewhere, and a sliding attention window. See nn/family_traits.h.
#include <algorithm>
#include <string>

#include "zerotrain/core/error.h"
#include "zerotrain/nn/family_llama.h"

namespace zt::nn {

namespace {
using nlohmann::json;

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

Architecture architecture(const ModelConfig&) {
  Architecture a;
  a.rotary = a.sliding_window = true;
  a.qkv_bias = true;
  return a;
}
}  // namespace

const FamilyTraits& qwen2_family() {
  static const FamilyTraits traits = {
      .family = Family::qwen2,
      .name = "qwen2",
      .config_json = {kLlamaKeys, true, read_qwen2, write_qwen2},
      .architecture = architecture,
      .hf = llama_layout_names("Qwen2ForCausalLM"),
      .scaled_init_suffix = "",
  };
  return traits;
}

}  // namespace zt::nn
