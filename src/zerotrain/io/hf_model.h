// A model's parameters in and out of a Hugging Face checkpoint directory (config.json plus
// model.safetensors or shards + index), by their HF names. Written over a ModelConfig and the
// model's Parameter list, so it needs nothing of nn::Transformer but parameters() and config();
// the Transformer overloads are thin inline wrappers. Tested by tests/io/test_hf_model.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "zerotrain/core/stream.h"
#include "zerotrain/io/sharded_safetensors.h"
#include "zerotrain/nn/model_config.h"
#include "zerotrain/nn/parameter.h"
#include "zerotrain/nn/transformer.h"

namespace zt::io {

struct LoadReport {
  std::vector<std::string> loaded;      // parameters filled from the checkpoint
  std::vector<std::string> unexpected;  // checkpoint tensors no parameter uses (sorted)
};

// Fills every parameter's `value` (defined, contiguous, any device and floating dtype: checkpoint
// values convert) from the weights in `dir`. A checkpoint of the bare base model (names without
// the "model." / "transformer." prefix, as gpt2's own checkpoint) loads too. With tied embeddings
// "lm_head.weight" may be absent (a parameter of that name then reads the input embedding).
// Errors: ShapeError naming the tensor and both shapes; FormatError listing missing tensors.
// Unexpected tensors (e.g. rotary inv_freq buffers, gpt2's attn.bias masks) are reported and
// listed on one warning line in `warnings` (none when null).
LoadReport load_pretrained(const nn::ModelConfig& config, const std::vector<nn::Parameter*>& params,
                           const std::filesystem::path& dir, Stream stream = {},
                           std::ostream* warnings = &std::cerr);

// The checkpoint tensor each parameter reads, resolved as load_pretrained resolves them (full
// names, names of the bare base model, a tied lm_head from the input embedding), shapes checked,
// and the checkpoint tensors no parameter uses. Errors as load_pretrained's. Used by
// load_pretrained and by ZeRO stage 3's zero.Init, which reads only each rank's slices.
struct CheckpointSources {
  std::vector<std::pair<nn::Parameter*, std::string>> sources;  // parameter -> tensor, in order
  std::vector<std::string> unexpected;                          // sorted
};
CheckpointSources resolve_checkpoint(const nn::ModelConfig& config,
                                     const std::vector<nn::Parameter*>& params,
                                     const ShardedReader& reader);
// The one warning line for unexpected tensors (nothing when none or `warnings` is null).
void warn_unexpected(const std::filesystem::path& dir, const std::vector<std::string>& unexpected,
                     std::ostream* warnings);

// The parameters a Hugging Face checkpoint holds, in order: each once, without a tied lm_head
// (transformers omits it).
std::vector<const nn::Parameter*> saved_parameters(const nn::ModelConfig& config,
                                                   const std::vector<nn::Parameter*>& params);
// Writes config.json (torch_dtype = `dtype`) and `tensors` (HF names; made one at a time when
// lazy) stored as `dtype`, sharded past max_shard_bytes, with metadata {"format": "pt"}.
void write_pretrained(const nn::ModelConfig& config, const std::vector<NamedTensor>& tensors,
                      const std::filesystem::path& dir, DType dtype,
                      uint64_t max_shard_bytes = kDefaultMaxShardBytes, Stream stream = {});

// Writes config.json (torch_dtype = `dtype`) and the parameters' values stored as `dtype` (a
// floating dtype), sharded past max_shard_bytes as transformers does, with metadata
// {"format": "pt"}. A tied lm_head is not written, as transformers omits it.
void save_pretrained(const nn::ModelConfig& config, const std::vector<nn::Parameter*>& params,
                     const std::filesystem::path& dir, DType dtype,
                     uint64_t max_shard_bytes = kDefaultMaxShardBytes, Stream stream = {});

inline LoadReport load_pretrained(nn::Transformer& model, const std::filesystem::path& dir,
                                  Stream stream = {}, std::ostream* warnings = &std::cerr) {
  return load_pretrained(model.config(), model.parameters(), dir, stream, warnings);
}

inline void save_pretrained(nn::Transformer& model, const std::filesystem::path& dir, DType dtype,
                            uint64_t max_shard_bytes = kDefaultMaxShardBytes, Stream stream = {}) {
  save_pretrained(model.config(), model.parameters(), dir, dtype, max_shard_bytes, stream);
}

}  // namespace zt::io
