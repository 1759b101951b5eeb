// Hugging Face-style parameter initialization: normal(0, std) for weights and embeddings (gpt2's
// c_proj weights with std / sqrt(2 * num_layers), as GPT2PreTrainedModel does), zeros for biases,
// ones for norm weights. The normals are element i of the counter-based stream keyed by
// (seed, init_stream_id(name)) (kernels/random_normal.h): independent of order and of the other
// parameters, generated where the value lives (all host cores, or the GPU), bitwise the same on
// every device. Any element range of a parameter is generated on its own, bitwise equal to that
// range of the whole ([Note: init slices]): ZeRO stage 3's zero.Init generates only a rank's shard.
// Tested by tests/nn/test_init_slices.cpp, test_transformer_model.cpp and, on a GPU,
// test_transformer_cuda.cpp.
//
// [Note: init slices]
// Element i of a weight is std x z(seed, id, i), z the i-th normal of a Philox stream, a pure
// function of its arguments ([Note: counter-based normals] in kernels/philox.h). So a slice
// [begin, end) is the stream's elements begin..end - 1 and equals the whole's bitwise, on any
// device and thread count, with no state carried from one element to the next.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zerotrain/core/tensor.h"
#include "zerotrain/nn/model_config.h"
#include "zerotrain/nn/parameter.h"

namespace zt::nn {

// The Philox stream of a parameter: FNV-1a (64-bit) of its Hugging Face name.
uint64_t init_stream_id(const std::string& name);

// Elements [begin, begin + dst.numel()) of p's row-major flattened init, computed in f32 and
// rounded to dst's dtype, written into dst (contiguous, floating, host or GPU; on `stream` there).
// Throws ValueError for a range outside the parameter.
void init_fill(const ModelConfig& config, const Parameter& p, uint64_t seed, float std,
               int64_t begin, Tensor& dst, Stream stream = {});

// Host f32 copies of the same values, for tests and small tools: the whole init, and elements
// [begin, end).
std::vector<float> init_values(const ModelConfig& config, const Parameter& p, uint64_t seed,
                               float std);
std::vector<float> init_values_range(const ModelConfig& config, const Parameter& p, uint64_t seed,
                                     float std, int64_t begin, int64_t end);

}  // namespace zt::nn
