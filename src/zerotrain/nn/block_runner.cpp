// Forward/backward over the blocks with optional activation checkpointing and a second stream
// (see block_runner.h). Each block's forward, backward and recomputation is a profiler range named
// after the block.
#include "zerotrain/nn/block_runner.h"

#include "zerotrain/core/error.h"
#include "zerotrain/core/profile_range.h"
#include "zerotrain/kernels/elementwise.h"

namespace zt::nn {

BlockRunner::BlockRunner(std::vector<std::unique_ptr<Block>>& blocks, RunnerOptions options)
    : blocks_(blocks), options_(options), inputs_(blocks.size()), readers_(blocks.size()) {
  bool any_reader = false;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    Block* b = blocks_[i].get();
    if (dynamic_cast<StreamWriterBlock*>(b)) {
      if (writer_ != kNoWriter)
        throw ValueError("block_runner", str(b->name(), ": a second writer of the second stream (",
                                             blocks_[writer_]->name(), " writes it)"));
      writer_ = i;
    }
    readers_[i] = dynamic_cast<StreamReaderBlock*>(b);
    if (readers_[i] && writer_ == kNoWriter)
      throw ValueError("block_runner",
                       str(b->name(), " reads the second stream before any block writes it"));
    any_reader = any_reader || readers_[i];
  }
  if (writer_ != kNoWriter && !any_reader)
    throw ValueError("block_runner",
                     str(blocks_[writer_]->name(), " writes a second stream that no block reads"));
}

bool BlockRunner::checkpointed(size_t i) const {
  return options_.checkpoint_layers && blocks_[i]->checkpointable();
}

Tensor BlockRunner::forward(const StepContext& ctx) {
  if (blocks_.empty()) throw ValueError("block_runner", "no blocks to run");
  inputs_.assign(blocks_.size(), Tensor{});
  stream_ = {};
  dstream_ = {};
  Tensor x;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const ProfileRange range("forward " + blocks_[i]->name());
    if (hooks_.before_forward) hooks_.before_forward(i);
    Tensor y =
        readers_[i] ? readers_[i]->forward_reading(x, stream_, ctx) : blocks_[i]->forward(x, ctx);
    if (hooks_.after_forward) hooks_.after_forward(i);
    if (checkpointed(i)) {
      blocks_[i]->release_saved();
      inputs_[i] = x;
    }
    if (i == writer_) stream_ = y;
    x = std::move(y);
  }
  forward_done_ = true;
  return x;
}

// The readers' shares of the stream's gradient, summed in backward order.
void BlockRunner::add_stream_grad(const Tensor& share, const StepContext& ctx) {
  if (!share.defined()) return;
  if (!dstream_.defined()) {
    dstream_ = share;
    return;
  }
  if (share.shape() != dstream_.shape() || share.dtype() != dstream_.dtype())
    throw ShapeError("block_runner", str("a reader's stream gradient ", share.describe(),
                                         " does not match the others' ", dstream_.describe()));
  kernels::add(dstream_, share, dstream_, 1.0f, ctx.stream);
}

void BlockRunner::backward(const StepContext& ctx) {
  if (!forward_done_) throw ValueError("block_runner", "backward without a forward");
  forward_done_ = false;
  Tensor dy;
  for (size_t i = blocks_.size(); i-- > 0;) {
    const ProfileRange range("backward " + blocks_[i]->name());
    if (hooks_.before_backward) hooks_.before_backward(i);
    if (checkpointed(i)) {
      const ProfileRange recompute("recompute " + blocks_[i]->name());
      StepContext again = ctx;
      again.recomputing = true;
      if (readers_[i])  // rebuild the saved activations
        readers_[i]->forward_reading(inputs_[i], stream_, again);
      else
        blocks_[i]->forward(inputs_[i], again);
      inputs_[i] = {};
    }
    if (i == writer_) {  // every reader's backward has run: the sum is complete
      if (dy.defined() && dstream_.defined())  // the runner owns dstream_: add into it
        kernels::add(dstream_, dy, dstream_, 1.0f, ctx.stream);
      if (dstream_.defined()) dy = std::move(dstream_);
      dstream_ = {};
      stream_ = {};
    }
    if (readers_[i]) {
      ReaderGrads g = readers_[i]->backward_reading(dy, ctx);
      add_stream_grad(g.dstream, ctx);
      dy = std::move(g.dx);
    } else {
      dy = blocks_[i]->backward(dy, ctx);
    }
    if (hooks_.after_backward) hooks_.after_backward(i);
  }
}

Tensor BlockRunner::forward_only(const StepContext& ctx, const LastBlockCall& last) {
  if (blocks_.empty()) throw ValueError("block_runner", "no blocks to run");
  forward_done_ = false;
  Tensor x, stream;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const ProfileRange range("forward " + blocks_[i]->name());
    if (hooks_.before_forward) hooks_.before_forward(i);
    Tensor y;
    if (i + 1 == blocks_.size()) {
      y = last(*blocks_[i], x, ctx);
    } else {
      y = readers_[i] ? readers_[i]->forward_reading(x, stream, ctx) : blocks_[i]->forward(x, ctx);
      blocks_[i]->release_saved();
    }
    if (hooks_.after_forward) hooks_.after_forward(i);
    if (i == writer_) stream = y;
    x = std::move(y);
  }
  return x;
}

Tensor BlockRunner::forward_backward(const StepContext& ctx) {
  Tensor loss = forward(ctx);
  backward(ctx);
  return loss;
}

}  // namespace zt::nn
