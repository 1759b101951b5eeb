// What the trainer steps: a task, not a causal LM.
//
// [Note: tasks]
// A task says what one training example is and how the model learns from it, so that the trainer's
// loop (training_session.h) is the same for every task:
// - the data: which file it reads and how it is cut into micro-batches (open_data);
// - a micro-batch on the device: which fields of nn::StepContext it fills for the blocks and the
//   head (load_micro_batch), and what the step clears afterwards (unload);
// - the loss's divisor: the step's global count of loss targets, over micro-batches, accumulation
//   steps and ranks ([Note: loss normalisation] in nn/head_block.h);
// - the count a rate is made of (tokens_of).
// The head and its loss are the model's last block (nn/head_block.h), built for the task by the
// model family; what evaluation reports is the evaluator's (evaluation.h, a loss and a
// perplexity for causal LM). Causal language modelling is the first task; sequence
// classification (token pairs and a label) and sequence-to-sequence (a source stream read by
// every decoder layer, nn/block_runner.h's second stream) come next as further Task classes.
// Tested by tests/train/test_task.cpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "zerotrain/core/stream.h"
#include "zerotrain/data/data_loader.h"
#include "zerotrain/nn/block.h"
#include "zerotrain/nn/model_config.h"
#include "zerotrain/train/data_config.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt::train {

class Task {
 public:
  virtual ~Task() = default;
  virtual const char* name() const = 0;  // "causal language modelling"

  // This rank's batches of the training file `path`, continuing from `state`. Throws ValueError
  // naming the file when it cannot make one batch.
  virtual data::DataLoader open_data(const std::filesystem::path& path, const DataConfig& data,
                                     const nn::ModelConfig& model, int rank, int world,
                                     const data::DataLoaderState& state) const = 0;
  // Puts `batch` on ctx.device (on ctx.stream) into the fields of ctx the model reads.
  virtual void load_micro_batch(const data::Batch& batch, nn::StepContext& ctx) const = 0;
  // After the step's last micro-batch: clears what belonged to the step's batches only.
  virtual void unload(nn::StepContext& ctx) const = 0;
  // Collective over the engine's ranks: the step's global count of loss targets.
  virtual int64_t loss_targets(const std::vector<data::Batch>& batches,
                               zero::ZeroStage& engine) const = 0;
  // The tokens a micro-batch trains on, for the rates.
  virtual int64_t tokens_of(const data::Batch& batch, int64_t seq_len) const = 0;
};

// Next-token prediction on a token file (data/token_file.h): the inputs and their targets shifted
// by one token, packed documents' starts, a loss over every unmasked target.
class CausalLmTask final : public Task {
 public:
  const char* name() const override { return "causal language modelling"; }
  data::DataLoader open_data(const std::filesystem::path& path, const DataConfig& data,
                             const nn::ModelConfig& model, int rank, int world,
                             const data::DataLoaderState& state) const override;
  void load_micro_batch(const data::Batch& batch, nn::StepContext& ctx) const override;
  void unload(nn::StepContext& ctx) const override;
  int64_t loss_targets(const std::vector<data::Batch>& batches,
                       zero::ZeroStage& engine) const override;
  int64_t tokens_of(const data::Batch& batch, int64_t seq_len) const override;
};

}  // namespace zt::train
