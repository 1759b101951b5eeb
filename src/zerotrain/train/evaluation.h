// Validation loss and perplexity of the model being trained, on a held-out token file
// (--eval-data, the section of eval_config.h).
//
// [Note: evaluation]
// - The set: the file's sequences in order (no shuffle; sequence i covers tokens [i*S, i*S+S+1) as
//   in training), all of them or the first --eval-batches K micro-batches, cut into global
//   micro-batches of micro_batch rows (the last may be shorter). The set and the batches do not
//   depend on the world size.
// - Sharding: global batch j is evaluated by rank j % world. Every rank runs the same number of
//   forwards (ceil(batches / world)); a rank without a batch in the last round runs batch 0 again
//   and counts nothing, since stage 3's forward gathers collectively.
// - The forward: every block's forward under the ZeRO stage's hooks (stage 3 gathers each block's
//   parameters as training does, between ZeroStage::begin_forward_only and end_forward_only), each
//   block's saved activations dropped at once, the head's logits, then the per-token cross entropy
//   (kernels::cross_entropy_forward) in the run's compute dtype. No gradient is touched.
// - The count: per batch, the sum of token losses (in double, in token order) and the number of
//   targets that are not -100 (masked targets, data/data_loader.h). The ranks all-gather their
//   per-batch pairs and every rank adds them in batch order, so the loss is bitwise the same at
//   every world size and ZeRO stage; loss = sum / tokens, perplexity = exp(loss).
// - Training is unchanged by it: nothing of the optimizer, the gradients, the data loader or the
//   random state is read or written, and the stage's gathered state is the same afterwards.
// Tested by tests/train/test_evaluation.cpp and tests/mpi/test_evaluation_mpi.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/data/data_loader.h"
#include "zerotrain/monitor/metrics.h"
#include "zerotrain/nn/block.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/nn/model_config.h"
#include "zerotrain/train/data_config.h"
#include "zerotrain/train/eval_config.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt::train {

// The sum of token losses (f32 [N], host) over the targets (i32/i64 [N], host) that are not -100,
// in token order, and how many there are.
struct TokenLossSum {
  double sum = 0;
  int64_t tokens = 0;
};
TokenLossSum sum_token_losses(const Tensor& losses, const Tensor& targets);

// One forward of ctx.tokens without backward (nn::BlockRunner::forward_only): every block under
// hooks' before/after_forward, its saved activations released, a second stream carried from its
// writer to its readers, then the head's logits and the per-token losses against
// ctx.targets: f32 [B*S] on ctx.device (0 where the target is -100). The last block must be the
// nn::HeadBlock.
Tensor forward_token_losses(std::vector<std::unique_ptr<nn::Block>>& blocks,
                            const nn::BlockHooks& hooks, const nn::StepContext& ctx);

class Evaluator {
 public:
  // Opens and checks the file (token_data.h; empty, or too short for one sequence of seq_len + 1
  // tokens: ValueError naming --eval-data) for the run's seq_len and micro_batch. world: the
  // number of ranks; rank: this one.
  Evaluator(const EvalConfig& config, const DataConfig& data, const nn::ModelConfig& model,
            int rank, int world);

  // After optimizer step `step`: every --eval-every steps, and after the last step.
  bool due(int64_t step, int64_t last_step) const;
  // Collective over `comm` (null: one process). ctx: the run's device, stream and compute dtype.
  // The same numbers on every rank (but seconds, this rank's wall time).
  monitor::EvalMetrics evaluate(zero::ZeroStage& engine,
                                std::vector<std::unique_ptr<nn::Block>>& blocks,
                                const nn::StepContext& ctx, comm::Communicator* comm, int64_t step);

  // "all 37 sequences of 65 tokens (5 micro-batches of 8)" or "the first 2 micro-batches of 8
  // (16 of 37 sequences of 65 tokens)".
  std::string describe() const;
  int64_t sequences() const { return sequences_; }
  int64_t batches() const { return batches_; }

 private:
  // The global batch j (j < batches_), read with the eval loader.
  data::Batch batch(int64_t j);

  EvalConfig config_;
  int rank_, world_;
  int64_t seq_len_, micro_batch_;
  std::unique_ptr<data::DataLoader> loader_;  // no shuffle, one "rank": global batches in order
  int64_t file_sequences_ = 0;                // sequences the file holds
  int64_t sequences_ = 0;                     // sequences evaluated
  int64_t batches_ = 0;                       // global micro-batches evaluated
};

}  // namespace zt::train
