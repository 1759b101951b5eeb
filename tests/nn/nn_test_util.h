// Helpers for the nn tests: tiny configs of each family, step contexts with random tokens and
// targets, reading and writing parameter values/gradients as host vectors, kind-aware random
// parameter values, and running a model's loss / loss + gradients.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "zerotrain/nn/block.h"
#include "zerotrain/nn/model_config.h"
#include "zerotrain/nn/transformer.h"

namespace zt::test {

// hidden 32, 2 layers, 4 heads of 8, 2 kv heads (gpt2: 4), intermediate 64, vocab 50, 16 positions.
// gpt2 ties its embeddings; mistral has a sliding window of 3; llama uses Llama-3 rope scaling with
// original_max_position_embeddings 64 (so the 4 frequencies fall in all three regimes).
nn::ModelConfig tiny_config(nn::Family family);
// tiny_config with head_dim 32 (hidden 128, intermediate 128): a head size the CUDA kernels
// support.
nn::ModelConfig tiny_cuda_config(nn::Family family);
const std::vector<nn::Family>& all_families();

// tokens uniform in [0, vocab); targets uniform too, with every 5th one -100 (ignored).
nn::StepContext make_step(const nn::ModelConfig& c, int64_t batch, int64_t seq, uint64_t seed,
                          DType compute = DType::f32, Device device = Device::cpu());

// Allocates value (zeros) and grad (zeros) tensors for standalone layers' parameters.
void allocate(const std::vector<nn::Parameter*>& params, DType value_dtype, DType grad_dtype,
              Device device = Device::cpu());
// Random values by kind: weights/embeddings uniform [-scale, scale], biases [-0.2, 0.2], norm
// weights [0.5, 1.5]; rounded to each value's dtype.
void randomize(const std::vector<nn::Parameter*>& params, uint64_t seed, float scale = 0.3f);

std::vector<std::vector<float>> values_of(const std::vector<nn::Parameter*>& params);
void set_values(const std::vector<nn::Parameter*>& params,
                const std::vector<std::vector<float>>& values);
std::vector<std::vector<double>> grads_of(const std::vector<nn::Parameter*>& params);
void zero_grads(const std::vector<nn::Parameter*>& params);

// The loss of one forward through all blocks (saved activations released).
double model_loss(nn::Transformer& m, const nn::StepContext& ctx);
// zero_grads, forward + backward; returns the loss.
double model_loss_and_grads(nn::Transformer& m, const nn::StepContext& ctx,
                            bool checkpoint = false);

// A layer under test, as a function of its input and its parameters.
struct LayerProbe {
  std::function<Tensor(const Tensor& x)> forward;    // keeps what backward needs
  std::function<Tensor(const Tensor& dy)> backward;  // returns dx; adds parameter gradients
  std::vector<nn::Parameter*> params;
};
// Checks <dx, u> and every parameter gradient against central differences of <forward(x), cot>
// for a random cotangent (f32 only), over all inputs at once and per parameter.
void expect_layer_gradients_match_fd(const LayerProbe& layer, const Tensor& x, uint64_t seed,
                                     const std::string& what);

// ||a - b|| / ||b|| over all elements of all tensors.
double relative_l2(const std::vector<std::vector<double>>& a,
                   const std::vector<std::vector<double>>& b);

}  // namespace zt::test
