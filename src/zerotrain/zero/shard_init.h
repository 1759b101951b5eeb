// zero.Init for ZeRO stage 3: each rank materializes only its value shards, never the full model.
// The model is built without values (nn::TransformerOptions::allocate = false); Stage3 then builds
// every ParamGroup's shard from a ShardSource, one parameter piece at a time, with no broadcast
// (every rank computes or reads the same bits). Stages 0-2 build their full group buffers from a
// source the same way ([Note: values built in place]). Tested by tests/zero/test_shard_init.cpp
// (one process, and ParamGroups of worlds 2 and 4 built rank by rank), tests/mpi/test_zero_init.cpp
// and tests/zero/test_values_in_place.cpp.
//
// [Note: zero.Init]
// The shard of a group is the flat range [rank x shard_numel, (rank + 1) x shard_numel) of its
// parameters laid back to back ([Note: param group layout]); each parameter's part of it is one
// element range of its row-major flattened value. A source fills exactly that range: the seeded
// init generates it on its own, on the shard's device ([Note: init slices] in nn/init.h), the
// pretrained source reads those elements of the checkpoint tensor (its bytes only, converting
// dtype as load_pretrained does). Padding stays zero. So the shard equals bitwise the shard the
// full build then ParamGroup::materialize gives, and setup holds one shard (plus, for the
// pretrained source, one piece's host staging).
// Resuming from a zerotrain checkpoint keeps the full-load path (train/trainer.cpp).
//
// [Note: values built in place]
// Stages 0-2 hold every group's values whole (replicated). Built from a source, a group's full
// buffer is allocated zeroed ([padded_numel]; on the host a fresh mapping, so nothing is written
// before the source writes it) and each parameter's whole range [0, numel) is filled into its
// slice at its flat offset: bitwise the buffer that materialize() copies from a model whose values
// were filled by the same source, without the model's values (nn::TransformerOptions::allocate =
// false), their first touch and the copy. The trainer builds a seeded run this way (the 1B shape's
// start-up on a CPU: 4.6 GiB less touched, bench/startup.md); every rank computes the same bits,
// so nothing is broadcast (check_parameters_identical still compares them). Pretrained weights and
// resumed runs go through the model's values as before.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/io/sharded_safetensors.h"
#include "zerotrain/nn/model_config.h"
#include "zerotrain/nn/parameter.h"
#include "zerotrain/zero/param_group.h"
#include "zerotrain/zero/shard_checkpoint.h"

namespace zt::zero {

// Where zero.Init takes a parameter's initial values from.
class ShardSource {
 public:
  virtual ~ShardSource() = default;
  // Elements [begin, end) of p's row-major flattened initial value into `dst` (contiguous, end -
  // begin elements, any floating dtype, any device).
  virtual void fill(const nn::Parameter& p, int64_t begin, int64_t end, Tensor dst,
                    Stream stream) = 0;
  // For the trainer's log: "seeded init" or "safetensors <dir>".
  virtual std::string describe() const = 0;
};

// The seeded HF-style init of nn::Transformer::init_random, generated slice by slice where the
// shard lives (all host cores, or the GPU).
class SeededInitSource final : public ShardSource {
 public:
  SeededInitSource(nn::ModelConfig config, uint64_t seed, float std = 0.02f);
  void fill(const nn::Parameter& p, int64_t begin, int64_t end, Tensor dst, Stream stream) override;
  std::string describe() const override;

 private:
  nn::ModelConfig config_;
  uint64_t seed_;
  float std_;
};

// A Hugging Face checkpoint directory (model.safetensors or shards + index), resolved for `params`
// as io::load_pretrained resolves it (errors on open, missing tensors and shapes are thrown here,
// before any shard is built); fill() reads only the requested elements.
class PretrainedSource final : public ShardSource {
 public:
  PretrainedSource(const nn::ModelConfig& config, const std::vector<nn::Parameter*>& params,
                   const std::filesystem::path& dir, std::ostream* warnings = &std::cerr);
  void fill(const nn::Parameter& p, int64_t begin, int64_t end, Tensor dst, Stream stream) override;
  std::string describe() const override;
  // Checkpoint tensor bytes read so far (io::ShardedReader::bytes_read).
  uint64_t bytes_read() const { return reader_.bytes_read(); }

 private:
  io::ShardedReader reader_;
  std::vector<std::pair<const nn::Parameter*, std::string>> sources_;
};

// A saved shard (a checkpoint, shard_checkpoint.h): each parameter's values under its own name,
// so a resumed stage 3 builds only its shards from the files (the reader is not owned).
class SavedShardSource final : public ShardSource {
 public:
  SavedShardSource(ShardReader& reader, std::string description)
      : reader_(reader), description_(std::move(description)) {}
  void fill(const nn::Parameter& p, int64_t begin, int64_t end, Tensor dst, Stream stream) override {
    reader_.read({p.name, p.shape, begin, end}, dst, stream);
  }
  std::string describe() const override { return description_; }

 private:
  ShardReader& reader_;
  std::string description_;
};

// This rank's value shard of `group` ([shard_numel] `dtype` on `device`, padding zero) with every
// parameter piece filled from `source`.
Tensor build_value_shard(const ParamGroup& group, ShardSource& source, DType dtype, Device device,
                         Stream stream);

// The whole flat buffer of `group` ([padded_numel] `dtype` on `device`, padding zero), every
// parameter filled from `source`: for ParamGroup::materialize_full ([Note: values built in place]).
Tensor build_full_values(const ParamGroup& group, ShardSource& source, DType dtype, Device device,
                         Stream stream);

}  // namespace zt::zero
