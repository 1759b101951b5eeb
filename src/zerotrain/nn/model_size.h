// The size of a model from its config, computed once with checked arithmetic before anything is
// built: each field below its ceiling (far above any published model, low enough that the
// products fit in int64), then the parameters of each part (embeddings, one layer's attention and
// MLP, all layers) without wrapping, each under kMaxModelParams. A config past a ceiling
// (vocab_size 2^62, num_hidden_layers 10^9, num_attention_heads 10^9) is refused naming the
// field, instead of wrapping to a 0-byte table or building layers until bad_alloc.
// ModelConfig::validate and num_params use it; io/hf_config.cpp names the field by its
// config.json key. Tested by tests/nn/test_model_size.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "zerotrain/nn/model_config.h"

namespace zt::nn {

// 2^47 (1.4e14) parameters: a hundred times the largest published model.
inline constexpr int64_t kMaxModelParams = int64_t(1) << 47;

// A field of ModelConfig that is too large, and why ("4611686018427387904 is above the ceiling
// 2147483647: token ids are 32-bit signed").
struct SizeProblem {
  std::string field;  // the ModelConfig field: "vocab_size", "num_layers", ...
  std::string message;
};

struct ModelSize {
  int64_t params = 0;  // == ModelConfig::num_params()
  int64_t embedding_params =
      0;                      // input embedding (+ gpt2 positions); num_params - this: the N of 6N
  std::string largest_field;  // the field that scales the largest part ("num_layers", ...)
};

// The first size problem of `c`, or nothing. Fields must already be positive (validate checks).
std::optional<SizeProblem> find_size_problem(const ModelConfig& c);

// The sizes of `c`; ValueError("[model_config] <field>: ...") on a size problem.
ModelSize model_size(const ModelConfig& c);

}  // namespace zt::nn
