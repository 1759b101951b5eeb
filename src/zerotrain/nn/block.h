// A block: the unit the ZeRO engine gathers, runs and releases (an embedding, one transformer
// layer, or the final norm + head + loss). The engine never looks inside a block's math; it only
// needs its parameters, a forward that keeps what its backward needs, and a backward that returns
// the input gradient and adds parameter gradients into their `grad` buffers. See [Note: blocks] in
// docs/ARCHITECTURE.md.
#pragma once

#include <string>
#include <vector>

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/nn/parameter.h"
#include "zerotrain/nn/row_documents.h"

namespace zt::nn {

// What every block of one step sees.
struct StepContext {
  Device device = Device::cpu();
  Stream stream;
  DType compute_dtype = DType::f32;  // activations and parameter values
  Tensor tokens;                     // i32 [B, S], the input ids
  Tensor targets;                    // i32/i64 [B, S], the next-token ids; -100 is ignored
  float loss_scale = 1.0f;  // multiplies the loss gradient fed to the head's backward (fp16's loss
                            // scale; 1 otherwise)
  // The count of unmasked targets the head divides its summed per-token losses by (transformers'
  // num_items_in_batch): the trainer sets that of the whole optimizer step, over micro-batches,
  // accumulation steps and ranks; -1: this micro-batch's own, counted from ctx.targets (a copy to
  // the host; tests, evaluation). See [Note: loss normalisation] in nn/head_block.h.
  int64_t num_items_in_batch = -1;
  // Packed rows: document starts and restarted position ids on `device` (row_documents()); empty
  // when every row is one stream. See [Note: packed documents] in nn/row_documents.h.
  RowDocuments documents;
  // Set by the block runner while activation checkpointing recomputes a layer right before its
  // backward: the forward then rebuilds only what the backward reads and returns an undefined
  // tensor ([Note: recompute keeps more] in nn/block_runner.h).
  bool recomputing = false;
};

class Block {
 public:
  virtual ~Block() = default;
  virtual std::string name() const = 0;  // "model.layers.3"
  // Parameters this block owns, in a fixed order. A parameter used by two blocks (tied
  // embeddings) is owned by the first; the second lists it in shared_parameters().
  virtual std::vector<Parameter*> parameters() = 0;
  virtual std::vector<Parameter*> shared_parameters() { return {}; }

  // x: the previous block's output (undefined for the embedding block, which reads ctx.tokens).
  // Returns this block's output: hidden states [B, S, C], or for the head its loss f32 [1].
  // Keeps the activations backward needs until backward or release_saved().
  virtual Tensor forward(const Tensor& x, const StepContext& ctx) = 0;
  // dy: gradient of this block's output (ignored by the head, which starts from ctx.loss_scale).
  // Returns the gradient of x (undefined for the embedding block) and adds into parameter grads.
  virtual Tensor backward(const Tensor& dy, const StepContext& ctx) = 0;
  // Drops saved activations (activation checkpointing recomputes them by calling forward again).
  virtual void release_saved() = 0;
  // Whether activation checkpointing may drop this block's activations and recompute them before
  // its backward (the transformer layers; [Note: activation checkpointing] in nn/block_runner.h).
  virtual bool checkpointable() const { return false; }
};

}  // namespace zt::nn
