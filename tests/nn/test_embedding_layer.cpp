// Embedding layer and EmbeddingBlock: lookup, gradient scatter (repeated ids summed, added to the
// grad buffer), GPT-2 learned positions (forward and gradient summed over the batch), bf16 tables
// with f32 gradients, and the id range error.
#include <gtest/gtest.h>

#include <vector>

#include "nn/nn_test_util.h"
#include "support/test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/nn/embedding.h"
#include "zerotrain/nn/embedding_block.h"

namespace zt {
namespace {

TEST(NnEmbedding, LookupAndScatter) {
  for (DType dt : {DType::f32, DType::bf16}) {
    nn::Embedding e("model.embed_tokens", 6, 4);
    EXPECT_EQ(e.weight.name, "model.embed_tokens.weight");
    EXPECT_EQ(e.weight.kind, nn::ParamKind::embedding);
    test::allocate({&e.weight}, dt, DType::f32);
    test::randomize({&e.weight}, 1);
    e.weight.grad.fill(0.5);
    const std::vector<int64_t> ids{3, 0, 3, 5};
    const Tensor idt = Tensor::from_ints(ids, {4}, DType::i64);
    const Tensor out = e.forward(idt, {});
    const auto table = test::to_doubles(e.weight.value);
    std::vector<double> want;
    for (int64_t id : ids)
      for (int64_t c = 0; c < 4; ++c)
        want.push_back(table[id * 4 + c]);
    test::expect_close(want, out, {0, 0}, "lookup");
    const Tensor dy = test::random_tensor({4, 4}, dt, 2);
    e.backward(idt, dy, {});
    const auto d = test::to_doubles(dy);
    std::vector<double> grad(24, 0.5);
    for (size_t t = 0; t < ids.size(); ++t)
      for (int64_t c = 0; c < 4; ++c)
        grad[ids[t] * 4 + c] += d[t * 4 + c];
    test::expect_close(grad, e.weight.grad, {1e-6, 1e-6}, "scatter");
  }
}

TEST(NnEmbedding, Gpt2BlockAddsPositions) {
  const nn::ModelConfig c = test::tiny_config(nn::Family::gpt2);
  nn::EmbeddingBlock block(c);
  auto params = block.parameters();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[1]->name, "transformer.wpe.weight");
  test::allocate(params, DType::f32, DType::f32);
  test::randomize(params, 3);
  const int64_t B = 2, S = 5, C = c.hidden_size;
  const nn::StepContext ctx = test::make_step(c, B, S, 4);
  const Tensor h = block.forward({}, ctx);
  EXPECT_EQ(h.shape(), (Shape{B, S, C}));
  const auto tok = ctx.tokens.to_ints();
  const auto wte = test::to_doubles(params[0]->value), wpe = test::to_doubles(params[1]->value);
  std::vector<double> want;
  for (int64_t t = 0; t < B * S; ++t)
    for (int64_t i = 0; i < C; ++i)
      want.push_back(wte[tok[t] * C + i] + wpe[(t % S) * C + i]);
  test::expect_close(want, h, {1e-6, 1e-6}, "wte + wpe");

  const Tensor dy = test::random_tensor({B, S, C}, DType::f32, 5);
  EXPECT_FALSE(block.backward(dy, ctx).defined());
  const auto d = test::to_doubles(dy);
  std::vector<double> dwpe(static_cast<size_t>(c.max_position_embeddings * C), 0.0);
  for (int64_t t = 0; t < B * S; ++t)
    for (int64_t i = 0; i < C; ++i)
      dwpe[(t % S) * C + i] += d[t * C + i];
  test::expect_close(dwpe, params[1]->grad, {1e-6, 1e-6}, "wpe grad");
}

TEST(NnEmbedding, OutOfRangeIdNamesIt) {
  const nn::ModelConfig c = test::tiny_config(nn::Family::llama);
  nn::EmbeddingBlock block(c);
  test::allocate(block.parameters(), DType::f32, DType::f32);
  nn::StepContext ctx = test::make_step(c, 1, 3, 1);
  ctx.tokens = Tensor::from_ints({1, 77, 2}, {1, 3}, DType::i32);
  try {
    block.forward({}, ctx);
    ADD_FAILURE() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("77"), std::string::npos) << e.what();
  }
  ctx.tokens = Tensor::from_ints({1, 2, 3}, {3}, DType::i32);
  EXPECT_THROW(block.forward({}, ctx), ShapeError);
}

}  // namespace
}  // namespace zt
