// A stand-in for nn::Transformer in the hf_model tests: the Hugging Face parameter names and shapes
// of a ModelConfig (llama/mistral/qwen2 and gpt2 layouts, gpt2's Conv1D weights as [in, out]) with
// value buffers, plus tiny configs of each family.
#pragma once

#include <string>
#include <vector>

#include "zerotrain/nn/model_config.h"
#include "zerotrain/nn/parameter.h"

namespace zt::test {

struct FakeModel {
  nn::ModelConfig config;
  std::vector<nn::Parameter> params;

  std::vector<nn::Parameter*> pointers();
  nn::Parameter& at(const std::string& name);
};

// Values of `dtype` on the CPU: random (normal-ish, per-parameter seeds) or zeros. With
// `list_tied_head`, a tied model also lists its own "lm_head.weight".
FakeModel make_fake_model(const nn::ModelConfig& config, DType dtype, uint64_t seed,
                          bool zeros = false, bool list_tied_head = false);

nn::ModelConfig tiny_llama();  // GQA, untied
nn::ModelConfig tiny_qwen2();  // q/k/v biases, tied
nn::ModelConfig tiny_gpt2();   // biases everywhere, tied, learned positions

}  // namespace zt::test
