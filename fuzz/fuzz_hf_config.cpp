// libFuzzer target: a Hugging Face config.json through io::parse_hf_config (every family's keys,
// rope settings, the size ceilings of nn/model_size.h). Any input must give a ModelConfig or throw
// a zt::Error; a config that parses must have the sizes the model builder relies on (positive, the
// parameter count within the ceiling). See docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "zerotrain/core/error.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/nn/model_size.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const zt::nn::ModelConfig c = zt::io::parse_hf_config(text, "fuzz/config.json");
    if (c.vocab_size <= 0 || c.hidden_size <= 0 || c.num_layers <= 0 || c.num_heads <= 0 ||
        c.num_kv_heads <= 0 || c.head_dim <= 0 || c.intermediate_size <= 0)
      std::abort();
    if (zt::nn::find_size_problem(c)) std::abort();
  } catch (const zt::Error&) {
  }
  return 0;
}
