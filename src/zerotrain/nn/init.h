// Hugging Face-style parameter initialization, generated on the host so that every device gets the
// same values: normal(0, std) for weights and embeddings (gpt2's c_proj weights with
// std / sqrt(2 * num_layers), as GPT2PreTrainedModel does), zeros for biases, ones for norm
// weights. The stream of each parameter is seeded by (seed, name): independent of order and of the
// other parameters. Any element range of a parameter can be generated on its own, bitwise equal to
// that range of the whole ([Note: init slices] in init.cpp): ZeRO stage 3's zero.Init generates
// only a rank's shard. Tested by tests/nn/test_transformer_model.cpp and test_init_slices.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zerotrain/nn/model_config.h"
#include "zerotrain/nn/parameter.h"

namespace zt::nn {

// n standard-normal values scaled by std, from a counter-based generator keyed by (seed, name).
std::vector<float> normal_values(uint64_t seed, const std::string& name, size_t n, float std);

// Elements [begin, end) of normal_values(seed, name, n >= end, std), generated on their own.
// Throws ValueError for end < begin.
std::vector<float> normal_values_range(uint64_t seed, const std::string& name, size_t begin,
                                       size_t end, float std);

// The host values of one parameter's initialization.
std::vector<float> init_values(const ModelConfig& config, const Parameter& p, uint64_t seed,
                               float std);
// Elements [begin, end) of the row-major flattened init_values. Throws ValueError for a range
// outside the parameter.
std::vector<float> init_values_range(const ModelConfig& config, const Parameter& p, uint64_t seed,
                                     float std, int64_t begin, int64_t end);

}  // namespace zt::nn
