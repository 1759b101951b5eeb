// The first block: token embedding ("model.embed_tokens.weight"; gpt2 "transformer.wte.weight" plus
// the learned positions "transformer.wpe.weight" added to it). Reads ctx.tokens, returns hidden
// states [B, S, C] in the table's dtype. Tested by tests/nn/test_embedding_layer.cpp and the whole
// model tests.
#pragma once

#include <memory>

#include "zerotrain/nn/architecture.h"
#include "zerotrain/nn/block.h"
#include "zerotrain/nn/embedding.h"

namespace zt::nn {

class EmbeddingBlock : public Block {
 public:
  explicit EmbeddingBlock(const ModelConfig& config);

  std::string name() const override { return name_; }
  std::vector<Parameter*> parameters() override;
  Tensor forward(const Tensor& x, const StepContext& ctx) override;
  Tensor backward(const Tensor& dy, const StepContext& ctx) override;
  void release_saved() override;

  // The token table, shared by the head when word embeddings are tied.
  Parameter& token_weight() { return wte_.weight; }

 private:
  std::string name_;
  int64_t hidden_;
  Embedding wte_;
  std::unique_ptr<Embedding> wpe_;  // gpt2 only
  Tensor ids_;                      // [N] i32/i64: the token ids of the last forward
  Tensor position_ids_;             // [N] i32: s for token (b, s), cached per (B, S, device)
  int64_t position_seq_ = 0;        // the S position_ids_ was built for
  Tensor used_positions_;  // [N] i32: the forward's ids, position_ids_ or the packed rows' own
};

}  // namespace zt::nn
