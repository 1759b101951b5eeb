// The block runner's second stream: a tensor that one block writes and later blocks read besides
// their main input, e.g. an encoder's output that every decoder layer's cross-attention reads.
// A block takes part by deriving from one of the two classes here instead of Block.
//
// [Note: second stream]
// - The writer (StreamWriterBlock, at most one per block list) is an ordinary block whose forward
//   output the runner also keeps as the second stream. The next block still gets that output as
//   its main input; an encoder-decoder's decoder embedding ignores it (as every embedding block
//   ignores x) and returns no input gradient.
// - A reader (StreamReaderBlock, after the writer in block order) runs forward_reading(x, stream)
//   and backward_reading(dy), which returns its input gradient and its own share of the stream's
//   gradient. The runner adds the shares in its backward order (reverse block order: a fixed
//   order, so the sum is deterministic) into one buffer, and before the writer's backward adds
//   that sum to the writer's main-stream gradient (when the next block returned one). The writer
//   precedes every reader, so its backward runs after all of theirs and the sum is complete, as a
//   shared parameter's owner runs backward last ([Note: ZeRO stages] in zero/zero_stage.h).
// - ZeRO hooks: for the hooks writer and readers are blocks like any other (gathered before their
//   forward, backward and recomputation, released after); the stream is an activation, so there
//   is nothing to gather for it, and no block touches another block's parameters.
// - Activation checkpointing: a checkpointable reader keeps only its main input; the runner keeps
//   the stream anyway (every reader's backward reads it), and the recomputation reads it again.
// - Memory: the stream lives from the writer's forward to the writer's backward, the gradient sum
//   from the last reader's backward to the writer's backward: two activations of the stream's
//   shape beyond a single-stream model's.
// Tested by tests/nn/test_second_stream.cpp and tests/zero/test_zero_second_stream.cpp.
#pragma once

#include "zerotrain/nn/block.h"

namespace zt::nn {

// A block whose forward output is also the runner's second stream (the encoder's last block).
class StreamWriterBlock : public Block {};

// The gradients of a reader's backward.
struct ReaderGrads {
  Tensor dx;       // of the main input (undefined when the block reads no main input)
  Tensor dstream;  // this block's share of the stream's gradient: a fresh tensor of the stream's
                   // shape and dtype, which the runner may add into
};

// A block that reads the second stream besides its main input (a decoder layer with
// cross-attention). The runner calls the *_reading entry points; Block's single-stream forward
// and backward throw, since a reader cannot run without its stream.
class StreamReaderBlock : public Block {
 public:
  // Block::forward with the stream (undefined only if no block wrote one); ctx.recomputing as
  // there. Keeps what backward_reading needs, which may include the stream itself.
  virtual Tensor forward_reading(const Tensor& x, const Tensor& stream, const StepContext& ctx) = 0;
  // Block::backward that also returns this block's share of the stream's gradient.
  virtual ReaderGrads backward_reading(const Tensor& dy, const StepContext& ctx) = 0;

  Tensor forward(const Tensor& x, const StepContext& ctx) final;
  Tensor backward(const Tensor& dy, const StepContext& ctx) final;
};

}  // namespace zt::nn
