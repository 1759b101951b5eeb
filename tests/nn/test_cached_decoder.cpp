// The cached decoder against the training model's full forward (CPU, f32), for every family and
// its variants (grouped-query heads, sliding windows shorter than the text, biases, tied and
// untied heads, Llama-3 rope scaling, learned positions): the logits of a prefill at every
// position, of a prefill followed by one token at a time, and of the last position only, equal
// the full forward's logits at the same positions; batch rows stay apart. Also the cache's and
// the decoder's errors (capacity, positions, a parameter the model lacks).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn/nn_test_util.h"
#include "support/test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/nn/cached_decoder.h"
#include "zerotrain/nn/head_block.h"
#include "zerotrain/nn/transformer.h"

namespace zt {
namespace {

using nn::Family;
using nn::ModelConfig;

constexpr test::Tolerance kTol{2e-5, 2e-5};

// The training path: every block's forward, then the head's logits [B, S, V].
Tensor full_logits(nn::Transformer& m, const nn::StepContext& ctx) {
  auto& blocks = m.blocks();
  Tensor x;
  for (size_t i = 0; i + 1 < blocks.size(); ++i) {
    x = blocks[i]->forward(x, ctx);
    blocks[i]->release_saved();
  }
  return dynamic_cast<nn::HeadBlock&>(*blocks.back()).logits(x, ctx);
}

std::vector<ModelConfig> cases() {
  std::vector<ModelConfig> out;
  for (Family f : test::all_families())
    out.push_back(test::tiny_config(f));  // mistral: window 3
  ModelConfig l = test::tiny_config(Family::llama);
  l.attention_bias = l.mlp_bias = true;
  l.tie_word_embeddings = true;
  out.push_back(l);
  ModelConfig q = test::tiny_config(Family::qwen2);
  q.sliding_window = 4;
  out.push_back(q);
  ModelConfig g = test::tiny_config(Family::gpt2);
  g.tie_word_embeddings = false;
  out.push_back(g);
  return out;
}

std::string name_of(const ModelConfig& c) {
  return str(nn::family_name(c.family), c.tie_word_embeddings ? " tied" : "",
             c.attention_bias ? " biased" : "", " window ", c.sliding_window);
}

// Columns [from, to) of the token grid [B, S].
Tensor token_columns(const Tensor& tokens, int64_t from, int64_t to) {
  return tokens.slice(1, from, to).contiguous();
}

// Positions [from, to) of [B, S, V] logits as float64.
std::vector<double> logit_rows(const Tensor& logits, int64_t from, int64_t to) {
  return test::to_doubles(logits.slice(1, from, to).contiguous());
}

TEST(CachedDecoder, PrefillLogitsEqualTheFullForwardAtEveryPosition) {
  for (const ModelConfig& c : cases()) {
    nn::Transformer m(c, {});
    test::randomize(m.parameters(), 11);
    const int64_t B = 2, S = 12;
    const nn::StepContext ctx = test::make_step(c, B, S, 7);
    const Tensor full = full_logits(m, ctx);
    nn::CachedDecoder decoder(c);
    decoder.use_values_of(m);
    nn::KvCache cache = decoder.make_cache(B, S);
    const Tensor got = decoder.forward(ctx.tokens, cache, false);
    EXPECT_EQ(got.shape(), full.shape()) << name_of(c);
    EXPECT_EQ(cache.length(), S);
    test::expect_close(test::to_doubles(full), got, kTol, name_of(c) + " prefill");
  }
}

TEST(CachedDecoder, TokenByTokenLogitsEqualTheFullForward) {
  for (const ModelConfig& c : cases()) {
    nn::Transformer m(c, {});
    test::randomize(m.parameters(), 12);
    const int64_t B = 2, S = 14, P = 5;
    const nn::StepContext ctx = test::make_step(c, B, S, 8);
    const Tensor full = full_logits(m, ctx);
    nn::CachedDecoder decoder(c);
    decoder.use_values_of(m);
    nn::KvCache cache = decoder.make_cache(B, S + 2);
    // A prefill of P tokens (last position only), then one token at a time.
    const Tensor first = decoder.forward(token_columns(ctx.tokens, 0, P), cache, true);
    EXPECT_EQ(first.shape(), (Shape{B, 1, c.vocab_size}));
    test::expect_close(logit_rows(full, P - 1, P), first, kTol, name_of(c) + " prefill last");
    for (int64_t i = P; i < S; ++i) {
      const Tensor step = decoder.forward(token_columns(ctx.tokens, i, i + 1), cache, true);
      test::expect_close(logit_rows(full, i, i + 1), step, kTol, str(name_of(c), " position ", i));
    }
    EXPECT_EQ(cache.length(), S);
    // A fresh start after clear() sees none of the old keys.
    cache.clear();
    const Tensor again = decoder.forward(token_columns(ctx.tokens, 0, 3), cache, false);
    test::expect_close(logit_rows(full, 0, 3), again, kTol, name_of(c) + " after clear");
  }
}

TEST(CachedDecoder, BatchRowsAreIndependent) {
  const ModelConfig c = test::tiny_config(Family::mistral);
  nn::Transformer m(c, {});
  test::randomize(m.parameters(), 13);
  const nn::StepContext ctx = test::make_step(c, 2, 9, 9);
  nn::CachedDecoder decoder(c);
  decoder.use_values_of(m);
  nn::KvCache both = decoder.make_cache(2, 9);
  const Tensor together = decoder.forward(ctx.tokens, both, false);
  for (int64_t b = 0; b < 2; ++b) {
    nn::KvCache one = decoder.make_cache(1, 9);
    const Tensor alone = decoder.forward(ctx.tokens.slice(0, b, b + 1).contiguous(), one, false);
    test::expect_close(test::to_doubles(together.slice(0, b, b + 1).contiguous()), alone, kTol,
                       str("row ", b));
  }
}

TEST(CachedDecoder, RefusesWhatDoesNotFit) {
  const ModelConfig g = test::tiny_config(Family::gpt2);  // 16 learned positions
  nn::Transformer m(g, {});
  nn::CachedDecoder decoder(g);
  decoder.use_values_of(m);
  nn::KvCache small = decoder.make_cache(1, 4);
  const Tensor five = test::random_ints({1, 5}, DType::i32, 1, 0, g.vocab_size);
  EXPECT_THROW(decoder.forward(five, small, true), ValueError);  // past the cache
  nn::KvCache big = decoder.make_cache(1, 20);
  const Tensor seventeen = test::random_ints({1, 17}, DType::i32, 2, 0, g.vocab_size);
  EXPECT_THROW(decoder.forward(seventeen, big, true), ValueError);  // past wpe's 16
  nn::KvCache two = decoder.make_cache(2, 8);
  EXPECT_THROW(decoder.forward(five, two, true), ShapeError);  // batch 1 into a cache of 2
  EXPECT_THROW(nn::KvCache({2, 1, 0, 2, 8}, DType::f32, Device::cpu()), ValueError);

  // A model of another family lacks the decoder's parameter names.
  const ModelConfig l = test::tiny_config(Family::llama);
  nn::CachedDecoder llama(l);
  try {
    llama.use_values_of(m);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("has no parameter model.embed_tokens.weight"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zt
