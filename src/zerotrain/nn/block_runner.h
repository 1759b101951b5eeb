// Runs one micro-batch through an ordered list of blocks: every forward, then every backward in
// reverse, passing each block's output to the next and each input gradient to the previous.
//
// [Note: activation checkpointing] With checkpoint_layers, each decoder layer keeps only its input:
// right after its forward the runner calls release_saved(), and right before its backward it calls
// forward again on the kept input to rebuild the activations. The recomputation is deterministic,
// so losses and gradients are bitwise those of the plain run; peak memory drops from one set of
// saved activations per layer to one layer's worth plus the layer inputs.
//
// [Note: recompute keeps more] The recomputing forward runs with StepContext::recomputing and
// rebuilds only what the backward reads: the layer's output is the next layer's input, which the
// runner kept, so the MLP's output projection and the last residual add are skipped (about a
// quarter of the recomputed projections' FLOPs for the llama shapes) and the forward returns an
// undefined tensor. The MLP's Sublayer::recompute may also keep what its backward would otherwise
// compute a third time: the SwiGLU MLP keeps silu(gate) * up for down_proj's weight gradient and
// frees it before dgate and dup exist, so the backward's peak is unchanged. What the backward reads
// equals the plain forward's bitwise (same kernels, same inputs), and so do the gradients.
//
// Blocks that say they are checkpointable (Block::checkpointable(): the decoder layers) are the
// ones recomputed. The runner also carries a second stream between blocks, an encoder's output
// that decoder layers read ([Note: second stream] in nn/second_stream.h); a list without a
// stream writer runs exactly as before. Tested by tests/nn/test_block_runner.cpp and
// tests/nn/test_second_stream.cpp.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "zerotrain/nn/block.h"
#include "zerotrain/nn/second_stream.h"

namespace zt::nn {

struct RunnerOptions {
  bool checkpoint_layers = false;  // recompute checkpointable blocks (decoder layers) in backward
};

// Called with a block's index right after its backward, in reverse block order: from then on the
// block adds nothing more to its parameters' gradients in this micro-step (the data-parallel
// engine starts reducing them while earlier blocks still compute).
using BlockHook = std::function<void(size_t block)>;

// What the ZeRO engine does around each block (stage 3 gathers a block's parameters before it
// runs and releases them after). before_backward runs before a checkpointed block's recomputation.
struct BlockHooks {
  BlockHook before_forward, after_forward, before_backward, after_backward;
};

// What forward_only does with the last block instead of its forward (evaluation asks the head
// for its logits rather than the loss): gets the block, its input and the step context.
using LastBlockCall = std::function<Tensor(Block& last, const Tensor& x, const StepContext& ctx)>;

class BlockRunner {
 public:
  // Throws ValueError when the blocks use the second stream wrongly: more than one writer, a
  // reader before the writer, or a writer without readers and readers without a writer.
  explicit BlockRunner(std::vector<std::unique_ptr<Block>>& blocks, RunnerOptions options = {});

  // Forward through every block; returns the head's loss, f32 [1] ([Note: loss normalisation]).
  Tensor forward(const StepContext& ctx);
  // Backward through every block in reverse (after forward, same ctx); adds parameter gradients.
  void backward(const StepContext& ctx);
  // Both; returns the loss.
  Tensor forward_backward(const StepContext& ctx);
  // A forward for evaluation: each block's activations are released right after its forward
  // (nothing is kept for a backward), the second stream is carried from its writer to its
  // readers, the hooks run before and after every block, and the last block is handed to
  // `last`, whose result is returned. A backward may not follow.
  Tensor forward_only(const StepContext& ctx, const LastBlockCall& last);
  void set_after_block_backward(BlockHook hook) { hooks_.after_backward = std::move(hook); }
  void set_hooks(BlockHooks hooks) { hooks_ = std::move(hooks); }

 private:
  bool checkpointed(size_t i) const;
  void add_stream_grad(const Tensor& share, const StepContext& ctx);

  std::vector<std::unique_ptr<Block>>& blocks_;
  RunnerOptions options_;
  std::vector<Tensor> inputs_;  // per block: its input, kept while the block is checkpointed
  // The second stream ([Note: second stream]): per block its reader interface (null: not a
  // reader), the writer's index (kNoWriter: none), the stream from the writer's forward to its
  // backward, and the readers' summed gradient of it.
  static constexpr size_t kNoWriter = static_cast<size_t>(-1);
  std::vector<StreamReaderBlock*> readers_;
  size_t writer_ = kNoWriter;
  Tensor stream_, dstream_;
  bool forward_done_ = false;
  BlockHooks hooks_;
};

}  // namespace zt::nn
