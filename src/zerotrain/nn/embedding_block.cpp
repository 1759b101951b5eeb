// Embedding block (see embedding_block.h).
#include "zerotrain/nn/embedding_block.h"

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/elementwise.h"
#include "zerotrain/nn/block_checks.h"
#include "zerotrain/nn/family_registry.h"

namespace zt::nn {

EmbeddingBlock::EmbeddingBlock(const ModelConfig& c)
    : name_(family_traits(c.family).hf.embed_tokens),
      hidden_(c.hidden_size),
      wte_(name_, c.vocab_size, c.hidden_size) {
  if (architecture_of(c).learned_positions)
    wpe_ = std::make_unique<Embedding>(family_traits(c.family).hf.positions,
                                       c.max_position_embeddings, c.hidden_size);
}

std::vector<Parameter*> EmbeddingBlock::parameters() {
  std::vector<Parameter*> out{&wte_.weight};
  if (wpe_) out.push_back(&wpe_->weight);
  return out;
}

Tensor EmbeddingBlock::forward(const Tensor&, const StepContext& ctx) {
  const TokenDims dims = check_token_grid(name_, ctx.tokens, "tokens");
  const int64_t n = dims.tokens();
  ids_ = ctx.tokens.view({n});
  Tensor h = wte_.forward(ids_, ctx.stream);
  if (h.dtype() != ctx.compute_dtype)
    throw DTypeError("nn", str(name_, ": table ", wte_.weight.value.describe(),
                               " is not in the compute dtype ", dtype_name(ctx.compute_dtype)));
  if (wpe_) {
    const int64_t max_pos = wpe_->weight.shape[0];
    if (dims.seq > max_pos)
      throw ShapeError("nn", str(name_, ": sequence length ", dims.seq,
                                 " exceeds max_position_embeddings ", max_pos));
    if (ctx.documents.packed()) {  // ids restart at every document: [Note: packed documents]
      used_positions_ = ctx.documents.position_ids.view({n});
    } else {
      if (!position_ids_.defined() || position_ids_.numel() != n || position_seq_ != dims.seq ||
          position_ids_.device() != h.device()) {
        std::vector<int64_t> pos(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i)
          pos[static_cast<size_t>(i)] = i % dims.seq;
        position_ids_ = Tensor::from_ints(pos, {n}, DType::i32).to(h.device(), ctx.stream);
        position_seq_ = dims.seq;
      }
      used_positions_ = position_ids_;
    }
    Tensor p = wpe_->forward(used_positions_, ctx.stream);
    kernels::add(h, p, h, 1.0f, ctx.stream);
  }
  return h.view({dims.batch, dims.seq, hidden_});
}

Tensor EmbeddingBlock::backward(const Tensor& dy, const StepContext& ctx) {
  if (!ids_.defined()) throw ValueError("nn", str(name_, ": backward without a saved forward"));
  check_hidden_states(name_, dy, hidden_, ctx, "gradient");
  const Tensor dyf = dy.view({ids_.numel(), hidden_});
  wte_.backward(ids_, dyf, ctx.stream);
  if (wpe_) wpe_->backward(used_positions_, dyf, ctx.stream);
  release_saved();
  return {};
}

void EmbeddingBlock::release_saved() {
  ids_ = used_positions_ = {};
}

}  // namespace zt::nn
