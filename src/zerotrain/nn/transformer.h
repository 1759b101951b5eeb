// A causal language model built from a ModelConfig: an ordered list of blocks (embedding, one per
// layer, final norm + head + loss). Owns its parameter and gradient storage in one process; the
// ZeRO engine of later issues re-points Parameter::value/grad at its own buffers instead.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "zerotrain/nn/block.h"
#include "zerotrain/nn/model_config.h"

namespace zt::nn {

struct TransformerOptions {
  DType param_dtype = DType::f32;  // values (= compute dtype of activations)
  DType grad_dtype = DType::f32;   // gradient buffers
  Device device = Device::cpu();
  bool allocate = true;  // allocate value/grad storage for every parameter
  // With allocate: also the gradients (off when a ZeRO engine points them at its own buffers).
  bool allocate_grads = true;
};

class Transformer {
 public:
  Transformer(const ModelConfig& config, const TransformerOptions& options);
  ~Transformer();
  Transformer(const Transformer&) = delete;
  Transformer& operator=(const Transformer&) = delete;

  const ModelConfig& config() const { return config_; }
  const TransformerOptions& options() const { return options_; }
  std::vector<std::unique_ptr<Block>>& blocks() { return blocks_; }
  // Every parameter once, in block order, with its Hugging Face name.
  std::vector<Parameter*> parameters();
  Parameter* find(const std::string& name);  // null when absent

  // HF-style initialization (nn/init.h): normal(0, std) weights, zero biases, unit norms;
  // deterministic per seed, generated on the values' device, bitwise the same on every device.
  void init_random(uint64_t seed, float std = 0.02f);
  void zero_grads(Stream stream = {});

 private:
  ModelConfig config_;
  TransformerOptions options_;
  std::vector<std::unique_ptr<Block>> blocks_;
};

}  // namespace zt::nn
