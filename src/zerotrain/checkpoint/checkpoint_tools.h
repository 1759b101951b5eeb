// What `zerotrain checkpoint` does with a saved checkpoint, tensor by tensor so that memory stays
// bounded by the largest tensor whatever the model and world size (DeepSpeed's zero_to_fp32 holds
// the whole model): consolidate into Hugging Face weights, rewrite as a universal checkpoint (one
// file per parameter, which any world size and stage reads), and describe or verify. Tested by
// tests/checkpoint/checkpoint_cli.py (universal, consolidate, inspect) and the parity step
// (tools/parity/check_consolidate.py).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "zerotrain/checkpoint/manifest.h"
#include "zerotrain/core/dtype.h"

namespace zt::checkpoint {

// Called after each tensor with (tensors done, tensors in all).
using ToolProgress = std::function<void(int64_t done, int64_t total)>;

struct ConsolidateOptions {
  std::optional<DType> dtype;  // unset: the parameters' training dtype
  uint64_t max_shard_bytes = 5'000'000'000;  // transformers' default "5GB"
  ToolProgress progress;
};

struct ToolReport {
  std::vector<std::string> files;  // written, in `out`
  int64_t tensors = 0;
  uint64_t bytes = 0;             // tensor bytes written
  uint64_t largest_tensor = 0;    // bytes of the largest tensor held at once
};

// `src`: a checkpoint (resolve_checkpoint). `out` must not exist or be an empty directory. Writes
// `out`/config.json and the model's weights in HF layout (model.safetensors, or shards and an
// index past max_shard_bytes), each parameter from its f32 master when there is one, else its
// value, stored as `dtype`. For the training dtype
// the bytes equal what train writes to <out>/model at the same step.
ToolReport consolidate_checkpoint(const std::filesystem::path& src, const std::filesystem::path& out,
                                  const ConsolidateOptions& options = {});

// Rewrites the checkpoint `src` into the new (or empty) directory `dst`: one safetensors file per parameter
// holding its value and state slots whole, the same manifest (universal: true), COMPLETE last.
ToolReport universal_checkpoint(const std::filesystem::path& src, const std::filesystem::path& dst,
                                const ToolProgress& progress = {});

// What `zerotrain checkpoint inspect` prints: for a checkpoints directory or a run's --out, every
// checkpoint and unfinished save in it and which one `latest` names; then the details of the
// checkpoint (step, layout, dtypes, files, tensors and sizes). With `verify`, every piece's
// checksum too: `problems` gets one line per bad file or tensor.
std::string inspect_checkpoint(const std::filesystem::path& given, bool verify,
                               std::vector<std::string>& problems);

}  // namespace zt::checkpoint
