// A model's Hugging Face weights gathered from a ZeRO stage one group at a time
// (zero::ZeroStage::for_each_full_group): the writing rank keeps host copies in the saved dtype,
// the other ranks only take part in the gathers, so no rank ever holds the whole model on its
// device at stage 3. Used for <out>/model at the end of a run and, with
// stage3_gather_16bit_weights_on_model_save, for the weights inside every checkpoint
// ([Note: sharded checkpoint format] in manifest.h). Tested by
// tests/zero/test_zero_stage.cpp (<out>/model of every stage bitwise equal) and
// tests/mpi/test_zero_parity.cpp (also the copy inside the checkpoint, 2 and 4 ranks).
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "zerotrain/io/safetensors.h"
#include "zerotrain/nn/model_config.h"
#include "zerotrain/nn/parameter.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt::checkpoint {

struct GatheredWeights {
  nn::ModelConfig config;
  DType dtype = DType::f32;
  // HF names, in io::saved_parameters' order, on the host as `dtype`; empty unless kept.
  std::vector<io::NamedTensor> tensors;
  uint64_t bytes() const;
};

// Collective over the engine's ranks. `params`: the model's parameters (those of the engine's
// groups); `keep`: whether this rank keeps the copies (the rank that writes them).
GatheredWeights gather_weights(zero::ZeroStage& engine, const nn::ModelConfig& config,
                               const std::vector<nn::Parameter*>& params, DType dtype, bool keep,
                               Stream stream);

// Writes kept weights as a Hugging Face model directory (io::write_pretrained).
void write_weights(const GatheredWeights& weights, const std::filesystem::path& dir,
                   uint64_t max_shard_bytes);

}  // namespace zt::checkpoint
