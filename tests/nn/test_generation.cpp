// Generation over the KV cache against generation without one: greedy tokens equal those of a
// loop that runs the training model's full forward over the whole sequence for every new token
// (every family); a stop token ends generation (and is kept); max_new_tokens 0 and 1; the same
// seed samples the same tokens; bad prompts and lengths past learned positions are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "nn/nn_test_util.h"
#include "support/test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/nn/generation.h"
#include "zerotrain/nn/head_block.h"
#include "zerotrain/nn/transformer.h"

namespace zt {
namespace {

using nn::Family;
using nn::ModelConfig;

// Greedy continuation by full forwards of the training model (no cache).
std::vector<int64_t> greedy_without_cache(nn::Transformer& m, std::vector<int64_t> seq,
                                          int64_t new_tokens) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < new_tokens; ++i) {
    const auto s = static_cast<int64_t>(seq.size());
    nn::StepContext ctx;
    ctx.tokens = Tensor::from_ints(seq, {1, s}, DType::i32);
    auto& blocks = m.blocks();
    Tensor x;
    for (size_t b = 0; b + 1 < blocks.size(); ++b) {
      x = blocks[b]->forward(x, ctx);
      blocks[b]->release_saved();
    }
    const Tensor logits = dynamic_cast<nn::HeadBlock&>(*blocks.back()).logits(x, ctx);
    const std::vector<float> last = logits.slice(1, s - 1, s).contiguous().to_floats();
    const int64_t next = std::max_element(last.begin(), last.end()) - last.begin();
    out.push_back(next);
    seq.push_back(next);
  }
  return out;
}

struct Model {
  explicit Model(const ModelConfig& c) : config(c), transformer(c, {}), decoder(c) {
    test::randomize(transformer.parameters(), 21, 0.6f);
    decoder.use_values_of(transformer);
  }
  ModelConfig config;
  nn::Transformer transformer;
  nn::CachedDecoder decoder;
};

const std::vector<int64_t> kPrompt{3, 17, 4, 42, 8};

TEST(Generation, GreedyTokensEqualFullForwardGreedy) {
  for (Family f : test::all_families()) {
    Model m(test::tiny_config(f));
    nn::GenerationOptions o;
    o.max_new_tokens = 10;  // 15 positions: within gpt2's 16
    std::vector<int64_t> streamed;
    const nn::GenerationResult r =
        nn::generate(m.decoder, kPrompt, o, [&](int64_t t) { streamed.push_back(t); });
    EXPECT_EQ(r.tokens, greedy_without_cache(m.transformer, kPrompt, 10)) << nn::family_name(f);
    EXPECT_EQ(streamed, r.tokens);
    EXPECT_FALSE(r.stopped);
  }
}

TEST(Generation, StopsAtAStopTokenAndKeepsIt) {
  Model m(test::tiny_config(Family::llama));
  const std::vector<int64_t> greedy = greedy_without_cache(m.transformer, kPrompt, 8);
  nn::GenerationOptions o;
  o.max_new_tokens = 8;
  o.stop_ids = {greedy[3], 1000};
  const nn::GenerationResult r = nn::generate(m.decoder, kPrompt, o);
  const auto first = std::find(greedy.begin(), greedy.end(), greedy[3]) - greedy.begin();
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.tokens, std::vector<int64_t>(greedy.begin(), greedy.begin() + first + 1));
}

TEST(Generation, MaxNewTokensZeroAndOne) {
  Model m(test::tiny_config(Family::qwen2));
  nn::GenerationOptions o;
  o.max_new_tokens = 0;
  EXPECT_TRUE(nn::generate(m.decoder, kPrompt, o).tokens.empty());
  o.max_new_tokens = 1;
  EXPECT_EQ(nn::generate(m.decoder, kPrompt, o).tokens,
            greedy_without_cache(m.transformer, kPrompt, 1));
}

TEST(Generation, SamplingIsReproducibleBySeed) {
  Model m(test::tiny_config(Family::mistral));
  nn::GenerationOptions o;
  o.max_new_tokens = 10;
  o.sampling = {1.5, 0.95, 5};
  const auto a = nn::generate(m.decoder, kPrompt, o).tokens;
  EXPECT_EQ(a, nn::generate(m.decoder, kPrompt, o).tokens);
  o.sampling.seed = 6;
  EXPECT_NE(a, nn::generate(m.decoder, kPrompt, o).tokens);
}

TEST(Generation, RefusesBadPrompts) {
  Model m(test::tiny_config(Family::llama));
  nn::GenerationOptions o;
  EXPECT_THROW(nn::generate(m.decoder, {}, o), ValueError);
  EXPECT_THROW(nn::generate(m.decoder, {1, 50}, o), ValueError);  // vocab 50
  o.max_new_tokens = -1;
  EXPECT_THROW(nn::generate(m.decoder, kPrompt, o), ValueError);
}

TEST(Generation, LearnedPositionsBoundTheLength) {
  Model g(test::tiny_config(Family::gpt2));  // 16 positions: 5 prompt + 12 new (the last unfed)
  nn::GenerationOptions o;
  o.max_new_tokens = 12;
  EXPECT_EQ(nn::generate(g.decoder, kPrompt, o).tokens.size(), 12u);
  o.max_new_tokens = 13;
  try {
    nn::generate(g.decoder, kPrompt, o);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("need 17 positions, more than the model's 16 "
                                         "(max_position_embeddings): ask for at most 12"),
              std::string::npos)
        << e.what();
  }
  // RoPE models have no such bound.
  Model l(test::tiny_config(Family::llama));
  o.max_new_tokens = 40;
  EXPECT_EQ(nn::generate(l.decoder, kPrompt, o).tokens.size(), 40u);
}

}  // namespace
}  // namespace zt
