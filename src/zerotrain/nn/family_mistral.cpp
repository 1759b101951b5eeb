// Mistral (transformers' modeling_mistral.py): the llama architecture without any biases and with
// a sliding attention window (config.sliding_window). See nn/family_traits.h.
#include "zerotrain/nn/family_traits.h"

namespace zt::nn {

namespace {
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
      .architecture = architecture,
      .hf = llama_layout_names("MistralForCausalLM"),
      .scaled_init_suffix = "",
  };
  return traits;
}

}  // namespace zt::nn
