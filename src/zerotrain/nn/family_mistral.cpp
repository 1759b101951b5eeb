// Mistral (transformers' modeling_mistral.py): the llama architecture without any biases and with
// a sliding attention window (config.sliding_window). See nn/family_traits.h.
#include "zerotrain/nn/family_llama.h"

namespace zt::nn {

namespace {
using nlohmann::json;

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

Architecture architecture(const ModelConfig&) {
  Architecture a;
  a.rotary = a.sliding_window = true;
  return a;
}
}  // namespace

const FamilyTraits& mistral_family() {
  static const FamilyTraits traits = {
      .family = Family::mistral,
      .name = "mistral",
      .config_json = {kLlamaKeys, true, read_mistral, write_mistral},
      .architecture = architecture,
      .hf = llama_layout_names("MistralForCausalLM"),
      .scaled_init_suffix = "",
  };
  return traits;
}

}  // namespace zt::nn
