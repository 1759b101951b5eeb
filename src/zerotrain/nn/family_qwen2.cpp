// Qwen2 (transformers' modeling_qwen2.py): the llama architecture with biases on q, k and v
// always, none elsewhere, and a sliding attention window. See nn/family_traits.h.
#include "zerotrain/nn/family_traits.h"

namespace zt::nn {

namespace {
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
      .architecture = architecture,
      .hf = llama_layout_names("Qwen2ForCausalLM"),
      .scaled_init_suffix = "",
  };
  return traits;
}

}  // namespace zt::nn
